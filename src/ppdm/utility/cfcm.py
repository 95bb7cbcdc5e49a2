"""CFCM and COUNT: what cell suppression costs an associative classifier.

The approximation algorithm for associative classification
(:mod:`ppdm.algorithms.approx_ac`) is judged by the *classification
frequency-pair* metric CFCM of Harnsamut and Natwichai. Its formula was lost
from our copy of the paper; the version here is rebuilt from the paper's
Definitions 7 and 9 (``shared/algorithms/approx-associative.md``):

- a *literal* ``(A, v)`` is a value ``v`` of a quasi-identifier ``A``; a tuple
  satisfies it when its cell is exactly ``v`` (the suppression marker and a
  missing value satisfy no literal);
- a *frequency pair* ``fp = ((A, v), c)`` is a literal and a class whose
  one-literal rule ``(A, v) -> c`` has support at least ``minsup`` in the
  original table ``D`` (``freq_D(fp) / |D| >= minsup``, ``freq_D(fp)`` the
  tuples of ``D`` with value ``v`` on ``A`` and class ``c``); the pairs are
  fixed on ``D``;
- ``CFCM_raw(D') = sum over fp of (freq_D(fp) - freq_D'(fp))``: for a
  suppression of cells this is the number of suppressed cells lying on a
  tuple that supports a pair (Definition 9's count);
- ``CFCM(D')`` (the default, ``reading="total"``) is ``CFCM_raw`` divided by
  ``sum over fp of freq_D(fp)``, in [0, 1] as the paper's figures are; the
  other reading (``reading="mean"``) is the mean over the pairs of the
  relative loss ``(freq_D - freq_D') / freq_D``. Both are 0 when there is no
  pair. Lower is better.

``COUNT`` (Definition 8, after Meyerson and Williams) is the number of
suppressed quasi-identifier cells; for a partition it is the sum over its
groups of ``|G| * nc(G)``, ``nc(G)`` the quasi-identifiers not constant on
``G`` (:func:`partition_count`). Since the stars that count in CFCM are some of
all stars, ``CFCM_raw <= COUNT`` (the paper's Lemma 1).

Cells are compared as text (:func:`cell_text`): the released table holds
text, the original its own types.

References
----------
.. [1] N. Harnsamut, J. Natwichai, "A Novel Heuristic Algorithm for Privacy
   Preserving of Associative Classification", PRICAI 2008, LNAI 5351.
.. [2] A. Meyerson, R. Williams, "On the complexity of optimal
   k-anonymity", PODS 2004.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.model import SUPPRESSED
from ppdm.values import format_number

__all__ = [
    "READINGS",
    "CFCMResult",
    "FrequencyPair",
    "cell_text",
    "cfcm",
    "cfcm_report",
    "count_suppressed",
    "frequency_pairs",
    "partition_count",
    "supporting_cells",
]

#: Readings of CFCM; the first is the default.
READINGS = ("total", "mean")


@dataclass(frozen=True)
class FrequencyPair:
    """A literal ``(attribute, value)`` and a class with enough support.

    Attributes
    ----------
    attribute : str
    value : str
        The value as text (:func:`cell_text`).
    target_class : str
    frequency : int
        Tuples of the original table with that value and that class.
    """

    attribute: str
    value: str
    target_class: str
    frequency: int


@dataclass(frozen=True)
class CFCMResult:
    """CFCM of one release in both readings, with COUNT.

    Attributes
    ----------
    raw : int
        Frequency lost over all pairs (suppressed cells on supporting tuples).
    total : float
        ``raw / sum of freq_D`` (0 without pairs): the default reading.
    mean : float
        Mean relative loss per pair (0 without pairs).
    count : int
        Suppressed quasi-identifier cells of the release (COUNT).
    pairs : tuple of FrequencyPair
    """

    raw: int
    total: float
    mean: float
    count: int
    pairs: tuple[FrequencyPair, ...]

    def value(self, reading: str = "total") -> float:
        """CFCM in ``reading`` (one of :data:`READINGS`)."""
        _check_reading(reading)
        return self.total if reading == "total" else self.mean


def _check_reading(reading: str) -> None:
    if reading not in READINGS:
        raise InvalidParameterError(
            f"reading must be one of {list(READINGS)}; got {reading!r}"
        )


def _check_minsup(minsup: float) -> None:
    if (
        isinstance(minsup, bool)
        or not isinstance(minsup, (int, float))
        or not 0.0 < minsup <= 1.0
    ):
        raise InvalidParameterError(
            f"minsup must be a number in (0, 1]; got {minsup!r}"
        )


def cell_text(column: pd.Series) -> np.ndarray:
    """The cells of ``column`` as text, None for a missing value.

    Numbers are written as :func:`ppdm.values.format_number` writes them (so
    ``3.0`` and ``"3"`` are one value); everything else by ``str``.
    """
    values = column.to_numpy(dtype=object)
    codes, uniques = pd.factorize(pd.Series(values, dtype=object))
    labels = []
    for value in uniques:
        if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
            value, bool
        ):
            labels.append(format_number(float(value)))
        else:
            labels.append(str(value))
    table = np.asarray([*labels, None], dtype=object)
    return table[np.where(codes < 0, len(labels), codes)]


def _pair_counts(
    table: pd.DataFrame, attribute: str, target: str, marker: str
) -> pd.Series:
    """``{(value text, class text): tuples}`` of one attribute, literals only."""
    values = cell_text(table[attribute])
    classes = cell_text(table[target])
    frame = pd.DataFrame({"v": values, "c": classes})
    frame = frame[frame["v"].notna() & (frame["v"] != marker) & frame["c"].notna()]
    return frame.groupby(["v", "c"], sort=True).size()


def frequency_pairs(
    table: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    target: str,
    *,
    minsup: float = 0.3,
    marker: str = SUPPRESSED,
) -> tuple[FrequencyPair, ...]:
    """The frequency pairs of ``table``: one-literal class rules with support.

    Parameters
    ----------
    table : pandas.DataFrame
        The original table ``D``.
    quasi_identifiers : sequence of str
    target : str
        The class attribute.
    minsup : float, default=0.3
        Minimum support, a fraction of ``len(table)`` in (0, 1].
    marker : str, default="*"
        A cell holding it is no literal.

    Returns
    -------
    tuple of FrequencyPair
        In quasi-identifier order, then by value and class text.
    """
    _check_minsup(minsup)
    n = len(table)
    pairs: list[FrequencyPair] = []
    if n == 0:
        return ()
    for attribute in quasi_identifiers:
        counts = _pair_counts(table, attribute, target, marker)
        for (value, label), frequency in counts.items():
            if frequency / n >= minsup:
                pairs.append(FrequencyPair(attribute, value, label, int(frequency)))
    return tuple(pairs)


def supporting_cells(
    table: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    target: str,
    *,
    minsup: float = 0.3,
    marker: str = SUPPRESSED,
) -> np.ndarray:
    """Which quasi-identifier cells support a frequency pair, shape (n, q).

    Starring a cell loses one unit of raw CFCM exactly when it is marked
    here, so these are the cell weights under which the least weighted
    number of stars is the least raw CFCM.

    Examples
    --------
    >>> import pandas as pd
    >>> d = pd.DataFrame({"a": ["x", "x", "y", "y"], "c": ["p", "p", "n", "p"]})
    >>> supporting_cells(d, ["a"], "c", minsup=0.5)[:, 0].tolist()
    [True, True, False, False]
    """
    qis = list(quasi_identifiers)
    cells = np.zeros((len(table), len(qis)), dtype=bool)
    classes = cell_text(table[target])
    for pair in frequency_pairs(table, qis, target, minsup=minsup, marker=marker):
        j = qis.index(pair.attribute)
        cells[:, j] |= (cell_text(table[pair.attribute]) == pair.value) & (
            classes == pair.target_class
        )
    return cells


def count_suppressed(
    released: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    marker: str = SUPPRESSED,
) -> int:
    """COUNT of a release: its quasi-identifier cells holding ``marker``.

    A quasi-identifier the release lacks counts as suppressed in every row.
    """
    return int(
        sum(
            int((cell_text(released[q]) == marker).sum())
            if q in released.columns
            else len(released)
            for q in quasi_identifiers
        )
    )


def partition_count(codes: np.ndarray, labels: np.ndarray) -> int:
    """COUNT of a partition: ``sum over groups G of |G| * nc(G)``.

    Parameters
    ----------
    codes : numpy.ndarray of int, shape (n, q)
        Quasi-identifier codes of the tuples (equal codes = equal values).
    labels : numpy.ndarray of int, shape (n,)
        Group of every tuple.

    Returns
    -------
    int
    """
    codes = np.asarray(codes)
    labels = np.asarray(labels, dtype=np.int64)
    if len(labels) == 0 or codes.shape[1] == 0:
        return 0
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    starts = np.flatnonzero(np.r_[True, sorted_labels[1:] != sorted_labels[:-1]])
    sizes = np.diff(np.r_[starts, len(labels)])
    c = codes[order]
    varies = np.minimum.reduceat(c, starts, axis=0) != np.maximum.reduceat(
        c, starts, axis=0
    )
    return int((sizes * varies.sum(axis=1)).sum())


def cfcm_report(
    original: pd.DataFrame,
    released: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    target: str,
    *,
    minsup: float = 0.3,
    marker: str = SUPPRESSED,
) -> CFCMResult:
    """CFCM of ``released`` against ``original`` (both readings) and COUNT.

    Parameters
    ----------
    original : pandas.DataFrame
        ``D``; the frequency pairs are found on it.
    released : pandas.DataFrame
        ``D'``, its release (rows in any order; a quasi-identifier missing
        from it counts as suppressed throughout).
    quasi_identifiers : sequence of str
    target : str
    minsup : float, default=0.3
    marker : str, default="*"

    Returns
    -------
    CFCMResult

    Examples
    --------
    >>> import pandas as pd
    >>> d = pd.DataFrame({"a": ["x", "x", "y", "y"], "c": ["p", "p", "n", "n"]})
    >>> r = d.assign(a=["x", "x", "*", "*"])
    >>> res = cfcm_report(d, r, ["a"], "c", minsup=0.5)
    >>> res.raw, res.total, res.count
    (2, 0.5, 2)
    """
    pairs = frequency_pairs(
        original, quasi_identifiers, target, minsup=minsup, marker=marker
    )
    lost = []
    by_attribute: dict[str, pd.Series] = {}
    for pair in pairs:
        if pair.attribute not in by_attribute:
            by_attribute[pair.attribute] = (
                _pair_counts(released, pair.attribute, target, marker)
                if pair.attribute in released.columns
                else pd.Series(dtype=np.int64)
            )
        kept = int(by_attribute[pair.attribute].get((pair.value, pair.target_class), 0))
        lost.append(max(pair.frequency - kept, 0))
    total_frequency = sum(p.frequency for p in pairs)
    raw = int(sum(lost))
    return CFCMResult(
        raw=raw,
        total=raw / total_frequency if total_frequency else 0.0,
        mean=float(np.mean([lo / p.frequency for lo, p in zip(lost, pairs)]))
        if pairs
        else 0.0,
        count=count_suppressed(released, quasi_identifiers, marker),
        pairs=pairs,
    )


def cfcm(
    original: pd.DataFrame,
    released: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    target: str,
    *,
    minsup: float = 0.3,
    reading: str = "total",
    marker: str = SUPPRESSED,
) -> float:
    """CFCM of ``released`` in ``reading`` (see :func:`cfcm_report`)."""
    _check_reading(reading)
    return cfcm_report(
        original, released, quasi_identifiers, target, minsup=minsup, marker=marker
    ).value(reading)
