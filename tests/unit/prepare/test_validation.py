"""ppdm.prepare.validation: pandera and GX both judge every row; bad rows are quarantined."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm import resources
from ppdm.exceptions import (
    DataValidationError,
    InvalidParameterError,
    SchemaMismatchError,
)
from ppdm.prepare import datasets
from ppdm.prepare.dataset_folder import load_contract
from ppdm.prepare.ingest import load_source
from ppdm.prepare.validation import (
    REASONS,
    SOURCE_ROW,
    ValidationOutcome,
    validate_table,
)


def get_schema(name):
    """The pandera schema and GX suite of a shipped dataset folder."""
    contract = load_contract(resources.schema_dir(name))
    return contract.schema, contract.suite


AdultSchema = get_schema("adult")[0]

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def adult_contract():
    return get_schema("adult")


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return datasets.load("adult")


@pytest.fixture(scope="module")
def adult_outcome(adult, adult_contract) -> ValidationOutcome:
    schema, suite = adult_contract
    return validate_table(adult, schema, suite, source="adult")


@pytest.fixture
def sample(adult) -> pd.DataFrame:
    """2,000 rows with ``age`` as object so that a cell can hold text."""
    return adult.iloc[:2000].astype({"age": object}).reset_index(drop=True)


def _validate(table, contract, **kwargs) -> ValidationOutcome:
    schema, suite = contract
    return validate_table(table, schema, suite, source="sample", **kwargs)


def _reasons(outcome: ValidationOutcome) -> dict[int, str]:
    return dict(zip(outcome.quarantine[SOURCE_ROW], outcome.quarantine[REASONS]))


# -- clean data -----------------------------------------------------------------
def test_full_adult_is_clean_and_typed_like_the_embedded_table(adult_outcome, adult):
    report = adult_outcome.report
    assert report["rows_in"] == report["rows_clean"] == 48842
    assert report["rows_rejected"] == 0
    assert report["passed"] is True
    pd.testing.assert_frame_equal(adult_outcome.clean, adult)
    assert adult_outcome.quarantine.empty
    assert list(adult_outcome.quarantine.columns) == [
        *adult.columns,
        SOURCE_ROW,
        REASONS,
    ]
    np.testing.assert_array_equal(adult_outcome.clean_source_rows, np.arange(48842))
    gx_stats = report["gx"]["statistics"]
    assert gx_stats["evaluated_expectations"] == len(
        get_schema("adult")[1]["expectations"]
    )
    assert gx_stats["unsuccessful_expectations"] == 0


def test_report_is_json_serialisable(adult_outcome):
    text = json.dumps(adult_outcome.report)
    assert json.loads(text)["limit"] == 0.05


def test_outcome_is_frozen(adult_outcome):
    with pytest.raises(AttributeError):
        adult_outcome.report = {}  # type: ignore[misc]


def test_german_is_clean():
    schema, suite = get_schema("german")
    outcome = validate_table(datasets.load("german"), schema, suite)
    assert outcome.report["rows_rejected"] == 0
    pd.testing.assert_frame_equal(outcome.clean, datasets.load("german"))


# -- corrupted cells --------------------------------------------------------------
def test_corrupted_cells_are_quarantined_with_every_reason(sample, adult_contract):
    original = sample.copy()
    sample.loc[3, "age"] = 230
    sample.loc[5, "sex"] = "X"
    sample.loc[7, "age"] = "abc"
    sample.loc[9, "income"] = pd.NA
    sample.loc[11, "capital-gain"] = 150_000  # above the census top-code
    sample.loc[13, ["age", "sex"]] = [17 - 1, "Y"]  # two failures in one row
    outcome = _validate(sample, adult_contract)

    reasons = _reasons(outcome)
    assert sorted(reasons) == [3, 5, 7, 9, 11, 13]
    assert reasons[3] == (
        "age: 230 is not in [17, 90] [pandera]; age: 230 is not in [17, 90] [gx]"
    )
    assert reasons[5] == (
        "sex: 'X' is not one of {Female, Male} [pandera]; "
        "sex: 'X' is not one of {Female, Male} [gx]"
    )
    assert reasons[7] == "age: 'abc' cannot be read as int64 [pandera]"
    assert "income: missing value (column is not nullable) [pandera]" in reasons[9]
    assert "income: missing value [gx]" in reasons[9]
    # pandera only says capital-gain >= 0; the GX suite knows the top-code
    assert reasons[11] == "capital-gain: 150000 is not in [0, 99999] [gx]"
    assert reasons[13].count("[pandera]") == 2 and reasons[13].count("[gx]") == 2
    assert reasons[13].index("age:") < reasons[13].index("sex:")

    # the quarantine keeps the rows exactly as they came in
    assert (
        outcome.quarantine.loc[outcome.quarantine[SOURCE_ROW] == 7, "age"].item()
        == "abc"
    )
    bad = [3, 5, 7, 9, 11, 13]
    pd.testing.assert_frame_equal(
        outcome.quarantine.drop(columns=[SOURCE_ROW, REASONS]),
        sample.iloc[bad].reset_index(drop=True),
    )
    # and the clean table is every other row, typed
    expected = original.drop(index=bad).reset_index(drop=True).astype({"age": "int64"})
    pd.testing.assert_frame_equal(outcome.clean, expected)
    np.testing.assert_array_equal(
        outcome.clean_source_rows, np.setdiff1d(np.arange(2000), bad)
    )
    report = outcome.report
    assert report["rows_rejected"] == 6 and report["rows_clean"] == 1994
    assert report["pandera"]["failing_rows_per_check"]["age: in_range(17, 90)"] == 2
    assert (
        report["gx"]["failing_rows_per_expectation"][
            "expect_column_values_to_be_between(capital-gain)"
        ]
        == 1
    )


def test_input_is_not_modified_and_its_index_is_ignored(sample, adult_contract):
    sample.loc[4, "age"] = 999
    shuffled = sample.set_axis(np.arange(2000) * 7 + 3)
    before = shuffled.copy()
    outcome = _validate(shuffled, adult_contract)
    pd.testing.assert_frame_equal(shuffled, before)
    assert outcome.quarantine[SOURCE_ROW].tolist() == [4]
    assert outcome.clean.index.equals(pd.RangeIndex(1999))


def test_a_float_with_a_fraction_is_not_silently_truncated(sample, adult_contract):
    sample.loc[2, "age"] = 30.5
    sample.loc[4, "age"] = 31.0  # a whole number stored as float is fine
    outcome = _validate(sample, adult_contract)
    assert _reasons(outcome) == {2: "age: 30.5 cannot be read as int64 [pandera]"}
    assert outcome.clean.loc[3, "age"] == 31  # row 4 moved up by one


def test_a_missing_integer_is_reported_once_and_the_column_stays_int(
    sample, adult_contract
):
    sample.loc[6, "age"] = None
    sample.loc[8, ["age", "sex"]] = ["abc", "X"]  # unreadable age and a bad sex
    outcome = _validate(sample, adult_contract)
    assert _reasons(outcome) == {
        6: "age: missing value (column is not nullable) [pandera]",
        8: "age: 'abc' cannot be read as int64 [pandera]; "
        "sex: 'X' is not one of {Female, Male} [pandera]; "
        "sex: 'X' is not one of {Female, Male} [gx]",
    }
    assert outcome.clean["age"].dtype == np.int64


def test_dirty_csv_through_ingest(adult_contract):
    table = load_source("csv", DATA / "validation_adult_dirty.csv")
    outcome = _validate(table, adult_contract, max_rejected_fraction=0.5)
    reasons = _reasons(outcome)
    assert sorted(reasons) == [2, 4, 6, 9, 11]
    assert "'abc' cannot be read as int64" in reasons[2]
    assert "sex: 'X'" in reasons[4]
    assert "income: missing value" in reasons[6]
    assert "age: 230 is not in [17, 90]" in reasons[9]
    assert reasons[11] == "capital-gain: 150000 is not in [0, 99999] [gx]"
    assert outcome.clean["age"].dtype == np.int64
    assert outcome.clean["age"].tolist() == [39, 50, 53, 37, 52, 31, 37]


@settings(max_examples=5, deadline=None)
@given(st.sets(st.integers(0, 199), max_size=8), st.integers(91, 500))
def test_exactly_the_corrupted_rows_are_quarantined(adult, adult_contract, rows, age):
    table = adult.iloc[:200].reset_index(drop=True)
    table.loc[sorted(rows), "age"] = age
    outcome = _validate(table, adult_contract, max_rejected_fraction=1.0)
    assert set(outcome.quarantine[SOURCE_ROW]) == rows
    assert len(outcome.clean) == 200 - len(rows)
    assert all(
        f"age: {age} is not in [17, 90]" in r for r in outcome.quarantine[REASONS]
    )


# -- the limit --------------------------------------------------------------------
def test_too_many_rejected_rows_raise_with_the_fraction(sample, adult_contract):
    rng = np.random.default_rng(11)
    bad = rng.choice(2000, size=300, replace=False)
    sample.loc[bad, "age"] = 230
    with pytest.raises(DataValidationError) as err:
        _validate(sample, adult_contract)
    message = str(err.value)
    assert "300 of 2,000 rows rejected" in message
    assert "15.00%" in message and "5.00%" in message
    assert "age: in_range(17, 90) [pandera]: 300 rows" in message
    assert "expect_column_values_to_be_between(age) [gx]: 300 rows" in message
    outcome = err.value.outcome
    assert isinstance(outcome, ValidationOutcome)
    assert sorted(outcome.quarantine[SOURCE_ROW]) == sorted(bad.tolist())
    assert outcome.report["passed"] is False
    assert not isinstance(err.value, SchemaMismatchError)


@pytest.mark.parametrize(("corrupted", "passes"), [(100, True), (101, False)])
def test_the_limit_is_inclusive(sample, adult_contract, corrupted, passes):
    sample.loc[: corrupted - 1, "sex"] = "X"  # 100 of 2,000 rows = 5.00%
    if passes:
        assert _validate(sample, adult_contract).report["rows_rejected"] == 100
    else:
        with pytest.raises(DataValidationError, match="101 of 2,000"):
            _validate(sample, adult_contract)


# -- failures only GX sees ----------------------------------------------------------
def test_mostly_rule_rejects_the_table_but_no_row(sample, adult_contract):
    sample.loc[:399, "workclass"] = pd.NA  # 20% missing; each row is valid
    AdultSchema.validate(sample)  # pandera alone accepts the table
    with pytest.raises(DataValidationError) as err:
        _validate(sample, adult_contract)
    message = str(err.value)
    assert "expect_column_values_to_not_be_null(workclass)" in message
    assert "mostly=90.00%" in message
    outcome = err.value.outcome
    assert outcome.report["rows_rejected"] == 0
    assert len(outcome.clean) == 2000


def test_a_target_with_one_class_fails(adult, adult_contract):
    one_class = adult.iloc[:2000].query("income == '<=50K'")
    with pytest.raises(DataValidationError, match=r"missing \{>50K\}"):
        _validate(one_class, adult_contract)


def test_an_empty_table_fails_the_row_count(adult, adult_contract):
    with pytest.raises(
        DataValidationError, match="expect_table_row_count_to_be_between"
    ):
        _validate(adult.head(0), adult_contract)


# -- schema mismatches --------------------------------------------------------------
def test_a_dropped_column_is_named(sample, adult_contract):
    with pytest.raises(SchemaMismatchError) as err:
        _validate(sample.drop(columns=["hours-per-week"]), adult_contract)
    assert (
        str(err.value) == "sample: column 'hours-per-week' is missing (expected int64)"
    )


def test_an_all_garbage_column_is_named(sample, adult_contract):
    sample["age"] = "abc"
    sample.loc[1, "age"] = pd.NA  # a missing value is not counted as garbage
    with pytest.raises(SchemaMismatchError) as err:
        _validate(sample, adult_contract)
    assert str(err.value) == (
        "sample: column 'age' cannot be read as int64: 1,999 of 1,999 values are "
        "not integers, e.g. 'abc' at row 0"
    )


def test_an_undeclared_column_is_refused_by_a_strict_schema(sample, adult_contract):
    with pytest.raises(SchemaMismatchError, match="column 'ssn' is not in the schema"):
        _validate(sample.assign(ssn="123-45-6789"), adult_contract)


def test_an_undeclared_column_is_kept_by_a_lenient_schema(sample, adult_contract):
    lenient = copy.deepcopy(AdultSchema)
    lenient.strict = False

    sample.loc[3, "age"] = 230
    outcome = validate_table(sample.assign(note="x"), lenient, adult_contract[1])
    assert outcome.clean["note"].eq("x").all()
    assert outcome.quarantine[SOURCE_ROW].tolist() == [3]


# -- arguments ----------------------------------------------------------------------
@pytest.mark.parametrize("limit", [-0.1, 1.5, True, "5%"])
def test_limit_must_be_a_fraction(sample, adult_contract, limit):
    with pytest.raises(InvalidParameterError, match="max_rejected_fraction"):
        _validate(sample, adult_contract, max_rejected_fraction=limit)


def test_unknown_expectation_is_refused(sample):
    suite = {
        "name": "bad",
        "expectations": [
            {"type": "expect_column_values_to_be_prime", "kwargs": {"column": "age"}}
        ],
    }
    with pytest.raises(InvalidParameterError, match="expect_column_values_to_be_prime"):
        validate_table(sample, AdultSchema, suite)
    with pytest.raises(InvalidParameterError, match="'expectations' list"):
        validate_table(sample, AdultSchema, {"name": "empty"})


@pytest.mark.parametrize("dataset", ["adult", "german", "owner"])
def test_the_clean_table_gets_the_types_a_second_full_validation_gives(
    dataset, tmp_path
):
    """The accepted rows are typed by the schema's coercion alone; pandera's whole
    validation of them (checks and all, as it ran before) gives the same frame."""
    import sys

    from ppdm.prepare import validation
    from ppdm.prepare.init_folder import init_dataset

    if dataset == "owner":
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
        from messy_hospital import messy_hospital

        source = tmp_path / "hospital.csv"
        messy_hospital(2000, seed=3).to_csv(source, index=False)
        init_dataset(source, dataset="hospital", directory=tmp_path)
        contract = load_contract(tmp_path / "hospital")
        table = load_source("csv", source)
    else:
        contract = load_contract(resources.schema_dir(dataset))
        table = datasets.load(dataset)
    outcome = validation.validate_table(
        table, contract.schema, contract.suite, max_rejected_fraction=1.0
    )
    frame_schema = validation._frame_schema(contract.schema)
    typed, _ = validation._coerce(
        validation._check_columns(table.reset_index(drop=True), frame_schema, "t"),
        frame_schema,
        "t",
    )
    accepted = typed.iloc[outcome.clean_source_rows].reset_index(drop=True)
    again = frame_schema.validate(accepted, lazy=False)
    text = {c: "string" for c in again.columns if outcome.clean[c].dtype == "string"}
    pd.testing.assert_frame_equal(outcome.clean, again.astype(text))
    assert len(outcome.clean) > 0
