"""A value failing a rule reads the same whether pandera or Great Expectations found it."""

from __future__ import annotations

import pandera.pandas as pa
import pytest

from ppdm.prepare.failure_reasons import gx_reason, pandera_reason


@pytest.mark.parametrize(
    ("check", "kind", "kwargs", "expected"),
    [
        (
            pa.Check.isin(["b", "a"]),
            "expect_column_values_to_be_in_set",
            {"value_set": ["a", "b"]},
            "'x' is not one of {a, b}",
        ),
        (
            pa.Check.notin(["x"]),
            "expect_column_values_to_not_be_in_set",
            {"value_set": ["x"]},
            "'x' is a forbidden value",
        ),
        (
            pa.Check.str_matches(r"^\d+$"),
            "expect_column_values_to_match_regex",
            {"regex": r"^\d+$"},
            "'x' does not match '^\\\\d+$'",
        ),
    ],
)
def test_the_same_rule_reads_the_same_in_both_libraries(check, kind, kwargs, expected):
    from_pandera = pandera_reason(check, f"{check.name}(...)", "x")
    assert from_pandera == expected
    assert gx_reason(kind, kwargs, "x") == expected


def test_comparisons_and_ranges_name_the_bound():
    assert pandera_reason(pa.Check.ge(3), "greater_than_or_equal_to(3)", 2.0) == (
        "2 is not >= 3"
    )
    assert pandera_reason(pa.Check.in_range(0, 1, include_max=False), "r", 1) == (
        "1 is not in [0, 1)"
    )
    assert gx_reason(
        "expect_column_values_to_be_between", {"min_value": 0, "max_value": None}, -1
    ) == ("-1 is not >= 0")
    assert pandera_reason(None, "field_uniqueness", "a") == "'a' is a duplicate"
