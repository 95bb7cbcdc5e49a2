"""ppdm.prepare.profile: roles guessed with reasons, the contract, generated hierarchies."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.exceptions import InvalidParameterError, SchemaMismatchError
from ppdm.generalization.hierarchies import MISSING_LABEL, Hierarchy
from ppdm.prepare.contract import build_schema, build_suite
from ppdm.prepare.profile import (
    ROLES,
    declared_bounds,
    interval_widths,
    profile_table,
    propose_hierarchy,
)
from ppdm.prepare.validation import validate_table
from ppdm.values import SUPPRESSED, format_number, parse_cell

FIRST = ["Ana", "Ben", "Cleo", "Dan", "Eva", "Finn", "Gus", "Hana", "Ida", "Jon"]
LAST = ["Smith", "Jones", "Brown", "Lee", "Khan", "Meyer", "Rossi", "Silva", "Berg"]
DIAGNOSES = ["flu", "asthma", "diabetes", "ulcer", "migraine"]
ZIPS = [f"{z:05d}" for z in range(1200, 1230)]  # leading zeros: text, not numbers

#: The roles the rules of ppdm.prepare.profile give the columns of clinic_table.
EXPECTED_ROLES = {
    "patient_id": "identifying",  # name ends in _id, distinct for every row
    "name": "identifying",  # named like an identifier
    "email": "identifying",
    "age": "quasi_identifier",  # demographic name
    "sex": "quasi_identifier",
    "zip": "quasi_identifier",
    "bmi": "insensitive",  # not demographic: the pass-through check judges it
    "visits": "insensitive",
    "diagnosis": "sensitive",  # a special category by its name
    "sample_weight": "weight",
    "outcome": "target",  # named like a class label
}


def clinic_table(n: int = 400, seed: int = 11) -> pd.DataFrame:
    """A clinic's patients: identifiers, QIs, a diagnosis, a weight and an outcome."""
    rng = np.random.default_rng(seed)
    row = np.arange(n)
    names = [
        f"{FIRST[a]} {LAST[b]} {i}"
        for a, b, i in zip(rng.integers(0, 10, n), rng.integers(0, 9, n), row)
    ]
    bmi = rng.normal(26.0, 4.0, n).round(1)
    bmi[rng.random(n) < 0.1] = np.nan  # 10 % missing
    return pd.DataFrame(
        {
            "patient_id": 500_000 + rng.permutation(n) * 7,
            "name": pd.array(names, dtype="string"),
            "email": pd.array(
                [f"user{k}@example.org" for k in rng.permutation(n)], dtype="string"
            ),
            "age": rng.integers(18, 91, n),
            "sex": pd.array(rng.choice(["F", "M"], n), dtype="string"),
            "zip": pd.array(rng.choice(ZIPS, n), dtype="string"),
            "bmi": bmi,
            "visits": rng.poisson(3.0, n),
            "diagnosis": pd.array(rng.choice(DIAGNOSES, n), dtype="string"),
            "sample_weight": rng.uniform(0.5, 3.0, n).round(3),
            "outcome": pd.array(
                rng.choice(["good", "poor"], n, p=[0.7, 0.3]), dtype="string"
            ),
        }
    )


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return clinic_table()


@pytest.fixture(scope="module")
def profile(table):
    return profile_table(table, dataset="clinic")


# -- roles --------------------------------------------------------------------
def test_every_column_of_the_clinic_gets_the_role_the_rules_give(profile, table):
    assert profile.roles == EXPECTED_ROLES
    assert list(profile.roles) == list(table.columns)
    assert set(profile.roles.values()) <= set(ROLES)
    assert profile.quasi_identifiers == ["age", "sex", "zip"]
    assert profile.sensitive_attributes == ["diagnosis"]
    assert profile.target == "outcome"
    for column in profile.columns:
        assert column.reason and "\n" not in column.reason, column.name
    assert "pass-through" in profile["bmi"].reason
    assert "keep_weights" in profile["sample_weight"].reason


def test_the_roles_are_the_configurations_vocabulary():
    from ppdm.config import ROLES as CONFIG_ROLES

    assert ROLES == CONFIG_ROLES


