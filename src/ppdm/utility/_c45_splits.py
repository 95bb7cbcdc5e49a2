"""The scores of candidate C4.5 splits, from class weights.

The arithmetic of :class:`ppdm.utility.c45_learner.C45Learner`'s split
choice, apart from how the learner finds a node's class weights: the gain
and split information of a nominal block's multiway split from its (value,
class) table, and of a numeric block's best binary cut from the class
weights left of each cut (J48's minimum branch weight, C4.5 Release 8's
threshold penalty). Every function scores many blocks in one pass, each
block's figures summed over its own slice, as one block at a time would.
"""

from __future__ import annotations

import numpy as np

from ppdm.trees.c45 import entropy

__all__ = [
    "WEKA_SMALL",
    "best_cuts",
    "min_split",
    "nominal_scores",
    "range_left_weights",
    "ranked_cuts",
]

#: Weka's tolerance when it compares weights (``Utils.SMALL``).
WEKA_SMALL = 1e-6
#: J48's cap on the minimum weight of each side of a numeric split.
_MAX_SPLIT_WEIGHT = 25.0


def min_split(known_weight: float, n_classes: int, min_obj: float) -> float:
    """J48's least weight on each side of a numeric split."""
    # J48's rule, including its order of the two bounds
    least = 0.1 * known_weight / n_classes
    if least <= min_obj:
        return min_obj
    if least > _MAX_SPLIT_WEIGHT:
        return _MAX_SPLIT_WEIGHT
    return least


def nominal_scores(
    tables: list[np.ndarray], total: float, min_obj: float
) -> list[tuple[float, float] | None]:
    """``(gain, split information)`` of the multiway split of each nominal
    block from its (value, class) table (None: fewer than two values of at
    least ``min_obj``): row-wise figures (a value's size, its entropy) on the
    tables stacked, each sum over a block's values on its slice (a
    contiguous slice sums as the array it holds would), as one block at a
    time.
    """
    out: list[tuple[float, float] | None] = [None] * len(tables)
    if not tables:
        return out
    widths = [len(table) for table in tables]
    stacked = np.concatenate(tables)
    sizes = stacked.sum(axis=1)
    terms = sizes * entropy(stacked)
    large = np.flatnonzero(sizes >= min_obj - WEKA_SMALL)
    segment = np.repeat(np.arange(len(tables)), widths)
    n_large = np.bincount(segment[large], minlength=len(tables))
    base = entropy(np.array([table.sum(axis=0) for table in tables]))
    ends = np.cumsum(widths)
    starts = ends - widths
    scored = []
    for j in range(len(tables)):
        if n_large[j] < 2:
            continue
        known = float(sizes[starts[j] : ends[j]].sum())
        info = float(terms[starts[j] : ends[j]].sum()) / known
        gain = known / total * (float(base[j]) - info)
        scored.append((j, known, gain))
    if not scored:
        return out
    # split information: the entropy of (sizes..., unknown) of each block
    chosen = [j for j, _, _ in scored]
    unknown = [max(total - known, 0.0) for _, known, _ in scored]
    parts = np.concatenate(
        [
            np.append(sizes[starts[j] : ends[j]], rest)
            for j, rest in zip(chosen, unknown)
        ]
    )
    part_ends = np.cumsum([widths[j] + 1 for j in chosen])
    part_starts = part_ends - [widths[j] + 1 for j in chosen]
    part_totals = [float(parts[a:b].sum()) for a, b in zip(part_starts, part_ends)]
    repeated = np.repeat(part_totals, [widths[j] + 1 for j in chosen])
    p = parts / np.where(repeated > 0, repeated, 1.0)
    plogp = p * np.log2(np.where(p > 0, p, 1.0))
    for (j, _, gain), a, b in zip(scored, part_starts, part_ends):
        out[j] = (gain, float(-plogp[a:b].sum()))
    return out


