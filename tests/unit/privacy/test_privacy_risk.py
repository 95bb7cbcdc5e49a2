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


# -- an owner's table: dates in a national format, zips with leading zeros ----

_BIRTHS = [
    f"{d:02d}.{m:02d}.{y}" for y in (1961, 1962) for m in (1, 2, 12) for d in (1, 28)
]
_ZIPS = ["01001", "01017", "01102", "02134", "0101"]
_DATE_CELLS = [
    "[1961-01-01, 1961-02-28]",
    "[1961-12-01, 1962-01-31]",
    "[1962-02-01, 1962-12-31]",
    "[1961-01-01, 1962-12-31]",
    "{[1961-01-01, 1961-01-31]|[1962-12-01, 1962-12-31]}",
    "*",
]
_ZIP_CELLS = ["010**", "01001", "0****", "011**", "{01017|02134}", "*", "0101*"]
_STAY_CELLS = ["< 3.5", "[3.5, 7)", ">= 7", "(-inf, 3.5)", "[0, 9]", "{< 2|[5, 6]}"]


def _reference_covers(cell: str, value: object) -> bool:
    """An independent reading of a released cell, one population value at a time."""
    from datetime import date

    if cell == "*":
        return True
    if cell.startswith("{"):
        return any(_reference_covers(m, value) for m in cell[1:-1].split("|"))
    if isinstance(value, str) and "." in value:  # a birth date, DD.MM.YYYY
        day, month, year = (int(x) for x in value.split("."))
        low, high = (date.fromisoformat(x) for x in cell[1:-1].split(", "))
        return low <= date(year, month, day) <= high
    if isinstance(value, str):  # a zip code
        prefix = cell.rstrip("*")
        return value == cell or (
            cell != prefix
            and value.startswith(prefix)
            and len(prefix) < len(value)
            and len(value) <= len(cell)
        )
    if cell.startswith("<") or cell.startswith(">"):
        op, number = cell.split(" ")
        bound = float(number)
        return {"<": value < bound, "<=": value <= bound, ">": value > bound,
                ">=": value >= bound}[op]  # fmt: skip
    if cell[0] not in "[(":  # a number released as itself
        return float(cell) == value
    low, high = (float(x) for x in cell[1:-1].split(", "))
    above = value >= low if cell[0] == "[" else value > low
    below = value <= high if cell[-1] == "]" else value < high
    return above and below


def _open_ends_read() -> bool:
    """Whether the grammar reads ``< 3.5`` as an interval (see ppdm.values)."""
    from ppdm.values import parse_cell

    return parse_cell("< 3.5").kind == "interval"


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_BIRTHS), st.sampled_from(_ZIPS), st.integers(0, 9)),
        min_size=1,
        max_size=40,
    ),
    st.lists(
        st.tuples(
            st.sampled_from(_DATE_CELLS),
            st.sampled_from(_ZIP_CELLS),
            st.sampled_from(_STAY_CELLS),
        ),
        min_size=1,
        max_size=8,
        unique=True,
    ),
)
def test_dates_codes_and_numbers_counted_as_a_row_by_row_reading(pop_rows, cells):
    """Date ranges over national dates, zip masks and intervals: F_j as a row loop."""
    if not _open_ends_read():
        cells = [(d, z, s) for d, z, s in cells if s[0] in "[(" or s == "*"]
        cells = cells or [("*", "*", "*")]
    population = pd.DataFrame(pop_rows, columns=["birth", "zip", "stay"])
    keys = pd.DataFrame(cells, columns=["birth", "zip", "stay"])
    expected = [
        sum(
            _reference_covers(b, x) and _reference_covers(z, y)
            and _reference_covers(s, w)
            for x, y, w in pop_rows
        )
        for b, z, s in cells
    ]  # fmt: skip
    assert list(population_class_sizes(keys, population)) == expected
    # the same counts through the global-recoding path: one cell per class
    # and column, each covering its own values only
    one = keys.iloc[[0]]
    assert list(population_class_sizes(one, population)) == expected[:1]


def test_a_mondrian_release_of_dates_and_zips_is_found_in_its_population():
    """Every class of a release with date ranges and zip masks has its population."""
    rng = np.random.default_rng(5)
    n = 2_000
    days = rng.integers(0, 365 * 40, n)
    birth = pd.to_datetime("1940-01-01") + pd.to_timedelta(days, unit="D")
    population = pd.DataFrame(
        {
            "birth": birth.strftime("%d/%m/%Y"),
            "zip": [f"{z:05d}" for z in rng.integers(1000, 3000, n)],
            "stay": rng.integers(0, 30, n),
        }
    )
    # a local recoding by hand: classes of 5 consecutive birth dates, each
    # released as the whole months they span, with the zips' common prefix
    order = np.argsort(days, kind="stable")
    released = population.iloc[order].reset_index(drop=True).copy()
    group = np.arange(n) // 5
    when = pd.to_datetime(released["birth"], format="%d/%m/%Y")
    first = when.groupby(group).transform("min").dt.strftime("%Y-%m-01")
    last = (when.groupby(group).transform("max") + pd.offsets.MonthEnd(0)).dt.strftime(
        "%Y-%m-%d"
    )
    released["birth"] = "[" + first + ", " + last + "]"
    low = released["zip"].groupby(group).transform("min")
    high = released["zip"].groupby(group).transform("max")
    common = [next((i for i in range(5) if a[i] != b[i]), 5) for a, b in zip(low, high)]
    released["zip"] = [a[:c] + "*" * (5 - c) for a, c in zip(low, common)]
    released["stay"] = "*"
    r = reidentification_risk(released, ["birth", "zip", "stay"], population=population)
    assert r.classes_not_in_population == 0 and r.population_note is None
    # each class's own rows are in its population, and overlapping ranges add more
    assert r.journalist_max <= r.prosecutor_max
    assert 0 < r.marketer <= r.prosecutor_average


@pytest.mark.parametrize("seed", range(4))
def test_ranges_spanning_many_words_of_rows_count_as_a_row_loop(seed):
    """Hundreds of rows: a range's rows span several 64-bit words of the bitsets."""
    from datetime import date, timedelta

    rng = np.random.default_rng(seed)
    n = 700
    start = date(1950, 1, 1)
    births = [start + timedelta(days=int(d)) for d in rng.integers(0, 3650, n)]
    population = pd.DataFrame(
        {
            "birth": [b.strftime("%d.%m.%Y") for b in births],
            "stay": rng.integers(0, 40, n),
        }
    )
    cells = []
    for _ in range(60):
        lo, hi = sorted(rng.integers(0, 3650, 2))
        low = start + timedelta(days=int(lo))
        high = start + timedelta(days=int(hi))
        a, b = sorted(rng.integers(0, 40, 2))
        stay = rng.choice([f"[{a}, {b}]", f"[{a}, {b})", "*", f"{{[{a}, {b}]|39}}"])
        cells.append((f"[{low.isoformat()}, {high.isoformat()}]", str(stay)))
    keys = pd.DataFrame(cells, columns=["birth", "stay"]).drop_duplicates()
    expected = [
        sum(
            _reference_covers(c_birth, x) and _reference_covers(c_stay, y)
            for x, y in zip(population["birth"], population["stay"], strict=True)
        )
        for c_birth, c_stay in keys.itertuples(index=False)
    ]
    assert list(population_class_sizes(keys, population)) == expected
