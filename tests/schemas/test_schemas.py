"""Dataset contracts (folders of data): pandera schemas and GX suites agree with data."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from ppdm import resources
from ppdm.exceptions import UnknownDatasetError
from ppdm.prepare import datasets
from ppdm.prepare.dataset_folder import load_contract, resolve_schema_dir
from ppdm.prepare.datasets import ADULT_COLUMNS, GERMAN_COLUMNS, data_path
from ppdm.prepare.validation import build_expectations, validate_table

COLUMNS = {"adult": ADULT_COLUMNS, "german": GERMAN_COLUMNS}


def get_schema(dataset):
    contract = load_contract(resources.schema_dir(dataset))
    return contract.schema, contract.suite


def load_suite(dataset):
    return get_schema(dataset)[1]


def _isin(model) -> dict[str, set[str]]:
    columns = model.columns
    return {
        name: set(check.statistics["allowed_values"])
        for name, column in columns.items()
        for check in column.checks
        if check.name == "isin"
    }


def _ranges(model) -> dict[str, tuple]:
    found = {}
    for name, column in model.columns.items():
        for check in column.checks:
            stats = check.statistics
            if check.name == "in_range":
                found[name] = (stats["min_value"], stats["max_value"])
            elif check.name == "greater_than_or_equal_to":
                found[name] = (stats["min_value"], None)
    return found


def test_shipped_folders_and_lookup():
    assert resources.schema_names() == ["adult", "german"]
    schema, suite = get_schema("adult")
    assert schema.name == "adult"
    assert suite["name"] == "adult" and suite["expectations"]


def test_unknown_dataset_lists_the_shipped_ones():
    with pytest.raises(UnknownDatasetError, match=r"shipped: adult, german"):
        resolve_schema_dir("titanic")


def test_a_folder_is_read_relative_to_the_config(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    for name in ("schema.yaml", "suite.json"):
        (folder / name).write_bytes(
            (resources.schema_dir("german") / name).read_bytes()
        )
    assert resolve_schema_dir("mine", tmp_path) == folder.resolve()
    assert resolve_schema_dir(".", folder) == folder.resolve()
    assert load_contract(folder).schema == get_schema("german")[0]


def test_a_broken_folder_names_the_file(tmp_path):
    (tmp_path / "schema.yaml").write_text("columns: [", encoding="utf-8")
    (tmp_path / "suite.json").write_text("{}", encoding="utf-8")
    with pytest.raises(UnknownDatasetError, match="schema.yaml"):
        load_contract(tmp_path)


def test_suites_load_from_any_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert get_schema("german")[1]["name"] == "german"


@pytest.mark.parametrize("dataset", ["adult", "german"])
def test_schema_declares_exactly_the_embedded_columns(dataset):
    schema, _ = get_schema(dataset)
    frame_schema = schema
    assert list(frame_schema.columns) == COLUMNS[dataset]
    assert frame_schema.strict is True and frame_schema.coerce is True
    assert list(datasets.load(dataset).columns) == COLUMNS[dataset]


@pytest.mark.parametrize("dataset", ["adult", "german"])
def test_embedded_data_passes_pandera_alone(dataset):
    schema, _ = get_schema(dataset)
    schema.validate(datasets.load(dataset), lazy=True)


@pytest.mark.parametrize("dataset", ["adult", "german"])
def test_domains_cover_the_values_in_the_data(dataset):
    # independent of the schema's lists: what the embedded files really hold
    table = datasets.load(dataset)
    for column, allowed in _isin(get_schema(dataset)[0]).items():
        observed = set(table[column].dropna().unique())
        if dataset == "adult":  # every UCI value occurs in the 48,842 rows
            assert observed == allowed, column
        else:  # the code book lists two codes (A47, A95) no applicant has
            assert observed <= allowed, column
            unused = {"(vacation - does not exist?)", "female : single"}
            assert allowed - observed <= unused, column


def test_german_domains_are_the_code_book_meanings():
    codes = json.loads(data_path("german.codes.json").read_text(encoding="utf-8"))
    domains = _isin(get_schema("german")[0])
    assert set(domains) == set(codes)
    for column, meaning in codes.items():
        assert domains[column] == set(meaning.values())


def test_adult_nullable_columns_are_those_with_missing_values():
    table = datasets.load("adult")
    columns = get_schema("adult")[0].columns
    nullable = {n for n, c in columns.items() if c.nullable}
    assert nullable == set(table.columns[table.isna().any()])
    assert nullable == {"workclass", "occupation", "native-country"}


@pytest.mark.parametrize("dataset", ["adult", "german"])
def test_numeric_ranges_hold_the_data(dataset):
    table = datasets.load(dataset)
    for column, (low, high) in _ranges(get_schema(dataset)[0]).items():
        assert table[column].min() >= low, column
        if high is not None:
            assert table[column].max() <= high, column


@pytest.mark.parametrize("dataset", ["adult", "german"])
def test_suite_builds_and_names_only_declared_columns(dataset):
    schema, suite = get_schema(dataset)
    expectations = build_expectations(suite)
    assert len(expectations) == len(suite["expectations"])
    declared = set(schema.columns)
    for entry in suite["expectations"]:
        kwargs = entry["kwargs"]
        if "column" in kwargs:
            assert kwargs["column"] in declared, entry
        if "column_set" in kwargs:
            assert set(kwargs["column_set"]) == declared


@pytest.mark.parametrize("dataset", ["adult", "german"])
def test_suite_and_model_agree_on_domains_and_ranges(dataset):
    schema, suite = get_schema(dataset)
    domains, ranges = _isin(schema), _ranges(schema)
    sets = {e["kwargs"]["column"]: set(e["kwargs"]["value_set"])
            for e in suite["expectations"]
            if e["type"] == "expect_column_values_to_be_in_set"}  # fmt: skip
    assert sets == domains
    for entry in suite["expectations"]:
        if entry["type"] != "expect_column_values_to_be_between":
            continue
        kwargs = entry["kwargs"]
        low, high = ranges[kwargs["column"]]
        assert kwargs["min_value"] == low
        if high is not None:  # GX may bound what pandera leaves open, never looser
            assert kwargs["max_value"] == high


@pytest.mark.parametrize(
    ("dataset", "target"), [("adult", "income"), ("german", "credit")]
)
def test_suite_guards_the_target_and_the_table(dataset, target):
    kinds = {
        (e["type"], e["kwargs"].get("column"))
        for e in load_suite(dataset)["expectations"]
    }
    assert ("expect_column_values_to_not_be_null", target) in kinds
    assert ("expect_column_distinct_values_to_contain_set", target) in kinds
    assert ("expect_table_row_count_to_be_between", None) in kinds


@pytest.mark.parametrize("dataset", ["adult", "german"])
def test_embedded_data_validates_with_zero_rejected_rows(dataset):
    schema, suite = get_schema(dataset)
    table = datasets.load(dataset)
    outcome = validate_table(table, schema, suite, max_rejected_fraction=0.0)
    assert outcome.report["rows_rejected"] == 0
    assert outcome.report["gx"]["statistics"]["success_percent"] == 100.0
    pd.testing.assert_frame_equal(outcome.clean, table)
