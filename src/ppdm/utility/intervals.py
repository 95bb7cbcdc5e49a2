"""95 % intervals of the accuracies the utility report and the experiments give.

- :func:`wilson_interval`: a hold-out accuracy is a binomial proportion (the
  number of correctly classified test rows out of ``n``); its Wilson score
  interval (Wilson 1927) keeps its coverage near the nominal level for small
  ``n`` and accuracies near 0 or 1, where the normal ("Wald") interval fails
  (Brown, Cai & DasGupta 2001).
- :func:`t_interval`: a cross-validation mean over folds,
  ``mean +- t_{1 - a/2, m - 1} * sd / sqrt(m)``. The folds of a 5 x 2 design
  share training rows, so they are not independent and this interval is
  optimistic (Dietterich 1998; Nadeau & Bengio 2003); it says how much the
  mean moves over the folds, not a guarantee. To compare two methods, use the
  combined 5 x 2 CV F-test (:mod:`ppdm.experiments.significance`).

References
----------
.. [1] E. B. Wilson, "Probable inference, the law of succession, and
   statistical inference", Journal of the American Statistical Association
   22(158):209-212, 1927.
.. [2] L. D. Brown, T. T. Cai and A. DasGupta, "Interval Estimation for a
   Binomial Proportion", Statistical Science 16(2):101-133, 2001.
.. [3] T. G. Dietterich, "Approximate Statistical Tests for Comparing
   Supervised Classification Learning Algorithms", Neural Computation
   10(7):1895-1923, 1998.
.. [4] C. Nadeau and Y. Bengio, "Inference for the Generalization Error",
   Machine Learning 52:239-281, 2003.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from ppdm.exceptions import InvalidParameterError

__all__ = ["CONFIDENCE", "accuracy_interval", "t_interval", "wilson_interval"]

#: Confidence level of every interval in the report.
CONFIDENCE = 0.95


def _check_confidence(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise InvalidParameterError(f"confidence must be in (0, 1); got {confidence!r}")
    return float(confidence)


def wilson_interval(
    successes: int, n: int, *, confidence: float = CONFIDENCE
) -> tuple[float, float] | None:
    """Wilson score interval of a proportion ``successes / n``.

    ``(p + z^2 / 2n -+ z sqrt(p (1 - p) / n + z^2 / 4n^2)) / (1 + z^2 / n)``
    with ``z`` the standard normal ``1 - (1 - confidence) / 2`` quantile.

    Parameters
    ----------
    successes : int
        Correctly classified test rows, in [0, n].
    n : int
        Test rows; ``0`` gives None (no accuracy, no interval).
    confidence : float, default=0.95

    Returns
    -------
    (float, float) or None
        Lower and upper bound, within [0, 1].

    Examples
    --------
    >>> low, high = wilson_interval(0, 10)
    >>> round(low, 4), round(high, 4)
    (0.0, 0.2775)
    """
    confidence = _check_confidence(confidence)
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise InvalidParameterError(
            f"successes must be in [0, n={n}] with n >= 0; got {successes}"
        )
    if n == 0:
        return None
    z = float(stats.norm.ppf(1.0 - (1.0 - confidence) / 2.0))
    p = successes / n
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # at p = 0 (p = 1) the lower (upper) end is exactly 0 (1); say so rather
    # than leave it to rounding
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def accuracy_interval(
    accuracy: float, n: int, *, confidence: float = CONFIDENCE
) -> tuple[float, float] | None:
    """:func:`wilson_interval` of an accuracy measured on ``n`` test rows.

    ``accuracy`` is a fraction ``correct / n`` (so ``correct`` is recovered
    exactly by rounding); NaN (no accuracy) gives None.
    """
    if accuracy is None or math.isnan(accuracy):
        return None
    return wilson_interval(int(round(accuracy * n)), n, confidence=confidence)


def t_interval(
    values: Sequence[float], *, confidence: float = CONFIDENCE
) -> tuple[float, float] | None:
    """``mean +- t * sd / sqrt(m)`` over ``m`` per-fold values (NaN ignored).

    Returns None with fewer than two values (no spread to measure).

    Examples
    --------
    >>> low, high = t_interval([0.80, 0.82, 0.84])
    >>> round(low, 4), round(high, 4)
    (0.7703, 0.8697)
    """
    confidence = _check_confidence(confidence)
    data = np.asarray(values, dtype=float)
    data = data[~np.isnan(data)]
    m = len(data)
    if m < 2:
        return None
    mean = float(data.mean())
    half = (
        float(stats.t.ppf(1.0 - (1.0 - confidence) / 2.0, m - 1))
        * float(data.std(ddof=1))
        / math.sqrt(m)
    )
    return mean - half, mean + half
