"""Cut points and interval labels carry no more decimals than the data needs."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.algorithms.kactus import Kactus
from ppdm.algorithms.mondrian import Mondrian
from ppdm.model import AnonymizationSpec
from ppdm.prepare.discretize import discretize, fit_cut_points, interval_labels
from ppdm.utility.report import readable_label
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


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def _numbers(text: str) -> list[str]:
    """Every number written in a released cell (``inf`` is not one)."""
    return _NUMBER.findall(text)


@settings(max_examples=15, deadline=None)
@given(
    decimals=st.integers(0, 3),
    scale=st.sampled_from([1.0, 0.01, 100.0]),
    seed=st.integers(0, 2**16),
)
def test_no_released_or_reported_number_has_more_decimals_than_the_data(
    decimals, scale, seed
):
    # Values of the data's own precision, an attribute every release form
    # generalizes: discretized intervals (cut points between two values may
    # need one decimal more), Mondrian's ranges and kACTUS's intervals (the
    # data's values themselves), and the page that shows them.
    rng = np.random.default_rng(seed)
    n = 60
    x = np.round(rng.uniform(-50, 50, n) * scale, decimals)
    y = np.where(x + rng.normal(0, 20 * scale, n) > 0, "yes", "no")
    table = pd.DataFrame({"x": x, "c": rng.choice(["a", "b"], n), "y": y})
    spec = AnonymizationSpec.of(("x", "c"), None, "y", k=4)
    released: dict[str, list[str]] = {}
    for method in ("mdl", "equal-frequency"):
        binned = discretize(table, ["x"], "y", method=method, n_bins=4).table
        released[method] = [str(v) for v in binned["x"].astype(str)]
    for name, algorithm in {
        "mondrian": Mondrian(),
        "kactus-c45": Kactus(numeric_release="interval"),
        "kactus-sklearn": Kactus(numeric_release="interval", inducer="sklearn"),
    }.items():
        out = algorithm.anonymize(table, spec, np.random.default_rng(seed)).table
        released[name] = out["x"].astype(str).tolist()
    for name, cells in released.items():
        allowed = decimals + 1 if name in ("mdl", "equal-frequency") else decimals
        for text in set(cells):
            for number in _numbers(text):
                assert _decimals(number) <= allowed, (name, text)
                assert "e" not in number, (name, text)  # never 1e-05
            assert "inf" not in text or text == "(-inf, inf)", (name, text)
            assert readable_label(text) == text  # the page shows the file's label
            cell = parse_cell(text)
            assert cell.kind in ("interval", "value", "suppressed"), (name, text)
