"""Significance of an accuracy difference between two anonymizations: the 5 x 2 cv F-test.

The kACTUS paper (Kisilevich et al. 2010, Section 5.2) marks a cell of its
comparison tables when kACTUS is significantly more (or less) accurate than
the other algorithm "by the combined 5x2 CV F-test ... with a 0.95 confidence
level". This module implements that test (Alpaydin 1999) on accuracies that
were already measured, fold by fold, by ``ppdm compare``
(:attr:`ppdm.experiments.compare.Comparison.rows`) or
:func:`ppdm.utility.cross_validate`.

mlxtend has ``mlxtend.evaluate.combined_ftest_5x2cv``, but it takes two
estimators and the data and runs the folds itself, fitting each estimator on
each training half. That does not fit the protocol here, where each training
half is first anonymized by an algorithm (kACTUS, Mondrian, ...) and only then
given to a model, and where the per-fold accuracies of every algorithm are
already in a results table with the same seeded folds. So the test is written
here, on a ``(5, 2)`` array of per-fold differences.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ppdm.exceptions import InvalidParameterError, PPDMWarning

__all__ = [
    "FOLDS",
    "REPEATS",
    "FTestResult",
    "combined_5x2cv_f_test",
    "paired_differences",
]

#: Repetitions and folds of Alpaydin's design.
REPEATS, FOLDS = 5, 2


@dataclass(frozen=True)
class FTestResult:
    """Outcome of the combined 5 x 2 cv F-test.

    Attributes
    ----------
    statistic : float
        ``F = sum_ij p_ij^2 / (2 sum_i s_i^2)``; ``inf`` when every ``s_i^2``
        is 0 and some difference is not, ``0.0`` when every difference is 0.
    p_value : float
        ``P(F(10, 5) >= statistic)``: 0.0 for an infinite statistic, 1.0 when
        every difference is 0.
    df : tuple of int
        Degrees of freedom of the F distribution, ``(10, 5)``.
    mean_difference : float
        Mean of the ten differences (its sign says which method did better).
    note : str
        Empty, or what made the test degenerate (all ``s_i^2 = 0``).
    """

    statistic: float
    p_value: float
    df: tuple[int, int]
    mean_difference: float
    note: str = ""

    def significant(self, alpha: float = 0.05) -> bool:
        """Whether the null hypothesis (equal error rates) is rejected at ``alpha``."""
        return self.p_value < alpha


def combined_5x2cv_f_test(differences: np.ndarray | pd.DataFrame) -> FTestResult:
    """Alpaydin's combined 5 x 2 cv F-test on per-fold differences.

    Parameters
    ----------
    differences : array-like of shape (5, 2)
        ``p[i, j]``: the accuracy (or error) of method A minus that of method
        B on repetition ``i``, fold ``j``, both trained on the same training
        half and tested on the same held-out half.

    Returns
    -------
    FTestResult

    Raises
    ------
    InvalidParameterError
        If ``differences`` is not of shape (5, 2) or holds a NaN or an
        infinite value.

    Warns
    -----
    PPDMWarning
        If every ``s_i^2`` is 0 (the statistic is undefined as 0/0 or x/0);
        the result then reports ``p = 1`` (all differences 0) or ``p = 0``
        (some difference not 0, F infinite), with the reason in ``note``.

    Notes
    -----
    With ``p_bar_i = (p_i1 + p_i2) / 2`` and
    ``s_i^2 = (p_i1 - p_bar_i)^2 + (p_i2 - p_bar_i)^2``,

    ``F = sum_{i,j} p_ij^2 / (2 sum_i s_i^2)``,

    which is approximately F-distributed with (10, 5) degrees of freedom
    under the null hypothesis that both methods have the same error rate.
    Swapping the methods negates every ``p_ij`` and leaves F unchanged; the
    test is two-sided, and :attr:`FTestResult.mean_difference` gives the
    direction. Differences of accuracies and of error rates give the same F.

    References
    ----------
    .. [1] E. Alpaydin, "Combined 5 x 2 cv F Test for Comparing Supervised
       Classification Learning Algorithms", Neural Computation
       11(8):1885-1892, 1999.
    .. [2] S. Kisilevich, L. Rokach, Y. Elovici and B. Shapira, "Efficient
       Multidimensional Suppression for K-Anonymity", IEEE TKDE
       22(3):334-347, 2010 (Section 5.2 uses this test).

    Examples
    --------
    >>> p = [[0.03, 0.02], [0.04, 0.03], [0.02, 0.03], [0.03, 0.04], [0.03, 0.03]]
    >>> result = combined_5x2cv_f_test(p)
    >>> round(result.statistic, 1), result.df, result.significant()
    (23.5, (10, 5), True)
    """
    p = np.asarray(differences, dtype=float)
    if p.shape != (REPEATS, FOLDS):
        raise InvalidParameterError(
            f"differences must have shape ({REPEATS}, {FOLDS}) (repetitions x folds "
            f"of a 5 x 2 cross-validation); got shape {p.shape}"
        )
    if not np.isfinite(p).all():
        where = [tuple(map(int, ij)) for ij in np.argwhere(~np.isfinite(p))]
        raise InvalidParameterError(
            "differences must be finite; got NaN or infinite values at "
            f"(repetition, fold) {where}"
        )
    df = (REPEATS * FOLDS, REPEATS)
    mean = float(p.mean())
    p_bar = p.mean(axis=1, keepdims=True)
    variance = float(((p - p_bar) ** 2).sum())
    numerator = float((p**2).sum())
    if variance == 0.0:
        if numerator == 0.0:
            note = (
                "every difference is 0 (the two methods scored the same on every "
                "fold): no evidence of a difference, p = 1"
            )
            statistic, p_value = 0.0, 1.0
        else:
            note = (
                "the two folds of every repetition gave the same difference "
                "(all s_i^2 = 0) and some difference is not 0: F is infinite, p = 0"
            )
            statistic, p_value = float("inf"), 0.0
        warnings.warn(f"combined 5x2cv F-test: {note}", PPDMWarning, stacklevel=2)
        return FTestResult(statistic, p_value, df, mean, note)
    statistic = numerator / (2.0 * variance)
    p_value = float(stats.f.sf(statistic, *df))
    return FTestResult(statistic, p_value, df, mean)


def paired_differences(
    results: pd.DataFrame,
    a: str,
    b: str,
    *,
    k: int,
    model: str,
    metric: str = "accuracy",
) -> np.ndarray:
    """Per-fold ``metric`` of algorithm ``a`` minus that of ``b``, as (repeats, folds).

    Parameters
    ----------
    results : pandas.DataFrame
        Per-fold rows, e.g. :attr:`ppdm.experiments.compare.Comparison.rows` (columns
        ``algorithm``, ``k``, ``repeat``, ``fold``, ``model`` and ``metric``),
        where both algorithms were run on the same seeded folds.
    a, b : str
        Algorithm names; the difference is ``a - b``.
    k : int
    model : str
        E.g. ``"decision_tree"``.
    metric : str, default="accuracy"

    Returns
    -------
    numpy.ndarray of shape (repeats, folds)
        Element ``[i, j]`` is repetition ``i``, fold ``j``; pass a (5, 2)
        array to :func:`combined_5x2cv_f_test`.

    Raises
    ------
    InvalidParameterError
        If a column is missing, an algorithm has no rows for this ``k`` and
        ``model``, a (repeat, fold) appears twice, or the two algorithms were
        not evaluated on the same (repeat, fold) pairs.

    Examples
    --------
    >>> rows = pd.DataFrame({
    ...     "algorithm": ["x", "x", "y", "y"], "k": 5, "repeat": 0,
    ...     "fold": [0, 1, 0, 1], "model": "naive_bayes",
    ...     "accuracy": [0.80, 0.82, 0.75, 0.80]})
    >>> paired_differences(rows, "x", "y", k=5, model="naive_bayes").round(2)
    array([[0.05, 0.02]])
    """
    needed = ["algorithm", "k", "repeat", "fold", "model", metric]
    missing = [c for c in needed if c not in results.columns]
    if missing:
        raise InvalidParameterError(
            f"results lack the column(s) {missing}; expected per-fold rows"
        )
    grids = []
    for name in (a, b):
        rows = results[
            (results["algorithm"] == name)
            & (results["k"] == k)
            & (results["model"] == model)
        ]
        if rows.empty:
            raise InvalidParameterError(
                f"no rows for algorithm={name!r}, k={k}, model={model!r}"
            )
        if rows.duplicated(["repeat", "fold"]).any():
            raise InvalidParameterError(
                f"algorithm={name!r}, k={k}, model={model!r} has more than one row "
                "for some (repeat, fold)"
            )
        grids.append(rows.pivot(index="repeat", columns="fold", values=metric))
    first, second = grids
    if (
        not first.index.equals(second.index)
        or not first.columns.equals(second.columns)
        or first.isna().to_numpy().any()
        or second.isna().to_numpy().any()
    ):
        raise InvalidParameterError(
            f"{a!r} and {b!r} (k={k}, model={model!r}) were not evaluated on the "
            f"same (repeat, fold) pairs: {list(first.stack().index)} vs "
            f"{list(second.stack().index)}"
        )
    return (first - second).to_numpy(dtype=float)