def test_statistics_match_an_independent_count(profile, table):
    for column in profile.columns:
        series = table[column.name]
        assert column.rows == len(table)
        assert column.missing == int(series.isna().sum())
        assert column.distinct == len(set(series.dropna().tolist()))
    assert profile["age"].minimum == int(table["age"].min())
    assert profile["bmi"].maximum == float(np.nanmax(table["bmi"]))
    assert profile["bmi"].dtype == "float64" and profile["age"].dtype == "int64"
    assert profile["name"].dtype == "str"


def test_identifiers_are_found_by_uniqueness_whatever_their_name():
    rng = np.random.default_rng(3)
    n = 300
    frame = pd.DataFrame(
        {
            "token": pd.array(
                [f"t{k:06d}" for k in rng.permutation(n)], dtype="string"
            ),
            "measurement": rng.normal(0, 1, n),  # numeric, distinct for every row
            "record": np.arange(7, 7 + n)[rng.permutation(n)],  # a row number
            "notes": pd.array(  # free text, distinct for most rows
                [f"note {k % 200}" for k in range(n)], dtype="string"
            ),
            "memberid": rng.permutation(n) * 13 + 10,  # "*id" and unique
            "constant": pd.array(["x"] * n, dtype="string"),
            "empty": np.full(n, np.nan),
            "colour": pd.array(rng.choice(["red", "blue", "green"], n), dtype="string"),
        }
    )
    roles = profile_table(frame, dataset="t").roles
    assert roles == {
        "token": "identifying",
        "measurement": "drop",
        "record": "drop",
        "notes": "drop",
        "memberid": "identifying",
        "constant": "insensitive",
        "empty": "drop",
        "colour": "insensitive",
    }


def test_a_near_unique_number_with_few_values_is_a_quasi_identifier():
    frame = pd.DataFrame({"score": np.arange(40) * 3 + 1.5})  # 40 values, 40 rows
    column = profile_table(frame, dataset="t")["score"]
    assert column.role == "quasi_identifier" and "intervals" in column.reason
    many = pd.DataFrame({"score": np.arange(80) * 3 + 1.5})
    assert profile_table(many, dataset="t")["score"].role == "drop"


def test_names_are_read_in_any_spelling():
    n = 200
    rng = np.random.default_rng(5)
    unique_text = [f"v{i}" for i in range(n)]
    frame = pd.DataFrame(
        {
            "PatientID": pd.array(unique_text, dtype="string"),
            "e-mail": pd.array([f"{u}@x.org" for u in unique_text], dtype="string"),
            "LastName": pd.array([f"L{i % 60}" for i in range(n)], dtype="string"),
            "ZIPCode": rng.integers(10_000, 10_050, n),
            "fnlwgt": rng.integers(10_000, 500_000, n),
            "body_weight": rng.normal(70, 10, n).round(0),
            "marital-status": pd.array(rng.choice(["a", "b", "c"], n), dtype="string"),
            "telephone": pd.array(rng.choice(["yes", "none"], n), dtype="string"),
            "country_name": pd.array(
                rng.choice([f"c{i}" for i in range(30)], n), dtype="string"
            ),
        }
    )
    profile = profile_table(frame, dataset="t")
    assert profile.roles == {
        "PatientID": "identifying",
        "e-mail": "identifying",
        "LastName": "identifying",
        "ZIPCode": "quasi_identifier",
        "fnlwgt": "weight",
        "body_weight": "insensitive",  # a body weight is no survey weight
        "marital-status": "quasi_identifier",
        "telephone": "insensitive",  # yes/no: too few values to identify
        "country_name": "quasi_identifier",  # a place's name, not a person's
    }
    assert "only 2 distinct values" in profile["telephone"].reason


