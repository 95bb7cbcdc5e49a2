"""Discretization of numeric attributes into ordered intervals.

Two methods:

- ``"mdl"`` (default): supervised, entropy-based recursive binary splitting
  with the Minimum Description Length stopping rule of Fayyad & Irani (1993);
  a column whose values say nothing about the target gets no cut at all.
- ``"equal-frequency"``: ``n_bins`` bins holding (as nearly as ties allow)
  the same number of rows; unsupervised.

A discretized column becomes an *ordered* pandas Categorical whose categories
are interval labels written by :func:`ppdm.values.format_interval`
(``"< 21.5"``, ``"[21.5, 30.5)"``, ``">= 30.5"``), so that
:func:`ppdm.model.attribute_kind` reads it as ordinal. Missing values stay
missing. The cut points are returned as plain floats so that the pipeline can
store them and apply them to another table (a test split, a later batch) with
:func:`apply_cut_points`.

Why a hand-written MDL: scikit-learn's ``KBinsDiscretizer`` is unsupervised.
Of the Fayyad-Irani packages on PyPI, ``mdlp`` (0.32, 2017) and
``mdlp-discretization`` (0.3.3, 2020) have had no release since; ``fimdlp``
(1.0.1, 2026) is recent but was not evaluated, and it would be a new
dependency for about 80 lines. The implementation below sorts each column
once and scores every candidate split of an interval in one numpy expression
over cumulative class counts; only the accepted intervals are recursed into.

References
----------
.. [1] U. M. Fayyad and K. B. Irani, "Multi-Interval Discretization of
   Continuous-Valued Attributes for Classification Learning", in Proc. 13th
   International Joint Conference on Artificial Intelligence (IJCAI),
   pp. 1022-1027, 1993.
.. [2] U. M. Fayyad and K. B. Irani, "On the Handling of Continuous-Valued
   Attributes in Decision Tree Generation", Machine Learning 8:87-102, 1992
   (cut points that minimize the class entropy are boundary points).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.model import AttributeKind, attribute_kind
from ppdm.values import format_interval

__all__ = [
    "METHODS",
    "Discretization",
    "apply_cut_points",
    "discretize",
    "fit_cut_points",
    "interval_labels",
]

METHODS = ("mdl", "equal-frequency")


@dataclass(frozen=True)
class Discretization:
    """A discretized table and the cut points that made it.

    Attributes
    ----------
    table : pandas.DataFrame
        A new frame; every discretized column is an ordered Categorical of
        interval labels, the other columns are the input's.
    cut_points : dict of str to list of float
        Sorted cut points per discretized column (JSON-serialisable). An empty
        list means the single category ``"(-inf, inf)"``.
    method : str
        ``"mdl"`` or ``"equal-frequency"``.
    """

    table: pd.DataFrame
    cut_points: dict[str, list[float]] = field(default_factory=dict)
    method: str = "mdl"


def _check_method(method: str, n_bins: int) -> None:
    if method not in METHODS:
        raise InvalidParameterError(
            f"method must be one of {', '.join(METHODS)}; got {method!r}"
        )
    if method == "equal-frequency" and (
        isinstance(n_bins, bool)
        or not isinstance(n_bins, (int, np.integer))
        or n_bins < 1
    ):
        raise InvalidParameterError(f"n_bins must be an integer >= 1; got {n_bins!r}")


def _midpoint(low: np.ndarray | float, high: np.ndarray | float) -> np.ndarray:
    """Cut between adjacent distinct values ``low < high``.

    Halves are added (no overflow near the float limits); where the midpoint
    rounds down onto ``low`` (adjacent floats), ``high`` itself is the cut, which
    still separates them because a value equal to a cut opens the upper bin.
    """
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    mid = low / 2.0 + high / 2.0
    return _short(np.where(mid > low, mid, high), low, high)


def _short(cut: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Each cut written with the fewest decimals that still name it.

    The midpoint of two values with ``d`` decimals has at most ``d + 1``, but
    binary floating point adds a tail (``7.1507000000000005``) that would
    reach every interval label of the release. The shortest rounding equal
    to the cut up to that noise (relative 1e-9) replaces it, when it still
    lies in ``(low, high]`` and so splits the values exactly as the cut does.
    """
    cut = np.array(cut, dtype=float, copy=True)
    if not cut.size:
        return cut
    done = ~np.isfinite(cut)
    tolerance = 1e-9 * np.abs(cut)
    for decimals in range(16):
        rounded = np.round(cut, decimals)
        fits = (
            ~done
            & (np.abs(rounded - cut) <= tolerance)
            & (rounded > low)
            & (rounded <= high)
        )
        cut[fits] = rounded[fits]
        done |= fits
        if done.all():
            break
    return cut


