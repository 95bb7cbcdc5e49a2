"""Released cells -> features on the original schema."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.exceptions import InvalidParameterError
from ppdm.prepare.discretize import apply_cut_points
from ppdm.utility.features import CellFeaturizer


@pytest.fixture()
def original() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [20, 30, 40, 60],
            "colour": pd.array(["a", "b", "c", "a"], dtype="string"),
            "y": ["p", "n", "p", "n"],
        }
    )


def test_set_gives_fractional_membership_and_range_its_midpoint(original):
    released = pd.DataFrame(
        {
            "age": ["[20, 30]", "*", "< 30", ">= 50", "", "45"],
            "colour": ["{a|b}", "*", "c", "{a|b|z}", None, "zzz"],
            "y": ["p"] * 6,
        }
    )
    featurizer = CellFeaturizer(exclude=["y"]).fit(original)
    assert featurizer.feature_names_ == ["age", "colour=a", "colour=b", "colour=c"]
    assert featurizer.blocks_ == [("numeric", 0, 1), ("onehot", 1, 4)]
    x = featurizer.transform(released).toarray()
    # ranges: midpoint; open ends clipped to the observed range [20, 60]
    np.testing.assert_allclose(x[:, 0], [25.0, np.nan, 25.0, 55.0, np.nan, 45.0])
    np.testing.assert_allclose(
        x[:, 1:],
        [
            [0.5, 0.5, 0.0],
            [0.0, 0.0, 0.0],
            [0.0, 0.0, 1.0],
            [1 / 3, 1 / 3, 0.0],  # z is outside the domain but still in |set|
            [0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0],
        ],
    )


def test_original_rows_are_exact_one_hot(original):
    featurizer = CellFeaturizer(exclude=["y"]).fit(original)
    x = featurizer.transform(original).toarray()
    np.testing.assert_array_equal(x[:, 0], [20, 30, 40, 60])
    np.testing.assert_array_equal(x[:, 1:].sum(axis=1), 1.0)
    np.testing.assert_array_equal(x[:, 1:].argmax(axis=1), [0, 1, 2, 0])


def test_missing_column_counts_as_suppressed(original):
    featurizer = CellFeaturizer(exclude=["y"]).fit(original)
    x = featurizer.transform(original.drop(columns=["colour"])).toarray()
    np.testing.assert_array_equal(x[:, 1:], 0.0)


def test_discretized_intervals_become_ordered_midpoints():
    raw = pd.DataFrame({"age": [18, 25, 35, 70]})
    table = apply_cut_points(raw, {"age": [21.5, 30.5]})
    featurizer = CellFeaturizer().fit(table)
    x = featurizer.transform(table).toarray()[:, 0]
    # finite span 21.5..30.5 (9): open ends placed one span out
    np.testing.assert_allclose(x, [17.0, 26.0, 35.0, 35.0])
    assert np.all(np.diff(np.unique(x)) > 0)
    released = pd.DataFrame({"age": ["[21.5, 30.5)", "*", "{< 21.5|[21.5, 30.5)}"]})
    np.testing.assert_allclose(
        featurizer.transform(released).toarray()[:, 0], [26.0, np.nan, 21.5]
    )


def test_transform_before_fit_fails(original):
    with pytest.raises(InvalidParameterError, match="not fitted"):
        CellFeaturizer().transform(original)


def test_suppressed_may_be_read_as_the_whole_domain(original):
    featurizer = CellFeaturizer(exclude=["y"], suppressed="uniform").fit(original)
    x = featurizer.transform(pd.DataFrame({"age": ["*"], "colour": ["*"]})).toarray()
    np.testing.assert_allclose(x[0, 1:], [1 / 3] * 3)