def test_the_owners_roles_override_and_displace_the_guesses(table):
    profile = profile_table(
        table,
        dataset="clinic",
        target="visits",
        sensitive="bmi",
        quasi_identifiers=["age", "zip"],
    )
    roles = profile.roles
    assert roles["visits"] == "target" and roles["bmi"] == "sensitive"
    assert profile.quasi_identifiers == ["age", "zip"]
    # looked like a QI, a sensitive attribute: never released by accident
    assert roles["sex"] == roles["diagnosis"] == "drop"
    # named like a class label beside the owner's target (titanic's passenger
    # `class`): judged like any other column, released as is only if the
    # trial release and the verifier's pass-through check find it safe
    assert roles["outcome"] == "insensitive"
    assert roles["name"] == "identifying" and roles["sample_weight"] == "weight"
    assert profile["visits"].reason.startswith("given")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"target": "nope"}, "target names 'nope'"),
        ({"quasi_identifiers": ["age", "agee"]}, "quasi_identifiers names 'agee'"),
        ({"target": "age", "quasi_identifiers": ["age"]}, "two roles"),
    ],
)
def test_a_bad_owner_choice_is_refused_by_name(table, kwargs, message):
    with pytest.raises(InvalidParameterError, match=message) as err:
        profile_table(table, dataset="clinic", **kwargs)
    if "names" in message:
        assert "patient_id" in str(err.value)  # the columns are listed


# -- schema and suite ---------------------------------------------------------
def test_schema_round_trips_through_yaml(table, profile):
    schema = build_schema(table, profile)
    text = schema.to_yaml()
    again = pa.DataFrameSchema.from_yaml(text)
    assert again == schema
    assert again.strict is True and again.coerce is True and again.name == "clinic"
    assert list(again.columns) == list(table.columns)
    assert again.columns["bmi"].nullable and not again.columns["age"].nullable
    # identifying values never reach the dataset folder
    for value in (table["name"].iloc[0], table["email"].iloc[0]):
        assert value not in text
    assert again.columns["name"].checks == []
    (domain,) = again.columns["sex"].checks
    assert domain.statistics["allowed_values"] == ["F", "M"]
    (bounds,) = again.columns["age"].checks
    # the observed range with headroom: from 0 (no age is negative), and next
    # month's oldest is not rejected
    low, high = int(table["age"].min()), int(table["age"].max())
    assert (bounds.statistics["min_value"], bounds.statistics["max_value"]) == (
        declared_bounds(low, high)
    )
    assert bounds.statistics["min_value"] == 0 < low
    assert bounds.statistics["max_value"] >= high + (high - low) / 2


def test_the_profiled_table_passes_its_own_schema_and_suite(table, profile):
    schema = build_schema(table, profile)
    suite = build_suite(table, profile)
    outcome = validate_table(
        table, pa.DataFrameSchema.from_yaml(schema.to_yaml()), suite, source="clinic"
    )
    assert outcome.report["rows_clean"] == len(table)
    assert outcome.report["passed"]
    assert all(e["success"] for e in outcome.report["gx"]["expectations"])


def test_bad_rows_are_named_by_both_validators(table, profile):
    schema, suite = build_schema(table, profile), build_suite(table, profile)
    bad = table.copy()
    bad.loc[3, "age"] = 500
    bad.loc[5, "sex"] = "X"
    outcome = validate_table(bad, schema, suite, source="clinic")
    quarantine = outcome.quarantine.set_index("_source_row")["_reasons"]
    assert sorted(quarantine.index) == [3, 5]
    assert "[pandera]" in quarantine[3] and "[gx]" in quarantine[3]
    assert "'X'" in quarantine[5] and "[gx]" in quarantine[5]
    with pytest.raises(SchemaMismatchError, match="not in the schema"):
        validate_table(table.assign(extra=1), schema, suite, source="clinic")


