"""Objectives of feature selection on a two-class binary table.

All values are raw integer counts (normalising by ``|E+| |E-|`` changes no
argmax). ``y`` is a boolean vector (True: positive class).

* HamDist (modular): ``w(u) = p1 n0 + p0 n1``, the (positive, negative) pairs
  that differ on u; ``HamDist(S) = sum of w(u)``.
* DistCnt (monotone submodular): pairs whose projections on S differ in at
  least one feature, ``|E+| |E-| - sum_g pos(g) neg(g)`` over the groups of
  identical projections.
* CM (Iyengar's classification metric, Definition 2.2 of the paper, times
  n): a row costs 1 if it is suppressed or if its label differs from the
  majority label of its group. With ``k`` given, the rows of a group smaller
  than k count as suppressed, so a group costs ``size(g)`` when
  ``size(g) < k`` and ``min(pos(g), neg(g))`` otherwise; with ``k = 1`` (the
  default, and Greedy-CM's under containment) nothing is suppressed and the
  metric never grows when a feature is added. Greedy-CM maximises its
  decrease.

The ``*_gains`` functions give the gain of adding each candidate to the
current groups in O(n + G m): ``pos1[g, u]`` / ``neg1[g, u]`` are the
positive / negative rows of group g with ``e[u] = 1``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "OBJECTIVES",
    "cm_errors",
    "cm_gains",
    "distcnt",
    "distcnt_gains",
    "hamdist",
    "hamdist_weights",
    "projection_groups",
]

OBJECTIVES = ("hamdist", "distcnt", "cm")


def hamdist_weights(matrix: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``w(u)`` of every column (int64)."""
    x = np.asarray(matrix, dtype=bool)
    y = np.asarray(y, dtype=bool)
    p1 = x[y].sum(axis=0, dtype=np.int64)
    n1 = x[~y].sum(axis=0, dtype=np.int64)
    p0 = int(y.sum()) - p1
    n0 = int((~y).sum()) - n1
    return p1 * n0 + p0 * n1


def hamdist(matrix: np.ndarray, y: np.ndarray, features: Sequence[int]) -> int:
    """``HamDist(S)``."""
    return int(hamdist_weights(np.asarray(matrix)[:, list(features)], y).sum())


def projection_groups(matrix: np.ndarray, features: Sequence[int]) -> np.ndarray:
    """Group id of every row: rows with identical projections on ``features``."""
    x = np.asarray(matrix, dtype=bool)[:, list(features)]
    if x.shape[1] == 0:
        return np.zeros(len(x), dtype=np.int64)
    _, inverse = np.unique(np.packbits(x, axis=1), axis=0, return_inverse=True)
    return np.asarray(inverse, dtype=np.int64).reshape(-1)


def _class_counts(ids: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    g = int(ids.max()) + 1 if len(ids) else 0
    pos = np.bincount(ids[y], minlength=g).astype(np.int64)
    neg = np.bincount(ids[~y], minlength=g).astype(np.int64)
    return pos, neg


def distcnt(matrix: np.ndarray, y: np.ndarray, features: Sequence[int]) -> int:
    """``DistCnt(S)``."""
    y = np.asarray(y, dtype=bool)
    pos, neg = _class_counts(projection_groups(matrix, features), y)
    return int(y.sum()) * int((~y).sum()) - int((pos * neg).sum())


def _cm_penalty(pos: np.ndarray, neg: np.ndarray, k: int) -> np.ndarray:
    """Penalised rows of groups with these class counts (suppressed below k)."""
    size = pos + neg
    return np.where(size < k, size, np.minimum(pos, neg))


def cm_errors(
    matrix: np.ndarray, y: np.ndarray, features: Sequence[int], k: int = 1
) -> int:
    """n times CM: suppressed rows (groups under k) plus misclassified ones."""
    y = np.asarray(y, dtype=bool)
    pos, neg = _class_counts(projection_groups(matrix, features), y)
    return int(_cm_penalty(pos, neg, k).sum())


def distcnt_gains(
    pos: np.ndarray, neg: np.ndarray, pos1: np.ndarray, neg1: np.ndarray
) -> np.ndarray:
    """``DistCnt(S + u) - DistCnt(S)`` of every candidate (int64)."""
    gains = pos1 * (neg[:, None] - neg1) + (pos[:, None] - pos1) * neg1
    return gains.sum(axis=0, dtype=np.int64)


def cm_gains(
    pos: np.ndarray,
    neg: np.ndarray,
    pos1: np.ndarray,
    neg1: np.ndarray,
    k: int = 1,
) -> np.ndarray:
    """Decrease of ``cm_errors`` when adding each candidate (may be negative)."""
    before = _cm_penalty(pos, neg, k)[:, None]
    after = _cm_penalty(pos1, neg1, k) + _cm_penalty(
        pos[:, None] - pos1, neg[:, None] - neg1, k
    )
    return (before - after).sum(axis=0, dtype=np.int64)
