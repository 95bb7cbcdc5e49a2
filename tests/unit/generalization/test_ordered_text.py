"""Dates and codes kept as text: recognised on the whole column, ordered, and
released as ranges and masks (never a member's exact date, never a full code
in a set); their generated hierarchies cover every value with equal depth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.algorithms.mondrian import Mondrian
from ppdm.generalization.hierarchies import Hierarchy
from ppdm.generalization.ordered_text import date_format, text_kind
from ppdm.model import AnonymizationSpec
from ppdm.prepare.profile import propose_hierarchy
from ppdm.values import SUPPRESSED


@pytest.mark.parametrize(
    ("fmt", "values"),
    [
        ("%Y-%m-%d", ["1961-03-04", "1970-12-31", "2001-07-15"]),
        ("%d.%m.%Y", ["04.03.1961", "31.12.1970", "15.07.2001"]),
        ("%d/%m/%Y", ["04/03/1961", "31/12/1970", "15/07/2001"]),
        ("%m/%d/%Y", ["03/04/1961", "12/31/1970", "07/15/2001"]),
    ],
)
def test_a_date_format_is_read_from_the_whole_column(fmt, values):
    # the day above 12 that tells DD/MM from MM/DD is in the last row only
    column = pd.Series([values[0]] * 500 + values[1:], dtype="string")
    assert date_format(column) == fmt
    assert date_format(pd.Series(values * 30 + ["not a date"])) == fmt  # one malformed
    assert date_format(pd.Series(values + ["x", "y"])) is None  # mostly not dates


def test_codes_are_digit_text_with_leading_zeros_or_of_one_length():
    assert text_kind(pd.Series(["01001", "02134", "10115"] * 10)).kind == "code"
    assert text_kind(pd.Series(["7", "12", "30"] * 10)) is None  # counts as text
    assert text_kind(pd.Series(["E11.9", "I10", "K21.9"] * 10)) is None
    assert text_kind(pd.Series([1001, 2134, 10115])) is None  # numbers are numbers


def test_mondrian_releases_dates_as_ranges_and_codes_masked():
    rng = np.random.default_rng(3)
    n = 400
    birth = pd.Timestamp("1940-01-01") + pd.to_timedelta(
        rng.integers(0, 365 * 60, n), unit="D"
    )
    table = pd.DataFrame(
        {
            "birth": pd.array(birth.strftime("%d.%m.%Y"), dtype="string"),
            "zip": pd.array(
                [f"{z:05d}" for z in rng.choice(np.arange(1001, 1061), n)],
                dtype="string",
            ),
            "sex": pd.array(rng.choice(["F", "M"], n), dtype="string"),
            "y": rng.choice(["a", "b"], n),
        }
    )
    spec = AnonymizationSpec.of(
        quasi_identifiers=["birth", "zip", "sex"],
        sensitive_attribute=None,
        target="y",
        k=5,
    )
    release = Mondrian().anonymize(table, spec, np.random.default_rng(0))
    out = release.table
    dates = out["birth"].astype(str)
    assert not dates.isin(set(table["birth"])).any()  # no source date
    assert dates.str.fullmatch(r"\[\d{4}-\d{2}-\d{2}, \d{4}-\d{2}-\d{2}\]").all()
    for cell in dates.unique():  # the range covers exactly its members' dates
        low, high = (pd.Timestamp(t) for t in cell[1:-1].split(", "))
        members = pd.to_datetime(table["birth"][dates == cell], format="%d.%m.%Y")
        assert low <= members.min() and members.max() <= high
        assert low.day == 1 and high == high + pd.offsets.MonthEnd(0)  # months
    zips = out["zip"].astype(str)
    assert not zips.str.startswith("{").any()  # never a set of full codes
    for cell in zips.unique():
        members = set(table["zip"][zips == cell])
        if len(members) > 1:
            assert cell.endswith("*") and all(
                m.startswith(cell.rstrip("*")) for m in members
            )


_DAYS = st.integers(min_value=0, max_value=365 * 120)


@settings(max_examples=40, deadline=None)
@given(
    days=st.lists(_DAYS, min_size=1, max_size=60),
    fmt=st.sampled_from(["%Y-%m-%d", "%d.%m.%Y", "%d/%m/%Y", "%m/%d/%Y"]),
)
def test_a_date_columns_hierarchy_covers_every_value_with_equal_depth(days, fmt):
    when = pd.Timestamp("1910-01-01") + pd.to_timedelta(days, unit="D")
    column = pd.Series(list(when.strftime(fmt)) * 20, name="d", dtype="string")
    plan = propose_hierarchy(column)
    assert plan.kind == "levels", plan.summary
    hierarchy = Hierarchy.from_rows("d", plan.rows, source="generated")
    rows = {row[0]: row for row in plan.rows}
    assert set(rows) == set(column)  # every value covered
    assert {len(row) for row in plan.rows} == {6}  # equal depth
    detected = date_format(column)
    if detected != fmt:  # MM/DD with no day above 12 reads as DD/MM too
        assert (fmt, detected) == ("%m/%d/%Y", "%d/%m/%Y") and max(when.day) <= 12
    for value in column:
        day = pd.to_datetime(value, format=detected)
        row = rows[value]
        # day, month, quarter, year, decade, root: by calendar
        assert row[1:] == (
            f"{day:%Y-%m}",
            f"{day.year}-Q{day.quarter}",
            str(day.year),
            f"{day.year // 10 * 10}-{day.year // 10 * 10 + 9}",
            SUPPRESSED,
        )
    assert hierarchy.height == 5
    months = pd.to_datetime(column, format=detected).dt.strftime("%Y-%m")
    assert (hierarchy.generalize(column, 1) == months).all()


def test_a_code_columns_hierarchy_masks_one_digit_a_level():
    column = pd.Series(["01001", "01002", "01017", "02134"] * 20, name="zip")
    plan = propose_hierarchy(column)
    assert dict((r[0], r) for r in plan.rows)["01001"] == (
        "01001", "0100*", "010**", "01***", "0****", SUPPRESSED,
    )  # fmt: skip
    Hierarchy.from_rows("zip", plan.rows, source="generated")


@settings(max_examples=40, deadline=None)
@given(
    days=st.lists(_DAYS, min_size=2, max_size=60, unique=True),
    fmt=st.sampled_from(["%Y-%m-%d", "%d.%m.%Y", "%d/%m/%Y"]),
    cuts=st.lists(st.integers(min_value=0, max_value=59), max_size=8),
)
def test_the_summary_of_a_groups_ends_is_the_summary_of_its_members(days, fmt, cuts):
    """Mondrian formats a run of ordered dates from its ends: the same cell."""
    labels = (pd.Timestamp("1900-01-01") + pd.to_timedelta(days, unit="D")).strftime(
        fmt
    )
    kind = text_kind(pd.Series(list(labels) * 3))
    order = kind.sort_keys(list(labels))
    ordered = [labels[i] for i in order]
    assert kind.summarised_by_ends(ordered)
    bounds = sorted({0, len(ordered), *(c for c in cuts if c < len(ordered))})
    first = np.array(bounds[:-1])
    last = np.array(bounds[1:]) - 1
    fast = kind.summaries_of_ends(ordered, first, last)
    slow = [kind.summary(ordered[a : b + 1]) for a, b in zip(first, last)]
    assert fast == slow


def test_codes_of_one_length_are_summarised_by_their_ends_and_mixed_lengths_are_not():
    kind = text_kind(pd.Series(["01001", "01002", "01017", "02134"] * 3))
    assert kind.summarised_by_ends(["01001", "01002", "01017", "02134"])
    assert kind.summaries_of_ends(
        ["01001", "01002", "01017", "02134"], np.array([0, 0, 3]), np.array([2, 3, 3])
    ) == ["010**", "0****", "02134"]
    assert not kind.summarised_by_ends(["1", "22"])
