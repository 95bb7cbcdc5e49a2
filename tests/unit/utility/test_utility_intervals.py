"""95 % intervals: Wilson score (hold-out) and t over folds (cross-validation)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ppdm.exceptions import InvalidParameterError
from ppdm.utility import summarize_cv
from ppdm.utility.intervals import accuracy_interval, t_interval, wilson_interval


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 5000), data=st.data())
def test_wilson_matches_scipy(n, data):
    successes = data.draw(st.integers(0, n))
    expected = stats.binomtest(successes, n).proportion_ci(
        confidence_level=0.95, method="wilson"
    )
    low, high = wilson_interval(successes, n)
    assert low == pytest.approx(expected.low, abs=1e-12)
    assert high == pytest.approx(expected.high, abs=1e-12)
    assert 0.0 <= low <= successes / n <= high <= 1.0


def test_wilson_known_values():
    # Wilson (1927); e.g. Newcombe (1998), Table I: 81 of 263 -> 0.2553-0.3662
    low, high = wilson_interval(81, 263)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)
    assert wilson_interval(0, 0) is None
    assert accuracy_interval(float("nan"), 100) is None
    assert accuracy_interval(0.25, 4) == wilson_interval(1, 4)
    with pytest.raises(InvalidParameterError, match="successes"):
        wilson_interval(5, 4)
    with pytest.raises(InvalidParameterError, match="confidence"):
        wilson_interval(1, 4, confidence=1.5)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(0, 1000), min_size=2, max_size=20, unique=True).map(
        lambda counts: [c / 1000 for c in counts]  # accuracies on 1000 test rows
    )
)
def test_t_interval_matches_scipy(values):
    mean = float(np.mean(values))
    sem = float(np.std(values, ddof=1)) / math.sqrt(len(values))
    expected = stats.t.interval(0.95, len(values) - 1, loc=mean, scale=sem)
    low, high = t_interval(values)
    assert low == pytest.approx(expected[0], abs=1e-12)
    assert high == pytest.approx(expected[1], abs=1e-12)
    assert t_interval(values[:1]) is None
    assert t_interval([*values, float("nan")]) == pytest.approx((low, high))


def test_summarize_cv_gives_the_t_interval_per_group():
    rows = pd.DataFrame(
        {
            "model": ["a"] * 3 + ["b"] * 2,
            "accuracy": [0.80, 0.82, 0.84, 0.5, 0.9],
            "accuracy_original": [0.9, 0.9, 0.9, 0.9, 0.92],
        }
    )
    summary = summarize_cv(rows).set_index("model")
    # a: mean 0.82, sd 0.02, t(0.975, 2) = 4.3027 -> 0.82 -+ 0.0497
    assert summary.loc["a", "ci_low"] == pytest.approx(0.770317, abs=1e-6)
    assert summary.loc["a", "ci_high"] == pytest.approx(0.869683, abs=1e-6)
    # b: 0.7 -+ 12.706 * 0.2 -> clipped to the accuracy range [0, 1]
    assert (summary.loc["b", "ci_low"], summary.loc["b", "ci_high"]) == (0.0, 1.0)
    assert summary.loc["a", "ci_low_original"] == summary.loc["a", "ci_high_original"]
