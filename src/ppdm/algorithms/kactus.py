"""kACTUS: k-anonymity by multi-dimensional suppression guided by a classification tree.

Phase 1 grows a classification tree on the quasi-identifiers plus the target
(:class:`ppdm.trees.C45` with MinObj = k, or scikit-learn CART through
:class:`ppdm.trees.SklearnInducer`). Phase 2, :func:`anonymize_tree`, prunes it
bottom-up: a leaf with at least k instances is released with every
quasi-identifier its path does not pin suppressed; smaller leaves are merged
into their parent, and complying siblings lend extra instances so the merged
node reaches k. The project's kACTUS notes (``shared/algorithms/kactus.md``)
record the decisions the paper leaves open; this module follows them.

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
import pandas as pd

from ppdm.algorithms.base import Anonymizer
from ppdm.exceptions import InfeasibleConstraintError, InvalidParameterError
from ppdm.model import (
    SUPPRESSED,
    AnonymizationSpec,
    AttributeKind,
    Release,
    attribute_kind,
)
from ppdm.params import Boolean, Interval, Options
from ppdm.progress import report
from ppdm.trees.base import Interval as TreeInterval
from ppdm.trees.base import PredicateTree, TreeNode, constraint_kinds
from ppdm.trees.c45 import C45
from ppdm.trees.sklearn_adapter import SklearnInducer
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
        Input positions of the dropped rows (fewer than k).
    node_stats : list of dict
        Per processed node: its id, instances released from its complying
        children, instances lent to it, instances it holds after pruning.
    """

    table: pd.DataFrame
    positions: np.ndarray
    group: np.ndarray
    group_nodes: list[int]
    lost: np.ndarray
    node_stats: list[dict[str, Any]] = field(default_factory=list)


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
    rng : numpy.random.Generator
    lending : {"random", "greedy"}, default="random"
    generalize_small_siblings : bool, default=False
    numeric_release : {"mean", "interval"}, default="mean"
    suppression_marker : str, default="*"

    Returns
    -------
    KactusResult
    """
    if tree.n_rows != len(table):
        raise ValueError(
            f"the tree covers {tree.n_rows} rows; the table has {len(table)}"
        )
    distances = _Distances(table, quasi_identifiers) if lending == "greedy" else None
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

    result = _suppress(
        table,
        tree,
        quasi_identifiers,
        group_nodes,
        group_rows,
        pruned_attributes,
        generalize_small_siblings,
        numeric_release,
        suppression_marker,
    )
    result.lost = lost
    result.node_stats = stats
    return result


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
        if n_groups:
            kind = np.array([kinds_of[node].get(name, "") for node in group_nodes])
            c = codes.astype(np.int64, copy=False)[rows]
            single = np.minimum.reduceat(c, starts) == np.maximum.reduceat(c, starts)
            keep = (kind == "equals") & single
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
                            per_group[int(owner[0])] = format_set(values)
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
    by a fraction). kACTUS is a k-anonymity algorithm: ``spec.l > 1`` is
    rejected (no l-diversity check of the released leaves is implemented).

    The release's evidence holds ``tree`` (compact JSON: node ids, parents,
    tests, sizes, majority labels), ``nodes`` (per processed internal node:
    instances released by its complying children, non-complying count,
    instances lent, instances it holds after pruning), ``groups``,
    ``records_released``, ``records_fully_suppressed`` (released at the root),
    ``lost_records`` and ``lost_positions`` (input row positions of the
    dropped rows, fewer than k) and ``suppressed_cells``.

    Parameters
    ----------
    inducer : {"c45", "sklearn"}, default="c45"
        Phase-1 tree: the C4.5-style inducer with multiway categorical splits
        and MinObj = max(k, 2) (the paper's J48 setting), or scikit-learn CART
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
    supported_models: ClassVar[frozenset[str]] = frozenset(
        {
            "k-anonymity",
            "distinct-l-diversity",
            "entropy-l-diversity",
            "recursive-cl-diversity",
            "t-closeness",
        }
    )
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
        """Phase 1: the classification tree on ``QI + target`` (MinObj = k)."""
        X = table[list(spec.quasi_identifiers)]
        y = table[spec.target]
        if self.inducer == "sklearn":
            return SklearnInducer(min_samples_leaf=spec.k).fit(X, y).tree_
        return (
            C45(min_obj=max(spec.k, 2), confidence=self.pruning_confidence)
            .fit(X, y)
            .tree_
        )

    def _anonymize(
        self, table: pd.DataFrame, spec: AnonymizationSpec, rng: np.random.Generator
    ) -> Release:
        if spec.l > 1:
            raise InvalidParameterError(
                f"kactus supports only l = 1 (a k-anonymity algorithm); got l={spec.l}"
            )
        if spec.target is None:
            raise InvalidParameterError(
                "kactus needs a target to grow its tree; got None"
            )
        if spec.target in spec.quasi_identifiers:
            raise InvalidParameterError(
                f"target {spec.target!r} is also a quasi-identifier; the target "
                "is never altered"
            )
        if len(table) < spec.k:
            raise InfeasibleConstraintError(
                f"kactus cannot release {spec.k}-anonymous data from {len(table)} rows"
            )
        tree = self.grow_tree(table, spec)
        report(0.5, f"kactus: tree grown ({len(tree.leaves)} leaves)")
        result = anonymize_tree(
            table,
            tree,
            spec.quasi_identifiers,
            spec.k,
            rng,
            lending=self.lending,
            generalize_small_siblings=self.generalize_small_siblings,
            numeric_release=self.numeric_release,
            suppression_marker=spec.suppression_marker,
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
        return self._release(released, spec, table, evidence)
