"""Approximate k-anonymity by cell suppression for associative classification.

The algorithm of "An Approximation Algorithm for Privacy Preservation of
Associative Classification" (NECTEC, after Meyerson and Williams 2004) makes a
table k-anonymous on its quasi-identifiers by suppressing cells, minimising
the surrogate COUNT (number of stars) with a greedy weighted set cover, which
bounds the loss of the CFCM utility metric (:mod:`ppdm.utility.cfcm`):

Phase 1, partitioning
    Repeatedly pick the set ``c`` of ``k`` to ``2k - 1`` tuples of least
    ``ratio(c) = d(c) * |c| / |c minus covered|`` (``d(c)`` the largest
    Hamming distance over the quasi-identifiers between two tuples of ``c``)
    among the sets with uncovered tuples, until every tuple is covered.
Phase 2, reduction (:func:`reduce_cover`)
    While two sets share a tuple: if one of them has more than ``k`` tuples,
    the tuple leaves the larger (the later-created on equal sizes); else the
    two ``k``-sets are replaced by their union (at most ``2k - 1`` tuples).
Phase 3, suppression
    In every group, every quasi-identifier not constant on it is released as
    the suppression marker (``spec.suppression_marker``).

The paper claims ``COUNT <= 3k(1 + ln 2k) * OPT_COUNT``. Enumerating every
set of ``k..2k-1`` tuples is hopeless beyond toy tables, so phase 1 works on
the distinct quasi-identifier rows ``r_1..r_m`` with multiplicities ``w_i``
(tuples of one row are interchangeable for COUNT; a row's tuples are used in
ascending tuple order) and has two modes, as the project's notes
(``shared/algorithms/approx-associative.md``) specify:

``exact``
    Every support set ``T`` of at most ``2k - 1`` distinct rows with
    ``sum of w over T >= k`` is scored in closed form (``u_i`` uncovered
    copies, ``f`` rows of ``T`` with none, ``U = sum of u``, ``s_min =
    max(k, |T|)``, ``s_max = min(2k - 1, sum of w)``; if ``U + f >= s_min``
    the set has ``s = min(U + f, s_max)`` tuples and ratio ``d(T) s / (s -
    f)``, else ``s_min`` tuples and ratio ``d(T) s_min / U``). This is the
    paper's greedy step, ties broken as the notes decide (more newly covered
    tuples, then fewer tuples -- which only matters for sets of identical
    rows, ratio 0 -- then the lexicographically smallest tuple ids; for a
    support set the lexicographically smallest tuples are the first unused
    ones of each row plus the smallest others), so the picks equal
    those of literal tuple-level enumeration
    (:func:`ppdm.experiments.associative.enumeration_cover`) and the full
    bound holds.
``ball``
    For each distinct row ``r`` with uncovered tuples and each distance
    ``delta`` in ``0..q``, the ball ``B(r, delta)`` of the tuples within
    Hamming distance ``delta`` gives candidates: with ``U >= k`` uncovered
    tuples in it, the ``k`` and the ``min(U, 2k - 1)`` nearest uncovered;
    with ``0 < U < k`` and ``|B| >= k``, its ``U`` uncovered tuples plus the
    ``k - U`` nearest covered ones ("nearest": by distance to ``r``, then row
    order, then tuple id). The best candidate by the exact ratio is picked;
    every pick is within a factor 2 of the best set of ``F``, so the bound
    doubles. Ties: ratio, more new tuples, lower ``r``, candidate order.
``auto`` (default)
    ``exact`` when ``sum over j <= 2k - 1 of C(m, j)`` is at most
    ``exact_limit``, else ``ball``.

Ball mode is fast because (i) the zero-cost sets (at least ``k`` identical
rows, ratio 0) are taken first in bulk, in exactly the order the greedy would
take them; (ii) each row keeps its nearest uncovered and covered rows (by
distance, then row) in a short list, refreshed when it runs out from a static
table of every row's nearest rows, built once; Hamming distances take only
``q + 1`` values, so that table is cut at a whole distance level found by
counting rows per level (no sort over all rows), and only a row whose static
list runs out is compared with every eligible row; (iii) each row's best
candidate, and the tuples it takes, are kept and recomputed only when a tuple
within the radius its candidates look at became covered, so a pick needs no
second scoring; candidates of many rows are scored at once with numpy, over
byte-sized distances (a table of all pairwise distances when there are at
most ``_DENSE_ROWS`` distinct rows). None of this changes a pick: the
partitions equal those of the earlier implementation, which compared every
row and sorted per refresh (pinned in the tests).

Early stop: when no value of any quasi-identifier (missing included) is
shared by ``k`` tuples, every k-anonymous suppression stars every cell, so
the cover could only degenerate to whole starred columns;
:func:`approx_ac_partition` then returns that release at once (groups of
``k..2k-1`` consecutive tuples, ``COUNT = n q = OPT_COUNT``, ratio 1) and the
evidence says it stopped early (``stopped_early``, ``stop_reason``).

Ordering and release conventions: rows keep the input order and index; the
target and every non-quasi-identifier column are copied unchanged; released
quasi-identifier columns are pandas ``string`` columns holding the kept value
as text (numbers by :func:`ppdm.values.format_number`), the marker, or a
missing value kept missing. A missing value is a value of its own (a group of
missing values keeps them). No random choice is made; the rng is unused.

References
----------
.. [1] "An Approximation Algorithm for Privacy Preservation of Associative
   Classification", NECTEC, Thailand (authors not shown in our copy).
.. [2] A. Meyerson, R. Williams, "On the complexity of optimal k-anonymity",
   PODS 2004.
.. [3] N. Harnsamut, J. Natwichai, "A Novel Heuristic Algorithm for Privacy
   Preserving of Associative Classification", PRICAI 2008, LNAI 5351.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np

from ppdm._lazy import pandas as pd
from ppdm.algorithms.base import Anonymizer
from ppdm.exceptions import InfeasibleConstraintError, InvalidParameterError
from ppdm.generalization.ordered_text import text_kind
from ppdm.model import AnonymizationSpec, Release
from ppdm.params import Interval, Options
from ppdm.progress import report
from ppdm.utility.cfcm import cell_text, cfcm_report, partition_count

__all__ = [
    "MODES",
    "ApproxAC",
    "ApproxACPartition",
    "CoverResult",
    "Reduction",
    "approx_ac_partition",
    "approximation_bound",
    "encode_quasi_identifiers",
    "exact_candidate_count",
    "greedy_cover",
    "hamming_diameter",
    "reduce_cover",
    "stars_every_cell",
]

#: Phase-1 modes; the first is the default.
MODES = ("auto", "exact", "ball")
_INF = np.iinfo(np.int64).max
#: Pairwise cells (candidates x rows x rows) scored at once in ball mode.
_CHUNK_CELLS = 1 << 22
#: Distinct rows up to which ball mode keeps every pairwise distance (a byte each).
_DENSE_ROWS = 6000
#: A static neighbour list holds up to this many times a refreshed list's rows.
_STATIC_FACTOR = 4


def approximation_bound(k: int, mode: str = "exact") -> float:
    """The factor that holds for the phase-1 mode used: ``COUNT <= factor * OPT_COUNT``.

    ``"exact"``: the paper's ``3k(1 + ln 2k)``. ``"ball"``: twice that, since
    each ball pick is only within a factor 2 of the best set of ``F`` (the
    module docstring).

    >>> round(approximation_bound(4), 2), round(approximation_bound(4, "ball"), 2)
    (36.95, 73.91)
    """
    if mode not in ("exact", "ball"):
        raise InvalidParameterError(
            f"approximation_bound: mode must be 'exact' or 'ball'; got {mode!r}"
        )
    paper = 3.0 * k * (1.0 + math.log(2 * k))
    return paper if mode == "exact" else 2.0 * paper


def encode_quasi_identifiers(
    table: pd.DataFrame, quasi_identifiers: Sequence[str]
) -> np.ndarray:
    """Integer codes of the quasi-identifiers, shape (n, q); missing is -1.

    Equal codes in a column mean equal values; a missing value is a value of
    its own.
    """
    columns = [
        pd.factorize(table[q], use_na_sentinel=True)[0].astype(np.int64)
        for q in quasi_identifiers
    ]
    if not columns:
        return np.zeros((len(table), 0), dtype=np.int64)
    return np.column_stack(columns)


def hamming_diameter(codes: np.ndarray) -> int:
    """``d(c)``: the largest Hamming distance between two rows of ``codes``."""
    codes = np.unique(np.asarray(codes), axis=0)
    if len(codes) < 2:
        return 0
    return int((codes[:, None, :] != codes[None, :, :]).sum(axis=2).max())


def exact_candidate_count(m: int, k: int) -> int:
    """Support sets exact mode scores: ``sum over 1 <= j <= 2k-1 of C(m, j)``."""
    return sum(math.comb(m, j) for j in range(1, min(2 * k - 1, m) + 1))


class _Rows:
    """Distinct quasi-identifier rows, multiplicities, and their tuples.

    The tuples of row ``i`` are ``ids[start[i]:start[i] + w[i]]`` in
    ascending order; tuples are always taken in that order, so the covered
    tuples of a row are its first ``w[i] - u[i]`` (``u`` uncovered copies).
    """

    def __init__(self, codes: np.ndarray) -> None:
        n = len(codes)
        if codes.shape[1]:
            uniq, inverse, counts = np.unique(
                codes, axis=0, return_inverse=True, return_counts=True
            )
            inverse = inverse.reshape(-1)
        else:
            uniq = np.zeros((1 if n else 0, 0), dtype=np.int64)
            inverse = np.zeros(n, dtype=np.int64)
            counts = np.array([n] if n else [], dtype=np.int64)
        self.codes = uniq
        self.m, self.q = uniq.shape
        self.w = counts.astype(np.int64)
        self.ids = np.argsort(inverse, kind="stable").astype(np.int64)
        self.start = np.concatenate([[0], np.cumsum(self.w)[:-1]]).astype(np.int64)
        self.u = self.w.copy()
        self.n = n

    def take(self, row: int, uncovered: int, covered: int) -> np.ndarray:
        """Tuple ids: ``uncovered`` new copies of ``row`` (covering them) and
        its first ``covered`` already covered copies."""
        base = self.start[row]
        done = self.w[row] - self.u[row]
        if uncovered > self.u[row] or covered > done:
            raise AssertionError("candidate asks for tuples the row lacks")
        new = self.ids[base + done : base + done + uncovered]
        old = self.ids[base : base + covered]
        self.u[row] -= uncovered
        return np.concatenate([old, new])

    def pairwise(self, rows: np.ndarray) -> np.ndarray:
        """Hamming distances between the distinct rows ``rows``."""
        c = self.codes[rows]
        return (c[:, None, :] != c[None, :, :]).sum(axis=2)


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


@dataclass
class _Scores:
    """Ball-mode candidates of a batch of rows (see :meth:`_Ball.score`)."""

    best_ratio: np.ndarray
    best_new: np.ndarray
    best_cand: np.ndarray
    radius: np.ndarray
    scored: int
    detail: dict[str, np.ndarray] = field(default_factory=dict)


class _Ball:
    """Ball-mode greedy state over the distinct rows."""

    def __init__(self, rows: _Rows, k: int) -> None:
        self.rows, self.k = rows, k
        self.p = 2 * k - 1
        self.m, self.q = rows.m, rows.q
        self.n_unc = max(3 * self.p, 16)
        self.width = self.n_unc + (k - 1)
        # One small-integer column per attribute, with one more entry for the
        # padding row ``m`` (a value no row has): distances are q comparisons
        # of narrow columns, which move far fewer bytes than folding the XOR
        # of packed words.
        self.columns = [
            _narrow(np.append(c, int(c.min()) - 1 if len(c) else -1))
            for c in rows.codes.T
        ]
        self.acc_type = np.uint8 if self.q < 256 else np.int64
        # With few distinct rows, one table of every pairwise distance (a
        # byte each) replaces the per-attribute comparisons of every refresh
        # and every candidate ball; the padding row ``m`` differs from every
        # row in every attribute, and from itself in none.
        self.dense: np.ndarray | None = None
        if self.m <= _DENSE_ROWS:
            dense = np.zeros((self.m + 1, self.m + 1), dtype=self.acc_type)
            everything = np.arange(self.m)
            dense[: self.m, : self.m] = self._compare(everything)
            dense[self.m, : self.m] = self.q
            dense[: self.m, self.m] = self.q
            self.dense = dense
        self.lists = np.full((self.m, self.width), self.m, dtype=np.int64)
        self.list_keys = np.full((self.m, self.width), _INF, dtype=np.int64)
        self.bound = np.full(self.m, _INF, dtype=np.int64)
        self.refreshes = 0
        self.plan_block = np.full(self.m, -1, dtype=np.int64)
        self.plan_pos = np.zeros(self.m, dtype=np.int64)
        self.plan_blocks: list[tuple[np.ndarray, ...] | None] = []
        self.plan_users: list[int] = []
        self.near: np.ndarray | None = None
        self.near_dist: np.ndarray | None = None
        self.near_limit: np.ndarray | None = None

    def _compare(self, rows: np.ndarray, to: np.ndarray | None = None) -> np.ndarray:
        """Hamming distances from ``rows`` to every distinct row (or to the
        rows ``to``), (len(rows), m or len(to)), by comparing the attributes."""
        width = self.m if to is None else len(to)
        out = np.zeros((len(rows), width), dtype=self.acc_type)
        step = max(1, (1 << 22) // max(width, 1))
        differ = np.empty((min(step, len(rows)), width), dtype=bool)
        for lo in range(0, len(rows), step):
            part = rows[lo : lo + step]
            acc, flags = out[lo : lo + step], differ[: len(part)]
            for column in self.columns:
                other = column[: self.m] if to is None else column[to]
                # In place: a fresh boolean array per attribute, added with
                # casting, costs several times the comparison itself.
                np.not_equal(column[part][:, None], other[None, :], out=flags)
                _accumulate(acc, flags)
        return out

    def small_distances(self, rows: np.ndarray) -> np.ndarray:
        """Hamming distances from ``rows`` to every distinct row, (len, m), in
        the narrow accumulator type (uint8 below 256 attributes)."""
        if self.dense is not None:
            return self.dense[rows, : self.m]
        return self._compare(rows)

    def distances(self, rows: np.ndarray) -> np.ndarray:
        """Hamming distances from ``rows`` to every distinct row, (len, m)."""
        return self.small_distances(rows).astype(np.int64)

    def _pair_distances(self, members: np.ndarray) -> np.ndarray:
        """Hamming distances between the members of each candidate ball, (v, M, M).

        The padding row ``m`` differs from every row in every attribute.
        """
        if self.dense is not None:
            return self.dense[members[:, :, None], members[:, None, :]]
        acc = np.zeros((*members.shape, members.shape[1]), dtype=self.acc_type)
        flags = np.empty(acc.shape, dtype=bool)
        for column in self.columns:
            values = column[members]
            np.not_equal(values[:, :, None], values[:, None, :], out=flags)
            _accumulate(acc, flags)
        return acc

    def keys(self, rows: np.ndarray) -> np.ndarray:
        """Neighbour order keys ``distance * m + row`` from ``rows``."""
        return self.distances(rows) * self.m + np.arange(self.m)

    def _static_lists(self) -> None:
        """Every row's nearest rows (covered or not), by key.

        Built once: a refresh then filters these by the current state, which
        costs a list's length per row instead of ``m``, and looks at other
        rows only when the list runs out of the tuples it needs. A row's list
        holds every row within some distance ``L`` (the largest that keeps it
        to at most ``W`` rows), so it is complete below key
        ``near_limit = (L + 1) * m``.

        Distances take only ``q + 1`` values: the cut is found by counting
        rows per level, and only the rows within it are sorted.
        """
        m, q = self.m, self.q
        width = min(m, max(_STATIC_FACTOR * self.width, 256))
        self.near = np.full((m, width), m, dtype=np.int32 if m < 2**31 else np.int64)
        self.near_dist = np.zeros((m, width), dtype=self.acc_type)
        self.near_limit = np.full(m, _INF, dtype=np.int64)
        step = max(1, (1 << 22) // max(m, 1))
        within = np.empty((min(step, m), m), dtype=bool)
        for lo in range(0, m, step):
            part = np.arange(lo, min(lo + step, m))
            dist = self.small_distances(part)
            flags = within[: len(part)]
            cut = np.zeros(len(part), dtype=np.int64)
            over = np.zeros(len(part), dtype=bool)
            for level in range(q + 1):
                np.less_equal(dist, level, out=flags)
                over |= flags.view(np.uint8).sum(axis=1, dtype=np.int64) > width
                if over.all():
                    break
                cut[~over] = level
            np.less_equal(dist, cut.astype(self.acc_type)[:, None], out=flags)
            # One flat scan: two-dimensional nonzero is several times slower.
            r, c = np.divmod(np.flatnonzero(flags), m)
            d = dist[r, c].astype(np.int64)
            order = np.argsort((r * (q + 2) + d) * m + c)
            r, c, d = r[order], c[order], d[order]
            pos = np.arange(len(r)) - np.searchsorted(r, r)
            self.near[lo + r, pos] = c
            self.near_dist[lo + r, pos] = d
            self.near_limit[part] = np.where(cut == q, _INF, (cut + 1) * m)

    def _select(
        self, part: np.ndarray, eligible: np.ndarray, count: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ``count`` eligible rows of least key ``distance * m + row`` from
        each centre of ``part``, and their keys, nearest first; padded with
        row ``m`` and key ``_INF`` when fewer rows are eligible.

        From the static lists where they hold enough eligible rows (then the
        first ones are the nearest of all), else from every eligible row.
        """
        m = self.m
        found = min(count, int(eligible.sum()))
        cols = np.full((len(part), count), m, dtype=np.int64)
        keys = np.full((len(part), count), _INF, dtype=np.int64)
        if found == 0 or len(part) == 0:
            return cols, keys
        if self.near is None:
            self._static_lists()
        near = self.near[part]
        mask = np.append(eligible, False)[near]
        rank = np.cumsum(mask, axis=1, dtype=np.int32)
        ok = rank[:, -1] >= found
        take = mask & (rank <= found) & ok[:, None]
        chosen = near[take].reshape(-1, found).astype(np.int64)
        cols[ok, :found] = chosen
        keys[ok, :found] = (
            self.near_dist[part][take].reshape(-1, found).astype(np.int64) * m + chosen
        )
        if not ok.all():
            rest = part[~ok]
            pool = np.flatnonzero(eligible)
            if self.dense is not None:
                dist = self.dense[rest][:, pool]
            else:
                dist = self._compare(rest, pool)
            order = _first_by_level(dist, found, self.q)
            chosen = pool[order]
            cols[~ok, :found] = chosen
            keys[~ok, :found] = (
                np.take_along_axis(dist, order, axis=1).astype(np.int64) * m + chosen
            )
        return cols, keys

    def refresh(self, batch: np.ndarray) -> None:
        """Rebuild the neighbour lists of ``batch`` from the current state."""
        rows, k = self.rows, self.k
        uncovered = rows.u > 0
        covered = rows.w - rows.u > 0
        n_unc = min(self.n_unc, self.m)
        n_cov = min(k - 1, self.m)
        step = max(1, (1 << 22) // max(self.m, 1))
        for lo in range(0, len(batch), step):
            part = batch[lo : lo + step]
            self.refreshes += len(part)
            uidx, ukeys = self._select(part, uncovered, n_unc)
            truncated = uncovered.sum() > n_unc
            bound = np.where(truncated, ukeys.max(axis=1) + 1, _INF)
            if n_cov > 0:
                cidx, ckeys = self._select(part, covered, n_cov)
                idx = np.concatenate([uidx, cidx], axis=1)
                keys = np.concatenate([ukeys, ckeys], axis=1)
            else:
                idx, keys = uidx, ukeys
            order = np.argsort(keys, axis=1, kind="stable")
            keys = np.take_along_axis(keys, order, axis=1)
            idx = np.take_along_axis(idx, order, axis=1)
            duplicate = np.zeros_like(keys, dtype=bool)
            duplicate[:, 1:] = keys[:, 1:] == keys[:, :-1]
            keys[duplicate | (keys == _INF)] = _INF
            order = np.argsort(keys, axis=1, kind="stable")
            keys = np.take_along_axis(keys, order, axis=1)
            idx = np.where(keys == _INF, self.m, np.take_along_axis(idx, order, axis=1))
            width = min(keys.shape[1], self.width)
            self.lists[part] = self.m
            self.list_keys[part] = _INF
            self.lists[part, :width] = idx[:, :width]
            self.list_keys[part, :width] = keys[:, :width]
            self.bound[part] = bound

    def _prefix(
        self, counts: np.ndarray, keys: np.ndarray, need: int, bound: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Counts cut to the first ``need`` tuples; validity; last key used."""
        v = len(counts)
        if need == 0:
            return np.zeros_like(counts), np.ones(v, bool), np.full(v, -1, np.int64)
        cum = np.cumsum(counts, axis=1)
        reach = cum >= need
        ok = reach[:, -1]
        last = np.where(ok, np.argmax(reach, axis=1), counts.shape[1] - 1)
        present = counts > 0
        # Last key holding a counted tuple (-1 when none).
        upto = np.arange(counts.shape[1])[None, :] <= last[:, None]
        last_key = np.where(present & upto, keys, -1).max(axis=1)
        ok &= last_key < bound
        keep = upto
        return np.where(keep, counts, 0), ok, last_key

    def score(
        self, batch: np.ndarray, detail: bool = False, keep: bool = False
    ) -> _Scores:
        """Best candidate of every row of ``batch`` (each has uncovered tuples).

        With ``keep``, the tuples of each row's best candidate are kept for
        :meth:`materialize`, so a pick needs no second scoring.
        """
        rows, k, p, m = self.rows, self.k, self.p, self.m
        u_ext = np.append(rows.u, 0)
        c_ext = np.append(rows.w - rows.u, 0)
        need_u = int(min(p, rows.u.sum()))
        need_c = int(min(k - 1, (rows.w - rows.u).sum()))
        for attempt in range(2):
            lst = self.lists[batch]
            lkeys = self.list_keys[batch]
            bound = self.bound[batch]
            dist = lkeys // max(m, 1)
            ucount, ok_u, last_u = self._prefix(u_ext[lst], lkeys, need_u, bound)
            # Covered tuples only serve candidates of balls holding fewer than
            # k uncovered ones: closer than the k-th nearest uncovered tuple,
            # hence inside the part of the list known to be complete.
            cum_u = np.cumsum(ucount, axis=1)
            has_k = cum_u[:, -1] >= k
            kth = np.where(
                has_k,
                dist[np.arange(len(batch)), np.argmax(cum_u >= k, axis=1)],
                _INF,
            )
            near = dist < kth[:, None]
            ccount, _, last_c = self._prefix(
                np.where(near, c_ext[lst], 0), lkeys, need_c, bound
            )
            found_c = ccount.sum(axis=1)
            ok_c = has_k | (found_c >= need_c) & (last_c < bound)
            bad = ~(ok_u & ok_c)
            if not bad.any():
                break
            if attempt:
                raise AssertionError("neighbour lists still short after a refresh")
            self.refresh(batch[bad])
        radius = np.where(has_k, last_u, np.maximum(last_u, last_c))
        radius = np.where(~has_k & (found_c < k - 1), _INF, radius)
        ur, ucnt, ud = _compact(lst, ucount, dist, p, m)
        cr, ccnt, cd = _compact(lst, ccount, dist, k - 1, m)
        members = np.concatenate([ur, cr], axis=1)
        n_members = members.shape[1]
        deltas = np.arange(self.q + 1)
        n_cand = 1 + 2 * len(deltas)
        best_ratio = np.empty(len(batch))
        best_new = np.empty(len(batch), dtype=np.int64)
        best_cand = np.empty(len(batch), dtype=np.int64)
        scored = 0
        chunk = max(1, _CHUNK_CELLS // (n_members * (n_members + n_cand)))
        details: dict[str, list[np.ndarray]] = {}
        for lo in range(0, len(batch), chunk):
            sl = slice(lo, lo + chunk)
            cand = _candidates(
                self._pair_distances(members[sl]),
                ucnt[sl],
                ud[sl],
                ccnt[sl],
                cd[sl],
                k,
                deltas,
                detail,
            )
            scored += int(cand["exists"].sum())
            ratio = cand["ratio"]
            low = ratio.min(axis=1)
            tie = ratio == low[:, None]
            top_new = np.where(tie, cand["new"], -1).max(axis=1)
            tie &= cand["new"] == top_new[:, None]
            best_ratio[sl] = low
            best_new[sl] = top_new
            best_cand[sl] = np.argmax(tie, axis=1)
            if keep:
                at = (np.arange(len(low)), best_cand[sl])
                u_cnt, c_cnt = ucnt[sl], ccnt[sl]
                u_start = np.cumsum(u_cnt, axis=1) - u_cnt
                c_start = np.cumsum(c_cnt, axis=1) - c_cnt
                take_u = np.clip(cand["new"][at][:, None] - u_start, 0, u_cnt)
                take_c = np.clip(cand["old"][at][:, None] - c_start, 0, c_cnt)
                self._keep(batch[sl], ur[sl], take_u, cr[sl], take_c, low)
            if detail:
                for key, value in cand.items():
                    details.setdefault(key, []).append(value)
        out = _Scores(best_ratio, best_new, best_cand, radius, scored)
        if detail:
            out.detail = {key: np.concatenate(v) for key, v in details.items()}
            out.detail.update(ur=ur, cr=cr, ucnt=ucnt, ccnt=ccnt)
        return out

    def _keep(
        self,
        rows: np.ndarray,
        ur: np.ndarray,
        take_u: np.ndarray,
        cr: np.ndarray,
        take_c: np.ndarray,
        ratio: np.ndarray,
    ) -> None:
        """Remember the best candidate of ``rows`` (one block per scoring;
        a block is dropped once no row refers to it)."""
        old = self.plan_block[rows]
        for b, n in zip(*np.unique(old[old >= 0], return_counts=True), strict=True):
            self.plan_users[b] -= int(n)
            if self.plan_users[b] == 0:
                self.plan_blocks[b] = None
        self.plan_blocks.append((ur, take_u, cr, take_c, ratio))
        self.plan_users.append(len(rows))
        self.plan_block[rows] = len(self.plan_blocks) - 1
        self.plan_pos[rows] = np.arange(len(rows))

    def materialize(
        self, r: int, audit: bool = False
    ) -> tuple[float, list[tuple[int, int, int]]]:
        """The best candidate of row ``r``: ratio and ``(row, new, covered)``.

        Read from the last scoring of ``r`` (kept by ``score(keep=True)``);
        with ``audit`` it is checked against a fresh scoring.
        """
        if self.plan_block[r] < 0:
            self.score(np.array([r]), keep=True)
        kept = self._kept(r)
        if audit:
            self.score(np.array([r]), keep=True)
            if self._kept(r) != kept:
                raise AssertionError(f"the kept candidate of row {r} is stale")
        return kept

    def _kept(self, r: int) -> tuple[float, list[tuple[int, int, int]]]:
        block = self.plan_blocks[self.plan_block[r]]
        if block is None:
            raise AssertionError(f"row {r} has no kept candidate")
        i = self.plan_pos[r]
        ur, take_u, cr, take_c, ratio = (x[i] for x in block)
        plan: dict[int, list[int]] = {}
        for row, a in zip(ur, take_u, strict=True):
            if a:
                plan.setdefault(int(row), [0, 0])[0] += int(a)
        for row, b in zip(cr, take_c, strict=True):
            if b:
                plan.setdefault(int(row), [0, 0])[1] += int(b)
        return float(ratio), [(r_, a, b) for r_, (a, b) in plan.items()]


def _first_by_level(dist: np.ndarray, count: int, q: int) -> np.ndarray:
    """Per row of ``dist`` ((v, n) distances in ``0..q``), the positions of its
    ``count`` least (distance, position) entries, in that order.

    What a stable sort of each row would put first, without sorting the row:
    count the entries per distance level until ``count`` is reached, keep all
    entries below that level and the first ones on it, and sort only those.
    """
    v, n = dist.shape
    flags = np.empty((v, n), dtype=bool)
    cut = np.full(v, q + 1, dtype=np.int64)
    below = np.zeros(v, dtype=np.int64)
    reached = np.zeros(v, dtype=np.int64)
    for level in range(q + 1):
        np.less_equal(dist, level, out=flags)
        now = flags.view(np.uint8).sum(axis=1, dtype=np.int64)
        hit = (now >= count) & (cut > q)
        cut[hit] = level
        below[hit] = reached[hit]
        reached = now
        if (cut <= q).all():
            break
    edge = cut.astype(dist.dtype)[:, None]
    np.less(dist, edge, out=flags)
    inside = np.flatnonzero(flags)
    np.equal(dist, edge, out=flags)
    on_edge = np.flatnonzero(flags)
    row = on_edge // n
    rank = np.arange(len(on_edge)) - np.searchsorted(row, row)
    chosen = np.concatenate([inside, on_edge[rank < (count - below)[row]]])
    r, c = np.divmod(chosen, n)
    order = np.argsort((r * (q + 2) + dist[r, c]) * n + c)
    return c[order].reshape(v, count)


def _accumulate(acc: np.ndarray, flags: np.ndarray) -> None:
    """``acc += flags`` in place; a byte accumulator adds the flags' bytes
    directly (adding booleans with casting is several times slower)."""
    if acc.dtype == np.uint8:
        np.add(acc, flags.view(np.uint8), out=acc)
    else:
        np.add(acc, flags, out=acc, casting="unsafe")


def _narrow(column: np.ndarray) -> np.ndarray:
    """``column`` in the narrowest integer type that holds its codes."""
    low, high = (int(column.min()), int(column.max())) if len(column) else (0, 0)
    for kind in (np.int8, np.int16, np.int32):
        info = np.iinfo(kind)
        if info.min <= low and high <= info.max:
            return column.astype(kind)
    return column.astype(np.int64)


def _smallest(keys: np.ndarray, count: int) -> np.ndarray:
    """Column indices of the ``count`` smallest keys of every row (unsorted)."""
    if count >= keys.shape[1]:
        return np.broadcast_to(np.arange(keys.shape[1]), keys.shape).copy()
    return np.argpartition(keys, count - 1, axis=1)[:, :count]


def _compact(
    lst: np.ndarray, counts: np.ndarray, dist: np.ndarray, width: int, m: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first ``width`` list entries with a positive count, in list order.

    The width is cut to the most such entries any row has: the columns past
    it would only be padding, which no candidate uses.
    """
    v = len(lst)
    width = min(width, int((counts > 0).sum(axis=1).max(initial=0)))
    if width == 0:
        empty = np.zeros((v, 0), dtype=np.int64)
        return empty, empty, empty
    order = np.argsort(counts <= 0, axis=1, kind="stable")[:, :width]
    cnt = np.take_along_axis(counts, order, axis=1)
    rows = np.where(cnt > 0, np.take_along_axis(lst, order, axis=1), m)
    d = np.where(cnt > 0, np.take_along_axis(dist, order, axis=1), _INF)
    if cnt.shape[1] < width:
        pad = width - cnt.shape[1]
        cnt = np.pad(cnt, ((0, 0), (0, pad)))
        rows = np.pad(rows, ((0, 0), (0, pad)), constant_values=m)
        d = np.pad(d, ((0, 0), (0, pad)), constant_values=_INF)
    return rows, cnt, d


def _first_reaching(ends: np.ndarray, need: np.ndarray) -> np.ndarray:
    """Per row of ``ends`` (cumulative counts, (v, L)), the first index whose
    count reaches each ``need`` ((v, ...)); L - 1 when none does."""
    v, length = ends.shape
    shape = need.shape
    flat = need.reshape(v, -1)
    reach = ends[:, None, :] >= flat[:, :, None]
    at = np.where(reach.any(axis=2), np.argmax(reach, axis=2), length - 1)
    return at.reshape(shape)


def _candidates(
    pair: np.ndarray,
    ucnt: np.ndarray,
    ud: np.ndarray,
    ccnt: np.ndarray,
    cd: np.ndarray,
    k: int,
    deltas: np.ndarray,
    detail: bool = False,
) -> dict[str, np.ndarray]:
    """Every ball candidate of a batch of centres, scored.

    ``pair``: Hamming distances between the listed rows (the first uncovered
    rows, nearest first, then the first covered rows), (v, R, R);
    ``ucnt``/``ud``: uncovered tuples and distance of the uncovered rows;
    ``ccnt``/``cd`` the same for the covered rows. Candidate 0 is the ``k``
    nearest uncovered; then, per ``delta``, the ``min(U, 2k - 1)`` nearest
    uncovered (when ``U >= k``); then, per ``delta``, the ``U`` uncovered plus
    ``k - U`` nearest covered (when ``0 < U < k`` and ``|B| >= k``). Every
    candidate takes a prefix of the uncovered rows and one of the covered
    rows, so its diameter comes from prefix maxima of ``pair``.
    """
    p = 2 * k - 1
    v, n_u = ucnt.shape
    u_end = np.cumsum(ucnt, axis=1)
    u_start = u_end - ucnt
    c_end = np.cumsum(ccnt, axis=1)
    c_start = c_end - ccnt
    within_u = ud[:, None, :] <= deltas[None, :, None]  # (v, Q, P)
    within_c = cd[:, None, :] <= deltas[None, :, None]
    u_delta = (within_u * ucnt[:, None, :]).sum(axis=2)  # (v, Q)
    c_delta = (within_c * ccnt[:, None, :]).sum(axis=2)
    total_u = u_end[:, -1]

    uu = pair[:, :n_u, :n_u]
    cc = pair[:, n_u:, n_u:]
    uc = pair[:, :n_u, n_u:]
    upper_u = np.triu(np.ones((n_u, n_u), dtype=bool))
    pre_u = np.maximum.accumulate(np.where(upper_u, uu, 0).max(axis=1), axis=1)
    n_c = cc.shape[1]
    if n_c:
        upper_c = np.triu(np.ones((n_c, n_c), dtype=bool))
        pre_c = np.maximum.accumulate(np.where(upper_c, cc, 0).max(axis=1), axis=1)
        cross = np.maximum.accumulate(np.maximum.accumulate(uc, axis=1), axis=2)
    rows_v = np.arange(v)[:, None]

    s_a1 = np.full(v, k)
    i_a1 = _first_reaching(u_end, s_a1[:, None])[:, 0]
    d_a1 = pre_u[np.arange(v), i_a1]
    s_a = np.minimum(u_delta, p)
    d_a = pre_u[rows_v, _first_reaching(u_end, s_a)]
    need_b = k - u_delta
    i_b = np.maximum(within_u.sum(axis=2) - 1, 0)
    if n_c:
        j_b = _first_reaching(c_end, np.maximum(need_b, 1))
        d_b = np.maximum(
            np.maximum(pre_u[rows_v, i_b], pre_c[rows_v, j_b]),
            cross[rows_v, i_b, j_b],
        )
    else:
        d_b = pre_u[rows_v, i_b]

    exists = np.concatenate(
        [
            (total_u >= k)[:, None],
            u_delta >= k,
            (u_delta >= 1) & (u_delta < k) & (u_delta + c_delta >= k),
        ],
        axis=1,
    )
    diameter = np.concatenate([d_a1[:, None], d_a, d_b], axis=1)
    size = np.concatenate([s_a1[:, None], s_a, np.full_like(u_delta, k)], axis=1)
    new = np.concatenate([s_a1[:, None], s_a, u_delta], axis=1)
    ratio = np.full(exists.shape, np.inf)
    ratio[exists] = diameter[exists] * size[exists] / new[exists]
    out = {"exists": exists, "ratio": ratio, "new": np.where(exists, new, -1)}
    # Covered tuples each candidate takes (only the third kind takes any).
    out["old"] = np.concatenate(
        [
            np.zeros((v, 1 + len(deltas)), dtype=np.int64),
            np.where(exists[:, 1 + len(deltas) :], need_b, 0),
        ],
        axis=1,
    )
    if detail:
        # Tuples of each listed row in each candidate.
        take_a1 = np.clip(s_a1[:, None] - u_start, 0, ucnt)
        take_a = np.clip(s_a[:, :, None] - u_start[:, None, :], 0, ucnt[:, None, :])
        take_bu = np.where(within_u, ucnt[:, None, :], 0)
        take_bc = np.clip(need_b[:, :, None] - c_start[:, None, :], 0, ccnt[:, None, :])
        zeros_c = np.zeros((v, 1 + len(deltas), n_c), dtype=ccnt.dtype)
        take_u = np.concatenate([take_a1[:, None, :], take_a, take_bu], axis=1)
        take_c = np.concatenate([zeros_c, take_bc], axis=1)
        out["take_u"] = np.where(exists[:, :, None], take_u, 0)
        out["take_c"] = np.where(exists[:, :, None], take_c, 0)
    return out


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
    if mode not in MODES:
        raise InvalidParameterError(f"mode must be one of {list(MODES)}; got {mode!r}")
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


@dataclass(frozen=True)
class ApproxACPartition:
    """The partition the algorithm found, and how.

    Attributes
    ----------
    labels : numpy.ndarray of int64, shape (n,)
        Group of every tuple (groups numbered in creation order).
    suppressed : numpy.ndarray of bool, shape (n_groups, q)
        Which quasi-identifiers each group releases as the marker.
    count : int
        COUNT: suppressed cells, ``sum of |G| * nc(G)``.
    cover : CoverResult
    reduction : Reduction
    stopped_early : bool
        True when no value of any quasi-identifier is shared by ``k`` tuples
        (:func:`stars_every_cell`): every k-anonymous suppression then stars
        every quasi-identifier cell, so the cover was not built; the groups
        are consecutive runs of ``k..2k-1`` tuples and COUNT is the optimum
        ``n * q`` (approximation ratio 1).
    """

    labels: np.ndarray
    suppressed: np.ndarray
    count: int
    cover: CoverResult
    reduction: Reduction
    stopped_early: bool = False


def stars_every_cell(codes: np.ndarray, k: int) -> bool:
    """Whether every k-anonymous suppression of ``codes`` stars every cell.

    A released value is shared by the ``k`` or more tuples of its class, so a
    column none of whose values (missing included) has ``k`` tuples is starred
    in every tuple of every k-anonymous suppression; when that holds for every
    quasi-identifier, the cover can only degenerate to whole starred columns.

    >>> import numpy as np
    >>> stars_every_cell(np.array([[0, 1], [1, 1], [2, 0]]), 2)
    False
    >>> stars_every_cell(np.array([[0, 1], [1, 2], [2, 0]]), 2)
    True
    """
    codes = np.asarray(codes, dtype=np.int64)
    if codes.shape[1] == 0 or k < 2:
        return False
    for column in codes.T:
        if np.unique(column, return_counts=True)[1].max() >= k:
            return False
    return True


def _whole_columns(codes: np.ndarray, k: int) -> ApproxACPartition:
    """The all-star release as consecutive runs of ``k..2k-1`` tuples."""
    n, q = codes.shape
    g = n // k
    # n = g k + r with r < k: runs of floor(n/g) or ceil(n/g) <= k + r tuples.
    labels = (np.arange(n, dtype=np.int64) * g) // n
    groups = [np.flatnonzero(labels == i) for i in range(g)]
    cover = CoverResult(
        cover=groups,
        ratios=[float(q)] * g,
        new=[len(ids) for ids in groups],
        mode="whole-columns",
        candidates_scored=0,
        zero_cost_steps=0,
        distinct_rows=len(np.unique(codes, axis=0)),
    )
    return ApproxACPartition(
        labels=labels,
        suppressed=np.ones((g, q), dtype=bool),
        count=n * q,
        cover=cover,
        reduction=Reduction(groups=groups, removals=0, merges=0),
        stopped_early=True,
    )


def approx_ac_partition(
    codes: np.ndarray,
    k: int,
    *,
    mode: str = "auto",
    exact_limit: int = 200_000,
    on_pick: PickCallback | None = None,
) -> ApproxACPartition:
    """Phases 1-3 on quasi-identifier codes: the partition and its stars.

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.array([[0, 0], [0, 0], [0, 1], [1, 1], [1, 1], [1, 0]])
    >>> part = approx_ac_partition(codes, 3)
    >>> part.count, sorted(np.bincount(part.labels).tolist())
    (6, [3, 3])
    """
    codes = np.asarray(codes, dtype=np.int64)
    n = len(codes)
    if mode not in MODES:
        raise InvalidParameterError(f"mode must be one of {list(MODES)}; got {mode!r}")
    if 1 <= k <= n and stars_every_cell(codes, k):
        return _whole_columns(codes, k)
    cover = greedy_cover(codes, k, mode=mode, exact_limit=exact_limit, on_pick=on_pick)
    reduction = reduce_cover(cover.cover, k, n)
    labels = np.empty(n, dtype=np.int64)
    for g, ids in enumerate(reduction.groups):
        labels[ids] = g
    n_groups = len(reduction.groups)
    order = np.argsort(labels, kind="stable")
    starts = np.flatnonzero(np.r_[True, labels[order][1:] != labels[order][:-1]])
    if codes.shape[1] and n:
        c = codes[order]
        suppressed = np.minimum.reduceat(c, starts, axis=0) != np.maximum.reduceat(
            c, starts, axis=0
        )
    else:
        suppressed = np.zeros((n_groups, codes.shape[1]), dtype=bool)
    return ApproxACPartition(
        labels=labels,
        suppressed=suppressed,
        count=partition_count(codes, labels),
        cover=cover,
        reduction=reduction,
    )


class ApproxAC(Anonymizer):
    """Greedy set-cover k-anonymity by cell suppression (COUNT surrogate).

    Parameters
    ----------
    mode : {"auto", "exact", "ball"}, default="auto"
        How phase 1 finds its sets (module docstring).
    exact_limit : int, default=200000
        ``auto`` uses exact mode when it scores at most this many support
        sets; ``exact`` raises :class:`InvalidParameterError` beyond it.
    minsup : float, default=0.3
        Support of the frequency pairs whose loss the evidence reports (CFCM);
        the release does not depend on it.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from ppdm.model import AnonymizationSpec
    >>> t = pd.DataFrame({"a": list("xxyyxy"), "b": list("pqpqpp"),
    ...                   "c": list("110011")})
    >>> spec = AnonymizationSpec.of(("a", "b"), None, "c", k=2)
    >>> out = ApproxAC().anonymize(t, spec, np.random.default_rng(0))
    >>> out.evidence["count"], out.evidence["groups"]
    (2, 3)
    """

    name: ClassVar[str] = "approx-ac"
    summary: ClassVar[str] = (
        "k-anonymity by cell suppression for associative classification: "
        "greedy set cover (O(k log k)-approximation of the number of stars), "
        "reduction to a partition, suppression of non-constant cells"
    )
    supported_models: ClassVar[frozenset[str]] = frozenset({"k-anonymity"})
    needs_target: ClassVar[bool] = True
    numeric_input: ClassVar[str] = "binned"
    releases: ClassVar[str] = "table"
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "mode": Options(MODES),
        "exact_limit": Interval(Integral, 1, None),
        "minsup": Interval(Real, 0.0, 1.0, closed="right"),
    }

    def __init__(
        self, *, mode: str = "auto", exact_limit: int = 200_000, minsup: float = 0.3
    ) -> None:
        self.mode = mode
        self.exact_limit = exact_limit
        self.minsup = minsup

    def _anonymize(
        self, table: pd.DataFrame, spec: AnonymizationSpec, rng: np.random.Generator
    ) -> Release:
        qis = list(spec.quasi_identifiers)
        k = int(spec.requirement.minimal_class_size)
        codes = encode_quasi_identifiers(table, qis)
        part = approx_ac_partition(
            codes, k, mode=self.mode, exact_limit=self.exact_limit
        )
        released = table.copy()
        star = part.suppressed[part.labels]
        for j, q in enumerate(qis):
            text = cell_text(table[q])
            as_text = text_kind(table[q])
            if as_text is not None and as_text.kind == "date":
                # A kept date is a day shared by k people: it leaves as its month.
                text = np.asarray(text, dtype=object)
                kept = pd.notna(table[q]).to_numpy()
                days = pd.unique(text[kept])
                month = {d: as_text.summary([d]) for d in days}
                text[kept] = [month[d] for d in text[kept]]
            text = np.where(star[:, j], spec.suppression_marker, text)
            released[q] = pd.array(list(text), dtype="string")
        sizes = np.bincount(part.labels)
        size_counts = np.unique(sizes, return_counts=True)
        quality = cfcm_report(
            table,
            released,
            qis,
            spec.target,
            minsup=self.minsup,
            marker=spec.suppression_marker,
        )
        evidence = {
            "k": k,
            "mode": part.cover.mode,
            "groups": len(part.reduction.groups),
            "count": int(part.count),
            "suppressed_cells": int(part.count),
            "candidates_scored": int(part.cover.candidates_scored),
            "greedy_steps": len(part.cover.cover),
            "zero_cost_steps": int(part.cover.zero_cost_steps),
            "distinct_rows": int(part.cover.distinct_rows),
            "removals": int(part.reduction.removals),
            "merges": int(part.reduction.merges),
            "group_sizes": {
                str(int(s)): int(c) for s, c in zip(*size_counts, strict=True)
            },
            "suppressed_by_attribute": {
                q: int(star[:, j].sum()) for j, q in enumerate(qis)
            },
            "cfcm": {
                "minsup": float(self.minsup),
                "frequency_pairs": len(quality.pairs),
                "raw": int(quality.raw),
                "total": float(quality.total),
                "mean": float(quality.mean),
            },
            "stopped_early": bool(part.stopped_early),
        }
        if part.stopped_early:
            # No value of any quasi-identifier is shared by k tuples: every
            # k-anonymous suppression stars every cell, this one included.
            evidence["stop_reason"] = (
                "no quasi-identifier value is shared by k tuples: every "
                "k-anonymous suppression stars whole columns, so the cover "
                "was not built"
            )
            evidence["approximation_bound"] = 1.0
            evidence["approximation_bound_formula"] = "1 (COUNT = OPT_COUNT = n q)"
        else:
            # The guarantee of the mode that ran: ball picks are within 2x
            # of the best set, so their bound is twice the paper's.
            evidence["approximation_bound"] = float(
                approximation_bound(k, part.cover.mode)
            )
            evidence["approximation_bound_formula"] = (
                "3k(1 + ln 2k)"
                if part.cover.mode == "exact"
                else "2 x 3k(1 + ln 2k) (ball candidates)"
            )
        return self._release(released, spec, table, evidence)
