"""The full-domain generalization lattice and a fast evaluator of its nodes.

A node is a vector of generalization levels, one per quasi-identifier. The
table is encoded once: every quasi-identifier to its hierarchy's leaf codes,
then grouped to the distinct leaf combinations with their row counts, the set
of sensitive values present (a bit mask) and the class-label counts. A node is
evaluated by *rolling up* such a group table: map each changed attribute's
codes to the coarser level, hash the combined key, and add up the groups that
merged. :meth:`GeneralizationLattice.evaluate_all` goes layer by layer (by
level sum) along a spanning tree of the lattice, so that every node is rolled
up from a parent one step below it, whose table is already much smaller than
the data; the children of a layer are rolled up in vectorised chunks. GLM is
summed in integers (losses scaled by a common denominator), so a node's value
does not depend on the path that evaluated it.

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
          label's loss (see :mod:`ppdm.generalization.hierarchies`), plus one per
          quasi-identifier cell of every suppressed row
``cm``    Iyengar's classification metric: rows outside their class's majority
          label, plus the suppressed rows, over all rows (needs a target)
========  ====================================================================

:meth:`GeneralizationLattice.evaluate` also takes bounds ``k``/``l``:
then exactly the classes smaller than ``k`` or with fewer than ``l`` distinct
sensitive values are suppressed and the node is *feasible* when they fit in
``eta`` (the semantics of an optimal single-objective search). Size and
distinct values are all that k-anonymity and distinct l-diversity ask, so for
a requirement of those models alone (``Requirement.decided_by_bounds``) these
bounds *are* the requirement.

Any other privacy model (entropy or recursive (c, l)-diversity, t-closeness)
is decided by the model objects themselves: a lattice built with a
``requirement`` answers :meth:`GeneralizationLattice.decide`, which uses the
bounds only to reject a node early and otherwise materializes the node's
classes and asks :meth:`ppdm.privacy.Requirement.accepts_groups` about each.
What a node releases then follows :func:`release_plan`: the rejected classes
are suppressed; the suppressed rows are released as one class of their own
(every quasi-identifier the suppression marker, merged with a class whose
labels are all the marker) when every model accepts that class, else they are
dropped, and the rest is asked again, since dropping rows changes the table
distribution t-closeness compares with. A node is feasible when the rows so
suppressed fit ``eta`` and something is left to release;
:func:`generalized_release` releases exactly that, so the released table
passes :func:`ppdm.verify.verify_tables`.

Out of core, the lattice is built from a frequency table
(:meth:`GeneralizationLattice.from_frequencies`: the distinct combinations of
quasi-identifier, sensitive and target values, each weighted by its count);
it evaluates and decides every node exactly as
:meth:`GeneralizationLattice.from_table` on the rows it describes, and
:func:`generalized_recoding` gives what each distinct quasi-identifier
combination becomes in :func:`generalized_release`'s table.

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

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.generalization.hierarchies import Hierarchy
from ppdm.generalization.lattice_metrics import (
    LatticeEvaluation,
    NodeMetrics,
    _Batch,
    batch_metrics,
    lattice_evaluation,
)
from ppdm.generalization.lattice_release import (
    generalized_recoding,
    generalized_release,
)
from ppdm.generalization.suppression import release_plan
from ppdm.model import AnonymizationSpec
from ppdm.privacy.evaluation import EncodedSensitive
from ppdm.privacy.requirement import Requirement

if TYPE_CHECKING:
    from ppdm.scale.frequency import FrequencyTable

__all__ = [
    "OBJECTIVES",
    "GeneralizationLattice",
    "LatticeEvaluation",
    "NodeMetrics",
    "generalized_recoding",
    "generalized_release",
    "require_hierarchies",
    "suppression_budget",
]

#: Quality indices a node is measured on, with their sense (+1 maximise,
#: -1 minimise): privacy indices are maximised, losses minimised.
OBJECTIVES: dict[str, int] = {"k": 1, "sk": 1, "l": 1, "sl": 1, "glm": -1, "cm": -1}

_MASK_BITS = 64  # sensitive values beyond this use (class, value) pairs for l
#: Rows of a real-valued lower bound taken as float noise when set against
#: the integer suppression budget (a bound is never rounded up to prune).
_ROWS_TOLERANCE = 1e-6


def suppression_budget(spec: AnonymizationSpec, n_rows: int) -> int:
    """Rows that may be suppressed: ``floor(suppression_limit * n_rows)``."""
    return math.floor(spec.suppression_limit * n_rows + 1e-9)


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


def _loss_scale(hierarchies: Sequence[Hierarchy]) -> int:
    """Common denominator of every label loss, so GLM sums are exact integers.

    Exact sums make a node's GLM independent of the roll-up path that reached
    it, so nodes compare equal (and fall in the same box) however evaluated.
    """
    scale = 1
    for h in hierarchies:
        scale = math.lcm(scale, max(len(h.leaves) - 1, 1))
    return scale


def _count(ids: np.ndarray, n: int, weights: np.ndarray | None) -> np.ndarray:
    """Rows per id ``0..n-1`` (int64): one per unit, or the units' ``weights``."""
    # bincount adds weights as float64: exact for totals below 2**53 rows.
    return np.bincount(ids, weights=weights, minlength=n).astype(np.int64)


