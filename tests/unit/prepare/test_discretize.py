"""Tests of ppdm.prepare.discretize: known answers, a slow Fayyad-Irani cross-check."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ppdm.exceptions import InvalidParameterError
from ppdm.model import AttributeKind, attribute_kind
from ppdm.prepare.discretize import (
    Discretization,
    apply_cut_points,
    discretize,
    fit_cut_points,
    interval_labels,
)

# --------------------------------------------------------------------------
# A slow, straightforward Fayyad & Irani (1993) written from the paper: try
# every cut between two distinct values, keep the lowest class-information
# entropy, accept it when the MDL condition holds, recurse on both halves.


def _ent(labels: list) -> float:
    n = len(labels)
    return -sum(c / n * math.log2(c / n) for c in Counter(labels).values())


def slow_mdl(values: list[float], labels: list) -> list[float]:
    pairs = sorted(zip(values, labels), key=lambda p: p[0])
    return sorted(_slow_split(pairs))


def _slow_split(pairs: list) -> list[float]:
    n = len(pairs)
    labels = [y for _, y in pairs]
    best = None
    for i in range(1, n):
        if pairs[i - 1][0] == pairs[i][0]:
            continue
        left, right = labels[:i], labels[i:]
        e = (len(left) * _ent(left) + len(right) * _ent(right)) / n
        if best is None or e < best[0] - 1e-12:
            best = (e, i)
    if best is None:
        return []
    e, i = best
    left, right = labels[:i], labels[i:]
    ent_s, ent_1, ent_2 = _ent(labels), _ent(left), _ent(right)
    k, k1, k2 = len(set(labels)), len(set(left)), len(set(right))
    delta = math.log2(3**k - 2) - (k * ent_s - k1 * ent_1 - k2 * ent_2)
    if ent_s - e <= (math.log2(n - 1) + delta) / n:
        return []
    cut = (pairs[i - 1][0] + pairs[i][0]) / 2
    return [cut, *_slow_split(pairs[:i]), *_slow_split(pairs[i:])]


# --------------------------------------------------------------------- MDL


def test_mdl_separable_column_gets_exactly_the_separating_cut():
    values = pd.Series(np.arange(1, 11), name="x")
    labels = pd.Series(["a"] * 5 + ["b"] * 5)
    assert fit_cut_points(values, labels).tolist() == [5.5]


def test_mdl_noise_with_few_rows_gets_no_cut():
    values = pd.Series(np.arange(1, 9), name="x")
    labels = pd.Series(list("abababab"))
    assert fit_cut_points(values, labels).tolist() == []


def test_mdl_three_blocks_gets_two_cuts():
    values = pd.Series(np.arange(60, dtype=float), name="x")
    labels = pd.Series(["a"] * 20 + ["b"] * 20 + ["a"] * 20)
    assert fit_cut_points(values, labels).tolist() == [19.5, 39.5]


def test_mdl_ignores_missing_values_and_missing_labels():
    values = pd.Series([1, 2, 3, np.nan, 4, 5, 6, 7, 8, 9, 10], name="x")
    labels = pd.Series(["a"] * 3 + ["b"] + ["a"] * 2 + [None] + ["b"] * 4)
    # kept: 1..5 -> a, 7..10 -> b (NaN value and value 6's missing label
    # dropped), so the cut is halfway between 5 and 7
    assert fit_cut_points(values, labels).tolist() == [6.0]


@pytest.mark.parametrize("trial", range(40))
def test_mdl_matches_slow_reference_on_random_data(trial):
    rng = np.random.default_rng(trial)
    n = int(rng.integers(10, 160))
    n_classes = int(rng.integers(2, 4))
    distinct = int(rng.integers(3, 40))
    values = rng.integers(0, distinct, size=n).astype(float)
    # labels depend on the value through random thresholds, plus noise
    thresholds = np.sort(rng.uniform(0, distinct, size=n_classes - 1))
    labels = np.searchsorted(thresholds, values)
    noise = rng.random(n) < rng.uniform(0.0, 0.4)
    labels[noise] = rng.integers(0, n_classes, size=int(noise.sum()))
    labels = np.array([f"c{v}" for v in labels])
    fast = fit_cut_points(pd.Series(values, name="x"), pd.Series(labels))
    slow = slow_mdl(values.tolist(), labels.tolist())
    assert fast.tolist() == pytest.approx(slow)


def test_mdl_needs_a_target():
    with pytest.raises(InvalidParameterError, match="needs a target"):
        fit_cut_points(pd.Series([1.0, 2.0], name="x"), None)


# ---------------------------------------------------------- equal frequency


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(
        st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=200, unique=True
    ),
    n_bins=st.integers(1, 12),
)
@example(values=[0.0, 5e-324], n_bins=2)  # adjacent floats: the midpoint is 0.0
def test_equal_frequency_bins_within_one_on_distinct_values(values, n_bins):
    series = pd.Series(values, name="x")
    cuts = fit_cut_points(series, None, method="equal-frequency", n_bins=n_bins)
    assert np.all(np.diff(cuts) > 0)
    counts = np.bincount(
        np.searchsorted(cuts, series.to_numpy(), side="right"), minlength=len(cuts) + 1
    )
    assert len(counts) == min(n_bins, len(values))
    assert counts.max() - counts.min() <= 1


def test_equal_frequency_never_splits_equal_values():
    series = pd.Series([1, 1, 1, 1, 1, 1, 2, 3], name="x")
    cuts = fit_cut_points(series, None, method="equal-frequency", n_bins=4)
    assert 1.0 not in cuts
    assert set(cuts) <= {1.5, 2.5}


# --------------------------------------------------------------- discretize


def _table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": pd.array([18, 19, 20, 21, 40, 45, 50, 55, None, 60], dtype="Int64"),
            "hours": [40.0] * 10,
            "city": pd.array(list("abcabcabca"), dtype="string"),
            "income": ["lo"] * 4 + ["hi"] * 6,
        }
    )


def test_discretize_builds_ordered_interval_categories():
    table = _table()
    before = table.copy(deep=True)
    result = discretize(table, ["age", "hours"], "income")
    assert isinstance(result, Discretization)
    pd.testing.assert_frame_equal(table, before)  # input untouched
    assert result.cut_points == {"age": [30.5], "hours": []}
    json.dumps(result.cut_points)
    age = result.table["age"]
    assert attribute_kind(age) is AttributeKind.ORDINAL
    assert list(age.cat.categories) == ["< 30.5", ">= 30.5"]
    assert age.isna().tolist() == [False] * 8 + [True, False]
    assert age.iloc[0] == "< 30.5" and age.iloc[4] == ">= 30.5"
    assert list(result.table["hours"].cat.categories) == ["(-inf, inf)"]
    pd.testing.assert_series_equal(result.table["city"], table["city"])


def test_interval_labels_follow_the_value_grammar():
    assert interval_labels([21.5, 30.5]) == [
        "< 21.5",
        "[21.5, 30.5)",
        ">= 30.5",
    ]
    assert interval_labels([]) == ["(-inf, inf)"]


def test_value_on_a_cut_opens_the_next_bin():
    table = pd.DataFrame({"x": [1.0, 2.0, 3.0]})
    out = apply_cut_points(table, {"x": [2.0]})
    assert out["x"].tolist() == ["< 2", ">= 2", ">= 2"]


def test_apply_cut_points_reproduces_the_fitted_table():
    rng = np.random.default_rng(1)
    table = pd.DataFrame({"x": rng.normal(size=300), "y": rng.integers(0, 2, 300)})
    table["y"] = np.where(table["x"] + rng.normal(0, 0.3, 300) > 0, "p", "n")
    fitted = discretize(table, ["x"], "y")
    assert len(fitted.cut_points["x"]) >= 1
    again = apply_cut_points(table, fitted.cut_points)
    pd.testing.assert_frame_equal(again, fitted.table)


def test_non_numeric_column_is_rejected_by_name():
    with pytest.raises(InvalidParameterError, match="'city'"):
        discretize(_table(), ["age", "city"], "income")


def test_all_missing_column_cannot_be_binned():
    table = _table().assign(empty=pd.array([None] * 10, dtype="Float64"))
    with pytest.raises(InvalidParameterError, match="'empty' cannot be binned"):
        discretize(table, ["empty"], "income")


def test_equal_frequency_method_and_bad_method():
    table = pd.DataFrame({"x": np.arange(10.0), "y": ["a"] * 10})
    result = discretize(table, ["x"], None, method="equal-frequency", n_bins=2)
    assert result.cut_points == {"x": [4.5]}
    with pytest.raises(InvalidParameterError, match="method"):
        discretize(table, ["x"], "y", method="kmeans")


def test_target_may_be_given_as_labels():
    table = _table()
    by_name = discretize(table, ["age"], "income")
    by_labels = discretize(table.drop(columns=["income"]), ["age"], table["income"])
    assert by_labels.cut_points == by_name.cut_points
    pd.testing.assert_series_equal(by_labels.table["age"], by_name.table["age"])


def test_equal_frequency_cuts_integer_data_whose_values_all_repeat():
    # Ages as a census has them: every value repeats, so every rank position
    # falls inside a run of equal values; the cut moves to the run's edge.
    ages = pd.Series(np.repeat(np.arange(1, 11), 30), name="age")
    cuts = fit_cut_points(ages, None, method="equal-frequency", n_bins=5)
    assert cuts.tolist() == [2.5, 4.5, 6.5, 8.5]


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 8),
    st.lists(st.integers(1, 40), min_size=8, max_size=40, unique=True),
    st.integers(0, 2**32 - 1),
)
def test_equal_frequency_makes_every_bin_when_runs_are_short(n_bins, distinct, seed):
    rng = np.random.default_rng(seed)
    repeats = rng.integers(1, 4, len(distinct))
    values = pd.Series(np.repeat(np.array(distinct, dtype=float), repeats))
    n, longest = len(values), int(repeats.max())
    if n / n_bins <= 2 * longest:  # a bin narrower than two runs may merge
        return
    cuts = fit_cut_points(values, None, method="equal-frequency", n_bins=n_bins)
    assert len(cuts) == n_bins - 1
    sizes = np.bincount(np.searchsorted(cuts, values.to_numpy(), side="right"))
    assert np.abs(sizes - n / n_bins).max() <= longest
