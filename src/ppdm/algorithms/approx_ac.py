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

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from ppdm.algorithm_registry import APPROX_AC_MODES
from ppdm.algorithms.approx_ac_cover import (
    CoverResult,
    PickCallback,
    Reduction,
    exact_candidate_count,
    greedy_cover,
    reduce_cover,
)
from ppdm.algorithms.approx_ac_neighbours import hamming_diameter
from ppdm.algorithms.base import Anonymizer
from ppdm.exceptions import InvalidParameterError
from ppdm.generalization.ordered_text import text_kind
from ppdm.model import AnonymizationSpec, Release
from ppdm.utility.cfcm import cell_text, cfcm_report, partition_count

__all__ = [
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
    if mode not in APPROX_AC_MODES:
        raise InvalidParameterError(
            f"mode must be one of {list(APPROX_AC_MODES)}; got {mode!r}"
        )
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