def _uint_for(bits: int) -> type:
    for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
        if bits <= np.dtype(dtype).itemsize * 8:
            return dtype
    raise ValueError(bits)


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
    evaluations : int
        Nodes evaluated so far (a cost counter).
    requirement : Requirement or None
        The privacy requirement :meth:`decide` enforces (given to
        :meth:`from_table`).
    sensitive_attribute : str or None
        The attribute behind the ``l`` index (its distinct values per class).

    Examples
    --------
    >>> from ppdm.generalization.hierarchies import Hierarchy
    >>> table = pd.DataFrame({"sex": ["F", "F", "M", "M", "M", "F"],
    ...                       "zip": ["a", "b", "a", "a", "b", "b"]})
    >>> hs = {c: Hierarchy.from_rows(c, [[v, "*"] for v in sorted(set(table[c]))],
    ...                               source=c) for c in table}
    >>> lattice = GeneralizationLattice.from_table(table, ["sex", "zip"], hs)
    >>> lattice.size, lattice.evaluate((0, 1)).k, lattice.evaluate((0, 0)).k
    (4, 3, 1)
    """

    #: Rows of concatenated class tables handled by one vectorised step of
    #: :meth:`evaluate_all` (bounds its memory).
    chunk_rows: int = 1 << 16

    def __init__(
        self,
        attributes: tuple[str, ...],
        hierarchies: tuple[Hierarchy, ...],
        leaf_groups: tuple[Any, ...],
        n_rows: int,
        eta: int,
        n_sensitive: int,
    ) -> None:
        self.attributes = attributes
        self.hierarchies = hierarchies
        self.heights = np.array([h.height for h in hierarchies], dtype=np.int64)
        self.n_rows = n_rows
        self.eta = eta
        self.evaluations = 0
        self._n_sensitive = n_sensitive
        self._scale = _loss_scale(hierarchies)
        if self._scale > 2**40:
            raise InvalidParameterError(
                f"hierarchies of {attributes} have leaf counts whose common "
                f"denominator {self._scale} is too large for exact loss sums"
            )
        self._loss = [
            [
                np.rint(h.label_loss(j) * self._scale).astype(np.int64)
                for j in range(h.height + 1)
            ]
            for h in hierarchies
        ]
        self._radix = np.array([h.n_labels(0) for h in hierarchies], dtype=np.int64)
        self._keyspace = math.prod(int(r) for r in self._radix)
        if self._keyspace >= 2**62:
            raise InvalidParameterError(
                f"the leaf combinations of {attributes} ({self._keyspace}) do not "
                "fit a 62-bit key; use fewer or coarser quasi-identifiers"
            )
        # Fixed radices (the level-0 label counts) let a change of one
        # attribute update the key in place: key += (new - old) * multiplier.
        self._multipliers = [
            math.prod(int(r) for r in self._radix[a + 1 :])
            for a in range(len(attributes))
        ]
        self._maps: dict[tuple[int, int, int], np.ndarray] = {}
        codes, count, mask, target, pairs = leaf_groups
        key = np.zeros(len(count), dtype=np.int64)
        loss = np.zeros(len(count), dtype=np.int64)
        for a, column in enumerate(codes):
            key += column * self._multipliers[a]
            loss += self._loss[a][0][column]
        self._base = _Batch(
            key, loss, count, mask, target, np.array([0, len(count)]), *pairs
        )
        self._base_codes = codes
        self.requirement: Requirement | None = None
        self.sensitive_attribute: str | None = None
        # Set by from_table / from_frequencies with a requirement: what
        # decide() needs per row (per combination, with its count as weight).
        self._row_group: np.ndarray | None = None
        self._sensitive: pd.DataFrame | None = None
        self._weights: np.ndarray | None = None
        self._encoded: dict[str, EncodedSensitive] | None = None
        self._marker: dict[tuple[int, int], np.ndarray] = {}

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
        requirement: Requirement | None = None,
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
        requirement : Requirement, optional
            The privacy requirement :meth:`decide` enforces; its sensitive
            attributes are coded once here. Its quasi-identifiers must be
            ``quasi_identifiers``.
        """
        return cls._from_units(
            table,
            None,
            quasi_identifiers,
            hierarchies,
            sensitive_attribute=sensitive_attribute,
            target=target,
            suppression_limit=suppression_limit,
            spread_l=spread_l,
            requirement=requirement,
        )

    @classmethod
    def from_frequencies(
        cls,
        frequencies: FrequencyTable,
        quasi_identifiers: Sequence[str],
        hierarchies: Mapping[str, Hierarchy],
        *,
        sensitive_attribute: str | None = None,
        target: str | None = None,
        suppression_limit: float = 0.0,
        spread_l: bool = False,
        requirement: Requirement | None = None,
    ) -> GeneralizationLattice:
        """The lattice of the table ``frequencies`` describes, from its counts.

        The same as :meth:`from_table` on the rows the frequency table stands
        for (:meth:`~ppdm.scale.frequency.FrequencyTable.expand`): each
        distinct combination is grouped as its rows would be, weighted by its
        count, so every :meth:`evaluate`, :meth:`evaluate_all` and
        :meth:`decide` gives the same result, at a cost that grows with the
        distinct combinations, not with the rows. The frequency table's
        columns must include the quasi-identifiers, the requirement's
        sensitive attributes, ``sensitive_attribute`` and ``target``.

        Parameters are those of :meth:`from_table`; ``suppression_limit`` is a
        fraction of the rows described (:attr:`FrequencyTable.n_rows`).
        """
        return cls._from_units(
            frequencies.keys,
            frequencies.counts,
            quasi_identifiers,
            hierarchies,
            sensitive_attribute=sensitive_attribute,
            target=target,
            suppression_limit=suppression_limit,
            spread_l=spread_l,
            requirement=requirement,
        )

    @classmethod
    def _from_units(
        cls,
        units: pd.DataFrame,
        weights: np.ndarray | None,
        quasi_identifiers: Sequence[str],
        hierarchies: Mapping[str, Hierarchy],
        *,
        sensitive_attribute: str | None,
        target: str | None,
        suppression_limit: float,
        spread_l: bool,
        requirement: Requirement | None,
    ) -> GeneralizationLattice:
        """Group ``units`` (rows, or a frequency table's combinations with
        their counts as ``weights``) into the leaf combinations."""
        attributes = tuple(quasi_identifiers)
        if requirement is not None and set(requirement.quasi_identifiers) != set(
            attributes
        ):
            raise InvalidParameterError(
                f"the requirement is over {list(requirement.quasi_identifiers)}, "
                f"the lattice over {list(attributes)}"
            )
        missing = [q for q in attributes if q not in hierarchies]
        if missing:
            raise InvalidParameterError(
                f"no generalization hierarchy for quasi-identifier(s) {missing}"
            )
        chain = tuple(hierarchies[q] for q in attributes)
        n_units = len(units)
        n = n_units if weights is None else int(weights.sum())
        leaf = [h.encode(units[q]) for q, h in zip(attributes, chain)]
        key = np.zeros(n_units, dtype=np.int64)
        for column, h in zip(leaf, chain):
            key = key * (h.missing_leaf + 1) + column
        ids, uniques = pd.factorize(key)
        n_groups = len(uniques)
        first = np.zeros(n_groups, dtype=np.int64)
        first[ids] = np.arange(n_units)
        codes = tuple(h.level_codes(0)[column[first]] for column, h in zip(leaf, chain))
        count = _count(ids, n_groups, weights)

        mask = None
        pairs: tuple[Any, Any, Any] = (None, None, None)
        n_sensitive = 0
        if sensitive_attribute is not None:
            values, kinds = pd.factorize(
                units[sensitive_attribute], use_na_sentinel=False
            )
            n_sensitive = max(len(kinds), 1)
            if n_sensitive <= _MASK_BITS:
                dtype = _uint_for(n_sensitive)
                mask = np.zeros(n_groups, dtype=dtype)
                bits = np.left_shift(dtype(1), values.astype(dtype))
                if weights is not None:  # a combination of no rows holds no value
                    bits[weights == 0] = 0
                np.bitwise_or.at(mask, ids, bits)
            if spread_l or n_sensitive > _MASK_BITS:
                pair_ids, found = pd.factorize(ids * n_sensitive + values)
                pair_count = _count(pair_ids, len(found), weights)
                held = pair_count > 0
                pairs = (
                    (found[held] // n_sensitive).astype(np.int64),
                    (found[held] % n_sensitive).astype(np.int64),
                    pair_count[held],
                )
        target_counts = None
        if target is not None:
            labels, kinds = pd.factorize(units[target], use_na_sentinel=False)
            target_counts = tuple(
                _count(
                    ids[labels == t],
                    n_groups,
                    None if weights is None else weights[labels == t],
                )
                for t in range(len(kinds))
            )
        eta = math.floor(suppression_limit * n + 1e-9)
        lattice = cls(
            attributes,
            chain,
            (codes, count, mask, target_counts, pairs),
            n,
            eta,
            n_sensitive,
        )
        lattice.sensitive_attribute = sensitive_attribute
        if requirement is not None:
            sensitive = units[list(requirement.sensitive_attributes)]
            lattice.requirement = requirement
            lattice._row_group = np.asarray(ids, dtype=np.int64)
            lattice._sensitive = sensitive
            lattice._weights = weights
            lattice._encoded = requirement.encode(sensitive, weights=weights)
        return lattice

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
        so a node's GLM is never below this value; and it only grows with
        generalization.
        """
        base = self._base
        bound = np.zeros(len(nodes), dtype=np.int64)
        for a, h in enumerate(self.hierarchies):
            codes = self._base_codes[a]
            per_label = np.bincount(
                codes, weights=base.count, minlength=h.n_labels(0)
            ).astype(np.int64)
            totals = np.array(
                [
                    per_label @ self._loss[a][j][self._map(a, 0, j)]
                    for j in range(h.height + 1)
                ]
            )
            bound += totals[np.asarray(nodes)[:, a]]
        return bound / self._scale

    # ----------------------------------------------------------- evaluation
    def evaluate(
        self,
        levels: Sequence[int],
        *,
        k: int | None = None,
        l: int | None = None,
    ) -> NodeMetrics:
        """Indices of one node (rolled up from the encoded table).

        Parameters
        ----------
        levels : sequence of int
        k, l : int, optional
            Bounds: suppress exactly the classes smaller than ``k`` or with
            fewer than ``l`` distinct sensitive values, and report whether that
            fits the budget (``feasible``). Without them, the maximal
            suppression within the budget of Dewri et al. is applied.
        """
        node = self._check(levels)
        batch, _ = self._rollup(node)
        metrics = self._batch_metrics(batch, k, l)
        self.evaluations += 1
        feasible = bool(metrics["suppressed"][0] <= self.eta)
        bounded = k is not None or l is not None
        return self._node_metrics(node, metrics, feasible, bounded and not feasible)

    # ----------------------------------------------------------- requirement
    @property
    def requirement_bounds(self) -> tuple[int, int]:
        """Smallest class size and fewest distinct values of
        :attr:`sensitive_attribute` a class needs under :attr:`requirement`."""
        requirement = self._require_requirement()
        distinct = max(
            (
                m.minimal_distinct_values
                for m in requirement.models
                if m.uses_sensitive_attribute
                and m.sensitive_attribute == self.sensitive_attribute
            ),
            default=1,
        )
        return requirement.minimal_class_size, int(distinct)

    @property
    def decided_by_bounds(self) -> bool:
        """Whether :attr:`requirement_bounds` decide the requirement exactly.

        True when every model is decided by class size and distinct values
        (k-anonymity, distinct l-diversity) and every distinct-value bound is
        on :attr:`sensitive_attribute`, whose values the lattice tracks.
        """
        requirement = self._require_requirement()
        return requirement.decided_by_bounds and set(
            requirement.sensitive_attributes
        ) <= {self.sensitive_attribute}

    def decide(self, levels: Sequence[int]) -> NodeMetrics:
        """One node under :attr:`requirement`, decided by the privacy models.

        The node's classes that some model rejects are suppressed and the
        release is planned by :func:`release_plan` (the suppressed rows kept as
        one class when every model accepts it, else dropped and the rest asked
        again); the node is ``feasible`` when that fits the budget. The indices
        are those of what would be released (suppressed and dropped rows
        count as suppressed). When :attr:`decided_by_bounds`, this is
        :meth:`evaluate` with the requirement's bounds; otherwise the bounds
        first reject nodes cheaply (a class failing them fails a model), and
        the models decide the rest.

        Raises
        ------
        InvalidParameterError
            The lattice was built without a requirement.
        """
        requirement = self._require_requirement()
        size, distinct = self.requirement_bounds
        if self.decided_by_bounds:
            return self.evaluate(levels, k=size, l=distinct)
        node = self._check(levels)
        batch, group_class = self._rollup(node)
        self.evaluations += 1
        bound = self._batch_metrics(batch, size, distinct)
        if bound["suppressed"][0] > self.eta:
            # Rows in classes too small, or with too few distinct sensitive
            # values, stay in such classes at every more specific node.
            return self._node_metrics(node, bound, False, True, infeasible_below=True)
        assert self._row_group is not None and self._sensitive is not None
        plan = release_plan(
            requirement,
            self._sensitive,
            group_class[self._row_group],
            len(batch.count),
            self._marker_classes(node, batch.key),
            eta=self.eta,
            encoded=self._encoded,
            weights=self._weights,
        )
        metrics = self._batch_metrics(batch, None, None, kept=~plan.suppress)
        over_budget = plan.rejected > self.eta
        # Rows every more specific node rejects too, whatever the models'
        # monotonicity: above the budget, nothing below this node is feasible.
        below = over_budget and (
            requirement.rows_rejected_in_refinements(
                group_class[self._row_group],
                len(batch.count),
                self._encoded,
                weights=self._weights,
            )
            > self.eta + _ROWS_TOLERANCE
        )
        return self._node_metrics(
            node, metrics, plan.feasible, over_budget, infeasible_below=below
        )

    def _require_requirement(self) -> Requirement:
        if self.requirement is None:
            raise InvalidParameterError(
                "this lattice was built without a requirement; pass "
                "requirement= to GeneralizationLattice.from_table"
            )
        return self.requirement

    def _marker_classes(self, node: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Classes whose every released label is the suppression marker.

        Suppressed rows are released with every quasi-identifier the marker,
        so they join such a class in the released table.
        """
        requirement = self._require_requirement()
        flags = np.ones(len(keys), dtype=bool)
        for a, level in enumerate(node):
            cache = (a, int(level))
            if cache not in self._marker:
                labels = self.hierarchies[a].label_array(int(level))
                self._marker[cache] = labels == requirement.suppression_marker
            codes = (keys // self._multipliers[a]) % self._radix[a]
            flags &= self._marker[cache][codes]
        return flags

    @staticmethod
    def _node_metrics(
        node: np.ndarray,
        metrics: dict[str, np.ndarray],
        feasible: bool,
        over_budget: bool,
        *,
        infeasible_below: bool = False,
    ) -> NodeMetrics:
        return NodeMetrics(
            levels=tuple(int(v) for v in node),
            **{name: values[0].item() for name, values in metrics.items()},
            feasible=bool(feasible),
            over_budget=bool(over_budget),
            infeasible_below=bool(infeasible_below),
        )

    def evaluate_all(
        self,
        *,
        k: int | None = None,
        l: int | None = None,
    ) -> LatticeEvaluation:
        """Every node, layer by layer (by level sum), in vectorised chunks.

        Each node is rolled up from its parent on a spanning tree (the node with
        its last non-zero level lowered by one), whose classes are already
        grouped; all the children in a chunk are rolled up by one hash
        factorisation, with the child's number folded into the key. With
        ``spread_l`` (S_l) it evaluates node by node instead.
        """
        nodes = self.nodes()
        size = len(nodes)
        names = ("k", "sk", "l", "sl", "glm", "cm", "suppressed")
        out = {name: np.zeros(size, dtype=float) for name in names}
        if self._base.pair_group is not None:
            for row, node in enumerate(nodes):
                metrics = self.evaluate(node, k=k, l=l)
                for name in names:
                    out[name][row] = getattr(metrics, name)
            return lattice_evaluation(nodes, out)
        strides = np.cumprod(np.r_[1, (self.heights + 1)[::-1][:-1]])[::-1]
        layer_of = nodes.sum(axis=1)
        last_nonzero = np.where(
            nodes.any(axis=1),
            nodes.shape[1] - 1 - np.argmax(nodes[:, ::-1] > 0, axis=1),
            -1,
        )
        # Where each evaluated node's classes live: (chunk, position in chunk).
        chunk_of = np.full(size, -1, dtype=np.int64)
        seg_of = np.full(size, -1, dtype=np.int64)
        chunks: list[_Batch | None] = [self._base]
        chunk_of[0], seg_of[0] = 0, 0
        self._store(out, self._batch_metrics(self._base, k, l), np.array([0]))
        for layer in range(1, int(layer_of.max()) + 1 if size else 0):
            rows = np.flatnonzero(layer_of == layer)
            attribute = last_nonzero[rows]
            parents = rows - strides[attribute]
            before = nodes[parents, attribute]
            # Children of one parent chunk, grouped by the change they apply.
            order = np.lexsort((before, attribute, chunk_of[parents]))
            rows, attribute, parents, before = (
                rows[order],
                attribute[order],
                parents[order],
                before[order],
            )
            new_chunks: list[_Batch] = []
            for piece in self._pieces(chunks, chunk_of[parents], seg_of[parents]):
                batch = self._rollup_children(
                    chunks,
                    chunk_of[parents[piece]],
                    seg_of[parents[piece]],
                    attribute[piece],
                    before[piece],
                )
                self._store(out, self._batch_metrics(batch, k, l), rows[piece])
                chunk_of[rows[piece]] = len(new_chunks) + len(chunks)
                seg_of[rows[piece]] = np.arange(len(piece))
                new_chunks.append(batch)
            # Only the new layer is needed from here on: free the older ones.
            chunks = [None] * len(chunks) + new_chunks
        self.evaluations += size
        return lattice_evaluation(nodes, out)

    @staticmethod
    def _store(
        out: dict[str, np.ndarray], metrics: dict[str, np.ndarray], rows: np.ndarray
    ) -> None:
        for name, values in metrics.items():
            out[name][rows] = values

    def _pieces(
        self, chunks: list[_Batch | None], chunk: np.ndarray, seg: np.ndarray
    ) -> list[np.ndarray]:
        """Split children (sorted by parent chunk) into pieces of bounded size."""
        sizes = np.zeros(len(chunk), dtype=np.int64)
        for c in np.unique(chunk):
            where = chunk == c
            parent = chunks[c]
            assert parent is not None
            sizes[where] = np.diff(parent.start)[seg[where]]
        max_children = max(1, (2**62 - 1) // self._keyspace)
        pieces: list[np.ndarray] = []
        begin = 0
        total = 0
        for i in range(len(chunk)):  # one pass over the layer's children
            boundary = i > begin and (
                chunk[i] != chunk[begin]
                or total + sizes[i] > self.chunk_rows
                or i - begin >= max_children
            )
            if boundary:
                pieces.append(np.arange(begin, i))
                begin, total = i, 0
            total += sizes[i]
        if len(chunk):
            pieces.append(np.arange(begin, len(chunk)))
        return pieces

    def _rollup_children(
        self,
        chunks: list[_Batch | None],
        chunk: np.ndarray,
        seg: np.ndarray,
        attribute: np.ndarray,
        before: np.ndarray,
    ) -> _Batch:
        """Roll up each parent class table one level along one attribute."""
        parent = chunks[int(chunk[0])]
        assert parent is not None  # parents are always in the previous layer
        lengths = np.diff(parent.start)[seg]
        total = int(lengths.sum())
        child = np.repeat(np.arange(len(seg)), lengths)
        child_start = np.r_[0, np.cumsum(lengths)]
        index = np.arange(total) - np.repeat(
            child_start[:-1] - parent.start[seg], lengths
        )
        key = parent.key[index]
        loss = parent.loss[index].copy()
        # Children are sorted by (attribute, level): one contiguous slice each.
        change = attribute * 1024 + before
        edges = np.flatnonzero(np.r_[True, change[1:] != change[:-1], True])
        for lo, hi in itertools.pairwise(edges):
            a, level = int(attribute[lo]), int(before[lo])
            rows = slice(child_start[lo], child_start[hi])
            old = (key[rows] // self._multipliers[a]) % self._radix[a]
            new = self._map(a, level, level + 1)[old]
            key[rows] += (new - old) * self._multipliers[a]
            loss[rows] += self._loss[a][level + 1][new] - self._loss[a][level][old]
        batch, _ = self._merge(
            key + child * self._keyspace, loss, parent, index, len(seg)
        )
        return batch

    def _merge(
        self,
        combined: np.ndarray,
        loss: np.ndarray,
        parent: _Batch,
        index: np.ndarray,
        n_nodes: int,
    ) -> tuple[_Batch, np.ndarray]:
        """Group rows of a parent table by (node, key) into the nodes' classes.

        Also returns the class of each parent row.
        """
        ids, uniques = pd.factorize(combined)
        n_new = len(uniques)
        first = np.zeros(n_new, dtype=np.int64)
        first[ids] = np.arange(len(ids))
        owner = uniques // self._keyspace
        start = np.searchsorted(owner, np.arange(n_nodes + 1))
        count = np.bincount(ids, weights=parent.count[index], minlength=n_new)
        mask = None
        if parent.mask is not None:
            mask = np.zeros(n_new, dtype=parent.mask.dtype)
            np.bitwise_or.at(mask, ids, parent.mask[index])
        target = None
        if parent.target is not None:
            target = tuple(
                np.bincount(ids, weights=column[index], minlength=n_new).astype(
                    np.int64
                )
                for column in parent.target
            )
        batch = _Batch(
            uniques - owner * self._keyspace,
            loss[first],
            count.astype(np.int64),
            mask,
            target,
            start,
        )
        return batch, np.asarray(ids, dtype=np.int64)

    def _rollup(self, node: np.ndarray) -> tuple[_Batch, np.ndarray]:
        """The classes of one node, rolled up directly from the encoded table.

        Also returns the class of each group of the encoded table.
        """
        base = self._base
        key, loss = base.key, base.loss
        for a in np.flatnonzero(node):
            old = self._base_codes[a]
            new = self._map(a, 0, int(node[a]))[old]
            key = key + (new - old) * self._multipliers[a]
            loss = loss + (self._loss[a][node[a]][new] - self._loss[a][0][old])
        index = np.arange(len(key))
        batch, ids = self._merge(key, loss, base, index, 1)
        if base.pair_group is None:
            return batch, ids
        n_values = self._n_sensitive
        pair_ids, found = pd.factorize(
            ids[base.pair_group] * n_values + base.pair_value
        )
        return _Batch(
            batch.key,
            batch.loss,
            batch.count,
            batch.mask,
            batch.target,
            batch.start,
            (found // n_values).astype(np.int64),
            (found % n_values).astype(np.int64),
            np.bincount(pair_ids, weights=base.pair_count, minlength=len(found)).astype(
                np.int64
            ),
        ), ids

    def _check(self, levels: Sequence[int]) -> np.ndarray:
        node = np.asarray(levels, dtype=np.int64)
        if (
            node.shape != self.heights.shape
            or (node < 0).any()
            or (node > self.heights).any()
        ):
            raise InvalidParameterError(
                f"node {tuple(int(v) for v in np.ravel(node))} is outside the "
                f"lattice with heights {tuple(int(h) for h in self.heights)} "
                f"over {self.attributes}"
            )
        return node

    def _map(self, attribute: int, level: int, to_level: int) -> np.ndarray:
        key = (attribute, level, to_level)
        if key not in self._maps:
            self._maps[key] = self.hierarchies[attribute].parent_codes(level, to_level)
        return self._maps[key]

    def _batch_metrics(
        self,
        batch: _Batch,
        k: int | None,
        l: int | None,
        kept: np.ndarray | None = None,
    ) -> dict[str, np.ndarray]:
        return batch_metrics(
            batch,
            k,
            l,
            kept,
            n_rows=self.n_rows,
            n_attributes=len(self.attributes),
            scale=self._scale,
            eta=self.eta,
        )
