"""Maximal: the largest maximal feasible feature sets, best HamDist among them.

Step 1 mines the maximal feature sets S with ``AC(S) >= k``; step 2 keeps the
``r`` largest (ties: lexicographically smallest sorted index tuple first);
step 3 returns the one with the largest HamDist (same tie-break).

Two mining modes (Decision of the implementation notes):

* ``exact``: a depth-first maximal-set search (GenMax / MAFIA style: head and
  tail, features in index order, the tail filtered to the feasible one-feature
  extensions, head-union-tail shortcut, subset check against the maximal sets
  already found) whose frequency test is the containment test; downward
  closure makes the pruning valid. Maximality is checked against every
  feature, not only the tail. Each node of the search costs one containment
  test of its tail (:func:`ppdm.selection._bitsets.extension_ac`); ``budget``
  bounds the nodes.
* ``frequent``: the maximal frequent itemsets at absolute support k
  (``mlxtend.frequent_patterns.fpmax``), one transaction per row. Every one
  is feasible (each pattern is a subset of S, so its support is at least
  supp(S)), but maximal feasible sets that are not frequent are missed.

When the exact search exceeds its budget, :func:`maximal` falls back to the
frequent mode and records that it did.

Both criteria of the paper work here: ``constraint="containment"`` (above)
or ``"k-anonymity"``, every class of identical projected rows at least k
rows. Ordinary k-anonymity is downward closed as well (dropping a feature
only merges classes), so the exact search is the same with the class-size
test in place of the containment test. The frequent mode has no
counterpart (a frequent itemset says nothing of the classes), so under
k-anonymity an exact search that exceeds its budget keeps the maximal sets
it found (the depth-first search reaches its first maximal set within d
nodes), or, if none, the first-fit maximal set (features added in index
order while the classes stay ``>= k``); ``mode`` says ``"partial"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.selection._bitsets import (
    Groups,
    as_binary,
    containment_sizes,
    extension_ac,
    extension_supports,
    group_feature_counts,
    kanonymity_feasible,
    pack_columns,
)
from ppdm.selection._objectives import hamdist_weights

__all__ = [
    "MAXIMAL_CONSTRAINTS",
    "MAXIMAL_MODES",
    "MaximalResult",
    "SearchBudgetExceeded",
    "choose_maximal",
    "first_fit",
    "maximal",
    "maximal_sets_exact",
    "maximal_sets_frequent",
]

MAXIMAL_MODES = ("exact", "frequent")
#: Feasibility tests of the exact search.
MAXIMAL_CONSTRAINTS = ("containment", "k-anonymity")


class SearchBudgetExceeded(RuntimeError):
    """The exact search visited more nodes than its budget.

    ``found`` holds the maximal sets found before it stopped.
    """

    def __init__(self, nodes: int, found: Sequence[tuple[int, ...]] = ()) -> None:
        super().__init__(nodes)
        self.found = list(found)


@dataclass(frozen=True)
class MaximalResult:
    """Outcome of :func:`maximal`.

    Attributes
    ----------
    selected : list of int
        The chosen set, ascending.
    top : list of list of int
        The top-r candidates by size.
    n_maximal : int
        Maximal sets mined.
    mode : str
        The mode that produced the sets (after a fallback: ``"frequent"``
        under containment, ``"partial"`` under k-anonymity).
    fallback : bool
        The exact search exceeded its budget.
    nodes : int
        Nodes the exact search visited (0 in frequent mode).
    """

    selected: list[int]
    top: list[list[int]]
    n_maximal: int
    mode: str
    fallback: bool
    nodes: int


class _Search:
    def __init__(
        self, x: np.ndarray, k: int, budget: int, constraint: str = "containment"
    ) -> None:
        self.x = x
        self.k = k
        self.budget = budget
        self.constraint = constraint
        self.bits = pack_columns(x)
        self.nodes = 0
        self.found: list[np.ndarray] = []

    def extensions(self, groups: Groups, candidates: np.ndarray) -> np.ndarray:
        """The candidates u with ``AC(S + u) >= k``."""
        if len(candidates) == 0:
            return candidates
        counts = group_feature_counts(
            groups.ids, groups.n_groups, self.x[:, candidates]
        )
        if self.constraint == "k-anonymity":
            return candidates[kanonymity_feasible(groups, counts, self.k)]
        supports = extension_supports(groups.tids, self.bits[candidates])
        return candidates[extension_ac(groups, counts, supports) >= self.k]

    def subsumed(self, mask: np.ndarray) -> bool:
        if not self.found:
            return False
        found = np.vstack(self.found)
        return bool((~(mask[None, :] & ~found)).all(axis=1).any())

    def is_maximal(self, mask: np.ndarray, groups: Groups) -> bool:
        return len(self.extensions(groups, np.flatnonzero(~mask))) == 0

    def record(self, mask: np.ndarray, groups: Groups) -> None:
        if not self.subsumed(mask) and self.is_maximal(mask, groups):
            self.found.append(mask.copy())

    def feasible(self, mask: np.ndarray) -> bool:
        """Whether the features of ``mask`` meet the constraint."""
        n = len(self.x)
        if self.constraint == "k-anonymity":
            return bool(_class_sizes(self.x[:, mask]).min(initial=n) >= self.k)
        return bool(containment_sizes(self.x[:, mask]).min(initial=n) >= self.k)

    def sets(self) -> list[tuple[int, ...]]:
        return [tuple(int(j) for j in np.flatnonzero(m)) for m in self.found]

    def visit(self, mask: np.ndarray, groups: Groups, tail: np.ndarray) -> None:
        self.nodes += 1
        if self.nodes > self.budget:
            raise SearchBudgetExceeded(self.nodes, self.sets())
        if len(tail) == 0:
            self.record(mask, groups)
            return
        union = mask.copy()
        union[tail] = True
        if self.subsumed(union):
            return
        if self.feasible(union):
            whole = groups
            for u in tail:
                whole = whole.add(self.x[:, u], self.bits[u])
            self.record(union, whole)
            return
        for i, u in enumerate(tail):
            child = groups.add(self.x[:, u], self.bits[u])
            child_mask = mask.copy()
            child_mask[u] = True
            self.visit(child_mask, child, self.extensions(child, tail[i + 1 :]))


def _class_sizes(x: np.ndarray) -> np.ndarray:
    """Sizes of the classes of identical rows of a boolean matrix."""
    if x.shape[1] == 0:
        return np.array([len(x)], dtype=np.int64)
    _, counts = np.unique(np.packbits(x, axis=1), axis=0, return_counts=True)
    return counts.astype(np.int64)


def first_fit(matrix: np.ndarray, k: int) -> tuple[int, ...]:
    """Features added in index order while every class keeps ``>= k`` rows.

    The result is a maximal k-anonymous set (downward closure: a feature
    refused once stays refused as the set grows).
    """
    x = as_binary(matrix)
    n, d = x.shape
    if n == 0:
        return tuple(range(d))
    groups = Groups.start(n)
    bits = pack_columns(x)
    chosen: list[int] = []
    for u in range(d):
        counts = group_feature_counts(groups.ids, groups.n_groups, x[:, [u]])
        if kanonymity_feasible(groups, counts, k)[0]:
            groups = groups.add(x[:, u], bits[u])
            chosen.append(u)
    return tuple(chosen)


def maximal_sets_exact(
    matrix: np.ndarray,
    k: int,
    *,
    budget: int = 20_000,
    constraint: str = "containment",
) -> tuple[list[tuple[int, ...]], int]:
    """Every maximal S meeting the constraint (exact depth-first search).

    ``constraint``: ``"containment"`` (``AC(S) >= k``) or ``"k-anonymity"``
    (every class of identical projected rows ``>= k`` rows).

    Returns
    -------
    (sets, nodes)
        The sets as ascending index tuples (in the order found) and the nodes
        visited.

    Raises
    ------
    SearchBudgetExceeded
        More than ``budget`` nodes.
    """
    if constraint not in MAXIMAL_CONSTRAINTS:
        raise InvalidParameterError(
            f"constraint must be one of {list(MAXIMAL_CONSTRAINTS)}; got {constraint!r}"
        )
    x = as_binary(matrix)
    n, d = x.shape
    search = _Search(x, k, budget, constraint)
    root = Groups.start(n)
    if n == 0:
        return [tuple(range(d))], 0
    tail = search.extensions(root, np.arange(d))
    search.visit(np.zeros(d, dtype=bool), root, tail)
    return search.sets(), search.nodes


def maximal_sets_frequent(matrix: np.ndarray, k: int) -> list[tuple[int, ...]]:
    """The maximal itemsets with support ``>= k`` (fpmax); ``[()]`` when none."""
    from mlxtend.frequent_patterns import fpmax

    x = as_binary(matrix)
    n, d = x.shape
    if n == 0 or d == 0 or k > n:
        return [()]
    frame = pd.DataFrame(x, columns=[str(j) for j in range(d)])
    mined = fpmax(frame, min_support=(k - 0.5) / n, use_colnames=True)
    sets = sorted(tuple(sorted(int(c) for c in s)) for s in mined["itemsets"])
    return sets or [()]


def choose_maximal(
    sets: Sequence[tuple[int, ...]], weights: np.ndarray, r: int
) -> tuple[list[int], list[list[int]]]:
    """Steps 2 and 3: the ``r`` largest sets, then the largest HamDist."""
    ordered = sorted({tuple(sorted(s)) for s in sets}, key=lambda s: (-len(s), s))
    top = ordered[:r]
    best = min(top, key=lambda s: (-int(weights[list(s)].sum()), s))
    return list(best), [list(s) for s in top]


def maximal(
    matrix: np.ndarray,
    y: np.ndarray,
    k: int,
    *,
    r: int = 10,
    mode: str = "exact",
    budget: int = 20_000,
    constraint: str = "containment",
) -> MaximalResult:
    """The Maximal method (see the module docstring)."""
    if mode not in MAXIMAL_MODES:
        raise InvalidParameterError(
            f"maximal_mode must be one of {list(MAXIMAL_MODES)}; got {mode!r}"
        )
    if constraint == "k-anonymity" and mode == "frequent":
        raise InvalidParameterError(
            "maximal_mode 'frequent' mines sets feasible under containment only; "
            "under k-anonymity use 'exact'"
        )
    x = as_binary(matrix)
    fallback = False
    nodes = 0
    used = mode
    if mode == "exact":
        try:
            sets, nodes = maximal_sets_exact(x, k, budget=budget, constraint=constraint)
        except SearchBudgetExceeded as exceeded:
            fallback, nodes = True, budget
            if constraint == "k-anonymity":
                used = "partial"
                sets = exceeded.found or [first_fit(x, k)]
            else:
                used = "frequent"
                sets = maximal_sets_frequent(x, k)
    else:
        sets = maximal_sets_frequent(x, k)
    chosen, top = choose_maximal(sets, hamdist_weights(x, y), r)
    return MaximalResult(chosen, top, len(sets), used, fallback, nodes)
