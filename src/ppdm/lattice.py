"""The full-domain generalization lattice and a fast evaluator of its nodes.

A node is a vector of generalization levels, one per quasi-identifier. The
table is encoded once: every quasi-identifier to its hierarchy's leaf codes,
then grouped to the distinct leaf combinations with their row counts, the set
of sensitive values present (a bit mask) and the class-label counts. A node is
evaluated by *rolling up* such a group table: map each changed attribute's
codes to the coarser level, hash the combined key, and add up the groups that
merged. :meth:`GeneralizationLattice.evaluate_all` walks a spanning tree of the
lattice so that every node is rolled up from a parent one step below it, whose
table is already much smaller than the data.

Node semantics (Dewri et al. [1]_): with a suppression limit ``eta`` rows, and
``E_i`` the rows in classes of size ``i``, the rows of ``E_1 .. E_j`` are
suppressed for the largest ``j`` whose cumulative count stays ``<= eta`` (never
all classes); the node's ``k`` is the smallest remaining class size. On what
remains:

========  ====================================================================
``k``     smallest class size
``sk``    S_k: sum over kept rows of their class size
``l``     distinct l: fewest distinct sensitive values in a class (0 if none)
``sl``    S_l: sum over kept rows of the count of their sensitive value in
          their class (only with ``spread_l=True``)
``glm``   Iyengar's general loss metric [2]_: sum over kept cells of the
          label's loss (see :mod:`ppdm.hierarchies`), plus one per
          quasi-identifier cell of every suppressed row
``cm``    Iyengar's classification metric: rows outside their class's majority
          label, plus the suppressed rows, over all rows (needs a target)
========  ====================================================================

:meth:`GeneralizationLattice.evaluate` also takes a requirement ``k``/``l``:
then exactly the classes smaller than ``k`` or with fewer than ``l`` distinct
sensitive values are suppressed and the node is *feasible* when they fit in
``eta`` (the semantics of an optimal single-objective search).

References
----------
.. [1] Dewri, R., Ray, I., Ray, I., Whitley, D.: On the Identification of
   Property Based Generalizations in Microdata Anonymization. In: Data and
   Applications Security and Privacy XXIV (DBSec 2010), LNCS 6166, Springer
   (2010) 81-96.
.. [2] Iyengar, V.S.: Transforming Data to Satisfy Privacy Constraints. In:
   Proceedings of the 8th ACM SIGKDD International Conference on Knowledge
   Discovery and Data Mining (2002) 279-288.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.hierarchies import Hierarchy
from ppdm.model import AnonymizationSpec

__all__ = [
    "OBJECTIVES",
    "NodeMetrics",
    "LatticeEvaluation",
    "GeneralizationLattice",
    "pareto_mask",
    "nondominated_boxes",
    "convergence_error",
    "representation_ratio",
    "require_hierarchies",
    "suppression_budget",
    "generalized_release",
]

#: Quality indices a node is measured on, with their sense (+1 maximise,
#: -1 minimise): privacy indices are maximised, losses minimised.
OBJECTIVES: dict[str, int] = {"k": 1, "sk": 1, "l": 1, "sl": 1, "glm": -1, "cm": -1}

_MASK_BITS = 64  # sensitive values beyond this use (class, value) pairs for l


@dataclass(frozen=True)
class NodeMetrics:
    """Quality indices of one lattice node (see the module table)."""

    levels: tuple[int, ...]
    k: int
    sk: int
    l: int  # noqa: E741 - the literature's name
    sl: int
    glm: float
    cm: float
    suppressed: int
    feasible: bool = True

    def value(self, name: str) -> float:
        """The index called ``name`` (a key of :data:`OBJECTIVES`)."""
        return float(getattr(self, name))

    def as_dict(self, attributes: Sequence[str]) -> dict[str, Any]:
        """JSON-ready record: levels by attribute and every index."""
        return {
            "levels": dict(zip(attributes, self.levels)),
            "k": self.k,
            "l": self.l,
            "S_k": self.sk,
            "S_l": self.sl,
            "GLM": self.glm,
            "CM": None if math.isnan(self.cm) else self.cm,
            "suppressed": self.suppressed,
        }


@dataclass(frozen=True)
class LatticeEvaluation:
    """Every node's indices, one array per index, rows in lattice-index order."""

    nodes: np.ndarray
    k: np.ndarray
    sk: np.ndarray
    l: np.ndarray  # noqa: E741
    sl: np.ndarray
    glm: np.ndarray
    cm: np.ndarray
    suppressed: np.ndarray

    def values(self, objectives: Sequence[str]) -> np.ndarray:
        """Index values, shape (n_nodes, len(objectives))."""
        return np.column_stack([getattr(self, name) for name in objectives]).astype(
            float
        )


