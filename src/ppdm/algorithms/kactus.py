"""kACTUS: k-anonymity by multi-dimensional suppression guided by a classification tree.

Phase 1 grows a classification tree on the quasi-identifiers plus the target
(:class:`ppdm.trees.C45` with MinObj = k, or scikit-learn CART through
:class:`ppdm.trees.SklearnInducer`). Phase 2, :func:`anonymize_tree`, prunes it
bottom-up: a leaf with at least k instances is released with every
quasi-identifier its path does not pin suppressed; smaller leaves are merged
into their parent, and complying siblings lend extra instances so the merged
node reaches k. The project's kACTUS notes (``shared/algorithms/kactus.md``)
record the decisions the paper leaves open; this module follows them.

Beyond the paper, every privacy model of the requirement is enforced
(l-diversity in its three variants, t-closeness): a leaf complies when the
models accept its group, lending also brings the sensitive values a group
lacks, and the records left at the root are completed from the released
groups instead of being dropped (:class:`_ModelPruning`). With k-anonymity
alone the paper's algorithm runs unchanged.

References
----------
.. [1] S. Kisilevich, L. Rokach, Y. Elovici, B. Shapira, "Efficient
   Multidimensional Suppression for K-Anonymity", IEEE Transactions on
   Knowledge and Data Engineering 22(3):334-347, 2010.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any, ClassVar

import numpy as np

from ppdm._lazy import pandas as pd
from ppdm.algorithms.base import Anonymizer
from ppdm.exceptions import InfeasibleConstraintError, InvalidParameterError
from ppdm.generalization.ordered_text import text_kind
from ppdm.model import (
    SUPPRESSED,
    AnonymizationSpec,
    AttributeKind,
    Release,
    attribute_kind,
)
from ppdm.params import Boolean, Interval, Options
from ppdm.privacy import CLASS_MODELS, Requirement
from ppdm.privacy.measures import ClassPartition, SensitiveCounts
from ppdm.progress import report
from ppdm.trees.base import Interval as TreeInterval
from ppdm.trees.base import PredicateTree, TreeNode, constraint_kinds
from ppdm.values import format_interval, format_number, format_set

__all__ = ["Kactus", "KactusResult", "anonymize_tree", "path_interval"]


@dataclass
class KactusResult:
    """What :func:`anonymize_tree` produced.

    Attributes
    ----------
    table : pandas.DataFrame
        Released rows in input order (input index kept); quasi-identifier
        columns hold text (:mod:`ppdm.values` grammar): kept values, means,
        intervals, value sets or the suppression marker; missing stays missing.
    positions : numpy.ndarray of int64
        Input row position of every released row.
    group : numpy.ndarray of int64
        Released group (one group = one release of one node) of every row.
    group_nodes : list of int
        Tree node id each group was released from.
    lost : numpy.ndarray of int64
        Input positions of the dropped rows (fewer than k; none when models
        beyond k-anonymity are enforced).
    node_stats : list of dict
        Per processed node: its id, instances released from its complying
        children, instances lent to it, instances it holds after pruning.
    root_stats : dict
        With models beyond k-anonymity only: instances lent to the root's
        group by released groups (``lent``), and groups (records) merged whole
        into it (``absorbed_groups``, ``absorbed_records``); empty otherwise.
    """

    table: pd.DataFrame
    positions: np.ndarray
    group: np.ndarray
    group_nodes: list[int]
    lost: np.ndarray
    node_stats: list[dict[str, Any]] = field(default_factory=list)
    root_stats: dict[str, int] = field(default_factory=dict)


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


def anonymize_tree(
    table: pd.DataFrame,
    tree: PredicateTree,
    quasi_identifiers: Sequence[str],
    k: int,
    rng: np.random.Generator,
    *,
    lending: str = "random",
    generalize_small_siblings: bool = False,
    numeric_release: str = "mean",
    suppression_marker: str = SUPPRESSED,
    requirement: Requirement | None = None,
) -> KactusResult:
    """The paper's Anonymize(S, Q, CT, k) on a tree whose nodes hold their rows.

    Internal nodes are processed children-first (postorder), so each one has
    only leaves below it when its turn comes (the paper's "node of height 1";
    the paper leaves the order open). For a node p:

    1. a child leaf with ``>= k`` instances complies, the others add their
       count to ``nui``;
    2. if ``0 < nui < k`` and the complying children have at least
       ``required = k - nui`` extra instances (beyond k each), exactly
       ``required`` of them are lent: they stay in S and move up with the
       non-complying instances. ``lending="random"``: each complying child is
       shuffled, its first ``size - k`` instances are its extras, and the
       lent ones are drawn uniformly from all extras. ``lending="greedy"``:
       the extras are the instances closest to the non-complying ones (see
       :class:`_Distances`), and the closest extras are lent (ties broken by
       ``rng``). When ``nui >= k`` or ``nui == 0`` nothing is lent and the
       complying children release all their instances (kactus.md Decision).
    3. every complying child releases its remaining instances (suppress with
       its path), and p becomes a leaf holding the non-complying and lent
       instances.

    Finally the root's instances are released with every quasi-identifier
    suppressed if there are at least k of them, and dropped otherwise (fewer
    than k records are lost).

    With a ``requirement`` holding more than k-anonymity (l-diversity,
    t-closeness; not in the paper), "complies" means "every model accepts the
    leaf's group" (:meth:`Requirement.accepts_groups`) and k is the
    requirement's smallest acceptable class; see :class:`_ModelPruning` for
    the lending and the root. No record is dropped then: the root's group is
    completed with records lent by, or whole groups taken from, the released
    groups until the models accept it.

    suppress(R, Q, path), per quasi-identifier: pinned by an equality test
    and single-valued in R -> kept; tested only by inequalities (numeric) ->
    the mean of the attribute over R (missing values in R get it too), or,
    with ``numeric_release="interval"``, the path's interval (the
    intersection of its thresholds, e.g. ``(30, 50]``); else the suppression
    marker. With ``generalize_small_siblings`` a categorical
    attribute that the path constrains to a value set, or whose test was
    pruned away below the releasing node, is released as the value set of R
    (``{a|b}``) instead of the marker -- the paper's "Yellow OR Blue"
    proposal; a group holding a missing value of the attribute keeps the
    marker, since a value set cannot say "missing".

    Parameters
    ----------
    table : pandas.DataFrame
        The rows the tree was grown on (``tree.n_rows`` rows), in order.
    tree : PredicateTree
    quasi_identifiers : sequence of str
    k : int
        Smallest group released; with a ``requirement``, its
        ``minimal_class_size``.
    rng : numpy.random.Generator
    lending : {"random", "greedy"}, default="random"
    generalize_small_siblings : bool, default=False
    numeric_release : {"mean", "interval"}, default="mean"
    suppression_marker : str, default="*"
    requirement : Requirement, optional
        The privacy models every released group must satisfy. None, or a
        requirement of k-anonymity alone, runs the paper's algorithm.

    Returns
    -------
    KactusResult

    Raises
    ------
    InfeasibleConstraintError
        The models reject even the whole table as one class, so no group of
        records can be released.
    """
    if tree.n_rows != len(table):
        raise ValueError(
            f"the tree covers {tree.n_rows} rows; the table has {len(table)}"
        )
    if requirement is not None and k != requirement.minimal_class_size:
        raise ValueError(
            f"k={k} differs from the requirement's smallest class "
            f"({requirement.minimal_class_size})"
        )
    distances = _Distances(table, quasi_identifiers) if lending == "greedy" else None
    if requirement is None or _only_k(requirement):
        pruned = _prune_k(tree, k, rng, distances)
    else:
        pruned = _ModelPruning(table, tree, requirement, rng, distances).run()

    result = _suppress(
        table,
        tree,
        quasi_identifiers,
        pruned.group_nodes,
        pruned.group_rows,
        pruned.pruned_attributes,
        generalize_small_siblings,
        numeric_release,
        suppression_marker,
    )
    result.lost = pruned.lost
    result.node_stats = pruned.stats
    result.root_stats = pruned.root_stats
    return result


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


def _as_text(value: Any) -> str | None:
    """A released cell as text (ppdm.values grammar); missing stays missing.

    Text keeps a column of kept values, means, sets and markers one type, so
    it can be written to CSV and Parquet alike.
    """
    if (
        value is None
        or value is pd.NA
        or (isinstance(value, float) and np.isnan(value))
    ):
        return None
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, bool
    ):
        return format_number(float(value))
    return str(value)


def path_interval(tree: PredicateTree, node: TreeNode, attribute: str) -> tuple:
    """The interval ``(low, high]`` the thresholds on ``node``'s path leave."""
    low, high = -np.inf, np.inf
    for predicate in tree.path(node):
        if isinstance(predicate, TreeInterval) and predicate.attribute == attribute:
            low, high = max(low, predicate.low), min(high, predicate.high)
    return float(low), float(high)


