"""Re-identification risk: prosecutor, journalist, marketer."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.exceptions import InvalidParameterError
from ppdm.privacy import risk as risk_module
from ppdm.privacy.risk import population_class_sizes, reidentification_risk


def test_prosecutor_risk_known_answer():
    release = pd.DataFrame({"age": ["[20, 29]"] * 6 + ["[30, 39]"] * 3 + ["*"]})
    r = reidentification_risk(release, ["age"])
    assert r.prosecutor_max == 1.0
    assert r.prosecutor_average == pytest.approx(3 / 10)
    # classes of 3 and 1 are below 5 rows
    assert r.prosecutor_records_at_risk == pytest.approx(4 / 10)
    half = reidentification_risk(release, ["age"], threshold=0.5)
    assert half.prosecutor_records_at_risk == pytest.approx(0.1)
    assert r.journalist_max is None and r.marketer is None


def test_population_risk_with_ranges_sets_and_suppression():
    release = pd.DataFrame(
        {
            "age": ["[20, 29]"] * 3 + ["[30, 39]"] * 2,
            "job": ["{a|b}"] * 3 + ["*"] * 2,
        }
    )
    population = pd.DataFrame(
        {
            "age": [20, 21, 25, 29, 29, 33, 35, 38, 40, 31],
            "job": ["a", "b", "a", "c", "b", "a", "c", "c", "a", "b"],
        }
    )
    r = reidentification_risk(release, ["age", "job"], population=population)
    # [20,29] x {a|b}: 20a 21b 25a 29b -> F=4; [30,39] x *: 33 35 38 31 -> F=4
    assert r.journalist_max == pytest.approx(1 / 4)
    assert r.journalist_records_at_risk == pytest.approx(1.0)
    assert r.marketer == pytest.approx((3 / 4 + 2 / 4) / 5)
    assert r.classes_not_in_population == 0


def test_missing_values_match_empty_cells_and_empty_set_members():
    release = pd.DataFrame({"country": ["{|Poland}", "{|Poland}", "", "Cuba"]})
    population = pd.DataFrame({"country": [None, "Poland", "Poland", None, "Cuba"]})
    r = reidentification_risk(release, ["country"], population=population)
    # {|Poland} covers the 2 missing and the 2 Poland; "" covers the 2 missing
    assert r.classes_not_in_population == 0
    assert r.marketer == pytest.approx((2 / 4 + 1 / 2 + 1 / 1) / 4)


def test_unmatched_population_is_flagged_not_divided_by_zero():
    release = pd.DataFrame({"job": ["x", "x", "y"]})
    population = pd.DataFrame({"job": ["x", "x", "x"]})
    r = reidentification_risk(release, ["job"], population=population)
    assert r.classes_not_in_population == 1
    assert r.journalist_max == 1.0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 9), st.sampled_from("abc")), min_size=1, max_size=30
    ),
    st.lists(
        st.sampled_from(["[0, 4]", "[5, 9]", "[0, 9]", "*", "[3, 6]"]),
        min_size=1,
        max_size=6,
    ),
)
def test_population_counts_equal_brute_force(pop_rows, cells):
    """Both the global-recoding path and the general path match a row loop."""
    population = pd.DataFrame(pop_rows, columns=["age", "job"])
    keys = pd.DataFrame(
        {"age": cells, "job": ["*" if i % 2 else "{a|b}" for i in range(len(cells))]}
    ).drop_duplicates(ignore_index=True)

    def covered(cell, value):
        if cell == "*":
            return True
        if cell.startswith("{"):
            return value in cell[1:-1].split("|")
        lo, hi = (int(x) for x in cell[1:-1].split(", "))
        return lo <= value <= hi

    expected = [
        sum(covered(a, x) and covered(j, y) for x, y in pop_rows)
        for a, j in keys.itertuples(index=False)
    ]
    assert list(population_class_sizes(keys, population)) == expected


def test_work_limit_reports_a_note(monkeypatch):
    release = pd.DataFrame({"age": ["[0, 5]", "[3, 9]"]})
    population = pd.DataFrame({"age": np.arange(10)})
    monkeypatch.setattr(risk_module, "MAX_COVERAGE_WORK", 1)
    r = reidentification_risk(release, ["age"], population=population)
    assert r.marketer is None and "work limit" in r.population_note


def test_bad_threshold():
    with pytest.raises(InvalidParameterError, match="threshold"):
        reidentification_risk(pd.DataFrame({"a": ["x"]}), ["a"], threshold=0)


def test_hierarchy_labels_are_read_through_covers():
    from ppdm.privacy.risk import reidentification_risk

    released = pd.DataFrame({"marital": ["Married"] * 2 + ["Single"] * 2})
    population = pd.DataFrame(
        {
            "marital": [
                "Married-civ",
                "Married-AF",
                "Married-civ",
                "Never",
                "Never",
                "Divorced",
            ]
        }
    )
    blind = reidentification_risk(released, ["marital"], population=population)
    assert blind.classes_not_in_population == 2
    assert "hierarchy labels" in blind.population_note
    covers = {
        "marital": {
            "Married": ("Married-civ", "Married-AF"),
            "Single": ("Never", "Divorced"),
        }
    }
    read = reidentification_risk(
        released, ["marital"], population=population, covers=covers
    )
    assert read.classes_not_in_population == 0 and read.population_note is None
    # Population classes of 3 and 3: journalist 1/3; marketer (1/n) sum f/F = 1/3.
    assert read.journalist_max == pytest.approx(1 / 3)
    assert read.marketer == pytest.approx((2 / 3 + 2 / 3) / 4)
