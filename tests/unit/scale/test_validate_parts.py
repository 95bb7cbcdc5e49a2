"""ppdm.scale.validate_parts: the partitioned validation gives validate_table's outputs."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest

from ppdm import resources
from ppdm.exceptions import (
    DataValidationError,
    InvalidParameterError,
    SchemaMismatchError,
)
from ppdm.prepare import datasets
from ppdm.prepare.dataset_folder import load_contract
from ppdm.prepare.ingest import load_source
from ppdm.prepare.validation import REASONS, SOURCE_ROW, validate_table
from ppdm.release.artifacts import table_to_csv_bytes
from ppdm.scale.ingest_parts import ingest_partitions
from ppdm.scale.validate_parts import validate_partitions

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def contract():
    found = load_contract(resources.schema_dir("adult"))
    return found.schema, found.suite


def _both(table, parts, schema, suite, out_dir, *, limit=0.05, map_parts=map):
    """(in-memory outcome, its error text, partitioned outcome, its error text)."""
    outcomes = []
    for run in (
        lambda: validate_table(
            table, schema, suite, max_rejected_fraction=limit, source="adult.csv"
        ),
        lambda: validate_partitions(
            parts,
            schema,
            suite,
            max_rejected_fraction=limit,
            source="adult.csv",
            out_dir=out_dir,
            map_parts=map_parts,
        ),  # fmt: skip
    ):
        try:
            outcomes += [run(), None]
        except DataValidationError as err:
            outcomes += [err.outcome, str(err)]
    return outcomes


def _assert_same(memory, partitioned) -> None:
    pd.testing.assert_frame_equal(partitioned.clean.to_pandas(), memory.clean)
    pd.testing.assert_frame_equal(partitioned.quarantine, memory.quarantine)
    assert partitioned.report == memory.report
    written = Path(partitioned.quarantine_path).read_bytes()
    assert written == table_to_csv_bytes(memory.quarantine)  # what the step stores
    # each clean partition holds the kept rows of its own input partition
    kept = memory.clean_source_rows
    for index, start in enumerate(partitioned.clean.starts):
        rows = partitioned.clean.part_rows[index]
        piece = memory.clean.iloc[start : start + rows].reset_index(drop=True)
        pd.testing.assert_frame_equal(partitioned.clean.read(index), piece)
    assert partitioned.clean.rows == len(kept)


def test_adult_in_7000_row_parts_is_clean_as_in_memory(contract, tmp_path):
    schema, suite = contract
    table = datasets.load("adult")
    parts = ingest_partitions(
        "embedded",
        None,
        embedded="adult",
        out_dir=tmp_path / "raw",
        partition_rows=7000,
    )
    memory, error, partitioned, partitioned_error = _both(
        table, parts, schema, suite, tmp_path / "checked"
    )
    assert error is None and partitioned_error is None
    _assert_same(memory, partitioned)
    assert partitioned.report["rows_clean"] == 48842 and partitioned.report["passed"]
    assert partitioned.clean.part_rows == (7000,) * 6 + (6842,)
    assert len(partitioned.clean_paths) == 7


@pytest.fixture(scope="module")
def shipped_dirty(tmp_path_factory):
    """The shipped dirty table (12 rows) in partitions of 3 rows."""
    folder = tmp_path_factory.mktemp("dirty")
    path = DATA / "validation_adult_dirty.csv"
    parts = ingest_partitions("csv", path, out_dir=folder, partition_rows=3)
    return load_source("csv", path), parts


def test_shipped_dirty_table_in_parts_of_three_fails_as_in_memory(
    contract, shipped_dirty, tmp_path
):
    schema, suite = contract
    table, parts = shipped_dirty
    memory, error, partitioned, partitioned_error = _both(
        table, parts, schema, suite, tmp_path
    )
    # 5 of 12 rows rejected: above the default limit of 5 %, the same message
    assert error is not None and partitioned_error == error
    assert "5 of 12 rows rejected" in error
    _assert_same(memory, partitioned)
    reasons = dict(
        zip(partitioned.quarantine[SOURCE_ROW], partitioned.quarantine[REASONS])
    )
    assert (
        reasons[9]
        == "age: 230 is not in [17, 90] [pandera]; age: 230 is not in [17, 90] [gx]"
    )
    assert reasons[11] == "capital-gain: 150000 is not in [0, 99999] [gx]"


def _pickling(fn, items):
    """A mapper that sends function, arguments and results through pickle."""
    out = []
    for item in list(items):
        remote, argument = (
            pickle.loads(pickle.dumps(fn)),
            pickle.loads(pickle.dumps(item)),
        )
        out.append(pickle.loads(pickle.dumps(remote(argument))))
    return out


def test_partition_work_pickles_and_runs_on_a_dask_cluster(
    contract, shipped_dirty, tmp_path
):
    from distributed import Client, LocalCluster

    schema, suite = contract
    table, parts = shipped_dirty
    memory, error, through_pickle, pickled_error = _both(
        table, parts, schema, suite, tmp_path / "pickled", limit=0.5,
        map_parts=_pickling,
    )  # fmt: skip
    assert error is None and pickled_error is None
    _assert_same(memory, through_pickle)
    with (
        LocalCluster(
            processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):

        def farm(fn, items):
            return client.gather(client.map(fn, list(items), pure=False))

        on_dask = validate_partitions(
            parts, schema, suite, max_rejected_fraction=0.5, source="adult.csv",
            out_dir=tmp_path / "dask", map_parts=farm,
        )  # fmt: skip
    _assert_same(memory, on_dask)


# -- a larger dirty table, a suite with every table-level check partitions make ---------
ROWS = 600


@pytest.fixture(scope="module")
def dirty(tmp_path_factory):
    table = datasets.load("adult").iloc[:ROWS].copy()
    table = table.astype(
        {"age": object, "hours-per-week": object, "capital-gain": object}
    )
    table.loc[[3, 250], "age"] = "abc"
    table.loc[[7, 300], "age"] = 230
    table.loc[[10, 400], "sex"] = "X"
    table.loc[[20, 500], "income"] = pd.NA
    table.loc[[30, 310], "capital-gain"] = 150000
    table.loc[97:193, "hours-per-week"] = "many"  # all of the second 97-row part
    table.loc[590, "fnlwgt"] = table.loc[5, "fnlwgt"]  # a duplicate across parts
    folder = tmp_path_factory.mktemp("dirty600")
    table.to_csv(folder / "dirty.csv", index=False)
    parts = ingest_partitions(
        "csv", folder / "dirty.csv", out_dir=folder / "parts", partition_rows=97
    )
    return load_source("csv", folder / "dirty.csv"), parts


EXTRA = [
    {"type": "expect_column_values_to_be_unique", "kwargs": {"column": "fnlwgt"}},
    {"type": "expect_column_values_to_be_unique",
     "kwargs": {"column": "education-num", "mostly": 0.5}},
    {"type": "expect_column_min_to_be_between", "kwargs": {"column": "age", "min_value": 20}},
    {"type": "expect_column_max_to_be_between",
     "kwargs": {"column": "hours-per-week", "max_value": 99}},
    {"type": "expect_column_mean_to_be_between",
     "kwargs": {"column": "age", "min_value": 30, "max_value": 50}},
    {"type": "expect_column_sum_to_be_between",
     "kwargs": {"column": "capital-loss", "max_value": 10}},
    {"type": "expect_column_distinct_values_to_be_in_set",
     "kwargs": {"column": "race", "value_set": ["White", "Black"]}},
    {"type": "expect_column_distinct_values_to_equal_set",
     "kwargs": {"column": "sex", "value_set": ["Female", "Male", "Other"]}},
    {"type": "expect_column_unique_value_count_to_be_between",
     "kwargs": {"column": "education", "min_value": 20}},
    {"type": "expect_table_column_count_to_equal", "kwargs": {"value": 15}},
    {"type": "expect_table_columns_to_match_ordered_list",
     "kwargs": {"column_list": list(datasets.ADULT_COLUMNS)}},
    {"type": "expect_table_row_count_to_equal", "kwargs": {"value": ROWS}},
    {"type": "expect_column_values_to_match_regex",
     "kwargs": {"column": "occupation", "regex": "^[A-Z]"}},
]  # fmt: skip


def test_dirty_table_in_97_row_parts_with_table_level_checks(contract, dirty, tmp_path):
    schema, suite = contract
    suite = copy.deepcopy(suite)
    suite["expectations"] += copy.deepcopy(EXTRA)
    table, parts = dirty
    assert len(parts.paths) == 7
    memory, error, partitioned, partitioned_error = _both(
        table, parts, schema, suite, tmp_path, limit=1.0
    )
    assert error is not None and partitioned_error == error
    for failed in (
        "expect_column_min_to_be_between(age) failed [gx]: observed 17.0",
        "expect_column_sum_to_be_between(capital-loss)",
        "expect_column_distinct_values_to_equal_set(sex)",
        "expect_column_values_to_be_unique(education-num)",
    ):
        assert failed in error
    _assert_same(memory, partitioned)
    # the part whose hours are all text: no row of it is clean, and it is no error
    assert partitioned.clean.part_rows[1] == 0
    reasons = dict(
        zip(partitioned.quarantine[SOURCE_ROW], partitioned.quarantine[REASONS])
    )
    assert reasons[120] == "hours-per-week: 'many' cannot be read as int64 [pandera]"
    for row in (5, 590):  # the duplicate across parts, under its global row numbers
        assert "fails expect_column_values_to_be_unique [gx]" in reasons[row]
    entries = {
        (e["expectation"], e["column"]): e
        for e in partitioned.report["gx"]["expectations"]
    }
    assert entries[("expect_table_row_count_to_equal", None)]["observed_value"] == ROWS
    assert (
        entries[("expect_column_values_to_be_unique", "fnlwgt")]["unexpected_count"]
        >= 2
    )


# -- errors --------------------------------------------------------------------------
def _parts(frame: pd.DataFrame, rows: int, folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, start in enumerate(range(0, len(frame), rows)):
        paths.append(folder / f"part-{i:05d}.parquet")
        frame.iloc[start : start + rows].to_parquet(paths[-1], index=False)
    return paths


def test_schema_errors_are_those_of_the_in_memory_validation(contract, tmp_path):
    schema, suite = contract
    table = datasets.load("adult").iloc[:40]
    cases = {
        "missing": table.drop(columns=["sex"]),
        "extra": table.assign(name="Ann"),
        "text": table.astype({"age": object}).assign(age="old"),  # no age at all
    }
    for name, frame in cases.items():
        with pytest.raises(SchemaMismatchError) as expected:
            validate_table(frame, schema, suite, source="t")
        with pytest.raises(SchemaMismatchError) as got:
            validate_partitions(
                _parts(frame, 15, tmp_path / name), schema, suite, source="t",
                out_dir=tmp_path / f"{name}-out",
            )  # fmt: skip
        assert str(got.value) == str(expected.value)
    assert "40 of 40 values are not integers" in str(got.value)


def test_what_partitions_cannot_check_exactly_is_refused(contract, tmp_path):
    schema, suite = contract
    paths = _parts(datasets.load("adult").iloc[:30], 10, tmp_path / "p")
    for entry, why in [
        ({"type": "expect_column_median_to_be_between",
          "kwargs": {"column": "age", "min_value": 1}}, "column.median"),
        ({"type": "expect_column_values_to_be_increasing",
          "kwargs": {"column": "age"}}, "column_values.increasing"),
        ({"type": "expect_compound_columns_to_be_unique",
          "kwargs": {"column_list": ["age", "sex"]}}, "compound_columns.unique"),
    ]:  # fmt: skip
        refused = {**suite, "expectations": [*suite["expectations"], entry]}
        with pytest.raises(InvalidParameterError, match=f"{entry['type']}.*{why}"):
            validate_partitions(paths, schema, refused, out_dir=tmp_path / "o")
    unique = schema.update_column("fnlwgt", unique=True)
    with pytest.raises(InvalidParameterError, match="uniqueness"):
        validate_partitions(paths, unique, suite, out_dir=tmp_path / "o")
    with pytest.raises(InvalidParameterError, match="max_rejected_fraction") as got:
        validate_partitions(
            paths, schema, suite, max_rejected_fraction=2, out_dir=tmp_path
        )
    with pytest.raises(InvalidParameterError) as expected:
        validate_table(
            datasets.load("adult").iloc[:30], schema, suite, max_rejected_fraction=2
        )
    assert str(got.value) == str(expected.value)


def test_the_mean_of_non_integer_numbers_is_refused_not_approximated(tmp_path):
    schema = pa.DataFrameSchema({"x": pa.Column(float)}, coerce=True, name="floats")
    suite = {"name": "floats", "expectations": [
        {"type": "expect_column_mean_to_be_between", "kwargs": {"column": "x", "min_value": 0}},
    ]}  # fmt: skip
    frame = pd.DataFrame({"x": np.linspace(0.1, 3.3, 12)})
    with pytest.raises(InvalidParameterError, match="non-integer numbers"):
        validate_partitions(
            _parts(frame, 5, tmp_path), schema, suite, out_dir=tmp_path / "o"
        )
    whole = pd.DataFrame({"x": np.arange(12.0)})  # integers in a float column: exact
    outcome = validate_partitions(
        _parts(whole, 5, tmp_path / "w"), schema, suite, out_dir=tmp_path / "wo"
    )
    assert outcome.report == validate_table(whole, schema, suite).report


def test_clean_parts_cut_where_validated_are_the_bytes_of_a_second_pass(
    contract, dirty, tmp_path
):
    """The columns a release may carry, pseudonyms too, cut in the validation's
    own write: the same files as writing the clean parts, reading them back and
    cutting them (the step's earlier second pass)."""
    import functools

    from ppdm.prepare.roles import release_bound
    from ppdm.scale.ingest_parts import write_part
    from ppdm.scale.part_files import read_part

    schema, suite = contract
    _, parts = dirty
    bound = functools.partial(
        release_bound,
        columns=("age", "education", "sex", "income", "native-country"),
        pseudonymized=("native-country",),
        key=b"k" * 32,
    )
    kwargs = dict(max_rejected_fraction=0.5, source="adult.csv")
    once = validate_partitions(
        parts, schema, suite, out_dir=tmp_path / "once", finish=bound, **kwargs
    )
    plain = validate_partitions(
        parts, schema, suite, out_dir=tmp_path / "plain", **kwargs
    )
    assert once.report == plain.report
    assert once.clean.columns == ("age", "education", "sex", "native-country", "income")
    for cut, whole in zip(once.clean.paths, plain.clean.paths, strict=True):
        again = tmp_path / "again" / Path(whole).name
        write_part(bound(read_part(whole)), again)
        assert Path(cut).read_bytes() == again.read_bytes()
