"""kACTUS phase 2: bottom-up pruning of the classification tree.

With k-anonymity alone, :func:`_prune_k` follows the paper: a leaf with at
least k instances complies, smaller ones merge into their parent, and
complying siblings lend instances. With other privacy models,
:class:`_ModelPruning` asks the requirement per group and lends the sensitive
values a group lacks. :mod:`ppdm.algorithms.kactus` describes the algorithm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InfeasibleConstraintError
from ppdm.model import (
    AttributeKind,
    attribute_kind,
)
from ppdm.privacy import Requirement
from ppdm.privacy.measures import ClassPartition, SensitiveCounts
from ppdm.trees.base import PredicateTree, TreeNode


class _Distances:
    """Greedy lending's distance of candidate instances to non-complying ones.

    d(x) = sum over categorical QIs of [x_a != mode of a among the
    non-complying instances] + sum over numeric QIs of
    min(|x_a - median of a among them| / range of a in the table, 1), with a
    missing numeric value counting 1. Lending the closest instances keeps the
    node that the non-complying instances are merged into homogeneous, so its
    later release (and the numeric means) misrepresent them least.
    """

    def __init__(self, table: pd.DataFrame, quasi_identifiers: Sequence[str]) -> None:
        self.codes: list[np.ndarray] = []
        self.numeric: list[tuple[np.ndarray, float]] = []
        for name in quasi_identifiers:
            column = table[name]
            if attribute_kind(column) is AttributeKind.NUMERIC:
                values = column.to_numpy(dtype=float, na_value=np.nan)
                span = (
                    float(np.nanmax(values) - np.nanmin(values))
                    if np.isfinite(values).any()
                    else 0.0
                )
                self.numeric.append((values, span if span > 0 else 1.0))
            else:
                codes, _ = pd.factorize(column, use_na_sentinel=False)
                self.codes.append(codes.astype(np.int64))

    def __call__(self, candidates: np.ndarray, reference: np.ndarray) -> np.ndarray:
        out = np.zeros(len(candidates))
        for codes in self.codes:
            mode = int(np.argmax(np.bincount(codes[reference])))
            out += codes[candidates] != mode
        for values, span in self.numeric:
            ref = values[reference]
            center = float(np.nanmedian(ref)) if np.isfinite(ref).any() else np.nan
            gap = np.abs(values[candidates] - center) / span
            out += np.where(np.isnan(gap), 1.0, np.minimum(gap, 1.0))
        return out


def _only_k(requirement: Requirement) -> bool:
    """True when class size alone decides every model (k-anonymity only)."""
    return requirement.decided_by_bounds and requirement.minimal_distinct_values <= 1


@dataclass
class _Pruned:
    """Phase 2's groups before suppression: node and rows of each release."""

    group_nodes: list[int]
    group_rows: list[np.ndarray]
    pruned_attributes: dict[int, frozenset[str]]
    stats: list[dict[str, Any]]
    lost: np.ndarray
    root_stats: dict[str, int] = field(default_factory=dict)


