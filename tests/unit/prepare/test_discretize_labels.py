"""Cut points and interval labels carry no more decimals than the data needs."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from ppdm.prepare.discretize import discretize, fit_cut_points, interval_labels
from ppdm.values import parse_cell


def _decimals(text: str) -> int:
    return max((len(m) for m in re.findall(r"\.(\d+)", text)), default=0)


@pytest.mark.parametrize("decimals", [0, 1, 2, 4])
@pytest.mark.parametrize("method", ["mdl", "equal-frequency"])
def test_labels_have_at_most_one_decimal_more_than_the_data(decimals, method):
    rng = np.random.default_rng(decimals)
    n = 400
    values = np.round(rng.uniform(0, 60, n), decimals)
    target = np.where(values + rng.normal(0, 5, n) > 30, "yes", "no")
    table = pd.DataFrame({"x": values, "y": target})
    result = discretize(table, ["x"], "y", method=method, n_bins=5)
    cuts = result.cut_points["x"]
    assert cuts, "the column was cut"
    for label in interval_labels(cuts):
        assert _decimals(label) <= decimals + 1, label
        cell = parse_cell(label)
        assert cell.kind == "interval"  # the verifier's grammar reads it back
    # every row falls in the labelled interval its value belongs to
    for value, label in zip(values, result.table["x"]):
        cell = parse_cell(label)
        assert cell.low <= value < cell.high


def test_a_float_tail_is_cut_without_moving_any_row():
    # 7.15 / 2 + 7.1514 / 2 is 7.1507000000000005 in binary floating point
    values = pd.Series([7.15] * 5 + [7.1514] * 5, name="x")
    target = pd.Series(["a"] * 5 + ["b"] * 5)
    assert fit_cut_points(values, target).tolist() == [7.1507]
    assert interval_labels([7.1507]) == ["< 7.1507", ">= 7.1507"]
