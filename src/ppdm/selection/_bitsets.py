"""Containment on packed bit sets: supports, k-anonymity by containment, group splits.

A binary table ``X`` (n rows, d features) is kept column-wise as bit sets:
``colbits[j]`` is a row of ``W = ceil(n / 64)`` uint64 words whose bit ``i``
is ``X[i, j]``. The support of an itemset (rows having every feature of it) is
the popcount of the AND of its columns.

k-anonymity by containment (Zhang, Mohammed, Dave and Al Hasan, 2017): for a
feature set S the pattern of row e is ``P_S(e) = {u in S : e[u] = 1}``; its
containment size ``AC_S(e)`` is the number of rows whose pattern contains
``P_S(e)``, which is the support of ``P_S(e)`` (n for an empty pattern);
``AC(S)`` is the minimum over the rows.

:class:`Groups` holds the rows grouped by their pattern on the current S,
with each group's tid-set (rows containing its pattern). Adding a feature u
changes only the rows with ``e[u] = 1`` (:meth:`Groups.add`), and the AC of
every one-feature extension ``S + u`` is a vectorized minimum over the groups
(:func:`extension_ac`): rows with ``e[u] = 0`` keep their count, rows with
``e[u] = 1`` get ``popcount(tids(g) & column(u))``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Groups",
    "as_binary",
    "containment_brute_force",
    "containment_sizes",
    "extension_ac",
    "extension_supports",
    "group_feature_counts",
    "kanonymity_feasible",
    "pack_columns",
    "popcount",
    "achieved_containment",
]

#: Words of a (groups x features x words) block computed at once.
_BLOCK_WORDS = 1 << 22


def _sparse() -> Any:
    # scipy.sparse is imported on first use: the containment model imports this
    # module, and listing the algorithms must not pay for scipy.
    import scipy.sparse

    return scipy.sparse


def as_binary(matrix: object) -> np.ndarray:
    """A dense boolean (n, d) array of a 0/1 matrix (dense or scipy sparse)."""
    if _sparse().issparse(matrix):
        return np.asarray(matrix.toarray(), dtype=bool)  # type: ignore[union-attr]
    return np.asarray(matrix, dtype=bool)


def pack_columns(matrix: np.ndarray) -> np.ndarray:
    """Bit sets of the columns: (d, W) uint64, bit ``i`` of column ``j`` = ``X[i, j]``."""
    x = np.asarray(matrix, dtype=bool)
    n, d = x.shape
    words = max(1, -(-n // 64))
    padded = np.zeros((d, words * 64), dtype=bool)
    padded[:, :n] = x.T
    packed = np.packbits(padded, axis=1, bitorder="little")
    return np.ascontiguousarray(packed).view("<u8").astype(np.uint64, copy=False)


def all_rows(n: int) -> np.ndarray:
    """The bit set (W,) of every one of ``n`` rows."""
    return pack_columns(np.ones((n, 1), dtype=bool))[0]


def popcount(bits: np.ndarray) -> np.ndarray:
    """Set bits along the last axis (int64)."""
    return np.bitwise_count(bits).sum(axis=-1, dtype=np.int64)


def containment_sizes(
    matrix: np.ndarray, colbits: np.ndarray | None = None
) -> np.ndarray:
    """``AC_S(e)`` of every row, S = all columns of ``matrix`` (fast path).

    Rows are grouped by pattern (``numpy.unique`` on the packed rows); each
    distinct pattern's support is the popcount of the AND of its columns.
    """
    x = as_binary(matrix)
    n, d = x.shape
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if d == 0:
        return np.full(n, n, dtype=np.int64)
    bits = pack_columns(x) if colbits is None else colbits
    rows = np.packbits(x, axis=1)
    patterns, first, inverse = np.unique(
        rows, axis=0, return_index=True, return_inverse=True
    )
    pattern_rows = x[first]  # (P, d) the distinct patterns
    words = bits.shape[1]
    support = np.empty(len(patterns), dtype=np.int64)
    chunk = max(1, _BLOCK_WORDS // max(words, 1) // 4)
    full = all_rows(n)
    for start in range(0, len(patterns), chunk):
        block = pattern_rows[start : start + chunk]
        tids = np.broadcast_to(full, (len(block), words)).copy()
        for j in np.flatnonzero(block.any(axis=0)):
            tids[block[:, j]] &= bits[j]
        support[start : start + chunk] = popcount(tids)
    return support[np.asarray(inverse).reshape(-1)]


def achieved_containment(matrix: np.ndarray) -> int:
    """``AC(S)`` of the whole matrix (0 for a table without rows)."""
    sizes = containment_sizes(matrix)
    return int(sizes.min()) if len(sizes) else 0


def containment_brute_force(matrix: np.ndarray) -> np.ndarray:
    """``AC_S(e)`` by the definition, O(n^2 d): a test oracle.

    Row e' contains e when ``X[e] <= X[e']`` in every column.
    """
    x = as_binary(matrix)
    # contains[e, e'] = all(x[e] <= x[e'])
    contains = ~(x[:, None, :] & ~x[None, :, :]).any(axis=2)
    return contains.sum(axis=1).astype(np.int64)


@dataclass(frozen=True)
class Groups:
    """Rows grouped by their pattern on the selected features.

    Attributes
    ----------
    ids : numpy.ndarray of int64, shape (n,)
        Group of every row, ``0..G-1`` (every group has rows).
    tids : numpy.ndarray of uint64, shape (G, W)
        Rows containing each group's pattern (its containment set).
    support : numpy.ndarray of int64, shape (G,)
        ``popcount(tids)``: the AC of every row of the group.
    size : numpy.ndarray of int64, shape (G,)
        Rows of each group.
    fresh : numpy.ndarray of bool, shape (G,)
        Groups whose pattern changed in the last :meth:`add`.
    parent : numpy.ndarray of int64, shape (G,)
        The group (before the last :meth:`add`) each group came from.
    """

    ids: np.ndarray
    tids: np.ndarray
    support: np.ndarray
    size: np.ndarray
    fresh: np.ndarray
    parent: np.ndarray

    @classmethod
    def start(cls, n: int) -> Groups:
        """The empty selection: one group (empty pattern, AC = n)."""
        if n == 0:
            empty = np.zeros(0, dtype=np.int64)
            return cls(
                empty,
                np.zeros((0, 1), np.uint64),
                empty,
                empty,
                empty.astype(bool),
                empty,
            )
        return cls(
            np.zeros(n, dtype=np.int64),
            all_rows(n)[None, :],
            np.array([n], dtype=np.int64),
            np.array([n], dtype=np.int64),
            np.array([True]),
            np.array([0], dtype=np.int64),
        )

    @property
    def n_groups(self) -> int:
        return len(self.size)

    @property
    def ac(self) -> int:
        """``AC(S)`` of the current selection."""
        return int(self.support.min()) if len(self.support) else 0

    def add(self, column: np.ndarray, column_bits: np.ndarray) -> Groups:
        """The groups after adding the feature with 0/1 ``column`` (bit set ``column_bits``)."""
        column = np.asarray(column, dtype=bool)
        g = self.n_groups
        ones = np.bincount(self.ids[column], minlength=g)
        moved = ones > 0
        whole = moved & (ones == self.size)
        split = moved & ~whole
        new_id = np.full(g, -1, dtype=np.int64)
        new_id[split] = g + np.arange(int(split.sum()))
        ids = self.ids.copy()
        rows_groups = self.ids[column]
        ids[column] = np.where(whole[rows_groups], rows_groups, new_id[rows_groups])
        parent = np.concatenate([np.arange(g), np.flatnonzero(split)])
        fresh = np.concatenate([whole, np.ones(int(split.sum()), dtype=bool)])
        tids = self.tids[parent].copy()
        tids[fresh] &= column_bits
        support = self.support[parent].copy()
        support[fresh] = popcount(tids[fresh])
        size = np.bincount(ids, minlength=len(parent)).astype(np.int64)
        return Groups(ids, tids, support, size, fresh, parent.astype(np.int64))


def group_feature_counts(ids: np.ndarray, n_groups: int, columns: Any) -> np.ndarray:
    """``(G, m)``: rows of each group having each feature (``Ind @ X``)."""
    n = len(ids)
    sp = _sparse()
    indicator = sp.csr_array(
        (np.ones(n, dtype=np.int32), (ids, np.arange(n))), shape=(n_groups, n)
    )
    if sp.issparse(columns):
        out = indicator @ columns
        return np.asarray(out.toarray(), dtype=np.int64)  # type: ignore[union-attr]
    return np.asarray(indicator @ np.asarray(columns, dtype=np.int32), dtype=np.int64)


def extension_supports(tids: np.ndarray, column_bits: np.ndarray) -> np.ndarray:
    """``(G, m)``: ``popcount(tids[g] & column_bits[u])``, computed in blocks."""
    g, words = tids.shape
    m = len(column_bits)
    out = np.empty((g, m), dtype=np.int64)
    if g == 0 or m == 0:
        return out
    per_group = m * words
    rows = max(1, _BLOCK_WORDS // per_group)
    if rows >= 1 and per_group <= _BLOCK_WORDS:
        for start in range(0, g, rows):
            block = tids[start : start + rows, None, :] & column_bits[None, :, :]
            out[start : start + rows] = popcount(block)
        return out
    cols = max(1, _BLOCK_WORDS // words)
    for i in range(g):
        for start in range(0, m, cols):
            out[i, start : start + cols] = popcount(
                column_bits[start : start + cols] & tids[i]
            )
    return out


def extension_ac(
    groups: Groups, counts: np.ndarray, supports: np.ndarray
) -> np.ndarray:
    """``AC(S + u)`` for each candidate u (columns of ``counts``/``supports``).

    ``counts[g, u]``: rows of group g with ``e[u] = 1``; ``supports[g, u]``:
    rows containing g's pattern plus u. Rows with ``e[u] = 0`` keep the
    group's support.
    """
    big = np.iinfo(np.int64).max
    if counts.shape[0] == 0:
        return np.zeros(counts.shape[1], dtype=np.int64)
    keep = np.where(counts < groups.size[:, None], groups.support[:, None], big)
    grow = np.where(counts > 0, supports, big)
    return np.minimum(keep.min(axis=0), grow.min(axis=0))


def kanonymity_feasible(groups: Groups, counts: np.ndarray, k: int) -> np.ndarray:
    """Whether ``S + u`` keeps every group of identical projections ``>= k`` rows."""
    rest = groups.size[:, None] - counts
    ok = ((counts == 0) | (counts >= k)) & ((rest == 0) | (rest >= k))
    return ok.all(axis=0)


def submatrix(matrix: np.ndarray, columns: Sequence[int]) -> np.ndarray:
    """The columns ``columns`` of a dense boolean matrix (a copy)."""
    return np.asarray(matrix, dtype=bool)[:, list(columns)]
