"""Comparators of the approximation algorithm for associative classification.

The paper behind :mod:`ppdm.algorithms.approx_ac` compares its algorithm with
an "optimal" search and with the MCCRT heuristic of Harnsamut and Natwichai;
both are here, as experiments (they are not release algorithms), with two
exhaustive references for tiny tables:

- :func:`enumeration_cover`: the paper's phase 1 taken literally, every set of
  ``k..2k-1`` tuples scored at every step (tiny tables only); with the same
  tie rule (ratio, more new tuples, fewer tuples, lexicographically smallest
  tuple ids) its picks are those of the algorithm's exact mode;
- :func:`optimal_partition`: the least COUNT over all partitions into groups
  of at least ``k`` tuples (dynamic programming over subsets; groups of
  ``k..2k-1`` tuples suffice, since splitting a larger group never adds a
  star), the ``OPT_COUNT`` of the approximation bound;
- :func:`optimal_full_domain`: the paper's "optimal" baseline as the notes
  decide: every full-domain suppression (each quasi-identifier kept or
  starred in every row: ``2^q`` options) that is k-anonymous, the least CFCM
  kept (ties: fewer stars, then the earlier option in quasi-identifier
  order);
- :func:`mccrt`: quasi-identifiers sorted by ascending classification
  correction rate (CCR: accuracy on the table of the CBA classifier trained on
  that attribute alone and the class; ties in quasi-identifier order), then
  transformed one after the other, depth first, until the table is
  k-anonymous. The paper says only that MCCRT "selects an attribute, and then
  transforms the dataset", moving to the next attribute when that is not
  enough. ``scope="column"`` (default, the project's decision in the
  algorithm notes: with suppression only, an attribute's one generalization
  step is its whole column) stars the attribute in every row (full-domain
  suppression; it can never beat :func:`optimal_full_domain`).
  ``scope="tuples"`` suppresses the attribute only in the tuples whose
  released row is still shared by fewer than ``k`` tuples -- a suppression,
  like approx-ac's, of cells rather than columns; the tuples still short of
  ``k`` once every attribute is starred in them join other classes' spare
  tuples (cheapest first) in the all-star row. The benchmark reports both.

The true optimum over every cell suppression (not only whole columns) is
:func:`ppdm.experiments.optimal_suppression.optimal_suppression`.

References
----------
.. [1] N. Harnsamut, J. Natwichai, "A Novel Heuristic Algorithm for Privacy
   Preserving of Associative Classification", PRICAI 2008, LNAI 5351.
.. [2] A. Meyerson, R. Williams, "On the complexity of optimal k-anonymity",
   PODS 2004.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd

from ppdm.algorithms.approx_ac import encode_quasi_identifiers
from ppdm.exceptions import InvalidParameterError
from ppdm.experiments.optimal_suppression import (
    is_k_anonymous,
    require_k_within_rows,
)
from ppdm.model import SUPPRESSED
from ppdm.utility.cba import CBAClassifier
from ppdm.utility.cfcm import READINGS, cell_text, frequency_pairs

__all__ = [
    "FullDomainResult",
    "MCCRTResult",
    "enumeration_cover",
    "mccrt",
    "optimal_full_domain",
    "optimal_partition",
    "suppress_columns",
]

#: Largest table the tuple-level references accept.
MAX_TINY_ROWS = 14


def _check_tiny(codes: np.ndarray, k: int) -> np.ndarray:
    codes = np.asarray(codes, dtype=np.int64)
    n = len(codes)
    if n > MAX_TINY_ROWS:
        raise InvalidParameterError(
            f"exhaustive references take at most {MAX_TINY_ROWS} rows; got {n}"
        )
    require_k_within_rows(k, n)
    return codes


def _diameter(codes: np.ndarray, members: Sequence[int]) -> int:
    c = codes[list(members)]
    return int((c[:, None, :] != c[None, :, :]).sum(axis=2).max()) if len(c) > 1 else 0


def _non_constant(codes: np.ndarray, members: Sequence[int]) -> int:
    c = codes[list(members)]
    return int((c.min(axis=0) != c.max(axis=0)).sum())


def enumeration_cover(
    codes: np.ndarray,
    k: int,
    *,
    on_pick: Callable[[np.ndarray, np.ndarray, float, int], None] | None = None,
) -> list[np.ndarray]:
    """The paper's phase 1 over every set of ``k..2k-1`` tuples (tiny tables).

    Each step picks the least ``d(c) * |c| / |c minus covered|`` among the
    sets with uncovered tuples; ties: more newly covered tuples, then fewer
    tuples (this only separates sets of identical rows, ratio 0, which could
    otherwise take covered tuples for nothing), then the lexicographically
    smallest sorted tuple ids.

    Returns
    -------
    list of numpy.ndarray
        Sorted tuple ids of each pick, in pick order.
    """
    codes = _check_tiny(codes, k)
    n = len(codes)
    subsets = [
        (c, _diameter(codes, c))
        for size in range(k, min(2 * k - 1, n) + 1)
        for c in itertools.combinations(range(n), size)
    ]
    covered = np.zeros(n, dtype=bool)
    cover = []
    while not covered.all():
        best = None
        for c, d in subsets:
            new = sum(1 for t in c if not covered[t])
            if new == 0:
                continue
            key = (d * len(c) / new, -new, len(c), c)
            if best is None or key < best:
                best = key
        assert best is not None
        ratio, neg_new, _, chosen = best
        ids = np.array(chosen, dtype=np.int64)
        if on_pick is not None:
            on_pick(covered.copy(), ids, ratio, -neg_new)
        covered[ids] = True
        cover.append(ids)
    return cover


def optimal_partition(codes: np.ndarray, k: int) -> tuple[int, list[np.ndarray]]:
    """Least COUNT over all partitions into groups of at least ``k`` tuples.

    Returns
    -------
    (int, list of numpy.ndarray)
        ``OPT_COUNT`` and one optimal partition (groups of ``k..2k-1``).
    """
    codes = _check_tiny(codes, k)
    n = len(codes)
    blocks: dict[int, list[tuple[int, int]]] = {i: [] for i in range(n)}
    for size in range(k, min(2 * k - 1, n) + 1):
        for c in itertools.combinations(range(n), size):
            mask = sum(1 << t for t in c)
            blocks[c[0]].append((mask, size * _non_constant(codes, c)))

    @cache
    def best(rest: int) -> tuple[float, tuple[int, ...]]:
        if rest == 0:
            return 0.0, ()
        low = (rest & -rest).bit_length() - 1
        top: tuple[float, tuple[int, ...]] = (float("inf"), ())
        for mask, cost in blocks[low]:
            if mask & rest == mask and cost < top[0]:
                sub, parts = best(rest & ~mask)
                if cost + sub < top[0]:
                    top = (cost + sub, (mask, *parts))
        return top

    total, masks = best((1 << n) - 1)
    groups = [np.array([t for t in range(n) if m >> t & 1]) for m in masks]
    return int(total), groups


def suppress_columns(
    table: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    suppressed: Sequence[str],
    marker: str = SUPPRESSED,
) -> pd.DataFrame:
    """``table`` with its quasi-identifiers as text and ``suppressed`` starred."""
    out = table.copy()
    for q in quasi_identifiers:
        text = cell_text(table[q])
        if q in suppressed:
            text = np.full(len(table), marker, dtype=object)
        out[q] = pd.array(list(text), dtype="string")
    return out


def _column_losses(
    table: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    target: str,
    minsup: float,
    marker: str,
) -> tuple[dict[str, int], dict[str, int], int, int]:
    """Per attribute: frequency and pairs lost when starred; the totals."""
    pairs = frequency_pairs(
        table, quasi_identifiers, target, minsup=minsup, marker=marker
    )
    freq = {q: 0 for q in quasi_identifiers}
    count = {q: 0 for q in quasi_identifiers}
    for p in pairs:
        freq[p.attribute] += p.frequency
        count[p.attribute] += 1
    return freq, count, sum(freq.values()), len(pairs)


@dataclass(frozen=True)
class FullDomainResult:
    """The optimal full-domain suppression.

    Attributes
    ----------
    suppressed : tuple of str
        Quasi-identifiers starred in every row.
    cfcm : float
    count : int
        Stars (``len(table) * len(suppressed)``).
    released : pandas.DataFrame
    options_checked : int
    """

    suppressed: tuple[str, ...]
    cfcm: float
    count: int
    released: pd.DataFrame
    options_checked: int


def optimal_full_domain(
    table: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    target: str,
    k: int,
    *,
    minsup: float = 0.3,
    reading: str = "total",
    marker: str = SUPPRESSED,
) -> FullDomainResult:
    """The k-anonymous full-domain suppression of least CFCM (``2^q`` options).

    Starring a column loses every frequency pair on it and no other, so the
    CFCM of an option is the sum of its columns' losses.
    """
    if reading not in READINGS:
        raise InvalidParameterError(
            f"reading must be one of {list(READINGS)}; got {reading!r}"
        )
    require_k_within_rows(k, len(table))
    qis = list(quasi_identifiers)
    codes = encode_quasi_identifiers(table, qis)
    freq, count, total_freq, total_pairs = _column_losses(
        table, qis, target, minsup, marker
    )
    best = None
    checked = 0
    for size in range(len(qis) + 1):
        for starred in itertools.combinations(range(len(qis)), size):
            checked += 1
            kept = [j for j in range(len(qis)) if j not in starred]
            if not is_k_anonymous(codes[:, kept], k):
                continue
            if reading == "total":
                loss = sum(freq[qis[j]] for j in starred)
                value = loss / total_freq if total_freq else 0.0
            else:
                loss = sum(count[qis[j]] for j in starred)
                value = loss / total_pairs if total_pairs else 0.0
            key = (value, size, starred)
            if best is None or key < best:
                best = key
    assert best is not None  # starring every column is always k-anonymous
    value, size, starred = best
    names = tuple(qis[j] for j in starred)
    return FullDomainResult(
        suppressed=names,
        cfcm=float(value),
        count=int(size * len(table)),
        released=suppress_columns(table, qis, names, marker),
        options_checked=checked,
    )


@dataclass(frozen=True)
class MCCRTResult:
    """What MCCRT did.

    Attributes
    ----------
    ccr : dict of str to float
        Classification correction rate of each quasi-identifier.
    order : tuple of str
        Quasi-identifiers by ascending CCR (the processing order).
    suppressed : tuple of str
        Those transformed, in order (starred in every row with
        ``scope="column"``, in the tuples short of ``k`` otherwise).
    released : pandas.DataFrame
    count : int
        Suppressed cells.
    """

    ccr: dict[str, float]
    order: tuple[str, ...]
    suppressed: tuple[str, ...]
    released: pd.DataFrame
    count: int


def _star_short_tuples(codes: np.ndarray, starred: np.ndarray, k: int) -> None:
    """Complete the all-star row when fewer than ``k`` tuples ended in it.

    A class of at least ``k`` tuples is never touched, so the tuples still
    short of ``k`` after every attribute are starred everywhere and share one
    row; tuples that other classes can spare (those above ``k``) join it,
    fewest kept cells first, and whole classes (cheapest per tuple first) when
    the spares do not suffice.
    """
    if codes.shape[1] == 0:
        return
    released = np.where(starred, -2, codes)
    _, inv, counts = np.unique(
        released, axis=0, return_inverse=True, return_counts=True
    )
    inv = inv.reshape(-1)
    short = counts[inv] < k
    need = k - int(short.sum())
    if not short.any() or need <= 0:
        return
    kept = (~starred).sum(axis=1)
    classes = sorted(
        (int(kept[inv == c][0]), c) for c in range(len(counts)) if counts[c] >= k
    )
    for _, c in classes:
        members = np.flatnonzero(inv == c)
        spare = members[k:][:need]
        starred[spare] = True
        need -= len(spare)
        if need <= 0:
            return
    for _, c in classes:
        members = np.flatnonzero((inv == c) & ~starred.all(axis=1))
        starred[members] = True
        need -= len(members)
        if need <= 0:
            return


def mccrt(
    table: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    target: str,
    k: int,
    *,
    minsup: float = 0.3,
    minconf: float = 0.5,
    scope: str = "column",
    marker: str = SUPPRESSED,
) -> MCCRTResult:
    """MCCRT with suppression only: transform attributes by ascending CCR until k.

    Parameters
    ----------
    table : pandas.DataFrame
    quasi_identifiers : sequence of str
    target : str
    k : int
    minsup, minconf : float
        Thresholds of the CBA classifier whose accuracy is the CCR.
    scope : {"column", "tuples"}, default="column"
        Star the attribute in every row, or only in the tuples not yet
        k-anonymous.
    marker : str, default="*"

    Returns
    -------
    MCCRTResult
    """
    if scope not in ("tuples", "column"):
        raise InvalidParameterError(
            f"scope must be 'tuples' or 'column'; got {scope!r}"
        )
    require_k_within_rows(k, len(table))
    qis = list(quasi_identifiers)
    y = cell_text(table[target])
    ccr = {}
    for q in qis:
        model = CBAClassifier(minsup=minsup, minconf=minconf, suppression_marker=marker)
        model.fit(table[[q]], y)
        ccr[q] = float(np.mean(model.predict(table[[q]]) == y))
    order = tuple(sorted(qis, key=lambda q: (ccr[q], qis.index(q))))
    codes = encode_quasi_identifiers(table, qis)
    stars = np.zeros(codes.shape, dtype=bool)
    touched: list[str] = []
    for q in order:
        released = np.where(stars, -2, codes)
        if is_k_anonymous(released, k):
            break
        j = qis.index(q)
        if scope == "column":
            stars[:, j] = True
        else:
            _, inv, counts = np.unique(
                released, axis=0, return_inverse=True, return_counts=True
            )
            stars[counts[inv.reshape(-1)] < k, j] = True
        touched.append(q)
    if scope == "tuples":
        _star_short_tuples(codes, stars, k)
    out = table.copy()
    for j, q in enumerate(qis):
        text = cell_text(table[q]).astype(object)
        text[stars[:, j]] = marker
        out[q] = pd.array(list(text), dtype="string")
    return MCCRTResult(
        ccr=ccr,
        order=order,
        suppressed=tuple(touched),
        released=out,
        count=int(stars.sum()),
    )