@dataclass(frozen=True)
class _Groups:
    """Distinct generalized combinations of a node (its equivalence classes)."""

    codes: np.ndarray  # (G, s) label codes at the node's levels
    count: np.ndarray  # (G,) rows
    mask: np.ndarray | None  # (G,) uint64 bit set of sensitive values
    target: np.ndarray | None  # (G, n_labels) class-label counts
    pair_group: np.ndarray | None  # (P,) (group, sensitive value) pairs ...
    pair_value: np.ndarray | None
    pair_count: np.ndarray | None


def suppression_budget(spec: AnonymizationSpec, n_rows: int) -> int:
    """Rows that may be suppressed: ``floor(suppression_limit * n_rows)``."""
    return int(math.floor(spec.suppression_limit * n_rows + 1e-9))


def require_hierarchies(owner: str, spec: AnonymizationSpec) -> dict[str, Hierarchy]:
    """The spec's hierarchies of its quasi-identifiers, or an error naming the gap."""
    available = dict(spec.hierarchies or {})
    missing = [q for q in spec.quasi_identifiers if q not in available]
    if missing:
        raise InvalidParameterError(
            f"{owner}: no generalization hierarchy for quasi-identifier(s) "
            f"{missing}; spec.hierarchies has {sorted(available)}"
        )
    return {q: available[q] for q in spec.quasi_identifiers}


