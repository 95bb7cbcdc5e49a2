"""Greedy feature selection under a privacy constraint (Greedy-HamDist, Greedy-DistCnt).

One loop serves the proposed methods and the baselines: the objective
(``hamdist``, ``distcnt``, or ``cm``) and the constraint (``containment``:
k-anonymity by containment; ``k-anonymity``: ordinary k-anonymity of the
projection; ``none``: the non-private Greedy) are parameters.

Each round computes, for every remaining candidate u at once, the gain of
adding u and whether ``S + u`` meets the constraint, from the current groups
of identical projections (:class:`ppdm.selection._bitsets.Groups`): the group
counts ``Ind @ X`` (a sparse product, O(nnz)), and, for containment, the
supports ``popcount(tids(g) & column(u))``, kept per group and recomputed only
for the groups the last addition changed.

Stopping rules (Decision of the implementation notes):

* ``filtered`` (the paper's prose, default): candidates whose addition breaks
  the constraint leave the candidate list for good (downward closure makes
  that safe); the best positive gain among the rest is added; stop when no
  candidate has a positive gain.
* ``literal`` (the v1 pseudo-code): the best positive gain among all
  candidates is taken; if it breaks the constraint, stop and keep the
  previous S.

Ties are broken by the lowest feature index; a gain must be strictly
positive.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ppdm.exceptions import InvalidParameterError
from ppdm.selection._bitsets import (
    Groups,
    as_binary,
    extension_ac,
    extension_supports,
    group_feature_counts,
    kanonymity_feasible,
    pack_columns,
)
from ppdm.selection._objectives import (
    OBJECTIVES,
    cm_gains,
    distcnt_gains,
    hamdist_weights,
)

__all__ = ["CONSTRAINTS", "STOPPING", "GreedyResult", "greedy"]

CONSTRAINTS = ("containment", "k-anonymity", "none")
STOPPING = ("filtered", "literal")


@dataclass(frozen=True)
class GreedyResult:
    """Outcome of :func:`greedy`.

    Attributes
    ----------
    selected : list of int
        Feature indices in the order they were added.
    gains : list of int
        Gain of each addition (all > 0).
    trace : list of int
        Objective after each addition (cumulative gains; for ``cm`` the
        misclassified rows removed).
    ac_trace : list of int
        ``AC(S)`` after each addition.
    stopped : str
        ``"no-gain"``, ``"constraint"`` (literal rule), or ``"max-features"``.
    rejected : int or None
        Literal rule: the best feature whose addition broke the constraint.
    rounds : int
    """

    selected: list[int]
    gains: list[int]
    trace: list[int]
    ac_trace: list[int]
    stopped: str
    rejected: int | None = None
    rounds: int = 0
    ac: int = field(default=0)


def _check(objective: str, constraint: str, stopping: str, k: int) -> None:
    if objective not in OBJECTIVES:
        raise InvalidParameterError(
            f"objective must be one of {list(OBJECTIVES)}; got {objective!r}"
        )
    if constraint not in CONSTRAINTS:
        raise InvalidParameterError(
            f"constraint must be one of {list(CONSTRAINTS)}; got {constraint!r}"
        )
    if stopping not in STOPPING:
        raise InvalidParameterError(
            f"stopping must be one of {list(STOPPING)}; got {stopping!r}"
        )
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise InvalidParameterError(f"k must be an integer >= 1; got {k!r}")


def greedy(
    matrix: np.ndarray,
    y: np.ndarray,
    k: int,
    *,
    objective: str = "distcnt",
    constraint: str = "containment",
    stopping: str = "filtered",
    max_features: int | None = None,
    cm_suppressed_below: int = 1,
) -> GreedyResult:
    """Greedy selection of features of a binary table for a two-class target.

    Parameters
    ----------
    matrix : array of 0/1, shape (n, d)
    y : array of bool, shape (n,)
        True for the positive class.
    k : int
    objective : {"hamdist", "distcnt", "cm"}, default="distcnt"
        ``"cm"``: the decrease of Iyengar's classification metric (see
        :mod:`ppdm.selection._objectives`).
    constraint : {"containment", "k-anonymity", "none"}, default="containment"
    stopping : {"filtered", "literal"}, default="filtered"
    cm_suppressed_below : int, default=1
        For ``"cm"``: rows of groups of identical projections smaller than
        this count as suppressed (cost 1 each). The default charges none, as
        the project decided for the paper's CM Greedy (the containment
        constraint releases every row); ``k`` gives the variant that charges
        what an ordinary k-anonymisation would suppress.
    max_features : int, optional
        Stop after this many features (the non-private Greedy's budget).

    Returns
    -------
    GreedyResult
    """
    _check(objective, constraint, stopping, k)
    x = as_binary(matrix)
    y = np.asarray(y, dtype=bool)
    n, d = x.shape
    support = x.sum(axis=0)
    if constraint == "none":
        universe = np.arange(d)
    else:  # a column with 0 < supp < k is never selectable
        universe = np.flatnonzero((support == 0) | (support >= k))
    m = len(universe)
    import scipy.sparse as sp  # on first use, as in _bitsets

    xs = sp.csr_array(x[:, universe].astype(np.int32))
    positives = np.flatnonzero(y)
    xs_pos = xs[positives] if len(positives) else None
    weights = hamdist_weights(x[:, universe], y)
    bits = pack_columns(x[:, universe])
    track = constraint == "containment"
    groups = Groups.start(n)
    supports = (
        extension_supports(groups.tids, bits)
        if track
        else np.zeros((groups.n_groups, m), dtype=np.int64)
    )
    active = np.ones(m, dtype=bool)
    selected: list[int] = []
    gains_out: list[int] = []
    trace: list[int] = []
    ac_trace: list[int] = []
    value = 0
    rounds = 0
    rejected = None
    stopped = "no-gain"
    while True:
        if max_features is not None and len(selected) >= max_features:
            stopped = "max-features"
            break
        cols = np.flatnonzero(active)
        if len(cols) == 0:
            break
        rounds += 1
        g = groups.n_groups
        counts = group_feature_counts(groups.ids, g, xs[:, cols])
        if objective == "hamdist":
            gains = weights[cols]
        else:
            pos = np.bincount(groups.ids[positives], minlength=g).astype(np.int64)
            neg = groups.size - pos
            pos1 = (
                group_feature_counts(groups.ids[positives], g, xs_pos[:, cols])
                if xs_pos is not None
                else np.zeros_like(counts)
            )
            neg1 = counts - pos1
            if objective == "distcnt":
                gains = distcnt_gains(pos, neg, pos1, neg1)
            else:
                gains = cm_gains(pos, neg, pos1, neg1, cm_suppressed_below)
        if constraint == "containment":
            feasible = extension_ac(groups, counts, supports[:, cols]) >= k
        elif constraint == "k-anonymity":
            feasible = kanonymity_feasible(groups, counts, k)
        else:
            feasible = np.ones(len(cols), dtype=bool)
        if stopping == "filtered":
            active[cols[~feasible]] = False
            eligible = feasible & (gains > 0)
        else:
            eligible = gains > 0
        if not eligible.any():
            stopped = "no-gain"
            break
        masked = np.where(eligible, gains, -1)
        best = int(np.argmax(masked))  # first index among the largest gains
        if stopping == "literal" and not feasible[best]:
            stopped = "constraint"
            rejected = int(universe[cols[best]])
            break
        chosen = int(cols[best])
        groups = groups.add(x[:, universe[chosen]], bits[chosen])
        active[chosen] = False
        if track:
            supports = supports[groups.parent]
            fresh = np.flatnonzero(groups.fresh)
            live = np.flatnonzero(active)
            if len(fresh) and len(live):
                supports[np.ix_(fresh, live)] = extension_supports(
                    groups.tids[fresh], bits[live]
                )
        gain = int(gains[best])
        value += gain
        selected.append(int(universe[chosen]))
        gains_out.append(gain)
        trace.append(value)
        ac_trace.append(groups.ac)
    final_ac = ac_trace[-1] if ac_trace else n
    return GreedyResult(
        selected, gains_out, trace, ac_trace, stopped, rejected, rounds, final_ac
    )
