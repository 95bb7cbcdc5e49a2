"""C4.5 as a learner: the decision tree the accuracy harness trains on releases.

The kACTUS paper (Kisilevich et al. 2010) trains Weka's J48 on releases whose
suppressed cells are missing values, and reports J48's accuracy. This is that
learner, written on the harness's feature blocks
(:attr:`ppdm.utility.features.CellFeaturizer.blocks_`), so the comparison with
the paper's figures is learner to learner:

- gain ratio among the splits whose gain is at least the average gain
  (Quinlan 1993); multiway splits on nominal attributes (one branch per value
  of the training domain, not tested again below), binary ``x <= t`` splits on
  numeric ones (``t`` the largest training value at or below the midpoint of
  the cut, as J48 sets it) with J48's minimum branch weight (``0.1 * known
  weight / n_classes``, raised to ``min_obj``, else capped at 25) and C4.5
  Release 8's ``log2(#thresholds) / known weight`` penalty;
- **fractional instances** (Quinlan 1993, ch. 3): a split's gain is computed
  on the instances whose value is known and scaled by their share of the
  weight, the split information has an "unknown" part, and an instance with
  an unknown value goes down every branch with a weight proportional to the
  branch's share of the known weight, in training and at prediction (the
  predicted distribution is the weighted mix of the leaves reached). A
  released value set ``{a|b}`` (a membership of 1/2 in each) is read the same
  way: half the instance goes to ``a``, half to ``b``;
- a released numeric range (block kind "interval": its low and high end) is
  read, when the featurizer gives the ends, as a value spread uniformly over
  the range: at threshold ``t`` the share ``(t - low) / (high - low)`` of the
  instance goes left (candidate thresholds include the ends). This is not in
  C4.5, which has no ranges; it is the tree's analogue of naive Bayes
  spreading a range over its bins, offered as an alternative to reading the
  midpoint (``ranges="uniform"`` in :mod:`ppdm.utility`);
- J48's pruning: collapse (a subtree that makes no fewer training errors than
  its root as a leaf is removed), then error-based pruning by subtree
  replacement at confidence 0.25, bottom-up. A branch that received no
  training weight is a leaf predicting its parent's distribution.

Differences from J48, on purpose: no subtree raising (it re-routes training
instances and rarely changes accuracy); the average-gain filter includes
every attribute (J48 skips nominal attributes with very many values relative
to the node's instances).

The predicate-tree inducer :class:`ppdm.trees.C45` that kACTUS wraps is a
separate class because kACTUS needs every instance on exactly one path
(missing values as a branch of their own); fractional instances break that
on purpose. Both share :func:`ppdm.trees.c45.entropy` and
:func:`ppdm.trees.c45.added_errors`.

Fitting reads indexes built once: a block of plain categories as one integer
a row, value sets through their stored entries, numbers through their ranks;
a node's tables are one :func:`numpy.bincount` over the blocks it may still
split on, and all its blocks are scored in one pass
(:mod:`ppdm.utility._c45_splits`). Values whose columns are equal (the
members of a released set no other cell holds, as in a release generalized
over a hierarchy) are counted once, and their branches, the same rows with
the same weights, grown once and copied. Every sum is the general path's (a
CSR slice and product, a float sort, one block at a time, every branch grown;
kept for wide blocks, dense input and ranges), term by term in the same
order: the same trees to the last bit.

No library fits: scikit-learn's trees are binary, have no nominal splits,
and send every missing value to one learned side; Weka is Java.

References
----------
J. R. Quinlan, "C4.5: Programs for Machine Learning", Morgan Kaufmann, 1993.
J. R. Quinlan, "Improved use of continuous attributes in C4.5", Journal of
Artificial Intelligence Research 4:77-90, 1996.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin

from ppdm.exceptions import InvalidParameterError
from ppdm.trees.c45 import added_errors, entropy
from ppdm.utility._c45_splits import (
    WEKA_SMALL,
    best_cuts,
    min_split,
    nominal_scores,
    range_left_weights,
    ranked_cuts,
)
from ppdm.utility._sparse import Matrix, as_matrix, row_sums, split_blocks

__all__ = ["C45Learner"]

_EPS = 1e-12
#: Instances whose weight at a node falls below this are dropped there (they
#: cannot change a split or a leaf's majority; without a floor an instance with
#: many unknown values fans out over every branch below it).
_MIN_WEIGHT = 1e-6
#: Membership blocks wider than this are scored on the values a node's rows
#: hold (:meth:`C45Learner._present_table`); narrower ones on the whole domain,
#: as they always were (the same figures to the last digit).
_WIDE = 1024
#: Block kinds read as numbers: one value column, or a (low, high) pair.
_NUMERIC = ("numeric", "interval")


@dataclass
class _Node:
    distribution: np.ndarray
    block: int = -1  # index of the split block; -1 for a leaf
    threshold: float = np.nan  # numeric splits only
    fractions: np.ndarray = field(default_factory=lambda: np.empty(0))
    children: list[_Node] = field(default_factory=list)

    @property
    def is_leaf(self) -> bool:
        return not self.children

    @cached_property
    def weight(self) -> float:
        # pruning reads it at every level; a node's distribution never changes
        return float(self.distribution.sum())


def _copy_into(copy: _Node, node: _Node) -> None:
    """Make ``copy`` a copy of the subtree of ``node`` (new nodes; the
    distribution and fraction arrays, never written after a node is made,
    shared)."""
    stack = [(copy, node)]
    while stack:
        target, source = stack.pop()
        target.block, target.threshold = source.block, source.threshold
        target.fractions = source.fractions
        target.children = [_Node(child.distribution) for child in source.children]
        stack.extend(zip(target.children, source.children))


@dataclass(frozen=True)
class _Split:
    block: int
    gain: float
    split_info: float
    threshold: float = np.nan
    #: the two values a cut of a ranked block separates, its threshold not
    #: yet looked up (:meth:`C45Learner._with_threshold`)
    between: np.ndarray | None = None

    @property
    def gain_ratio(self) -> float:
        return self.gain / self.split_info if self.split_info > _EPS else 0.0


@dataclass(eq=False, repr=False, kw_only=True)
class C45Learner(ClassifierMixin, BaseEstimator):
    """C4.5 (J48-like) classification tree with fractional instances.

    Parameters
    ----------
    blocks : sequence of (str, int, int)
        ``(kind, start, stop)`` per attribute, as
        :attr:`ppdm.utility.features.CellFeaturizer.blocks_`: kind "numeric"
        is one column (NaN unknown); any other kind is a block of (fractional)
        memberships over the attribute's values (all zero: unknown). Without
        blocks every column is a numeric attribute.
    min_obj : float, default=2
        J48's ``-M``: the least weight in two branches of a split.
    confidence : float or None, default=0.25
        J48's ``-C`` for error-based pruning; ``None`` keeps the unpruned
        tree (collapse still applies).
    laplace : bool, default=False
        J48's ``-A``: a leaf's class probabilities are Laplace-corrected,
        ``(w_c + 1) / (w + n_classes)`` with ``w_c`` the leaf's training
        weight of class ``c``, instead of ``w_c / w``. The DMPD combiner
        estimates each partial classifier's probabilities this way (so that
        no class gets probability 0 from one projection); the predicted
        class of a single leaf is the same either way.

    Attributes
    ----------
    classes_ : numpy.ndarray
    tree_ : object
        The root node (``distribution``, ``block``, ``threshold``,
        ``fractions``, ``children``).
    n_leaves_ : int

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [0, 0]], dtype=float)
    >>> y = np.array(["a", "a", "b", "b", "a"])
    >>> learner = C45Learner(blocks=[("onehot", 0, 2)], min_obj=1).fit(x, y)
    >>> learner.predict(np.array([[0.0, 1.0], [0.0, 0.0]])).tolist()
    ['b', 'a']
    """

    #: Whether fit reads its indexes (:meth:`_index_nominal_blocks`,
    #: :meth:`_index_numeric_blocks`); False keeps the general paths, which
    #: learn the same trees more slowly (the tests compare the two).
    _indexed = True

    blocks: Sequence[tuple] = ()
    min_obj: float = 2
    confidence: float | None = 0.25
    laplace: bool = False

    # -- data --------------------------------------------------------------
    def _block_list(self, n_columns: int) -> list[tuple[str, int, int]]:
        if self.blocks:
            return [(str(kind), int(a), int(b)) for kind, a, b in self.blocks]
        return [("numeric", i, i + 1) for i in range(n_columns)]

    @staticmethod
    def _split_blocks(x: Matrix, blocks: list[tuple[str, int, int]]) -> list[Matrix]:
        """Per block: (n, 2) bounds of a numeric attribute (a value is its own
        low and high, NaN unknown), or the membership matrix of a nominal one
        (CSR when ``x`` is: a block of many values is never densified)."""
        out = []
        parts = split_blocks(x, blocks, numeric=_NUMERIC)
        for (kind, _, _), part in zip(blocks, parts):
            if kind == "numeric":
                out.append(np.repeat(part[:, :1], 2, axis=1))
            elif kind == "interval":
                bounds = part[:, :2].copy()
                bounds[np.isnan(bounds).any(axis=1)] = np.nan
                out.append(bounds)
            elif sp.issparse(part):
                # a value set partly outside the domain still counts as one
                # instance, spread over the members that are in it
                totals = row_sums(part)
                part.data /= np.repeat(totals, np.diff(part.indptr))
                out.append(part)
            else:
                members = np.array(part, dtype=float)
                totals = members.sum(axis=1, keepdims=True)
                out.append(np.divide(members, totals, out=members, where=totals > 0))
        return out

    # -- fitting -----------------------------------------------------------
    def _prepare(self, x: Matrix, y: np.ndarray) -> None:
        if x.ndim != 2 or x.shape[0] != len(y):
            raise InvalidParameterError(
                f"x must be 2-D with one row per label; got {x.shape} and {len(y)} labels"
            )
        if not self.min_obj > 0:
            raise InvalidParameterError(f"min_obj must be > 0; got {self.min_obj!r}")
        if self.confidence is not None and not 0 < self.confidence < 1:
            raise InvalidParameterError(
                f"confidence must be in (0, 1) or None; got {self.confidence!r}"
            )
        if not isinstance(self.laplace, (bool, np.bool_)):
            raise InvalidParameterError(
                f"laplace must be True or False; got {self.laplace!r}"
            )
        self._blocks = self._block_list(x.shape[1])
        self._data = self._split_blocks(x, self._blocks)
        self._numeric = [kind in _NUMERIC for kind, _, _ in self._blocks]
        self._sorted_values = {
            block: np.unique(column[~np.isnan(column)])
            for block, column in enumerate(self._data)
            if self._numeric[block]
        }
        self.classes_, codes = np.unique(y, return_inverse=True)
        self._n_classes = len(self.classes_)
        self._y = codes.astype(np.int64)
        self._onehot_y = np.eye(self._n_classes)[self._y]
        self._index_nominal_blocks()
        self._index_numeric_blocks()

    def _index_nominal_blocks(self) -> None:
        """Plain arrays for the CSR membership blocks of at most ``_WIDE`` values.

        The sparse product ``members.T @ (onehot(y) * w)`` adds ``a * w`` of
        each stored entry to its (value, class) cell in row order;
        :func:`numpy.bincount` adds the same products in the same order. A
        block whose rows hold one value of membership 1 or none (unknown) is
        "coded": one integer a row, a line of ``_coded_keys`` (the cell's
        offset in the concatenated tables; unknown rows go past the end).
        Other blocks (value sets) keep their entries (``_entries``) and, block
        after block, ``_set_entries`` (each with its cell's offset): one
        bincount a node counts the tables of every block it may still split
        on. The blocks are laid out block by block, not row by row, so that a
        node reads only those (a block's cells are its own: leaving the other
        blocks out changes no sum, and each cell still adds its rows in row
        order).
        """
        n, n_classes = len(self._y), self._n_classes
        self._codes: dict[int, np.ndarray] = {}
        self._entries: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._aliases: dict[int, np.ndarray] = {}
        self._known_rows: dict[int, np.ndarray] = {}
        self._coded_slices: dict[int, tuple[int, int]] = {}
        columns, offset = [], 0
        for block, data in enumerate(self._data):
            indexed = self._indexed and not self._numeric[block]
            if not (indexed and sp.issparse(data) and data.shape[1] <= _WIDE):
                continue
            indptr = data.indptr.astype(np.int64)
            indices = data.indices.astype(np.int64)
            counts = np.diff(indptr)
            self._known_rows[block] = row_sums(data) > 0
            if counts.max(initial=0) <= 1 and np.all(data.data == 1.0):
                code = np.full(n, -1, dtype=np.int64)
                code[counts == 1] = indices
                self._codes[block] = code
                width = data.shape[1] * n_classes
                self._coded_slices[block] = (offset, width)
                columns.append((block, offset))
                offset += width
            else:
                self._entries[block] = self._first_columns(block, data)
        sets = []
        for block in self._entries:
            width = self._data[block].shape[1] * n_classes
            self._coded_slices[block] = (offset, width)
            sets.append((block, offset))
            offset += width
        self._set_blocks = np.array([block for block, _ in sets], dtype=np.int64)
        # (set blocks, n + 1): each block's row pointers into the arrays of
        # every set block's entries, one block after the other
        starts = np.cumsum([0] + [len(self._entries[b][1]) for b, _ in sets])
        self._set_entries = (
            np.array(
                [self._entries[b][0] + first for (b, _), first in zip(sets, starts)],
                dtype=np.int64,
            ).reshape(len(sets), n + 1),
            np.concatenate(
                [np.empty(0, dtype=np.int64)]
                + [cell + self._entries[b][1] * n_classes for b, cell in sets]
            ),
            np.concatenate([np.empty(0)] + [self._entries[b][2] for b, _ in sets]),
        )
        self._coded_width = offset
        self._coded_blocks = np.array([block for block, _ in columns], dtype=np.int64)
        self._coded_keys = np.empty((len(columns), n), dtype=np.int64)
        for j, (block, start) in enumerate(columns):
            code = self._codes[block]  # unknown rows land past every table
            self._coded_keys[j] = np.where(code >= 0, start + code * n_classes, offset)
        # a block no row knows has an empty table at every node: no split
        self._never_split = frozenset(
            block for block, known in self._known_rows.items() if not known.any()
        )

    def _first_columns(
        self, block: int, data: sp.csr_matrix
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The stored entries of a block of value sets, those of the first of
        each run of equal columns only.

        Two values whose columns are equal (the same rows, with the same
        memberships) have the same (value, class) weights at every node, sum
        for sum, and the same branch below a split (the same rows with the
        same weights). A release generalized over a hierarchy has many: each
        released set holds values no other cell holds, so the 17 countries of
        one set have one column, read once (``_aliases``: each value's first
        equal value) rather than 17 times.
        """
        columns = data.tocsc()
        columns.sort_indices()
        first: dict[tuple[bytes, bytes], int] = {}
        alias = np.empty(data.shape[1], dtype=np.int64)
        for value in range(data.shape[1]):
            lo, hi = columns.indptr[value], columns.indptr[value + 1]
            key = (columns.indices[lo:hi].tobytes(), columns.data[lo:hi].tobytes())
            alias[value] = first.setdefault(key, value)
        indptr = data.indptr.astype(np.int64)
        indices = data.indices.astype(np.int64)
        if np.array_equal(alias, np.arange(len(alias))):
            return indptr, indices, data.data
        self._aliases[block] = alias
        keep = alias[indices] == indices
        row = np.repeat(np.arange(data.shape[0]), np.diff(indptr))
        kept = np.bincount(row[keep], minlength=data.shape[0])
        return (
            np.concatenate([[0], np.cumsum(kept)]).astype(np.int64),
            indices[keep],
            data.data[keep],
        )

    def split_scores(
        self, x: np.ndarray, y: np.ndarray
    ) -> dict[int, tuple[float, float]]:
        """``{block: (gain, split information)}`` of every admissible split at
        the root (gain after the unknown-value scaling and, for numeric
        blocks, the threshold penalty)."""
        x, y = as_matrix(x), np.asarray(y)
        self._prepare(x, y)
        rows = np.arange(x.shape[0], dtype=np.int64)
        weights = np.ones(x.shape[0])
        total = float(x.shape[0])
        out = {}
        for block, numeric in enumerate(self._numeric):
            score = (
                self._score_numeric(block, rows, weights, total)
                if numeric
                else self._score_nominal(block, rows, weights, total)
            )
            if score is not None:
                out[block] = (score.gain, score.split_info)
        return out

    def fit(self, x: Matrix, y: np.ndarray) -> C45Learner:
        x = as_matrix(x)
        y = np.asarray(y)
        self._prepare(x, y)
        rows = np.arange(x.shape[0], dtype=np.int64)
        weights = np.ones(x.shape[0])
        self.tree_ = self._distribution_node(rows, weights)
        stack = [(self.tree_, rows, weights, self._never_split)]
        twins: list[tuple[_Node, _Node]] = []
        while stack:
            node, rows, weights, used = stack.pop()
            split = self._best_split(node, rows, weights, used)
            if split is None:
                continue
            node.block, node.threshold = split.block, split.threshold
            child_used = used if self._numeric[split.block] else used | {split.block}
            grown: dict[int, _Node] = {}
            for part in self._partition(node, rows, weights):
                if id(part) in grown:
                    # a branch given as the same rows and weights as an
                    # earlier one (equal values of a value set): the same
                    # subtree, grown once and copied below
                    twin = grown[id(part)]
                    node.children.append(_Node(twin.distribution))
                    twins.append((node.children[-1], twin))
                    continue
                child_rows, child_weights = part
                keep = child_weights >= _MIN_WEIGHT
                child_rows, child_weights = child_rows[keep], child_weights[keep]
                child = self._distribution_node(child_rows, child_weights)
                node.children.append(child)
                grown[id(part)] = child
                if child.weight > 0:
                    stack.append((child, child_rows, child_weights, child_used))
        # a copy recorded later lies deeper (its parent was split later): the
        # copies inside a subtree are made before the subtree is copied
        for copy, twin in reversed(twins):
            _copy_into(copy, twin)
        self._prune(self.tree_)
        self.n_leaves_ = self._count_leaves(self.tree_)
        del self._data, self._y, self._onehot_y, self._sorted_values
        del self._codes, self._entries, self._known_rows, self._coded_keys
        del self._set_entries, self._ranks, self._never_split, self._aliases
        return self

    def _distribution_node(self, rows: np.ndarray, weights: np.ndarray) -> _Node:
        return _Node(
            np.bincount(self._y[rows], weights=weights, minlength=self._n_classes)
        )

    def _best_split(
        self, node: _Node, rows: np.ndarray, weights: np.ndarray, used: frozenset
    ) -> _Split | None:
        total = node.weight
        if total < 2 * self.min_obj or node.distribution.max() >= total - _EPS:
            return None
        scores = []
        coded = self._coded_tables(rows, weights, used)
        ranked = self._score_ranked(list(self._ranks), rows, weights, total)
        nominal = [
            block
            for block, numeric in enumerate(self._numeric)
            if not numeric and block not in used
        ]
        tables = [self._nominal_table(b, rows, weights, coded) for b in nominal]
        ranked.update(self._nominal_splits(nominal, tables, total))
        for block, numeric in enumerate(self._numeric):
            if block in ranked:
                score = ranked[block]
            elif numeric:
                score = self._score_numeric(block, rows, weights, total)
            else:
                continue
            if score is not None and score.gain > _EPS:
                scores.append(score)
        if not scores:
            return None
        average = sum(s.gain for s in scores) / len(scores)
        eligible = [s for s in scores if s.gain >= average - 1e-3]
        # max() keeps the first of equal ratios: ties go to the column order
        return self._with_threshold(max(eligible, key=lambda s: s.gain_ratio))

    def _coded_tables(
        self, rows: np.ndarray, weights: np.ndarray, used: frozenset = frozenset()
    ) -> np.ndarray | None:
        """The (value, class) weights of every indexed nominal block not in
        ``used``, at their places in the concatenated tables (see
        :meth:`_index_nominal_blocks`; the places of the others are left
        empty); None when every indexed block is used."""
        coded = np.flatnonzero([b not in used for b in self._coded_blocks.tolist()])
        sets = np.flatnonzero([b not in used for b in self._set_blocks.tolist()])
        if len(coded) == 0 and len(sets) == 0:
            return None
        classes = self._y[rows]
        keys = (self._coded_keys[coded[:, None], rows] + classes).ravel()
        shares = np.tile(weights, len(coded))
        if len(sets):
            indptr, cell, member = self._set_entries
            starts = indptr[sets[:, None], rows].ravel()
            counts = indptr[sets[:, None], rows + 1].ravel() - starts
            at = self._entries_at(starts, counts)
            position = np.repeat(np.tile(np.arange(len(rows)), len(sets)), counts)
            keys = np.concatenate([keys, cell[at] + classes[position]])
            shares = np.concatenate([shares, member[at] * weights[position]])
        return np.bincount(
            keys, weights=shares, minlength=self._coded_width + self._n_classes
        )

    @staticmethod
    def _entries_at(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """The indexes of ``counts[i]`` stored entries from ``starts[i]``,
        one run after the other."""
        return np.arange(int(counts.sum())) + np.repeat(
            starts - np.cumsum(counts) + counts, counts
        )

    @classmethod
    def _stored_entries(
        cls, indptr: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The stored entries of ``rows`` in row order: each one's position
        in ``rows`` and its index in the stored arrays."""
        starts = indptr[rows]
        counts = indptr[rows + 1] - starts
        position = np.repeat(np.arange(len(rows)), counts)
        return position, cls._entries_at(starts, counts)

    def _node_entries(
        self, block: int, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """The stored memberships of the rows, in row order: (position in
        ``rows``, value, membership; None when every membership is 1)."""
        if block in self._codes:
            code = self._codes[block][rows]
            position = np.flatnonzero(code >= 0)
            return position, code[position], None
        indptr, indices, data = self._entries[block]
        position, at = self._stored_entries(indptr, rows)
        return position, indices[at], data[at]

    def _score_nominal(
        self, block: int, rows: np.ndarray, weights: np.ndarray, total: float
    ) -> _Split | None:
        table = self._nominal_table(block, rows, weights, None)
        return self._nominal_splits([block], [table], total)[block]

    def _nominal_table(
        self,
        block: int,
        rows: np.ndarray,
        weights: np.ndarray,
        coded: np.ndarray | None,
    ) -> np.ndarray:
        """The (value, class) weights of the rows at a nominal block."""
        data = self._data[block]
        if block in self._coded_slices:
            if coded is None:
                coded = self._coded_tables(rows, weights)
            start, width = self._coded_slices[block]
            table = coded[start : start + width].reshape(-1, self._n_classes)
            if block in self._aliases:
                table = np.take(table, self._aliases[block], axis=0)
        elif sp.issparse(data) and data.shape[1] > _WIDE:
            table = self._present_table(data[rows], rows, weights)
        elif sp.issparse(data):
            # (values, classes) without densifying the rows' memberships
            table = np.asarray(data[rows].T @ (self._onehot_y[rows] * weights[:, None]))
        else:
            members = data[rows] * weights[:, None]
            table = members.T @ self._onehot_y[rows]  # (values, classes)
        return table

    def _nominal_splits(
        self, blocks: list[int], tables: list[np.ndarray], total: float
    ) -> dict[int, _Split | None]:
        """The multiway split of each nominal block from its (value, class)
        table (:func:`ppdm.utility._c45_splits.nominal_scores`)."""
        scores = nominal_scores(tables, total, self.min_obj)
        return {
            block: None if score is None else _Split(block, *score)
            for block, score in zip(blocks, scores)
        }

    def _present_table(
        self, members: sp.csr_matrix, rows: np.ndarray, weights: np.ndarray
    ) -> np.ndarray:
        """(values, classes) weights of the values the rows hold, only those.

        A value no row at the node holds has an all-zero line in the table,
        which adds nothing to the split's sizes, information or split
        information: leaving those lines out makes a node of a few rows cost
        what its rows hold, not the width of the domain (20,000 dates).
        """
        _, column = np.unique(members.indices, return_inverse=True)
        row = np.repeat(np.arange(len(rows)), np.diff(members.indptr))
        value = members.data * weights[row]
        classes = self._y[rows][row]
        width = int(column.max()) + 1 if len(column) else 0
        table = np.zeros((width, self._n_classes))
        for c in range(self._n_classes):
            table[:, c] = np.bincount(
                column, weights=np.where(classes == c, value, 0.0), minlength=width
            )
        return table

    def _index_numeric_blocks(self) -> None:
        """Integer ranks of the numeric blocks no row reads as a range.

        A node sorts its rows by value (stably) at every numeric block; sorting
        the ranks of the values instead gives the same order (the same keys in
        the same order, ties kept in row order) and numpy sorts 16-bit integers
        by radix, in linear time. A block with a released range keeps the
        float path (:func:`ppdm.utility._c45_splits.range_left_weights`).
        """
        self._ranks: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray | None]] = {}
        for block, numeric in enumerate(self._numeric):
            if not numeric or not self._indexed:
                continue
            low, high = self._data[block][:, 0], self._data[block][:, 1]
            if np.any(high > low):
                continue
            known = ~np.isnan(low)
            distinct, rank = np.unique(low[known], return_inverse=True)
            dtype = np.uint16 if len(distinct) <= 2**16 else np.int64
            ranks = np.zeros(len(low), dtype=dtype)
            ranks[known] = rank
            self._ranks[block] = (ranks, distinct, None if known.all() else known)

    def _score_numeric(
        self, block: int, rows: np.ndarray, weights: np.ndarray, total: float
    ) -> _Split | None:
        if block in self._ranks:
            split = self._score_ranked([block], rows, weights, total)[block]
            return self._with_threshold(split)
        bounds = self._data[block][rows]
        known = ~np.isnan(bounds[:, 0])
        low, high, w = bounds[known, 0], bounds[known, 1], weights[known]
        known_weight = float(w.sum())
        least = min_split(known_weight, self._n_classes, self.min_obj)
        if known_weight < 2 * least:
            return None
        class_weights = self._onehot_y[rows[known]] * w[:, None]
        spans = high > low
        if spans.any():
            candidates, left = range_left_weights(low, high, spans, class_weights)
        else:
            order = np.argsort(low, kind="stable")
            sorted_values = low[order]
            last = np.flatnonzero(sorted_values[:-1] < sorted_values[1:])
            candidates = sorted_values[np.append(last, len(order) - 1)]
            left = np.cumsum(class_weights[order], axis=0)[
                np.append(last, len(order) - 1)
            ]
        # a cut after every candidate value but the last
        cut = np.arange(len(candidates) - 1)
        class_total = class_weights.sum(axis=0)
        left_weight = left[cut].sum(axis=1)
        # Weka compares weights with a tolerance of 1e-6 (Utils.grOrEq)
        ok = (left_weight >= least - WEKA_SMALL) & (
            known_weight - left_weight >= least - WEKA_SMALL
        )
        cut, left_weight = cut[ok], left_weight[ok]
        if len(cut) == 0:
            return None
        lcounts = left[cut]
        rcounts = class_total - lcounts
        right_weight = known_weight - left_weight
        info = (
            left_weight * entropy(lcounts) + right_weight * entropy(rcounts)
        ) / known_weight
        best = int(np.argmin(info))  # C4.5 picks the threshold by gain
        base = float(entropy(class_total))
        gain = (
            known_weight / total * (base - float(info[best]))
            - np.log2(len(cut)) / known_weight
        )
        parts = np.array(
            [left_weight[best], right_weight[best], max(total - known_weight, 0.0)]
        )
        threshold = (
            float(candidates[cut[best]])
            if spans.any()
            else self._threshold(block, candidates, cut[best])
        )
        return _Split(block, float(gain), float(entropy(parts)), threshold)

    def _score_ranked(
        self, blocks: list[int], rows: np.ndarray, weights: np.ndarray, total: float
    ) -> dict[int, _Split | None]:
        """:meth:`_score_numeric` of the ranked blocks at a node, all at once:
        each block's class weights left of its cuts, on the rows that know it
        (:func:`ppdm.utility._c45_splits.ranked_cuts`), then every block's
        cuts in one pass (:func:`ppdm.utility._c45_splits.best_cuts`)."""
        out: dict[int, _Split | None] = dict.fromkeys(blocks)
        # a row gather of a 2-D array by take, not by [rows] (several times
        # faster in numpy; the same values)
        class_weights = np.take(self._onehot_y, rows, axis=0)
        class_weights *= weights[:, None]
        every_row = None  # the figures of the blocks every row knows, once
        heads, scored = [], []
        for block in blocks:
            ranks, _, known_column = self._ranks[block]
            if known_column is None:
                if every_row is None:
                    every_row = self._known_totals(weights, class_weights)
                totals, block_ranks, block_weights = (
                    every_row,
                    ranks[rows],
                    class_weights,
                )
            else:
                known = known_column[rows]
                block_weights = class_weights[known]
                totals = self._known_totals(weights[known], block_weights)
                block_ranks = ranks[rows[known]]
            if totals is not None:
                cuts = ranked_cuts(block_ranks, block_weights)
                if cuts is not None:
                    heads.append((*cuts, totals))
                    scored.append(block)
        if not heads:
            return out
        for block, cut in zip(scored, best_cuts(heads, total)):
            if cut is not None:
                gain, split_info, pair = cut
                values = self._ranks[block][1][pair]
                out[block] = _Split(block, gain, split_info, between=values)
        return out

    def _with_threshold(self, split: _Split | None) -> _Split | None:
        """The split with its threshold (looked up for the chosen split
        only, not for every block's best cut at every node)."""
        if split is None or split.between is None:
            return split
        threshold = self._threshold(split.block, split.between, 0)
        return _Split(split.block, split.gain, split.split_info, threshold)

    def _known_totals(
        self, weights: np.ndarray, class_weights: np.ndarray
    ) -> tuple | None:
        """``(known weight, min split, class total, its entropy)`` of the rows
        that know a numeric block; None when they weigh too little to split."""
        known_weight = float(weights.sum())
        least = min_split(known_weight, self._n_classes, self.min_obj)
        if known_weight < 2 * least:
            return None
        class_total = class_weights.sum(axis=0)
        return (known_weight, least, class_total, float(entropy(class_total)))

    def _threshold(self, block: int, v: np.ndarray, position: int) -> float:
        """J48's split point: the largest training value (of the whole column)
        at or below the midpoint of the two values the cut separates."""
        midpoint = (v[position] + v[position + 1]) / 2
        values = self._sorted_values[block]
        return float(values[np.searchsorted(values, midpoint, side="right") - 1])

    def _partition(
        self, node: _Node, rows: np.ndarray, weights: np.ndarray
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Rows and weights of each child; records the branch fractions."""
        if node.block in self._known_rows:
            return self._partition_entries(node, rows, weights)
        members = self._memberships(node, self._data[node.block][rows])
        known = row_sums(members) > 0
        if sp.issparse(members):
            branch_weight = np.asarray(members.T @ weights).ravel()
        else:
            branch_weight = (members * weights[:, None]).sum(axis=0)
        node.fractions = branch_weight / max(float(branch_weight.sum()), _EPS)
        return self._route(members, known, node.fractions, rows, weights)

    def _partition_entries(
        self, node: _Node, rows: np.ndarray, weights: np.ndarray
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """:meth:`_partition` of an indexed nominal block, without a sparse
        row slice: the same sums in the same order (``members.T @ weights``
        adds each entry's ``a * w`` in row order, as bincount does) and the
        same children (a branch's rows in row order, then the unknown ones)."""
        block = node.block
        width = self._data[block].shape[1]
        position, value, share = self._node_entries(block, rows)
        weight = weights[position] if share is None else share * weights[position]
        branch_weight = np.bincount(value, weights=weight, minlength=width)
        alias = self._aliases.get(block)
        if alias is not None:
            branch_weight = branch_weight[alias]
        node.fractions = branch_weight / max(float(branch_weight.sum()), _EPS)
        unknown = np.flatnonzero(~self._known_rows[block][rows])
        if share is not None:
            keep = share > 0
            position, value, weight = position[keep], value[keep], weight[keep]
        order = np.argsort(value, kind="stable")
        ends = np.cumsum(np.bincount(value, minlength=width))
        by_value = np.split(order, ends[:-1])
        unknown_rows, unknown_weights = rows[unknown], weights[unknown]
        out = []
        for branch, hit in enumerate(by_value):
            if alias is not None and alias[branch] != branch:
                # the branch of an equal value: the same object (fit grows
                # it once)
                out.append(out[alias[branch]])
                continue
            out.append(
                (
                    np.concatenate([rows[position[hit]], unknown_rows]),
                    np.concatenate(
                        [weight[hit], unknown_weights * node.fractions[branch]]
                    ),
                )
            )
        return out

    @staticmethod
    def _route(
        members: Matrix,
        known: np.ndarray,
        fractions: np.ndarray,
        rows: np.ndarray,
        weights: np.ndarray,
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        unknown = np.flatnonzero(~known)
        by_branch = members.tocsc() if sp.issparse(members) else None
        out = []
        for branch in range(members.shape[1]):
            if by_branch is None:
                hit = np.flatnonzero(members[:, branch] > 0)
                share = members[hit, branch]
            else:
                # the column's stored entries, in row order as flatnonzero gives
                lo, hi = by_branch.indptr[branch], by_branch.indptr[branch + 1]
                hit, share = by_branch.indices[lo:hi], by_branch.data[lo:hi]
                keep = share > 0
                hit, share = hit[keep], share[keep]
            out.append(
                (
                    np.concatenate([rows[hit], rows[unknown]]),
                    np.concatenate(
                        [weights[hit] * share, weights[unknown] * fractions[branch]]
                    ),
                )
            )
        return out

    def _memberships(self, node: _Node, data: Matrix) -> Matrix:
        """Branch memberships of rows at ``node`` (all zero: unknown)."""
        if not self._numeric[node.block]:
            return data
        low, high = data[:, 0], data[:, 1]
        known = ~np.isnan(low)
        left = np.zeros(len(data))
        with np.errstate(invalid="ignore", divide="ignore"):
            point = known & ~(high > low)
            left[point] = low[point] <= node.threshold
            spread = known & (high > low)
            left[spread] = np.clip(
                (node.threshold - low[spread]) / (high[spread] - low[spread]), 0.0, 1.0
            )
        return np.column_stack([left, np.where(known, 1.0 - left, 0.0)])

    # -- pruning -----------------------------------------------------------
    @staticmethod
    def _leaf_errors(node: _Node) -> float:
        return node.weight - float(node.distribution.max()) if node.weight else 0.0

    def _estimated_errors(self, node: _Node) -> float:
        errors = self._leaf_errors(node)
        if self.confidence is None:
            return errors
        return errors + added_errors(node.weight, errors, self.confidence)

    def _prune(self, root: _Node) -> None:
        """J48's collapse, then subtree replacement, children before parents."""
        order, stack = [], [root]
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(node.children)
        estimate: dict[int, float] = {}
        # each subtree's training errors (the sum of its leaves' errors) as it
        # stands once its children are done, kept rather than summed again
        # from the leaves at every ancestor
        training: dict[int, float] = {}
        for node in reversed(order):
            if node.children:
                as_subtree = sum(training[id(child)] for child in node.children)
                collapse = as_subtree >= self._leaf_errors(node) - 1e-3
                as_tree = sum(estimate[id(child)] for child in node.children)
                as_leaf = self._estimated_errors(node)
                if collapse or (
                    self.confidence is not None and as_leaf <= as_tree + 0.1
                ):
                    node.children = []
                    node.block = -1
                else:
                    estimate[id(node)] = as_tree
                    training[id(node)] = as_subtree
                    continue
            estimate[id(node)] = self._estimated_errors(node)
            training[id(node)] = self._leaf_errors(node)

    def _count_leaves(self, node: _Node) -> int:
        if node.is_leaf:
            return 1
        return sum(self._count_leaves(child) for child in node.children)

    # -- prediction --------------------------------------------------------
    def predict_proba(self, x: Matrix) -> np.ndarray:
        x = as_matrix(x)
        n = x.shape[0]
        data = self._split_blocks(x, self._blocks)
        out = np.zeros((n, self._n_classes))
        root_proba = self._proba(self.tree_, None)
        stack = [(self.tree_, root_proba, np.arange(n), np.ones(n))]
        while stack:
            node, proba, rows, weights = stack.pop()
            if node.is_leaf:
                out[rows] += weights[:, None] * proba
                continue
            members = self._memberships(node, data[node.block][rows])
            known = row_sums(members) > 0
            routed = self._route(members, known, node.fractions, rows, weights)
            for child, (child_rows, child_weights) in zip(node.children, routed):
                keep = child_weights > 0
                if keep.any():
                    stack.append(
                        (
                            child,
                            self._proba(child, proba),
                            child_rows[keep],
                            child_weights[keep],
                        )
                    )
        return out / np.maximum(out.sum(axis=1, keepdims=True), _EPS)

    def _proba(self, node: _Node, parent: np.ndarray | None) -> np.ndarray:
        if node.weight > 0 or parent is None:
            if self.laplace:
                return (node.distribution + 1.0) / (node.weight + self._n_classes)
            return node.distribution / max(node.weight, _EPS)
        return parent  # a branch no training instance reached

    def predict(self, x: Matrix) -> np.ndarray:
        return self.classes_[np.argmax(self.predict_proba(x), axis=1)]