def _prune_k(
    tree: PredicateTree,
    k: int,
    rng: np.random.Generator,
    distances: _Distances | None,
) -> _Pruned:
    """The paper's pruning for k-anonymity (see :func:`anonymize_tree`)."""
    held: dict[int, np.ndarray] = {leaf.id: leaf.rows for leaf in tree.leaves}
    pruned_attributes: dict[int, frozenset[str]] = {}
    group_nodes: list[int] = []
    group_rows: list[np.ndarray] = []
    stats: list[dict[str, Any]] = []

    def release(node: TreeNode, rows: np.ndarray) -> None:
        if len(rows):
            group_nodes.append(node.id)
            group_rows.append(rows)

    for p in tree.postorder():
        if p.is_leaf:
            continue
        parts = [held.pop(child.id) for child in p.children]
        sizes = np.array([len(part) for part in parts], dtype=np.int64)
        complying = np.flatnonzero(sizes >= k)
        failing = np.flatnonzero(sizes < k)
        nui = int(sizes[failing].sum())
        required = k - nui
        extra_total = int((sizes[complying] - k).sum())
        lent = np.zeros(0, dtype=np.int64)
        lent_from: set[int] = set()
        if 0 < nui < k and extra_total >= required:
            pool, owner, score = [], [], []
            reference = np.concatenate([parts[i] for i in failing])
            for i in complying:
                part = parts[i]
                if distances is None:
                    shuffled = rng.permutation(part)
                    extras = shuffled[: sizes[i] - k]
                    parts[i] = shuffled
                else:
                    d = distances(part, reference)
                    order = np.lexsort((rng.random(len(part)), d))
                    part, d = part[order], d[order]
                    extras = part[: sizes[i] - k]
                    score.append(d[: sizes[i] - k])
                    parts[i] = part
                pool.append(extras)
                owner.append(np.full(len(extras), i))
            pool_rows = np.concatenate(pool)
            pool_owner = np.concatenate(owner)
            if distances is None:
                pick = rng.choice(len(pool_rows), size=required, replace=False)
            else:
                scores = np.concatenate(score)
                pick = np.lexsort((rng.random(len(scores)), scores))[:required]
            taken = np.zeros(len(pool_rows), dtype=bool)
            taken[pick] = True
            lent = pool_rows[taken]
            for i in complying:
                # extras sit at the front of each shuffled/ordered part
                n_extra = int(sizes[i] - k)
                mine = taken[pool_owner == i]
                if mine.any():
                    lent_from.add(int(i))
                parts[i] = np.concatenate(
                    [parts[i][:n_extra][~mine], parts[i][n_extra:]]
                )
        released = 0
        for i in complying:
            release(p.children[i], parts[i])
            released += len(parts[i])
        held[p.id] = np.concatenate([parts[i] for i in failing] + [lent])
        attribute = p.split_attribute
        merged = {attribute} if attribute is not None else set()
        for i in set(failing.tolist()) | lent_from:
            merged |= pruned_attributes.get(p.children[i].id, frozenset())
        pruned_attributes[p.id] = frozenset(merged)
        stats.append(
            {
                "node": p.id,
                "released": released,
                "complying_children": len(complying),
                "non_complying": nui,
                "lent": len(lent),
                "holds": len(held[p.id]),
            }
        )

    leftover = held.pop(tree.root.id)
    lost = np.zeros(0, dtype=np.int64)
    if len(leftover) >= k:
        release(tree.root, leftover)
    else:
        lost = np.sort(leftover)
    return _Pruned(group_nodes, group_rows, pruned_attributes, stats, lost)


