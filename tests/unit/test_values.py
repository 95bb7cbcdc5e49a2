"""The value grammar of released cells: known answers, both ways, old forms read."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ppdm.values import canonical_label, format_interval, parse_cell

INF = math.inf


@pytest.mark.parametrize(
    "low, high, closed, text, low_closed, high_closed",
    [
        (-INF, 23.5, "left", "< 23.5", False, False),
        (-INF, 28, "right", "<= 28", False, True),
        (39.5, INF, "left", ">= 39.5", True, False),
        (30, INF, "right", "> 30", False, False),
        (20, 30, "left", "[20, 30)", True, False),
        (20, 30, "right", "(20, 30]", False, True),
        (20, 30, "both", "[20, 30]", True, True),
        (20, 30, "neither", "(20, 30)", False, False),
        (-INF, INF, "left", "(-inf, inf)", False, False),
        (-INF, -0.25, "left", "< -0.25", False, False),
        (7.1507, INF, "left", ">= 7.1507", True, False),
    ],
)
def test_every_interval_form_is_written_and_read_back(
    low, high, closed, text, low_closed, high_closed
):
    assert format_interval(low, high, closed=closed) == text
    cell = parse_cell(text)
    assert cell.kind == "interval" and cell.text == text
    assert (cell.low, cell.high) == (low, high)
    assert (cell.low_closed, cell.high_closed) == (low_closed, high_closed)


@pytest.mark.parametrize(
    "old, new",
    [
        ("(-inf, 23.5)", "< 23.5"),
        ("(-inf, 28]", "<= 28"),
        ("[39.5, inf)", ">= 39.5"),
        ("(30, inf)", "> 30"),
        ("(-inf,23.5)", "< 23.5"),
    ],
)
def test_the_bracket_form_of_earlier_releases_is_the_same_interval(old, new):
    a, b = parse_cell(old), parse_cell(new)
    assert a.kind == b.kind == "interval"
    assert (a.low, a.high, a.low_closed, a.high_closed) == (
        b.low,
        b.high,
        b.low_closed,
        b.high_closed,
    )
    assert canonical_label(old) == new
    assert canonical_label(new) == new


def test_canonical_label_rewrites_set_members_and_leaves_the_rest():
    assert canonical_label("{[30.5, inf)|(-inf, 21.5)}") == "{< 21.5|>= 30.5}"
    assert canonical_label("{[17, 21.5)|[30.5, inf)}") == "{>= 30.5|[17, 21.5)}"
    for same in (
        "*",
        "",
        "Married",
        "[17, 25]",
        "[21.5, 30.5)",
        "(-inf, inf)",
        "{a|b}",
    ):
        assert canonical_label(same) == same
    assert math.isnan(canonical_label(math.nan))  # a missing value passes through


@pytest.mark.parametrize(
    "text", ["<=50K", ">50K", "<5", "< inf", "< nan", "<  5", "< 1_000", "<= ", "≥ 5"]
)
def test_categories_that_only_look_like_comparisons_stay_values(text):
    assert parse_cell(text).kind == "value"


@given(
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.sampled_from(["left", "right", "both", "neither"]),
    st.booleans(),
)
def test_a_half_line_round_trips_exactly(bound, closed, below):
    low, high = (-INF, bound) if below else (bound, INF)
    text = format_interval(low, high, closed=closed)
    cell = parse_cell(text)
    assert cell.kind == "interval"
    assert (cell.low, cell.high) == (low, high)
    assert (
        format_interval(
            cell.low,
            cell.high,
            closed={
                (True, True): "both",
                (True, False): "left",
                (False, True): "right",
                (False, False): "neither",
            }[(cell.low_closed, cell.high_closed)],
        )
        == text
    )