def _entropy_rows(counts: np.ndarray) -> np.ndarray:
    """Class entropy (bits) of every row of a (m, n_classes) count matrix."""
    totals = counts.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = counts / totals
        terms = np.where(counts > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return -terms.sum(axis=1)


def _label_codes(target: pd.Series) -> np.ndarray:
    """Integer class codes (-1 for a missing label), computed once per target."""
    codes, _ = pd.factorize(target, use_na_sentinel=True)
    return codes.astype(np.int64, copy=False)


def _histogram(
    values: np.ndarray, labels: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values of ``values`` (no NaN) and their row counts.

    Returns ``(distinct, counts)``: ``counts`` has one entry per distinct
    value, or, given class codes ``labels`` (0..k-1, aligned with
    ``values``), one row per distinct value and one column per class up to
    the largest code present. Each distinct value is represented by its first
    row in a stable sort (``-0.0`` or ``0.0``, whichever comes first). Both
    discretization methods depend on the rows only through this table, so a
    table summed over partitions gives the cut points of the whole table.
    """
    order = np.argsort(values, kind="stable")
    x = values[order]
    starts = (
        np.flatnonzero(np.r_[True, x[1:] != x[:-1]]) if len(x) else np.empty(0, int)
    )
    distinct = x[starts]
    sizes = np.diff(np.r_[starts, len(x)]).astype(np.int64)
    if labels is None:
        return distinct, sizes
    codes = labels[order]
    n_classes = int(codes.max()) + 1 if len(codes) else 0
    group = np.repeat(np.arange(len(starts), dtype=np.int64), sizes)
    counts = np.bincount(
        group * n_classes + codes, minlength=len(starts) * n_classes
    ).reshape(len(starts), n_classes)
    return distinct, counts.astype(np.int64, copy=False)


def _mdl_cut_points(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Fayyad-Irani recursive MDL cuts of ``values`` (no NaN) for class codes."""
    return _mdl_from_counts(*_histogram(values, labels))


def _mdl_from_counts(distinct: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Fayyad-Irani recursive MDL cuts from a (distinct value x class) count table.

    ``distinct`` is sorted and strictly increasing; ``counts[g, c]`` is the
    number of rows with value ``distinct[g]`` and class code ``c``. Classes
    after the last one present are ignored (they change no entropy, only the
    order of a float sum).
    """
    present = np.flatnonzero(counts.sum(axis=0) > 0) if counts.size else []
    n_classes = int(present[-1]) + 1 if len(present) else 0
    counts = np.asarray(counts[:, :n_classes], dtype=np.int64)
    if int(counts.sum()) < 2 or len(present) < 2:
        return np.empty(0)
    # Cuts may only fall between distinct values.
    n_groups = len(distinct)
    # cum[g] = class counts of the rows in groups 0..g-1.
    cum = np.zeros((n_groups + 1, n_classes), dtype=np.int64)
    cum[1:] = counts.cumsum(axis=0)
    group_counts = counts
    # A cut between groups g-1 and g is a boundary point unless both groups
    # are pure in the same class: Fayyad & Irani (1992) show the entropy
    # minimum never lies elsewhere, so only those candidates are scored.
    pure = (group_counts > 0).sum(axis=1) == 1
    majority = group_counts.argmax(axis=1)
    boundary = np.r_[
        False, ~(pure[1:] & pure[:-1] & (majority[1:] == majority[:-1]))
    ]  # boundary[g]: a cut just before group g is a candidate

    cuts: list[float] = []
    stack = [(0, n_groups)]  # half-open ranges of groups still to split
    while stack:
        lo, hi = stack.pop()
        candidates = np.flatnonzero(boundary[lo + 1 : hi]) + lo + 1
        if len(candidates) == 0:
            continue
        total = cum[hi] - cum[lo]
        n = int(total.sum())
        left = cum[candidates] - cum[lo]
        right = total - left
        n_left = left.sum(axis=1)
        n_right = n - n_left
        split_entropy = (
            n_left * _entropy_rows(left) + n_right * _entropy_rows(right)
        ) / n
        # first minimum within rounding: ties go to the lowest cut, whatever
        # the summation order produced in the last bits
        best = int(np.flatnonzero(split_entropy <= split_entropy.min() + 1e-12)[0])
        g = int(candidates[best])
        ent_s = float(_entropy_rows(total[None, :])[0])
        ent_1 = float(_entropy_rows(left[best][None, :])[0])
        ent_2 = float(_entropy_rows(right[best][None, :])[0])
        gain = ent_s - float(split_entropy[best])
        k_s = int((total > 0).sum())
        k_1 = int((left[best] > 0).sum())
        k_2 = int((right[best] > 0).sum())
        delta = np.log2(3.0**k_s - 2) - (k_s * ent_s - k_1 * ent_1 - k_2 * ent_2)
        if gain > (np.log2(n - 1) + delta) / n:
            cuts.append(float(_midpoint(distinct[g - 1], distinct[g])))
            stack.append((lo, g))
            stack.append((g, hi))
    return np.sort(np.asarray(cuts, dtype=float))


def _equal_frequency_cut_points(values: np.ndarray, n_bins: int) -> np.ndarray:
    """Cuts near the rank positions round(i * n / n_bins), between distinct values."""
    return _equal_frequency_from_counts(*_histogram(values), n_bins)


def _equal_frequency_from_counts(
    distinct: np.ndarray, counts: np.ndarray, n_bins: int
) -> np.ndarray:
    """Equal-frequency cuts from the sorted distinct values and their row counts.

    A rank position inside a run of equal values cannot separate them; the cut
    moves to the nearest boundary between distinct values (ties go to the
    lower one). Dropping it instead would leave integer data such as ages,
    whose values all repeat, with no cut at all.
    """
    ends = np.cumsum(np.asarray(counts, dtype=np.int64))
    n = int(ends[-1]) if len(ends) else 0
    if n == 0 or n_bins <= 1:
        return np.empty(0)
    boundaries = ends[:-1]  # rows before each distinct value but the first
    if len(boundaries) == 0:
        return np.empty(0)
    positions = np.rint(np.arange(1, n_bins) * n / n_bins).astype(np.int64)
    right = np.clip(np.searchsorted(boundaries, positions), 0, len(boundaries) - 1)
    left = np.clip(right - 1, 0, len(boundaries) - 1)
    nearer_left = np.abs(boundaries[left] - positions) <= np.abs(
        boundaries[right] - positions
    )
    chosen = np.unique(np.where(nearer_left, left, right))  # boundary g: g | g + 1
    return np.unique(_midpoint(distinct[chosen], distinct[chosen + 1]))


def _numeric_values(values: pd.Series, name: str) -> np.ndarray:
    if attribute_kind(values) is not AttributeKind.NUMERIC:
        raise InvalidParameterError(
            f"column {name!r} is not numeric (dtype {values.dtype}); only numeric "
            "columns can be discretized"
        )
    return values.to_numpy(dtype=float, na_value=np.nan)


def fit_cut_points(
    values: pd.Series,
    target: pd.Series | None,
    *,
    method: str = "mdl",
    n_bins: int = 5,
) -> np.ndarray:
    """Sorted cut points of one numeric column.

    Parameters
    ----------
    values : pandas.Series
        A numeric column; missing values are ignored.
    target : pandas.Series or None
        Class labels aligned with ``values``; required by ``"mdl"``. Rows whose
        label is missing are ignored.
    method : {"mdl", "equal-frequency"}, default="mdl"
    n_bins : int, default=5
        Number of bins for ``"equal-frequency"`` (fewer when ties leave no cut
        between distinct values).

    Returns
    -------
    numpy.ndarray of float
        Strictly increasing cut points, each the midpoint between two adjacent
        distinct values. ``"mdl"`` may return none.

    Raises
    ------
    InvalidParameterError
        Unknown method, a non-numeric column, an all-missing column, or
        ``"mdl"`` without a target.

    References
    ----------
    .. [1] U. M. Fayyad and K. B. Irani, "Multi-Interval Discretization of
       Continuous-Valued Attributes for Classification Learning", IJCAI 1993,
       pp. 1022-1027.

    Examples
    --------
    >>> import pandas as pd
    >>> age = pd.Series([18, 20, 21, 35, 40, 52])
    >>> income = pd.Series(["low", "low", "low", "high", "high", "high"])
    >>> fit_cut_points(age, income).tolist()
    [28.0]
    >>> fit_cut_points(age, None, method="equal-frequency", n_bins=3).tolist()
    [20.5, 37.5]
    """
    _check_method(method, n_bins)
    name = str(values.name)
    if method == "mdl":
        if target is None:
            raise InvalidParameterError(
                f"method 'mdl' needs a target to discretize column {name!r}"
            )
        if len(target) != len(values):
            raise InvalidParameterError(
                f"target has {len(target)} rows, column {name!r} has {len(values)}"
            )
        return _fit(values, _label_codes(target), method, n_bins)
    return _fit(values, None, method, n_bins)


def _fit(
    values: pd.Series, labels: np.ndarray | None, method: str, n_bins: int
) -> np.ndarray:
    name = str(values.name)
    x = _numeric_values(values, name)
    keep = ~np.isnan(x)
    if labels is not None:
        keep &= labels >= 0
    if not keep.any():
        raise InvalidParameterError(
            f"column {name!r} cannot be binned: it has no non-missing values"
        )
    if method == "mdl":
        return _mdl_cut_points(x[keep], labels[keep])
    return _equal_frequency_cut_points(x[keep], int(n_bins))


def interval_labels(cut_points: Sequence[float]) -> list[str]:
    """Interval labels of the bins that ``cut_points`` delimit, in order.

    >>> interval_labels([21.5, 30.5])
    ['< 21.5', '[21.5, 30.5)', '>= 30.5']
    """
    ends = [-np.inf, *map(float, cut_points), np.inf]
    return [format_interval(lo, hi) for lo, hi in pairwise(ends)]


def _binned(column: pd.Series, cut_points: Sequence[float]) -> pd.Series:
    x = column.to_numpy(dtype=float, na_value=np.nan)
    cuts = np.asarray(cut_points, dtype=float)
    # side="right": a value equal to a cut opens the next, left-closed bin.
    codes = np.searchsorted(cuts, x, side="right")
    codes[np.isnan(x)] = -1
    categorical = pd.Categorical.from_codes(
        codes, categories=interval_labels(cuts), ordered=True
    )
    return pd.Series(categorical, index=column.index, name=column.name)


def discretize(
    table: pd.DataFrame,
    columns: Sequence[str],
    target: str | pd.Series | None,
    *,
    method: str = "mdl",
    n_bins: int = 5,
) -> Discretization:
    """Replace numeric ``columns`` of ``table`` by ordered interval categories.

    Parameters
    ----------
    table : pandas.DataFrame
        Never modified.
    columns : sequence of str
        Numeric columns to discretize.
    target : str, pandas.Series or None
        The class column (required by ``"mdl"``): its name in ``table``, or
        the labels themselves aligned with ``table``'s rows.
    method : {"mdl", "equal-frequency"}, default="mdl"
    n_bins : int, default=5
        Bins per column for ``"equal-frequency"``.

    Returns
    -------
    Discretization
        The new table and the cut points per column.

    Raises
    ------
    InvalidParameterError
        A listed column is missing, not numeric, or all missing ("cannot be
        binned"); the target is missing or listed among ``columns``.

    See Also
    --------
    fit_cut_points : The cut points of one column, with the reference of the
        ``"mdl"`` method (Fayyad and Irani, IJCAI 1993).

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({
    ...     "age": [18, 20, 21, 35, 40, 52],
    ...     "income": ["low", "low", "low", "high", "high", "high"],
    ... })
    >>> result = discretize(table, ["age"], "income")
    >>> result.cut_points
    {'age': [28.0]}
    >>> result.table["age"].tolist()[:4]
    ['< 28', '< 28', '< 28', '>= 28']
    """
    _check_method(method, n_bins)
    absent = [c for c in columns if c not in table.columns]
    if absent:
        raise InvalidParameterError(
            f"columns {absent} to discretize are not columns of the table"
        )
    labels = None
    if method == "mdl":
        if isinstance(target, pd.Series):
            if len(target) != len(table):
                raise InvalidParameterError(
                    f"target has {len(target)} rows, the table has {len(table)}"
                )
            labels = target.reset_index(drop=True).set_axis(table.index)
            target_name = target.name
        elif target is not None and target in table.columns:
            labels = table[target]
            target_name = target
        else:
            raise InvalidParameterError(
                f"method 'mdl' needs the target column; got {target!r}"
            )
        if target_name in columns:
            raise InvalidParameterError(
                f"target {target_name!r} cannot be discretized as a feature"
            )
    for name in columns:
        _numeric_values(table[name], name)  # fail on any bad column before work
    codes = _label_codes(labels) if labels is not None else None
    cut_points = {
        name: _fit(table[name], codes, method, n_bins).tolist() for name in columns
    }
    return Discretization(
        table=apply_cut_points(table, cut_points), cut_points=cut_points, method=method
    )


def apply_cut_points(
    table: pd.DataFrame, cut_points: Mapping[str, Sequence[float]]
) -> pd.DataFrame:
    """Bin ``table``'s columns with saved cut points (e.g. a test split).

    Returns a new frame; columns not in ``cut_points`` are kept as they are.

    Raises
    ------
    InvalidParameterError
        A column of ``cut_points`` is missing from ``table`` or not numeric.
    """
    absent = [c for c in cut_points if c not in table.columns]
    if absent:
        raise InvalidParameterError(
            f"cut points given for {absent}, which are not columns of the table"
        )
    out = table.copy()
    for name, cuts in cut_points.items():
        _numeric_values(table[name], name)
        out[name] = _binned(table[name], cuts)
    return out