def test_suite_expectations_are_the_kinds_the_project_runs(table, profile):
    suite = build_suite(table, profile)
    kinds = {e["type"] for e in suite["expectations"]}
    assert kinds == {
        "expect_table_row_count_to_be_between",
        "expect_table_columns_to_match_set",
        "expect_column_values_to_not_be_null",
        "expect_column_values_to_be_between",
        "expect_column_values_to_be_in_set",
        "expect_column_distinct_values_to_contain_set",
    }
    by_kind = {}
    for entry in suite["expectations"]:
        by_kind.setdefault(entry["type"], []).append(entry["kwargs"])
    (rows,) = by_kind["expect_table_row_count_to_be_between"]
    assert rows == {"min_value": len(table) // 10, "max_value": len(table) * 10}
    (columns,) = by_kind["expect_table_columns_to_match_set"]
    assert columns["column_set"] == list(table.columns)
    not_null = {k["column"]: k.get("mostly", 1.0) for k in by_kind[
        "expect_column_values_to_not_be_null"]}  # fmt: skip
    share = table["bmi"].notna().mean()
    assert not_null["bmi"] == math.floor((share - 0.05) * 100) / 100
    assert not_null["bmi"] < share
    assert not_null["age"] == 1.0 and set(not_null) == set(table.columns)
    (classes,) = by_kind["expect_column_distinct_values_to_contain_set"]
    assert classes == {"column": "outcome", "value_set": ["good", "poor"]}


def test_a_sudden_loss_of_values_fails_the_mostly_threshold(table, profile):
    suite = build_suite(table, profile)
    schema = build_schema(table, profile)
    emptier = table.copy()
    emptier.loc[: len(table) // 2, "bmi"] = np.nan  # half the BMIs lost
    from ppdm.exceptions import DataValidationError

    with pytest.raises(DataValidationError, match="bmi"):
        validate_table(emptier, schema, suite, source="clinic")


# -- hierarchies --------------------------------------------------------------
def _covers_every_value(plan, column: pd.Series) -> Hierarchy:
    hierarchy = plan.build()
    codes = hierarchy.encode(column)  # raises when a value is not covered
    leaves = hierarchy.label_array(0)[hierarchy.level_codes(0)[codes]]
    expected = [
        MISSING_LABEL if pd.isna(v) else format_number(v) if isinstance(v, float)
        else str(v)
        for v in column.tolist()
    ]  # fmt: skip
    assert leaves.tolist() == expected
    assert set(hierarchy.labels[-1]) == {SUPPRESSED}
    return hierarchy


def _assert_nested(hierarchy: Hierarchy) -> None:
    """Every label has one parent, and every level merges something."""
    for level in range(hierarchy.height):
        pairs = pd.DataFrame(
            {
                "child": hierarchy.codes[:-1, level],
                "parent": hierarchy.codes[:-1, level + 1],
            }
        )
        assert (pairs.groupby("child")["parent"].nunique() == 1).all()
        children = pairs["child"].nunique()
        assert pairs["parent"].nunique() < children or children == 1


def test_every_quasi_identifier_gets_a_hierarchy_covering_its_values(table, profile):
    for name in profile.quasi_identifiers:
        plan = propose_hierarchy(table[name])
        hierarchy = _covers_every_value(plan, table[name])
        _assert_nested(hierarchy)
    age = propose_hierarchy(table["age"])
    assert age.kind == "intervals" and age.file_name == "age.json"
    assert age.rule == {"type": "intervals", "min": 18, "max": 90, "origin": 0,
                        "widths": [5, 10, 20, 40, 80]}  # fmt: skip
    sex = propose_hierarchy(table["sex"])
    assert sex.kind == "levels" and sex.build().height == 1  # F, M -> *
    assert propose_hierarchy(table["zip"]).build().height >= 2


def test_a_categorical_hierarchy_merges_rare_values_first():
    counts = {"common": 500, "usual": 200, **{f"rare{i}": 3 for i in range(20)}}
    column = pd.Series(np.repeat(list(counts), list(counts.values())), name="place")
    plan = propose_hierarchy(column)
    hierarchy = _covers_every_value(plan, column)
    _assert_nested(hierarchy)
    level1 = dict(
        zip(hierarchy.leaves, hierarchy.label_array(1)[hierarchy.codes[:-1, 1]])
    )
    assert level1["common"] == "common" and level1["usual"] == "usual"
    rare_groups = {level1[f"rare{i}"] for i in range(20)}
    assert len(rare_groups) < 20
    for label in rare_groups:  # each group is labelled by its value set
        members = parse_cell(label).members
        assert all(level1[m] == label for m in members)


def test_non_integer_numbers_get_ranges_that_contain_their_values():
    rng = np.random.default_rng(8)
    column = pd.Series(rng.normal(26.0, 4.0, 800).round(2), name="bmi")
    column[::37] = np.nan
    plan = propose_hierarchy(column)
    assert plan.kind == "levels" and plan.file_name == "bmi.csv"
    hierarchy = _covers_every_value(plan, column)
    _assert_nested(hierarchy)
    present = column.dropna()
    codes = hierarchy.encode(present)
    for level in range(1, hierarchy.height):
        labels = hierarchy.label_array(level)[hierarchy.level_codes(level)[codes]]
        cells = [parse_cell(label) for label in labels]
        assert all(c.kind in ("interval", "value") for c in cells)
        low = np.array(
            [c.low if c.kind == "interval" else float(c.text) for c in cells]
        )
        high = np.array(
            [c.high if c.kind == "interval" else float(c.text) for c in cells]
        )
        assert np.all((low <= present.to_numpy()) & (present.to_numpy() <= high))


def test_integral_floats_with_missing_values_get_an_interval_rule():
    column = pd.Series([3.0, 7.0, np.nan, 12.0, 40.0], name="years")
    plan = propose_hierarchy(column)
    assert plan.kind == "intervals" and plan.rule["min"] == 3 and plan.rule["max"] == 40
    _covers_every_value(plan, column)


def test_too_many_distinct_values_get_no_hierarchy_and_say_why():
    column = pd.Series(np.linspace(0, 1, 6_001), name="ratio")
    plan = propose_hierarchy(column)
    assert plan.kind == "none" and plan.file_name is None
    assert "6,001 distinct non-integer values" in plan.summary
    with pytest.raises(InvalidParameterError, match="no hierarchy"):
        plan.text()


# -- properties ---------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(
    minimum=st.integers(-5_000, 5_000),
    span=st.integers(0, 3_000),
)
def test_generated_interval_rules_nest_and_cover_min_to_max(minimum, span):
    maximum = minimum + span
    widths = interval_widths(minimum, maximum)
    if widths:
        assert widths[0] >= 2
        assert widths[0] >= (span + 1) / 16  # about 16 buckets or fewer at level 1
    for finer, coarser in zip(widths, widths[1:]):
        assert coarser > finer and coarser % finer == 0

    def buckets(width: int) -> int:
        return maximum // width - minimum // width + 1

    counts = [span + 1] + [buckets(w) for w in widths]
    assert all(a > b for a, b in zip(counts, counts[1:]))  # every level merges
    assert counts[-1] >= 2 or span == 0  # the coarsest level still splits
    if widths:  # a doubling left out merges nothing, or leaves one bucket (*)
        level, width = 0, widths[0]
        while width <= 4 * (span + 1):
            if level < len(widths) and width == widths[level]:
                level += 1
            else:
                assert buckets(width) in (counts[level], 1), (width, widths)
            width *= 2
        assert level == len(widths)  # every width lies on the doubling chain
    column = pd.Series(np.arange(minimum, maximum + 1), name="x")
    plan = propose_hierarchy(column)
    assert plan.kind == "intervals" and plan.rule["widths"] == widths
    hierarchy = plan.build()
    codes = hierarchy.encode(column)
    assert codes.tolist() == list(range(span + 1))  # every integer is a leaf
    values = column.to_numpy()
    previous_low, previous_high = values, values + 1
    for level, width in enumerate(widths, start=1):
        labels = hierarchy.label_array(level)[hierarchy.level_codes(level)[codes]]
        cells = [parse_cell(label) for label in labels]
        low = np.array([c.low for c in cells])
        high = np.array([c.high for c in cells])
        assert np.all(high - low == width)
        assert np.all((low <= values) & (values < high))
        assert np.all((low <= previous_low) & (previous_high <= high))  # nested
        previous_low, previous_high = low, high


@settings(max_examples=60, deadline=None)
@given(counts=st.lists(st.integers(1, 500), min_size=1, max_size=120))
def test_generated_category_hierarchies_nest_and_cover_every_value(counts):
    values = [f"v{i}" for i in range(len(counts))]
    column = pd.Series(np.repeat(values, counts), name="c", dtype="string")
    plan = propose_hierarchy(column)
    hierarchy = _covers_every_value(plan, column)
    _assert_nested(hierarchy)
    if len(counts) <= 5:
        assert hierarchy.height == 1
    assert hierarchy.height <= 5  # at most four levels between value and *


def test_identifiers_are_found_whatever_their_share_of_distinct_values():
    # 560 names on 50,000 rows: 1 % distinct, still a person's name.
    n = 50_000
    rng = np.random.default_rng(11)
    names = np.array([f"First{i % 40} Last{i // 40}" for i in range(560)])
    frame = pd.DataFrame(
        {
            "name": pd.array(rng.choice(names, n), dtype="string"),
            "age": rng.integers(18, 90, n),
        }
    )
    column = profile_table(frame, dataset="t")["name"]
    assert column.role == "identifying" and "560 distinct values" in column.reason


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        ([f"p{i}@mail.example" for i in range(30)], "e-mail address"),
        ([f"+1 (555) 201-{i:04d}" for i in range(30)], "phone number"),
        ([f"{100 + i}-45-{6000 + i}" for i in range(30)], "social security number"),
        ([f"10.0.{i}.7" for i in range(30)], "IP address"),
        ([f"https://example.org/p/{i}" for i in range(30)], "URL"),
        (
            [
                f"{f} {s}"
                for f in ("Ana", "Ben", "Jo")
                for s in ("Smith", "O'Neil", "Khan", "Meyer-Lang")
            ],
            "person's name",
        ),  # fmt: skip
        (
            [f"patient says the pain began on day {i} of the stay" for i in range(30)],
            "free text",
        ),  # fmt: skip
    ],
)
def test_identifiers_are_found_by_their_values_under_any_name(values, kind):
    n = 600
    frame = pd.DataFrame(
        {
            # a name that says nothing, and few values per row
            "field_7": pd.array([values[i % len(values)] for i in range(n)], "string"),
            "age": np.arange(n) % 70 + 18,
        }
    )
    column = profile_table(frame, dataset="t")["field_7"]
    assert column.role == "identifying", column.reason
    assert kind in column.reason


