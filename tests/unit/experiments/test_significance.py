"""The combined 5 x 2 cv F-test against values computed by hand, and its helpers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ppdm.exceptions import InvalidParameterError, PPDMWarning
from ppdm.experiments.significance import combined_5x2cv_f_test, paired_differences

# Accuracy of method A minus method B, repetition i (row), fold j (column).
DIFFERENCES = [
    [0.031, 0.012],
    [0.045, 0.027],
    [0.018, 0.036],
    [0.052, 0.040],
    [0.009, 0.021],
]


def _f_by_hand(p: list[list[float]]) -> float:
    """Alpaydin's F with plain loops, independently of the module."""
    numerator = 0.0
    variance = 0.0
    for row in p:
        mean = (row[0] + row[1]) / 2
        for value in row:
            numerator += value * value
            variance += (value - mean) * (value - mean)
    return numerator / (2 * variance)


def test_statistic_matches_a_hand_computation():
    result = combined_5x2cv_f_test(DIFFERENCES)
    assert result.statistic == pytest.approx(_f_by_hand(DIFFERENCES), rel=1e-12)
    assert result.df == (10, 5)
    assert result.mean_difference == pytest.approx(0.0291)
    assert result.note == ""


def test_statistic_on_a_pencil_and_paper_example():
    # sum p^2 = 0.0094; s_i^2 = 0.00005 for the first four repetitions, 0 for
    # the last, so sum s_i^2 = 0.0002 and F = 0.0094 / 0.0004 = 23.5.
    p = [[0.03, 0.02], [0.04, 0.03], [0.02, 0.03], [0.03, 0.04], [0.03, 0.03]]
    assert combined_5x2cv_f_test(p).statistic == pytest.approx(23.5)


def test_p_value_is_the_upper_tail_of_f_10_5():
    result = combined_5x2cv_f_test(DIFFERENCES)
    expected = stats.f.sf(_f_by_hand(DIFFERENCES), 10, 5)
    assert result.p_value == pytest.approx(expected, rel=1e-12)
    # the same tail by integrating the F(10, 5) density, not through scipy's sf
    upper = 1.0 - stats.f.cdf(result.statistic, 10, 5)
    assert result.p_value == pytest.approx(upper, rel=1e-9)


def test_swapping_the_methods_keeps_f():
    forward = combined_5x2cv_f_test(DIFFERENCES)
    backward = combined_5x2cv_f_test(-np.asarray(DIFFERENCES))
    assert backward.statistic == pytest.approx(forward.statistic, rel=1e-12)
    assert backward.p_value == pytest.approx(forward.p_value, rel=1e-12)
    assert backward.mean_difference == pytest.approx(-forward.mean_difference)


def test_a_clearly_better_method_is_significant():
    rng = np.random.default_rng(7)
    a = 0.86 + rng.normal(0.0, 0.004, size=(5, 2))
    b = 0.78 + rng.normal(0.0, 0.004, size=(5, 2))
    result = combined_5x2cv_f_test(a - b)
    assert result.p_value < 0.05
    assert result.significant()
    assert result.mean_difference > 0


def test_differences_that_cancel_within_repetitions_are_not_significant():
    # sum p^2 = 10 * 0.0001 = 0.001; each s_i^2 = 0.0002, sum 0.001; F = 0.5
    p = [[0.01, -0.01]] * 5
    result = combined_5x2cv_f_test(p)
    assert result.statistic == pytest.approx(0.5)
    assert result.p_value > 0.5
    assert not result.significant()


def test_identical_methods_give_p_one():
    with pytest.warns(PPDMWarning, match="every difference is 0"):
        result = combined_5x2cv_f_test(np.zeros((5, 2)))
    assert result.p_value == 1.0
    assert result.statistic == 0.0
    assert "every difference is 0" in result.note


def test_constant_nonzero_difference_gives_infinite_f():
    p = [[0.02, 0.02], [0.01, 0.01], [0.03, 0.03], [0.02, 0.02], [0.04, 0.04]]
    with pytest.warns(PPDMWarning, match="F is infinite"):
        result = combined_5x2cv_f_test(p)
    assert result.statistic == float("inf")
    assert result.p_value == 0.0


@pytest.mark.parametrize("shape", [(2, 5), (10,), (4, 2), (5, 3), (5, 2, 1)])
def test_wrong_shape_raises(shape):
    with pytest.raises(InvalidParameterError, match=r"shape \(5, 2\)"):
        combined_5x2cv_f_test(np.ones(shape))


def test_nan_raises():
    p = np.array(DIFFERENCES)
    p[2, 1] = np.nan
    with pytest.raises(InvalidParameterError, match=r"\(2, 1\)"):
        combined_5x2cv_f_test(p)


def _rows(accuracy_a, accuracy_b, *, k=5, model="naive_bayes"):
    rows = []
    for name, grid in (("kactus", accuracy_a), ("mondrian", accuracy_b)):
        for repeat, pair in enumerate(grid):
            for fold, value in enumerate(pair):
                rows.append(
                    {
                        "algorithm": name,
                        "k": k,
                        "repeat": repeat,
                        "fold": fold,
                        "model": model,
                        "accuracy": value,
                    }
                )
    # shuffled, and with rows of another k and model that must be ignored
    frame = pd.DataFrame(rows).sample(frac=1.0, random_state=3)
    other = frame.assign(k=k + 1, accuracy=0.0)
    return pd.concat([frame, other, frame.assign(model="decision_tree")])


def test_paired_differences_builds_the_repeat_by_fold_grid():
    a = [[0.80 + 0.01 * i, 0.81 + 0.01 * i] for i in range(5)]
    b = [[0.70 + 0.02 * i, 0.75] for i in range(5)]
    grid = paired_differences(
        _rows(a, b), "kactus", "mondrian", k=5, model="naive_bayes"
    )
    expected = [[a[i][j] - b[i][j] for j in range(2)] for i in range(5)]
    assert grid.shape == (5, 2)
    np.testing.assert_allclose(grid, expected, rtol=0, atol=1e-12)
    result = combined_5x2cv_f_test(grid)
    assert result.statistic == pytest.approx(_f_by_hand(expected), rel=1e-12)


def test_paired_differences_rejects_unpaired_folds():
    a = [[0.8, 0.8]] * 5
    rows = _rows(a, a)
    drop = (
        (rows["algorithm"] == "mondrian") & (rows["repeat"] == 4) & (rows["fold"] == 1)
    )
    with pytest.raises(InvalidParameterError, match="same \\(repeat, fold\\)"):
        paired_differences(rows[~drop], "kactus", "mondrian", k=5, model="naive_bayes")


def test_paired_differences_rejects_an_absent_algorithm():
    rows = _rows([[0.8, 0.8]] * 5, [[0.7, 0.7]] * 5)
    with pytest.raises(InvalidParameterError, match="no rows for algorithm='tdr'"):
        paired_differences(rows, "kactus", "tdr", k=5, model="naive_bayes")