def _suppress(
    table: pd.DataFrame,
    tree: PredicateTree,
    quasi_identifiers: Sequence[str],
    group_nodes: list[int],
    group_rows: list[np.ndarray],
    pruned_attributes: dict[int, frozenset[str]],
    generalize: bool,
    numeric_release: str,
    marker: str,
) -> KactusResult:
    """suppress(R, Q, path) for every released group at once, vectorised.

    Rows are laid out group after group so per-group statistics are
    ``numpy.ufunc.reduceat`` calls over contiguous runs. Each released column
    is first an integer code per row into a small label table (the column's
    distinct values, the marker, then one label per group mean or value set),
    so no per-row Python object is made until the final ``take``.
    """
    sizes = np.array([len(rows) for rows in group_rows], dtype=np.int64)
    rows = np.concatenate(group_rows) if group_rows else np.zeros(0, dtype=np.int64)
    n_groups = len(group_rows)
    group = np.repeat(np.arange(n_groups), sizes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    kinds_of = {
        node: constraint_kinds(tree, tree.node(node)) for node in set(group_nodes)
    }
    # Input order without a sort: rows are distinct positions in [0, n), so
    # scattering their ranks over the table is O(n) (argsort is O(n log n)).
    rank = np.full(len(table), -1, dtype=np.int64)
    rank[rows] = np.arange(len(rows))
    order = rank[rank >= 0]
    positions = rows[order]

    released_qi: dict[str, np.ndarray] = {}
    for name in quasi_identifiers:
        column = table[name]
        codes, uniques = pd.factorize(column, use_na_sentinel=False)
        n_values = len(uniques)
        labels: list[Any] = [*np.asarray(uniques, dtype=object), marker]
        out = np.full(len(rows), n_values, dtype=np.int64)  # the marker
        # Dates and codes kept as text: a group's values leave as their range
        # of whole months or masked code, never as a set of exact values.
        as_text = (
            text_kind(column)
            if attribute_kind(column) is not AttributeKind.NUMERIC
            else None
        )
        if n_groups:
            kind = np.array([kinds_of[node].get(name, "") for node in group_nodes])
            c = codes.astype(np.int64, copy=False)[rows]
            single = np.minimum.reduceat(c, starts) == np.maximum.reduceat(c, starts)
            keep = (kind == "equals") & single
            if as_text is not None and as_text.kind == "date" and generalize:
                keep[:] = False
            mask = keep[group]
            out[mask] = c[mask]
            per_group: dict[int, Any] = {}
            if attribute_kind(column) is AttributeKind.NUMERIC:
                use = (kind == "interval") & ~keep
                if use.any() and numeric_release == "interval":
                    for g in np.flatnonzero(use):
                        node = tree.node(group_nodes[g])
                        low, high = path_interval(tree, node, name)
                        per_group[int(g)] = format_interval(low, high, closed="right")
                elif use.any():
                    values = column.to_numpy(dtype=float, na_value=np.nan)[rows]
                    present = ~np.isnan(values)
                    total = np.add.reduceat(np.where(present, values, 0.0), starts)
                    count = np.add.reduceat(present.astype(np.int64), starts)
                    for g in np.flatnonzero(use):
                        per_group[int(g)] = (
                            float(total[g] / count[g]) if count[g] else np.nan
                        )
            elif generalize:
                pruned = np.array(
                    [
                        name in pruned_attributes.get(node, frozenset())
                        for node in group_nodes
                    ]
                )
                use = ~keep & ((kind == "set") | (kind == "equals") | pruned)
                if use.any():
                    chosen = use[group]
                    pairs = np.unique(group[chosen] * n_values + c[chosen])
                    owners, members = pairs // n_values, pairs % n_values
                    cut = np.flatnonzero(np.diff(owners)) + 1
                    for owner, codes_in in zip(
                        np.split(owners, cut), np.split(members, cut), strict=True
                    ):
                        values = [uniques[m] for m in codes_in]
                        # a set cannot say "missing": such groups stay suppressed
                        if not any(pd.isna(v) for v in values):
                            per_group[int(owner[0])] = (
                                format_set(values)
                                if as_text is None
                                else as_text.summary(values)
                            )
            if per_group:
                label_of = np.full(n_groups, n_values, dtype=np.int64)
                for g, label in per_group.items():
                    label_of[g] = len(labels)
                    labels.append(label)
                mask = np.isin(group, np.fromiter(per_group, dtype=np.int64))
                out[mask] = label_of[group[mask]]
        table_of_labels = np.empty(len(labels), dtype=object)
        table_of_labels[:] = [_as_text(label) for label in labels]
        released_qi[name] = table_of_labels[out[order]]

    others = [c for c in table.columns if c not in released_qi]
    rest = table[others].iloc[positions]
    data = {
        name: (
            pd.Series(released_qi[name], index=rest.index, dtype=object)
            if name in released_qi
            else rest[name]
        )
        for name in table.columns
    }
    released = pd.DataFrame(data, index=rest.index)
    return KactusResult(
        table=released,
        positions=positions,
        group=group[order],
        group_nodes=list(group_nodes),
        lost=np.zeros(0, dtype=np.int64),
    )


class Kactus(Anonymizer):
    """kACTUS (Kisilevich et al. 2010): tree-guided multi-dimensional suppression.

    Grows a classification tree on the quasi-identifiers and the target, then
    prunes it bottom-up with :func:`anonymize_tree`: instances of a leaf with
    at least k members are released with the quasi-identifiers the leaf's
    path does not pin suppressed (numeric ones tested by thresholds get the
    group mean); smaller leaves merge into their parent, helped by instances
    lent from complying siblings. Fewer than k records may be dropped at the
    root (the paper's Corollary 3); they are listed in the evidence, and
    ``spec.suppression_limit`` is not applied (the loss is bounded by k, not
    by a fraction).

    Beyond the paper, every model of ``spec.requirement`` is enforced
    (distinct, entropy and recursive (c, l)-diversity, t-closeness): a leaf
    complies only when the models accept its group
    (:meth:`~ppdm.privacy.Requirement.accepts_groups`), non-complying ones are
    pruned and helped by lent instances as in the paper, the lent instances
    being chosen to bring the sensitive values the group lacks (see
    :class:`_ModelPruning`), and the requirement's smallest acceptable class
    replaces k (tree MinObj, extras). No record is dropped then: the
    fully suppressed group left at the root borrows instances from the
    released groups, or merges whole ones, until the models accept it, so
    the released sensitive distribution is the table's (t-closeness's
    reference). When the models reject even the whole table as one class
    (e.g. entropy l above the table's own diversity), no group can be
    released and :class:`InfeasibleConstraintError` is raised. With
    k-anonymity alone the release is the paper's, byte for byte.

    The release's evidence holds ``tree`` (compact JSON: node ids, parents,
    tests, sizes, majority labels), ``nodes`` (per processed internal node:
    instances released by its complying children, non-complying count,
    instances lent, instances it holds after pruning), ``groups``,
    ``records_released``, ``records_fully_suppressed`` (released at the root),
    ``lost_records`` and ``lost_positions`` (input row positions of the
    dropped rows, fewer than k) and ``suppressed_cells``; with models beyond
    k-anonymity also ``models`` (their names), ``minimal_class_size`` and
    ``root`` (instances lent to the root's group, groups and records merged
    into it).

    Parameters
    ----------
    inducer : {"c45", "sklearn"}, default="c45"
        Phase-1 tree: the C4.5-style inducer with multiway categorical splits
        and MinObj = max(k, 2) (the paper's J48 setting; k is the
        requirement's smallest acceptable class), or scikit-learn CART
        on one-hot encoded attributes with ``min_samples_leaf = k``.
    lending : {"random", "greedy"}, default="random"
        Which extra instances complying leaves lend (see
        :func:`anonymize_tree`); "random" is the paper's. "greedy" lends the
        instances closest to the non-complying ones: distance = number of
        categorical QIs differing from the non-complying instances' most
        frequent value + sum over numeric QIs of |x - their median| / the
        attribute's range (capped at 1; missing counts 1); ties by ``rng``.
    generalize_small_siblings : bool, default=False
        Release a value set ("Yellow OR Blue") instead of suppressing a
        categorical attribute whose test was pruned away (not in the paper;
        its own suggested improvement).
    pruning_confidence : float or None, default=0.25
        Confidence factor of the C4.5 inducer's error-based pruning (J48's
        default, as in the paper's experiments); ``None`` grows the unpruned
        tree. Ignored by the "sklearn" inducer.
    numeric_release : {"mean", "interval"}, default="mean"
        What a numeric quasi-identifier tested only by thresholds on the
        releasing path becomes: the group's mean (the paper's rule) or the
        path's interval, e.g. ``(30, 50]`` (not in the paper: a group mean is
        a near-unique number per group, which learners trained on the release
        can treat as a group identifier; see ``benchmarks/results/kactus.md``).

    References
    ----------
    .. [1] S. Kisilevich, L. Rokach, Y. Elovici, B. Shapira, "Efficient
       Multidimensional Suppression for K-Anonymity", IEEE Transactions on
       Knowledge and Data Engineering 22(3):334-347, 2010.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from ppdm.model import AnonymizationSpec
    >>> table = pd.DataFrame({
    ...     "sex": ["M", "M", "M", "F", "F", "F"],
    ...     "zip": ["1", "2", "1", "2", "1", "2"],
    ...     "income": ["hi", "hi", "hi", "lo", "lo", "lo"]})
    >>> spec = AnonymizationSpec.of(("sex", "zip"), None, "income", k=3)
    >>> release = Kactus().anonymize(table, spec, np.random.default_rng(0))
    >>> release.table[["sex", "zip"]].drop_duplicates().values.tolist()
    [['M', '*'], ['F', '*']]
    """

    name: ClassVar[str] = "kactus"
    summary: ClassVar[str] = (
        "kACTUS: classification-tree-guided multi-dimensional suppression "
        "(Kisilevich et al., TKDE 2010)"
    )
    supported_models: ClassVar[frozenset[str]] = CLASS_MODELS
    needs_target: ClassVar[bool] = True
    numeric_input: ClassVar[str] = "binned"
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "inducer": Options({"c45", "sklearn"}),
        "lending": Options({"random", "greedy"}),
        "generalize_small_siblings": Boolean(),
        "pruning_confidence": (Interval(Real, 0.0, 0.5, closed="right"), None),
        "numeric_release": Options({"mean", "interval"}),
    }

    def __init__(
        self,
        *,
        inducer: str = "c45",
        lending: str = "random",
        generalize_small_siblings: bool = False,
        pruning_confidence: float | None = 0.25,
        numeric_release: str = "mean",
    ) -> None:
        self.inducer = inducer
        self.lending = lending
        self.generalize_small_siblings = generalize_small_siblings
        self.pruning_confidence = pruning_confidence
        self.numeric_release = numeric_release

    def grow_tree(self, table: pd.DataFrame, spec: AnonymizationSpec) -> PredicateTree:
        """Phase 1: the classification tree on ``QI + target``.

        MinObj (``min_samples_leaf``) is the requirement's smallest acceptable
        class (k for k-anonymity alone, ``max(k, ceil(l))`` with l-diversity).
        """
        # The inducers load scipy and scikit-learn; a configuration check that
        # only builds the algorithm must not pay for them.
        from ppdm.trees.c45 import C45
        from ppdm.trees.sklearn_adapter import SklearnInducer

        X = table[list(spec.quasi_identifiers)]
        y = table[spec.target]
        smallest = spec.requirement.minimal_class_size
        if self.inducer == "sklearn":
            return SklearnInducer(min_samples_leaf=smallest).fit(X, y).tree_
        return (
            C45(min_obj=max(smallest, 2), confidence=self.pruning_confidence)
            .fit(X, y)
            .tree_
        )

    def _anonymize(
        self, table: pd.DataFrame, spec: AnonymizationSpec, rng: np.random.Generator
    ) -> Release:
        requirement = spec.requirement
        if spec.target is None:
            raise InvalidParameterError(
                "kactus needs a target to grow its tree; got None"
            )
        if spec.target in spec.quasi_identifiers:
            raise InvalidParameterError(
                f"target {spec.target!r} is also a quasi-identifier; the target "
                "is never altered"
            )
        smallest = requirement.minimal_class_size
        if len(table) < smallest:
            raise InfeasibleConstraintError(
                f"kactus cannot release {requirement} data from {len(table)} rows "
                f"(classes need at least {smallest})"
            )
        tree = self.grow_tree(table, spec)
        report(0.5, f"kactus: tree grown ({len(tree.leaves)} leaves)")
        result = anonymize_tree(
            table,
            tree,
            spec.quasi_identifiers,
            smallest,
            rng,
            lending=self.lending,
            generalize_small_siblings=self.generalize_small_siblings,
            numeric_release=self.numeric_release,
            suppression_marker=spec.suppression_marker,
            requirement=requirement,
        )
        released = result.table
        qi = list(spec.quasi_identifiers)
        suppressed = int((released[qi] == spec.suppression_marker).to_numpy().sum())
        root_groups = [
            g for g, node in enumerate(result.group_nodes) if node == tree.root.id
        ]
        evidence = {
            "tree": tree.to_dict(),
            "inducer": self.inducer,
            "k": int(spec.k),
            "nodes": result.node_stats,
            "groups": len(result.group_nodes),
            "records_released": len(released),
            "records_fully_suppressed": int(np.isin(result.group, root_groups).sum()),
            "lost_records": len(result.lost),
            "lost_positions": [int(i) for i in result.lost],
            "suppressed_cells": suppressed,
        }
        if result.root_stats:
            evidence["models"] = list(requirement.model_names)
            evidence["minimal_class_size"] = int(smallest)
            evidence["root"] = dict(result.root_stats)
        return self._release(released, spec, table, evidence)