@pytest.mark.parametrize(
    "values",
    [
        ["1961-03-04", "1970-12-31", "1988-01-01", "2001-07-15"],  # dates
        ["04.03.1961", "31.12.1970", "01.01.1988", "15.07.2001"],
        ["01001", "02134", "10115", "80331"],  # zip codes
        ["E11.9", "I10", "J45.909", "K21.9", "N39.0"],  # ICD codes
        ["Medicare", "Medicaid", "Private", "Self Pay"],  # a category
        ["12", "7", "30", "1", "4"],  # counts as text
    ],
)
def test_dates_codes_and_categories_are_no_direct_identifiers(values):
    from ppdm.identifiers import identifier_pattern

    assert identifier_pattern(pd.Series(values * 20, dtype="string")) is None


def test_a_date_column_is_checked_by_its_format_not_by_its_observed_days():
    n = 300
    days = pd.Timestamp("2022-01-01") + pd.to_timedelta(np.arange(n) % 90, unit="D")
    frame = pd.DataFrame(
        {
            "admitted": pd.array(days.strftime("%d.%m.%Y"), dtype="string"),
            "age": np.arange(n) % 60 + 20,
        }
    )
    profile = profile_table(frame, dataset="t")
    column = profile["admitted"]
    assert column.role == "quasi_identifier" and column.date_format == "%d.%m.%Y"
    assert "dates (%d.%m.%Y)" in column.reason
    schema = build_schema(frame, profile)
    later = pd.DataFrame(
        {
            "admitted": pd.array(["15.06.2023", "31.13.2022", "n/a"], dtype="string"),
            "age": [30, 40, 50],
        }
    )
    with pytest.raises(pa.errors.SchemaErrors) as err:
        schema.validate(later, lazy=True)
    failed = err.value.failure_cases
    # a day not seen at init is valid; a month 13 and a non-date are not
    assert sorted(failed["index"].tolist()) == [1, 2]
    assert "admitted" in schema.to_yaml() and "str_matches" in schema.to_yaml()