class GeneralizationLattice:
    """The lattice of a table under per-attribute hierarchies, with an evaluator.

    Build it with :meth:`from_table` (the table is encoded and grouped once).

    Attributes
    ----------
    attributes : tuple of str
        Quasi-identifiers, in node-vector order.
    heights : numpy.ndarray
        Hierarchy height per attribute; a node's level ``j`` is in ``0..heights[j]``.
    n_rows : int
    eta : int
        Suppression budget in rows.

    Examples
    --------
    >>> from ppdm.hierarchies import Hierarchy
    >>> table = pd.DataFrame({"sex": ["F", "F", "M", "M", "M", "F"],
    ...                       "zip": ["a", "b", "a", "a", "b", "b"]})
    >>> hs = {c: Hierarchy.from_rows(c, [[v, "*"] for v in sorted(set(table[c]))],
    ...                               source=c) for c in table}
    >>> lattice = GeneralizationLattice.from_table(table, ["sex", "zip"], hs)
    >>> lattice.size, lattice.evaluate((0, 1)).k, lattice.evaluate((0, 0)).k
    (4, 3, 1)
    """

    def __init__(
        self,
        attributes: tuple[str, ...],
        hierarchies: tuple[Hierarchy, ...],
        base: _Groups,
        n_rows: int,
        eta: int,
        n_sensitive: int,
        has_target: bool,
    ) -> None:
        self.attributes = attributes
        self.hierarchies = hierarchies
        self.heights = np.array([h.height for h in hierarchies], dtype=np.int64)
        self.n_rows = n_rows
        self.eta = eta
        self._base = base
        self._n_sensitive = n_sensitive
        self._has_target = has_target
        self._loss = [
            [h.label_loss(j) for j in range(h.height + 1)] for h in hierarchies
        ]
        self._radix = [
            [h.n_labels(j) for j in range(h.height + 1)] for h in hierarchies
        ]
        self._maps: dict[tuple[int, int, int], np.ndarray] = {}
        self.evaluations = 0

    # ------------------------------------------------------------ building
    @classmethod
    def from_table(
        cls,
        table: pd.DataFrame,
        quasi_identifiers: Sequence[str],
        hierarchies: Mapping[str, Hierarchy],
        *,
        sensitive_attribute: str | None = None,
        target: str | None = None,
        suppression_limit: float = 0.0,
        spread_l: bool = False,
    ) -> GeneralizationLattice:
        """Encode and group ``table`` once.

        Parameters
        ----------
        table : pandas.DataFrame
        quasi_identifiers : sequence of str
            Every one needs a hierarchy in ``hierarchies``.
        hierarchies : mapping of str to Hierarchy
        sensitive_attribute : str, optional
            Enables ``l`` (and ``sl`` with ``spread_l``); missing is a value.
        target : str, optional
            Class label; enables ``cm``.
        suppression_limit : float, default=0.0
            Fraction of rows that may be suppressed.
        spread_l : bool, default=False
            Keep (class, sensitive value) counts for S_l (slower).
        """
        attributes = tuple(quasi_identifiers)
        missing = [q for q in attributes if q not in hierarchies]
        if missing:
            raise InvalidParameterError(
                f"no generalization hierarchy for quasi-identifier(s) {missing}"
            )
        chain = tuple(hierarchies[q] for q in attributes)
        n = len(table)
        leaf = np.column_stack([h.encode(table[q]) for q, h in zip(attributes, chain)])
        key = np.zeros(n, dtype=np.int64)
        for column, h in enumerate(chain):
            key = key * (h.missing_leaf + 1) + leaf[:, column]
        ids, uniques = pd.factorize(key)
        n_groups = len(uniques)
        first = np.zeros(n_groups, dtype=np.int64)
        first[ids] = np.arange(n)
        codes = leaf[first]
        count = np.bincount(ids, minlength=n_groups).astype(np.int64)

        mask = pair_group = pair_value = pair_count = None
        n_sensitive = 0
        if sensitive_attribute is not None:
            values, kinds = pd.factorize(table[sensitive_attribute], use_na_sentinel=False)
            n_sensitive = len(kinds)
            if n_sensitive <= _MASK_BITS:
                mask = np.zeros(n_groups, dtype=np.uint64)
                np.bitwise_or.at(mask, ids, np.left_shift(np.uint64(1), values.astype(np.uint64)))
            if spread_l or n_sensitive > _MASK_BITS:
                pair_ids, pairs = pd.factorize(ids * n_sensitive + values)
                pair_group = (pairs // n_sensitive).astype(np.int64)
                pair_value = (pairs % n_sensitive).astype(np.int64)
                pair_count = np.bincount(pair_ids, minlength=len(pairs)).astype(np.int64)
        target_counts = None
        if target is not None:
            labels, kinds = pd.factorize(table[target], use_na_sentinel=False)
            target_counts = np.bincount(
                ids * len(kinds) + labels, minlength=n_groups * len(kinds)
            ).reshape(n_groups, len(kinds))
        base = _Groups(codes, count, mask, target_counts, pair_group, pair_value, pair_count)
        eta = int(math.floor(suppression_limit * n + 1e-9))
        return cls(attributes, chain, base, n, eta, n_sensitive, target is not None)

    # ------------------------------------------------------------- lattice
    @property
    def size(self) -> int:
        """Number of nodes."""
        return int(np.prod(self.heights + 1))

    def nodes(self) -> np.ndarray:
        """Every node, shape (size, n_attributes), in lattice-index order."""
        grids = np.indices(tuple(self.heights + 1)).reshape(len(self.heights), -1)
        return grids.T.astype(np.int64)

    def index(self, levels: Sequence[int]) -> int:
        """Position of a node in :meth:`nodes` order."""
        return int(np.ravel_multi_index(tuple(levels), tuple(self.heights + 1)))

    def loss_bound(self, nodes: np.ndarray) -> np.ndarray:
        """GLM of each node without any suppression: a lower bound of its GLM.

        Suppressing a row costs one per cell, at least its generalization loss,
        so a node's GLM is never below this value; and it grows with every
        generalization step.
        """
        base = self._base
        totals = [
            [
                float(np.bincount(base.codes[:, a], weights=base.count,
                                  minlength=len(self._loss[a][0]))
                      @ self._loss[a][j][self._map(a, 0, j)])
                for j in range(h.height + 1)
            ]
            for a, h in enumerate(self.hierarchies)
        ]
        bound = np.zeros(len(nodes))
        for a in range(len(self.attributes)):
            bound += np.asarray(totals[a])[nodes[:, a]]
        return bound

    # ----------------------------------------------------------- evaluation
    def evaluate(
        self, levels: Sequence[int], *, k: int | None = None, l: int | None = None  # noqa: E741
    ) -> NodeMetrics:
        """Indices of one node (rolled up from the encoded table).

        Parameters
        ----------
        levels : sequence of int
        k, l : int, optional
            A requirement: suppress exactly the classes smaller than ``k`` or
            with fewer than ``l`` distinct sensitive values, and report whether
            that fits the budget (``feasible``). Without it, the maximal
            suppression within the budget of Dewri et al. is applied.
        """
        node = self._check(levels)
        groups = self._rollup(self._base, np.zeros_like(node), node)
        return self._metrics(groups, node, k, l)

    def evaluate_all(self, *, k: int | None = None, l: int | None = None) -> LatticeEvaluation:  # noqa: E741
        """Every node, each rolled up from its parent on a spanning tree.

        The tree's parent of a node lowers its last non-zero level by one; a
        depth-first walk keeps one group table per depth.
        """
        nodes = self.nodes()
        size = len(nodes)
        out = {name: np.zeros(size, dtype=float) for name in ("k", "sk", "l", "sl", "glm", "cm", "suppressed")}
        s = len(self.attributes)
        root = np.zeros(s, dtype=np.int64)
        stack: list[tuple[np.ndarray, _Groups, int]] = [(root, self._base, 0)]
        while stack:
            node, parent_groups, parent_changed = stack.pop()
            if node.any():
                before = node.copy()
                before[parent_changed] -= 1
                groups = self._rollup(parent_groups, before, node)
            else:
                groups = self._rollup(self._base, root, root)
            metrics = self._metrics(groups, node, k, l)
            row = self.index(node)
            for name in out:
                out[name][row] = getattr(metrics, name)
            last = int(np.flatnonzero(node)[-1]) if node.any() else 0
            for attribute in range(s - 1, last - 1, -1):
                if node[attribute] < self.heights[attribute]:
                    child = node.copy()
                    child[attribute] += 1
                    stack.append((child, groups, attribute))
        return LatticeEvaluation(
            nodes=nodes,
            k=out["k"].astype(np.int64),
            sk=out["sk"].astype(np.int64),
            l=out["l"].astype(np.int64),
            sl=out["sl"].astype(np.int64),
            glm=out["glm"],
            cm=out["cm"],
            suppressed=out["suppressed"].astype(np.int64),
        )

    def _check(self, levels: Sequence[int]) -> np.ndarray:
        node = np.asarray(levels, dtype=np.int64)
        if node.shape != self.heights.shape or (node < 0).any() or (node > self.heights).any():
            raise InvalidParameterError(
                f"node {tuple(int(v) for v in node)} is outside the lattice with "
                f"heights {tuple(int(h) for h in self.heights)} over {self.attributes}"
            )
        return node

    def _map(self, attribute: int, level: int, to_level: int) -> np.ndarray:
        key = (attribute, level, to_level)
        if key not in self._maps:
            self._maps[key] = self.hierarchies[attribute].parent_codes(level, to_level)
        return self._maps[key]

    def _rollup(self, groups: _Groups, before: np.ndarray, after: np.ndarray) -> _Groups:
        self.evaluations += 1
        columns = []
        key = np.zeros(len(groups.count), dtype=np.int64)
        for a in range(len(self.attributes)):
            column = groups.codes[:, a]
            if after[a] != before[a]:
                column = self._map(a, int(before[a]), int(after[a]))[column]
            columns.append(column)
            key = key * self._radix[a][after[a]] + column
        ids, uniques = pd.factorize(key)
        n_new = len(uniques)
        codes = np.column_stack(columns)
        if n_new == len(key):  # nothing merged: only the labels changed
            return _Groups(codes, groups.count, groups.mask, groups.target,
                           groups.pair_group, groups.pair_value, groups.pair_count)
        first = np.zeros(n_new, dtype=np.int64)
        first[ids] = np.arange(len(ids))
        count = np.bincount(ids, weights=groups.count, minlength=n_new).astype(np.int64)
        mask = None
        if groups.mask is not None:
            mask = np.zeros(n_new, dtype=np.uint64)
            np.bitwise_or.at(mask, ids, groups.mask)
        target = None
        if groups.target is not None:
            target = np.column_stack([
                np.bincount(ids, weights=groups.target[:, t], minlength=n_new)
                for t in range(groups.target.shape[1])
            ]).astype(np.int64)
        pair_group = pair_value = pair_count = None
        if groups.pair_group is not None:
            n_values = self._n_sensitive
            pair_ids, pairs = pd.factorize(ids[groups.pair_group] * n_values + groups.pair_value)
            pair_group = (pairs // n_values).astype(np.int64)
            pair_value = (pairs % n_values).astype(np.int64)
            pair_count = np.bincount(pair_ids, weights=groups.pair_count,
                                     minlength=len(pairs)).astype(np.int64)
        return _Groups(codes[first], count, mask, target, pair_group, pair_value, pair_count)

    def _distinct(self, groups: _Groups) -> np.ndarray | None:
        if groups.mask is not None:
            return np.bitwise_count(groups.mask).astype(np.int64)
        if groups.pair_group is not None:
            return np.bincount(groups.pair_group, minlength=len(groups.count))
        return None

    def _metrics(self, groups: _Groups, node: np.ndarray, k: int | None, l: int | None) -> NodeMetrics:  # noqa: E741
        count = groups.count
        distinct = self._distinct(groups)
        if k is None and l is None:
            threshold = self._suppression_threshold(count)
            kept = count > threshold
        else:
            kept = count >= (k or 1)
            if l is not None and l > 1 and distinct is not None:
                kept &= distinct >= l
        kept_count = count[kept]
        suppressed = self.n_rows - int(kept_count.sum())
        loss = np.zeros(len(count))
        for a in range(len(self.attributes)):
            loss += self._loss[a][node[a]][groups.codes[:, a]]
        glm = float(kept_count @ loss[kept]) + len(self.attributes) * suppressed
        cm = math.nan
        if groups.target is not None and self.n_rows:
            minority = (count - groups.target.max(axis=1))[kept].sum()
            cm = float(minority + suppressed) / self.n_rows
        l_value = int(distinct[kept].min()) if distinct is not None and kept.any() else 0
        sl = 0
        if groups.pair_group is not None:
            kept_pairs = kept[groups.pair_group]
            sl = int((groups.pair_count[kept_pairs] ** 2).sum())
        return NodeMetrics(
            levels=tuple(int(v) for v in node),
            k=int(kept_count.min()) if kept_count.size else 0,
            sk=int((kept_count**2).sum()),
            l=l_value,
            sl=sl,
            glm=glm,
            cm=cm,
            suppressed=suppressed,
            feasible=suppressed <= self.eta,
        )

    def _suppression_threshold(self, count: np.ndarray) -> int:
        """Largest class size j whose classes E_1..E_j fit the budget (never all)."""
        if self.eta <= 0:
            return 0
        small = count[count <= self.eta]
        if small.size == 0:
            return 0
        rows_by_size = np.bincount(small, weights=small)
        cumulative = np.cumsum(rows_by_size)
        threshold = int(np.searchsorted(cumulative, self.eta + 0.5)) - 1
        largest = int(count.max())
        return min(threshold, largest - 1)


# ----------------------------------------------------------------- fronts
def _oriented(values: np.ndarray, senses: Sequence[int]) -> np.ndarray:
    return np.asarray(values, dtype=float) * np.asarray(senses, dtype=float)


def pareto_mask(values: np.ndarray, senses: Sequence[int]) -> np.ndarray:
    """Rows of ``values`` that no other row dominates (``senses``: +1 max, -1 min)."""
    oriented = _oriented(values, senses)
    n = len(oriented)
    order = np.lexsort(oriented.T[::-1])[::-1]  # best first on the first index
    front: list[int] = []
    keep = np.zeros(n, dtype=bool)
    for row in order:  # the front is small: one vector test per row
        if front:
            members = oriented[front]
            geq = (members >= oriented[row]).all(axis=1)
            gt = (members > oriented[row]).any(axis=1)
            if (geq & gt).any():
                continue
        front.append(int(row))
        keep[row] = True
    return keep


def _boxes(values: np.ndarray, senses: Sequence[int], eps: np.ndarray) -> np.ndarray:
    return np.floor(np.asarray(values, dtype=float) / eps) * np.asarray(senses)


def nondominated_boxes(values: np.ndarray, senses: Sequence[int], eps: Sequence[float]) -> set[tuple[float, ...]]:
    """Boxes (``floor(value / eps)``, oriented) of ``values`` no other box dominates."""
    boxes = np.unique(_boxes(values, senses, np.asarray(eps, dtype=float)), axis=0)
    keep = pareto_mask(boxes, [1] * boxes.shape[1])
    return {tuple(b) for b in boxes[keep]}


def convergence_error(archive: np.ndarray, front: np.ndarray) -> float:
    """Sum over archive members of the distance to the nearest front member.

    Indices are normalised by their largest absolute value on the front
    (Dewri et al., section 7).
    """
    archive = np.asarray(archive, dtype=float)
    front = np.asarray(front, dtype=float)
    scale = np.abs(front).max(axis=0)
    scale[scale == 0] = 1.0
    a, f = archive / scale, front / scale
    distances = np.sqrt(((a[:, None, :] - f[None, :, :]) ** 2).sum(axis=2))
    return float(distances.min(axis=1).sum())


def representation_ratio(
    archive: np.ndarray, front: np.ndarray, senses: Sequence[int], eps: Sequence[float]
) -> float:
    """Fraction of the front's non-dominated boxes holding an archive member."""
    eps_array = np.asarray(eps, dtype=float)
    marked = nondominated_boxes(front, senses, eps_array)
    occupied = {tuple(b) for b in _boxes(archive, senses, eps_array)}
    return len(marked & occupied) / len(marked) if marked else 1.0


# ---------------------------------------------------------------- release
def generalized_release(
    table: pd.DataFrame,
    spec: AnonymizationSpec,
    hierarchies: Mapping[str, Hierarchy],
    levels: Sequence[int],
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The table generalized to ``levels``, violating classes suppressed.

    Classes smaller than ``spec.k`` or with fewer than ``spec.l`` distinct
    sensitive values are suppressed: all their quasi-identifiers become the
    marker. They are kept as one class of their own when there are at least
    ``k`` of them (and ``l`` distinct sensitive values), and dropped otherwise.

    Returns
    -------
    release : pandas.DataFrame
        Input column order, index reset; quasi-identifiers as strings.
    counts : dict
        ``suppressed`` rows (all QIs ``*``, kept) and ``dropped`` rows.
    """
    qis = list(spec.quasi_identifiers)
    out = table.copy()
    for q, level in zip(qis, levels):
        out[q] = hierarchies[q].generalize(table[q], int(level))
    from ppdm.measures import equivalence_classes  # the shared class primitive

    ids, n_classes = equivalence_classes(out, qis)
    sizes = np.bincount(ids, minlength=n_classes)
    bad = sizes < spec.k
    sensitive = spec.sensitive_attribute
    if spec.l > 1 and sensitive is not None:
        values, _ = pd.factorize(table[sensitive], use_na_sentinel=False)
        pairs = np.unique(ids * (values.max() + 1) + values)
        distinct = np.bincount(pairs // (values.max() + 1), minlength=n_classes)
        bad |= distinct < spec.l
    suppress = bad[ids]
    n_suppressed = int(suppress.sum())
    keep_suppressed = n_suppressed >= spec.k
    if keep_suppressed and spec.l > 1 and sensitive is not None:
        keep_suppressed = table[sensitive][suppress].nunique(dropna=False) >= spec.l
    marker = spec.suppression_marker
    for q in qis:
        column = out[q].copy()
        column[suppress] = marker
        out[q] = column
    if not keep_suppressed:
        out = out[~suppress]
    out = out.reset_index(drop=True)
    return out, {
        "suppressed": n_suppressed if keep_suppressed else 0,
        "dropped": 0 if keep_suppressed else n_suppressed,
    }