def ranked_cuts(
    ranks: np.ndarray, class_weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The class weights left of every cut of a numeric block whose ranks at
    the rows (all known) are ``ranks``: a stable sort of the ranks is the
    sort of the block's values (ties in row order), a cumulative sum down it
    the sum. None for a block of one value (no cut).

    Returns ``(class weights left of each cut, the sorted ranks, the last
    row of each value but the last)``: the cut after row ``i`` separates
    the ranks ``sorted[i]`` and ``sorted[i + 1]``.
    """
    order = np.argsort(ranks, kind="stable")
    sorted_ranks = ranks[order]
    cuts = np.flatnonzero(sorted_ranks[1:] != sorted_ranks[:-1])
    if len(cuts) == 0:
        return None
    # a row gather of a 2-D array by take, not by [order] (several times
    # faster in numpy; the same values)
    left = np.cumsum(np.take(class_weights, order, axis=0), axis=0)[cuts]
    return left, sorted_ranks, cuts


def best_cuts(
    heads: list[tuple], total: float
) -> list[tuple[float, float, np.ndarray] | None]:
    """Each numeric block's best cut, the cuts of all blocks in one pass.

    ``heads`` holds, a block each, :func:`ranked_cuts`'s three arrays and
    ``(known weight, min split, class total, its entropy)``. Returns a block
    each ``(gain, split information, the ranks of the two values the cut
    separates)``, or None when no cut leaves ``min split`` on both sides.
    """
    sizes = np.array([len(head[0]) for head in heads], dtype=np.int64)
    left = np.concatenate([head[0] for head in heads])
    weight = np.array([head[3][0] for head in heads])
    split = np.array([head[3][1] for head in heads])
    class_total = np.array([head[3][2] for head in heads])
    base = np.array([head[3][3] for head in heads])
    segment = np.repeat(np.arange(len(heads)), sizes)
    known_weight = weight[segment]
    least = split[segment]
    left_weight = left.sum(axis=1)
    # Weka compares weights with a tolerance of 1e-6 (Utils.grOrEq)
    ok = np.flatnonzero(
        (left_weight >= least - WEKA_SMALL)
        & (known_weight - left_weight >= least - WEKA_SMALL)
    )
    out: list[tuple[float, float, np.ndarray] | None] = [None] * len(heads)
    if len(ok) == 0:
        return out
    lcounts = left[ok]
    rcounts = class_total[segment[ok]] - lcounts
    left_weight = left_weight[ok]
    right_weight = known_weight[ok] - left_weight
    # both sides' entropies in one call (an entropy is a row's own)
    sides = np.split(entropy(np.concatenate([lcounts, rcounts])), [len(ok)])
    info = (left_weight * sides[0] + right_weight * sides[1]) / known_weight[ok]
    # C4.5 picks the threshold by gain: each block's first least info
    n_cuts = np.bincount(segment[ok], minlength=len(heads))
    chosen = np.flatnonzero(n_cuts)
    by_info = np.lexsort((info, segment[ok]))
    best = by_info[(np.cumsum(n_cuts) - n_cuts)[chosen]]
    w = weight[chosen]
    gain = w / total * (base[chosen] - info[best]) - np.log2(n_cuts[chosen]) / w
    parts = np.column_stack(
        [left_weight[best], right_weight[best], np.maximum(total - w, 0.0)]
    )
    split_info = entropy(parts)
    # the cut's position among its block's cuts
    position = ok[best] - (np.cumsum(sizes) - sizes)[chosen]
    for j, head in enumerate(chosen.tolist()):
        _, sorted_ranks, cuts, _ = heads[head]
        row = cuts[position[j]]
        pair = sorted_ranks[row : row + 2]
        out[head] = (float(gain[j]), float(split_info[j]), pair)
    return out


def range_left_weights(
    low: np.ndarray, high: np.ndarray, spans: np.ndarray, class_weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Candidate thresholds and the class weights at or below each.

    A point counts wholly on its side. A released range ``[a, b]`` is read
    as a value spread uniformly over it (as naive Bayes spreads it over its
    bins), so at threshold ``t`` the fraction ``clip((t - a) / (b - a), 0,
    1)`` of its weight is on the left. Summed over ranges this is
    ``t * A1(t) - A2(t) - (t * B1(t) - B2(t))`` with ``A1`` / ``A2`` the sums
    of ``w / (b - a)`` and ``w a / (b - a)`` over the ranges with ``a < t``
    (``B`` the same over ``b < t``): cumulative sums over the sorted ends,
    no loop over rows.
    """
    candidates = np.unique(np.concatenate([low[~spans], low[spans], high[spans]]))
    points = ~spans
    left = np.zeros((len(candidates), class_weights.shape[1]))
    if points.any():
        order = np.argsort(low[points], kind="stable")
        values = low[points][order]
        cumulative = np.vstack(
            [
                np.zeros(class_weights.shape[1]),
                np.cumsum(class_weights[points][order], axis=0),
            ]
        )
        left += cumulative[np.searchsorted(values, candidates, side="right")]
    a, b, cw = low[spans], high[spans], class_weights[spans]
    density = cw / (b - a)[:, None]
    for ends, sign in ((a, 1.0), (b, -1.0)):
        order = np.argsort(ends, kind="stable")
        e = ends[order]
        slope = np.vstack([np.zeros(cw.shape[1]), np.cumsum(density[order], axis=0)])
        offset = np.vstack(
            [np.zeros(cw.shape[1]), np.cumsum(density[order] * e[:, None], axis=0)]
        )
        below = np.searchsorted(e, candidates, side="left")
        left += sign * (candidates[:, None] * slope[below] - offset[below])
    return candidates, left