class _ModelPruning:
    """Phase 2 when the requirement holds more than k-anonymity (not in the paper).

    The paper's pruning with "complies" read as "every model accepts the
    group" (:meth:`Requirement.accepts_groups`, the sensitive attributes coded
    once) and k as the requirement's smallest acceptable class ``m``. At a
    node p the groups of the non-complying children are merged into F; when
    the models reject F, the complying children lend it records
    (:meth:`lend`; when they accept F nothing is lent, as for ``nui >= k`` in
    the paper), and p becomes a leaf holding F and the loan.

    The root's group gets the same treatment with every released group as a
    lender; when no loan makes it acceptable, whole released groups join it
    (:meth:`absorb`). No record is dropped, so the released sensitive
    distribution is the table's (the reference t-closeness is verified
    against). Every released group is accepted, and the classes of the
    release are unions of released groups with equal labels; the five models
    accept unions of accepted groups (size and distinct values add up, entropy
    is concave, the recursive condition sums, the distance to the table's
    distribution is convex), so the release satisfies the requirement.
    """

    #: Loan sizes tried at once beyond the smallest: the next 15, then
    #: doubling steps, then every extra.
    _STEPS = 16

    def __init__(
        self,
        table: pd.DataFrame,
        tree: PredicateTree,
        requirement: Requirement,
        rng: np.random.Generator,
        distances: _Distances | None,
    ) -> None:
        self.tree = tree
        self.requirement = requirement
        self.rng = rng
        self.distances = distances
        self.m = requirement.minimal_class_size
        self.encoded = requirement.encode(table)
        self.codes = [e.codes for e in self.encoded.values()]
        self.n_values = [max(len(e.values), 1) for e in self.encoded.values()]
        first = self.encoded[requirement.sensitive_attributes[0]]
        self.need_codes = first.codes
        closeness = any(
            model.name == "t-closeness" and model.sensitive_attribute == first.attribute
            for model in requirement.models
        )
        self.need_weight = (
            first.whole if closeness else np.ones(max(len(first.values), 1))
        )

    def accepts(self, groups: Sequence[np.ndarray]) -> np.ndarray:
        """Which of ``groups`` (row positions each) every model accepts."""
        if not groups:
            return np.zeros(0, dtype=bool)
        sizes = np.array([len(g) for g in groups], dtype=np.int64)
        ids = np.repeat(np.arange(len(groups)), sizes)
        rows = np.concatenate(groups).astype(np.int64, copy=False)
        ok = self.requirement.accepts_groups(ids, len(groups), self.encoded, rows=rows)
        return np.asarray(ok, dtype=bool) & (sizes > 0)

    def accepts_counts(self, counts: Sequence[np.ndarray]) -> np.ndarray:
        """Which groups every model accepts, given their sensitive value counts.

        ``counts`` holds one ``(groups, values)`` matrix per sensitive
        attribute (in :attr:`Requirement.sensitive_attributes` order, codes of
        :meth:`Requirement.encode`); the models read nothing else of a group,
        so this equals :meth:`accepts` on the groups' rows without touching
        them.
        """
        sizes = np.asarray(counts[0]).sum(axis=1).astype(np.int64)
        sensitive = []
        for encoded, matrix in zip(self.encoded.values(), counts, strict=True):
            group, value = np.nonzero(matrix)
            sensitive.append(
                SensitiveCounts(
                    encoded.attribute,
                    sizes,
                    group.astype(np.int64),
                    value.astype(np.int64),
                    np.asarray(matrix[group, value], dtype=np.int64),
                    encoded.values,
                    encoded.ranks,
                    encoded.whole,
                )
            )
        partition = ClassPartition.from_aggregates(
            (), pd.DataFrame(index=pd.RangeIndex(len(sizes))), sizes, sensitive
        )
        return np.asarray(self.requirement.accepts(partition), dtype=bool) & (sizes > 0)

    @staticmethod
    def _prefix_counts(
        codes: np.ndarray,
        n_values: int,
        merged: np.ndarray,
        rows: np.ndarray,
        pool: np.ndarray,
        by_need: np.ndarray,
        cuts: np.ndarray,
        plain: int | None,
    ) -> np.ndarray:
        """Value counts of ``merged`` plus each candidate loan, one row each.

        The candidates are ``pool[:plain]`` (when ``plain`` is given) and
        ``by_need[:j]`` for every ``j`` in ``cuts`` (increasing): one
        ``bincount`` of the need order cut into segments, then a running sum.
        """
        base = np.bincount(codes[merged], minlength=n_values)
        segment = np.searchsorted(cuts, np.arange(len(by_need)), side="right")
        per_segment = np.bincount(
            segment * n_values + codes[rows[by_need]],
            minlength=(len(cuts) + 1) * n_values,
        ).reshape(len(cuts) + 1, n_values)
        prefixes = np.cumsum(per_segment, axis=0)[: len(cuts)]
        if plain is not None:
            first = np.bincount(codes[rows[pool[:plain]]], minlength=n_values)
            prefixes = np.vstack([first, prefixes])
        return base + prefixes

    def check_whole_table(self) -> None:
        """Refuse a requirement the table fails even as one class."""
        everything = np.arange(self.tree.n_rows)
        if self.accepts([everything])[0]:
            return
        failing = [
            str(model)
            for model in self.requirement.models
            if not Requirement(self.requirement.quasi_identifiers, (model,))
            .accepts_groups(np.zeros(len(everything), dtype=np.int64), 1, self.encoded)
            .all()
        ]
        raise InfeasibleConstraintError(
            f"kactus cannot release the table under {self.requirement}: even all "
            f"{len(everything)} records in one fully suppressed class fail "
            f"{', '.join(failing)}, and smaller classes cannot do better (kactus "
            "releases every record when models beyond k-anonymity are asked for)"
        )

    def lend(
        self, merged: np.ndarray, donors: Sequence[np.ndarray]
    ) -> tuple[np.ndarray, dict[int, np.ndarray]] | None:
        """Records of accepted ``donors`` that make ``merged`` accepted, or None.

        Each donor orders its records as the paper's lending does (random: a
        uniform shuffle; greedy: closest to ``merged`` first, ties by the
        generator); its extras are the first ``size - m`` of them that are not
        the last record of their sensitive value in the donor, so a loan never
        takes a value away from a donor. Candidate loans, judged at once from
        their value counts (:meth:`accepts_counts`): the first
        ``max(m - |merged|, 0)`` extras in lending order (the paper's choice),
        then growing prefixes (see ``_STEPS``) of the extras ordered by need --
        the j-th extra of sensitive value v (first sensitive attribute) ranks
        ``(count of v in merged + j) / w(v)``, w = v's share of the table under
        t-closeness of that attribute, else 1, so loans even out the values or
        follow the table's distribution; ties keep the lending order. The
        first accepted candidate is lent when every donor it takes from stays
        accepted; a donor that would not stops lending and the search repeats.

        Returns
        -------
        (lent rows, {donor index: its remaining rows}) or None
        """
        m = self.m
        sizes = np.array([len(d) for d in donors], dtype=np.int64)
        rows = np.concatenate(donors).astype(np.int64, copy=False)
        n = len(rows)
        if n == 0:
            return None
        donor = np.repeat(np.arange(len(donors)), sizes)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        if self.distances is None:
            rank = self.rng.permutation(n)
        else:
            d = self.distances(rows, merged)
            rank = np.empty(n, dtype=np.int64)
            rank[np.lexsort((self.rng.random(n), d))] = np.arange(n)
        # extras: per donor in lending order, skipping each value's last record
        eligible = np.ones(n, dtype=bool)
        for codes, n_values in zip(self.codes, self.n_values, strict=True):
            key = donor * n_values + codes[rows]
            order = np.lexsort((rank, key))
            last = np.ones(n, dtype=bool)
            last[:-1] = key[order][1:] != key[order][:-1]
            eligible[order[last]] = False
        by_donor = np.lexsort((rank, donor))
        seen = np.cumsum(eligible[by_donor])
        before = np.concatenate([[0], seen])[offsets[:-1]]
        owner = donor[by_donor]
        within = seen - before[owner]
        extra = eligible[by_donor] & (within <= (sizes - m)[owner])
        pool_all = by_donor[extra]
        pool_all = pool_all[np.argsort(rank[pool_all], kind="stable")]

        need_values = len(self.need_weight)
        merged_counts = np.bincount(self.need_codes[merged], minlength=need_values)
        # each missing value of an attribute needs one more record
        short = max(
            self.requirement.minimal_distinct_values_of(attribute)
            - len(np.unique(encoded.codes[merged]))
            for attribute, encoded in self.encoded.items()
        )
        required = max(m - len(merged), 0)
        smallest = max(required, short, 1)
        active = np.ones(len(donors), dtype=bool)
        while True:
            pool = pool_all[active[donor[pool_all]]]
            if len(pool) < smallest:
                return None
            plain = required == smallest
            value = self.need_codes[rows[pool]]
            order = np.argsort(value, kind="stable")
            ordered = value[order]
            nth = np.empty(len(pool), dtype=np.int64)
            nth[order] = np.arange(len(pool)) - np.searchsorted(ordered, ordered)
            need = (merged_counts[value] + nth + 1) / self.need_weight[value]
            by_need = pool[np.lexsort((np.arange(len(pool)), need))]
            lengths = {smallest + i for i in range(self._STEPS)}
            step = self._STEPS
            while smallest + step < len(pool):
                lengths.add(smallest + step)
                step *= 2
            lengths.add(len(pool))
            cuts = np.array(sorted(j for j in lengths if j <= len(pool)))
            first = required if plain else None
            ok = self.accepts_counts(
                [
                    self._prefix_counts(
                        codes, n_values, merged, rows, pool, by_need, cuts, first
                    )
                    for codes, n_values in zip(self.codes, self.n_values, strict=True)
                ]
            )
            if not ok.any():
                return None
            best = int(np.argmax(ok))
            if plain and best == 0:
                chosen = pool[:required]
            else:
                chosen = by_need[: cuts[best - int(plain)]]
            taken = np.zeros(n, dtype=bool)
            taken[chosen] = True
            lenders = np.unique(donor[chosen])
            kept = {
                int(i): donors[i][~taken[offsets[i] : offsets[i + 1]]] for i in lenders
            }
            still = self.accepts(list(kept.values()))
            if still.all():
                return rows[chosen], kept
            active[lenders[~still]] = False

    def absorb(
        self,
        leftover: np.ndarray,
        group_nodes: list[int],
        group_rows: list[np.ndarray],
    ) -> tuple[np.ndarray, np.ndarray]:
        """Whole released groups joining ``leftover`` until the models accept it.

        Groups released nearest the root (fewest tests on their path, so the
        least lost when fully suppressed) join first, in prefixes of 1, 2, 4,
        ... groups and finally all of them; the smallest accepted prefix is
        taken. All of them with ``leftover`` are the whole table, which
        :meth:`check_whole_table` found acceptable.

        Returns
        -------
        (the enlarged group's rows, indices of the absorbed groups)
        """
        depth = np.zeros(len(self.tree.nodes), dtype=np.int64)
        for node in self.tree.nodes[1:]:  # preorder: parents first
            assert node.parent is not None
            depth[node.id] = depth[node.parent.id] + 1
        n_groups = len(group_rows)
        nodes = np.asarray(group_nodes, dtype=np.int64)
        order = np.lexsort((np.arange(n_groups), depth[nodes]))
        counts, step = [], 1
        while step < n_groups:
            counts.append(step)
            step *= 2
        counts.append(n_groups)
        candidates = [
            np.concatenate([leftover, *(group_rows[g] for g in order[:j])])
            for j in counts
        ]
        ok = self.accepts(candidates)
        if not ok.any():
            raise InfeasibleConstraintError(
                f"kactus cannot release the table under {self.requirement}: the "
                f"{len(leftover)} records left at the root fail it even with "
                "every released group merged into them"
            )
        best = int(np.argmax(ok))
        return candidates[best], order[: counts[best]]

    def run(self) -> _Pruned:
        """Prune the tree; see the class docstring."""
        tree = self.tree
        self.check_whole_table()
        leaves = tree.leaves
        held: dict[int, np.ndarray] = {leaf.id: leaf.rows for leaf in leaves}
        accepted = dict(
            zip(
                (leaf.id for leaf in leaves),
                self.accepts([leaf.rows for leaf in leaves]).tolist(),
                strict=True,
            )
        )
        pruned_attributes: dict[int, frozenset[str]] = {}
        group_nodes: list[int] = []
        group_rows: list[np.ndarray] = []
        stats: list[dict[str, Any]] = []
        empty = np.zeros(0, dtype=np.int64)

        for p in tree.postorder():
            if p.is_leaf:
                continue
            parts = [held.pop(child.id) for child in p.children]
            ok = np.array([accepted.pop(child.id) for child in p.children], dtype=bool)
            complying = np.flatnonzero(ok)
            failing = np.flatnonzero(~ok)
            merged = np.concatenate([empty, *(parts[i] for i in failing)])
            lent = empty
            lent_from: set[int] = set()
            merged_ok = False
            if len(merged):
                merged_ok = bool(self.accepts([merged])[0])
                if not merged_ok and len(complying):
                    loan = self.lend(merged, [parts[i] for i in complying])
                    if loan is not None:
                        lent, kept = loan
                        for j, rows in kept.items():
                            parts[complying[j]] = rows
                            lent_from.add(int(complying[j]))
                        merged_ok = True
            released = 0
            for i in complying:
                group_nodes.append(p.children[i].id)
                group_rows.append(parts[i])
                released += len(parts[i])
            held[p.id] = np.concatenate([merged, lent])
            accepted[p.id] = merged_ok
            attribute = p.split_attribute
            merged_attributes = {attribute} if attribute is not None else set()
            for i in set(failing.tolist()) | lent_from:
                merged_attributes |= pruned_attributes.get(
                    p.children[i].id, frozenset()
                )
            pruned_attributes[p.id] = frozenset(merged_attributes)
            stats.append(
                {
                    "node": p.id,
                    "released": released,
                    "complying_children": len(complying),
                    "non_complying": len(merged),
                    "lent": len(lent),
                    "holds": len(held[p.id]),
                }
            )

        root = tree.root
        leftover = held.pop(root.id)
        root_stats = {"lent": 0, "absorbed_groups": 0, "absorbed_records": 0}
        if len(leftover) and not accepted.pop(root.id):
            loan = self.lend(leftover, group_rows) if group_rows else None
            if loan is not None:
                lent, kept = loan
                joined = [group_nodes[g] for g in kept]
                for g, rows in kept.items():
                    group_rows[g] = rows
                leftover = np.concatenate([leftover, lent])
                root_stats["lent"] = len(lent)
            else:
                size = len(leftover)
                leftover, absorbed = self.absorb(leftover, group_nodes, group_rows)
                gone = set(absorbed.tolist())
                joined = [group_nodes[g] for g in sorted(gone)]
                stay = [g for g in range(len(group_nodes)) if g not in gone]
                group_nodes[:] = [group_nodes[g] for g in stay]
                group_rows[:] = [group_rows[g] for g in stay]
                root_stats["absorbed_groups"] = len(gone)
                root_stats["absorbed_records"] = len(leftover) - size
            pruned_attributes[root.id] = pruned_attributes.get(
                root.id, frozenset()
            ) | self._attributes_of(joined, pruned_attributes)
        if len(leftover):
            group_nodes.append(root.id)
            group_rows.append(leftover)
        return _Pruned(
            group_nodes, group_rows, pruned_attributes, stats, empty, root_stats
        )

    def _attributes_of(
        self, nodes: Sequence[int], pruned_attributes: dict[int, frozenset[str]]
    ) -> frozenset[str]:
        """Attributes tested on, or pruned below, the paths of ``nodes``."""
        out: set[str] = set()
        for node_id in set(nodes):
            out |= {test.attribute for test in self.tree.path(self.tree.node(node_id))}
            out |= pruned_attributes.get(node_id, frozenset())
        return frozenset(out)
