"""approx-ac's phases 1 and 2: the greedy set cover and its reduction to a partition.

Phase 1 (:func:`greedy_cover`) scores support sets exactly (``exact``) or
the ball candidates of :mod:`ppdm.algorithms.approx_ac_neighbours`
(``ball``); phase 2 (:func:`reduce_cover`) removes the overlaps.
:mod:`ppdm.algorithms.approx_ac` describes both and their tie rules.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ppdm.algorithm_registry import APPROX_AC_MODES
from ppdm.algorithms.approx_ac_neighbours import _Ball, _Rows
from ppdm.exceptions import InfeasibleConstraintError, InvalidParameterError
from ppdm.progress import report


def exact_candidate_count(m: int, k: int) -> int:
    """Support sets exact mode scores: ``sum over 1 <= j <= 2k-1 of C(m, j)``."""
    return sum(math.comb(m, j) for j in range(1, min(2 * k - 1, m) + 1))


@dataclass(frozen=True)
class CoverResult:
    """Phase 1's cover of the tuples, and how it was found.

    Attributes
    ----------
    cover : list of numpy.ndarray
        Tuple ids (sorted) of each picked set, in pick order.
    ratios : list of float
        ``ratio(c)`` of each pick when it was made.
    new : list of int
        Tuples each pick newly covered.
    mode : str
        "exact" or "ball".
    candidates_scored : int
        Candidate sets whose ratio was computed.
    zero_cost_steps : int
        Picks of at least ``k`` identical rows (ratio 0).
    distinct_rows : int
    """

    cover: list[np.ndarray]
    ratios: list[float]
    new: list[int]
    mode: str
    candidates_scored: int
    zero_cost_steps: int
    distinct_rows: int


#: ``on_pick(covered_before, chosen_ids, ratio, new)``, called for every pick.
PickCallback = Callable[[np.ndarray, np.ndarray, float, int], None]


class _Picks:
    """Accumulates the picks and the tuple-level covered flags."""

    def __init__(self, n: int, on_pick: PickCallback | None) -> None:
        self.covered = np.zeros(n, dtype=bool)
        self.cover: list[np.ndarray] = []
        self.ratios: list[float] = []
        self.new: list[int] = []
        self.on_pick = on_pick

    def add(self, ids: np.ndarray, ratio: float) -> None:
        ids = np.sort(ids)
        new = int((~self.covered[ids]).sum())
        if self.on_pick is not None:
            self.on_pick(self.covered.copy(), ids, float(ratio), new)
        self.covered[ids] = True
        self.cover.append(ids)
        self.ratios.append(float(ratio))
        self.new.append(new)


# -- exact mode -------------------------------------------------------------
def _exact_cover(rows: _Rows, k: int, picks: _Picks) -> int:
    """Greedy over every support set of at most ``2k - 1`` distinct rows."""
    m, p = rows.m, 2 * k - 1
    blocks = []
    for size in range(1, min(p, m) + 1):
        combos = np.array(list(itertools.combinations(range(m), size)), dtype=np.int64)
        combos = combos[rows.w[combos].sum(axis=1) >= k]
        padded = np.full((len(combos), p), m, dtype=np.int64)
        padded[:, :size] = combos
        blocks.append(padded)
    sets = np.concatenate(blocks) if blocks else np.zeros((0, p), dtype=np.int64)
    valid = sets < m
    size = valid.sum(axis=1)
    w_ext = np.append(rows.w, 0)
    weight = w_ext[sets].sum(axis=1)
    dist = np.zeros((m + 1, m + 1), dtype=np.int64)
    dist[:m, :m] = rows.pairwise(np.arange(m))
    diameter = np.zeros(len(sets), dtype=np.int64)
    for a in range(p):
        for b in range(a + 1, p):
            np.maximum(diameter, dist[sets[:, a], sets[:, b]], out=diameter)
    s_min = np.maximum(k, size)
    s_max = np.minimum(p, weight)
    scored = 0
    while rows.u.sum() > 0:
        u_ext = np.append(rows.u, 0)
        uu = u_ext[sets]
        uncovered = uu.sum(axis=1)
        forced = ((uu == 0) & valid).sum(axis=1)
        first = uncovered + forced >= s_min
        s = np.where(first, np.minimum(uncovered + forced, s_max), s_min)
        new = np.where(first, s - forced, uncovered)
        usable = uncovered >= 1
        scored += int(usable.sum())
        ratio = np.full(len(sets), np.inf)
        ratio[usable] = diameter[usable] * s[usable] / new[usable]
        best = ratio.min()
        if not np.isfinite(best):
            raise AssertionError("no candidate covers the remaining tuples")
        tied = np.flatnonzero(ratio == best)
        tied = tied[new[tied] == new[tied].max()]
        tied = tied[s[tied] == s[tied].min()]
        chosen = min(
            (
                _exact_members(rows, sets[i][valid[i]], int(s[i]), bool(first[i]))
                for i in tied
            ),
            key=lambda plan: tuple(plan[0]),
        )
        ids = np.concatenate([rows.take(r, a, b) for r, a, b in chosen[1] if a or b])
        picks.add(ids, best)
    return scored


def _exact_members(
    rows: _Rows, support: np.ndarray, s: int, first: bool
) -> tuple[list[int], list[tuple[int, int, int]]]:
    """The lexicographically smallest tuple set of support ``support`` with
    ``s`` tuples, the fewest covered ones, each row used at least once.

    Returns its sorted tuple ids and ``(row, uncovered, covered)`` counts.
    """
    plan: dict[int, list[int]] = {int(r): [0, 0] for r in support}
    required: list[tuple[int, int, int]] = []  # (id, row, 0 uncovered / 1 covered)
    for r in plan:
        done = rows.w[r] - rows.u[r]
        if first:
            if rows.u[r] > 0:
                required.append((int(rows.ids[rows.start[r] + done]), r, 0))
            else:
                required.append((int(rows.ids[rows.start[r]]), r, 1))
        elif rows.u[r] == 0:
            required.append((int(rows.ids[rows.start[r]]), r, 1))
    pool: list[tuple[int, int, int]] = []
    if first:
        extra = s - len(plan)
        for r in plan:
            done = rows.w[r] - rows.u[r]
            skip = 1
            take = min(rows.u[r] - skip, extra)
            base = rows.start[r] + done + skip
            pool += [(int(i), r, 0) for i in rows.ids[base : base + max(take, 0)]]
    else:
        everything = []
        for r in plan:
            done = rows.w[r] - rows.u[r]
            base = rows.start[r] + done
            everything += [(int(i), r, 0) for i in rows.ids[base : base + rows.u[r]]]
        required += everything
        extra = s - len(required)
        for r in plan:
            done = rows.w[r] - rows.u[r]
            skip = 1 if rows.u[r] == 0 else 0
            take = min(done - skip, extra)
            base = rows.start[r] + skip
            pool += [(int(i), r, 1) for i in rows.ids[base : base + max(take, 0)]]
    members = required + sorted(pool)[:extra]
    for _, r, kind in members:
        plan[r][kind] += 1
    ids = sorted(i for i, _, _ in members)
    return ids, [(r, a, b) for r, (a, b) in plan.items()]


# -- ball mode --------------------------------------------------------------
def _zero_cost(rows: _Rows, k: int, picks: _Picks) -> int:
    """Take every set of ``k..2k-1`` identical tuples, as the greedy would.

    Ratio-0 candidates exist only for rows with ``w >= k``: they are taken
    first, more new tuples first, then lower row: every row's full
    ``2k - 1`` chunks (row by row), then the remainders by decreasing size;
    a remainder under ``k`` is completed by the row's first covered tuples.
    """
    p = 2 * k - 1
    heavy = np.flatnonzero(rows.w >= k)
    steps = 0
    for r in heavy:
        for _ in range(int(rows.w[r] // p)):
            picks.add(rows.take(int(r), p, 0), 0.0)
            steps += 1
    rest = [(int(rows.u[r]), int(r)) for r in heavy if rows.u[r] > 0]
    for remainder, r in sorted(rest, key=lambda t: (-t[0], t[1])):
        covered = 0 if remainder >= k else k - remainder
        picks.add(rows.take(r, remainder, covered), 0.0)
        steps += 1
    return steps


def _ball_cover(
    rows: _Rows, k: int, picks: _Picks, audit: bool = False
) -> tuple[int, int]:
    """Ball-mode greedy; returns (candidates scored, zero-cost steps).

    With ``audit``, every row is rescored at every step and the cached scores
    must agree (a test of the invalidation radius).
    """
    zero = _zero_cost(rows, k, picks)
    if rows.u.sum() == 0:
        return 0, zero
    ball = _Ball(rows, k)
    active = np.flatnonzero(rows.u > 0)
    ball.refresh(active)
    best_ratio = np.full(rows.m, np.inf)
    best_new = np.zeros(rows.m, dtype=np.int64)
    radius = np.full(rows.m, -1, dtype=np.int64)
    scored = 0

    def update(batch: np.ndarray) -> None:
        nonlocal scored
        s = ball.score(batch, keep=True)
        best_ratio[batch] = s.best_ratio
        best_new[batch] = s.best_new
        radius[batch] = s.radius
        scored += s.scored

    update(active)
    total = int(rows.u.sum())
    while True:
        remaining = int(rows.u.sum())
        if remaining == 0:
            break
        if audit:
            live = np.flatnonzero(rows.u > 0)
            fresh = ball.score(live)
            if not (
                np.array_equal(fresh.best_ratio, best_ratio[live])
                and np.array_equal(fresh.best_new, best_new[live])
            ):
                raise AssertionError("a cached ball score is stale")
        low = best_ratio.min()
        if not np.isfinite(low):
            raise AssertionError("no ball candidate covers the remaining tuples")
        tied = np.flatnonzero(best_ratio == low)
        r = int(tied[np.argmax(best_new[tied])])
        ratio, plan = ball.materialize(r, audit)
        if ratio != low:
            raise AssertionError(f"stale cached ratio of row {r}: {low} != {ratio}")
        before = rows.u.copy()
        ids = np.concatenate([rows.take(row, a, b) for row, a, b in plan])
        picks.add(ids, ratio)
        changed = np.flatnonzero(rows.u != before)
        gone = changed[rows.u[changed] == 0]
        best_ratio[gone] = np.inf
        if len(picks.cover) % 256 == 0:
            report(1.0 - rows.u.sum() / max(total, 1), "approx-ac: covering")
        live = rows.u > 0
        if not live.any():
            break
        near = (ball.distances(changed) * rows.m + changed[:, None]).min(axis=0)
        affected = np.flatnonzero(live & (near <= radius))
        if len(affected):
            update(affected)
    return scored, zero


def greedy_cover(
    codes: np.ndarray,
    k: int,
    *,
    mode: str = "auto",
    exact_limit: int = 200_000,
    on_pick: PickCallback | None = None,
    audit: bool = False,
) -> CoverResult:
    """Phase 1: a greedy cover of the tuples by sets of ``k..2k-1`` tuples.

    Parameters
    ----------
    codes : numpy.ndarray of int, shape (n, q)
        Quasi-identifier codes (:func:`encode_quasi_identifiers`).
    k : int
        At least 1 and at most ``n``.
    mode : {"auto", "exact", "ball"}, default="auto"
    exact_limit : int, default=200000
        ``auto`` runs exact mode when it scores at most this many support
        sets; ``exact`` refuses to score more.
    on_pick : callable, optional
        ``on_pick(covered_before, ids, ratio, new)`` after every choice
        (``covered_before`` a boolean array over the tuples).
    audit : bool, default=False
        Ball mode: rescore every row at every step and check the cached
        scores (slow; for tests).

    Returns
    -------
    CoverResult
    """
    codes = np.asarray(codes, dtype=np.int64)
    n = len(codes)
    if mode not in APPROX_AC_MODES:
        raise InvalidParameterError(
            f"mode must be one of {list(APPROX_AC_MODES)}; got {mode!r}"
        )
    if not 1 <= k <= max(n, 1) or n == 0:
        raise InfeasibleConstraintError(
            f"k must be in [1, n_rows={n}] for a cover of the tuples; got {k}"
        )
    rows = _Rows(codes)
    picks = _Picks(n, on_pick)
    if k == 1:
        # Every set is one tuple (ratio 0); lexicographic ties take them in order.
        for i in range(n):
            picks.add(np.array([i], dtype=np.int64), 0.0)
        used = "exact" if mode == "auto" else mode
        return CoverResult(picks.cover, picks.ratios, picks.new, used, n, n, rows.m)
    n_support = exact_candidate_count(rows.m, k)
    if mode == "auto":
        used = "exact" if n_support <= exact_limit else "ball"
    else:
        used = mode
    if used == "exact" and n_support > exact_limit:
        raise InvalidParameterError(
            f"approx-ac: exact mode would score {n_support} support sets "
            f"({rows.m} distinct quasi-identifier rows, k={k}), more than "
            f"exact_limit={exact_limit}; use mode='ball' or 'auto', or raise "
            "exact_limit"
        )
    if used == "exact":
        scored = _exact_cover(rows, k, picks)
        zero = sum(1 for r in picks.ratios if r == 0)
    else:
        scored, zero = _ball_cover(rows, k, picks, audit)
    return CoverResult(
        cover=picks.cover,
        ratios=picks.ratios,
        new=picks.new,
        mode=used,
        candidates_scored=scored,
        zero_cost_steps=zero,
        distinct_rows=rows.m,
    )


@dataclass(frozen=True)
class Reduction:
    """Phase 2's partition and what it did.

    Attributes
    ----------
    groups : list of numpy.ndarray
        Sorted tuple ids of each group, in creation order of their sets.
    removals : int
        Tuples deleted from a set larger than ``k``.
    merges : int
        Pairs of ``k``-sets replaced by their union.
    """

    groups: list[np.ndarray]
    removals: int
    merges: int


def reduce_cover(
    cover: Sequence[np.ndarray],
    k: int,
    n: int,
    *,
    on_step: Callable[[list[set[int]]], None] | None = None,
) -> Reduction:
    """Phase 2: turn a cover by sets of ``k..2k-1`` tuples into a partition.

    Shared tuples are handled in ascending tuple id; for a tuple in several
    sets, the two earliest-created are resolved first: if either has more
    than ``k`` tuples, the tuple leaves the larger (the later-created on equal
    sizes); else both have ``k`` and are replaced by their union, which takes
    the earlier set's place. A resolved tuple never becomes shared again.

    Parameters
    ----------
    cover : sequence of numpy.ndarray
        Tuple ids of each set, in creation order.
    k : int
    n : int
        Number of tuples (ids ``0..n-1``); every one must be covered.
    on_step : callable, optional
        Called with the current sets (in creation order) after every step.

    Returns
    -------
    Reduction
    """
    sets: dict[int, set[int]] = {i: {int(t) for t in c} for i, c in enumerate(cover)}
    flat = np.concatenate(
        [np.zeros(0, np.int64), *(np.asarray(c, dtype=np.int64) for c in cover)]
    )
    counts = np.bincount(flat, minlength=n)
    if len(counts) != n or (counts == 0).any():
        raise InvalidParameterError(
            "the cover must cover every tuple 0..n-1 once or more"
        )
    shared = np.flatnonzero(counts > 1)
    members: dict[int, list[int]] = {int(t): [] for t in shared}
    for i, c in enumerate(cover):
        for t in np.asarray(c)[counts[np.asarray(c, dtype=np.int64)] > 1]:
            members[int(t)].append(i)
    removals = merges = 0
    for t in shared.tolist():
        owners = members[t]
        while len(owners) >= 2:
            a, b = owners[0], owners[1]
            if len(sets[a]) > k or len(sets[b]) > k:
                loser = b if len(sets[b]) >= len(sets[a]) else a
                sets[loser].discard(t)
                owners.remove(loser)
                removals += 1
            else:
                moved = sets.pop(b)
                sets[a] |= moved
                for x in moved:
                    own = members.get(x)
                    if own is None:
                        continue
                    own.remove(b)
                    if a not in own:
                        own.append(a)
                        own.sort()
                merges += 1
            if on_step is not None:
                on_step([sets[i] for i in sorted(sets)])
    groups = [np.array(sorted(sets[i]), dtype=np.int64) for i in sorted(sets)]
    return Reduction(groups=groups, removals=removals, merges=merges)
