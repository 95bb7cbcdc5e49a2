"""approx-ac's rows and their nearest rows: the Hamming-distance neighbour search of ball mode.

The distinct quasi-identifier rows with their multiplicities (``_Rows``), and for
each row its nearest uncovered and covered rows (``_Ball``), found from a static
table cut at a whole distance level and refreshed when a short list runs out.
:mod:`ppdm.algorithms.approx_ac` describes the algorithm and why none of this
changes a pick.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

_INF = np.iinfo(np.int64).max
#: Pairwise cells (candidates x rows x rows) scored at once in ball mode.
_CHUNK_CELLS = 1 << 22
#: Distinct rows up to which ball mode keeps every pairwise distance (a byte each).
_DENSE_ROWS = 6000
#: A static neighbour list holds up to this many times a refreshed list's rows.
_STATIC_FACTOR = 4


def hamming_diameter(codes: np.ndarray) -> int:
    """``d(c)``: the largest Hamming distance between two rows of ``codes``."""
    codes = np.unique(np.asarray(codes), axis=0)
    if len(codes) < 2:
        return 0
    return int((codes[:, None, :] != codes[None, :, :]).sum(axis=2).max())


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
