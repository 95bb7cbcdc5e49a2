"""What the fuzzing found, each as a known answer (see benchmarks/results/fuzzing.md).

Each case was an input that crashed a step with an exception of a library,
was accepted although wrong, or was refused with a message that named the
wrong thing; here with the exact outcome now expected.
"""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ppdm.config import check_source_columns, default_config
from ppdm.exceptions import DataValidationError, SchemaMismatchError, SourceError
from ppdm.prepare import datasets, ingest, validation
from ppdm.prepare.dataset_folder import load_contract
from ppdm.resources import schema_dir


@pytest.fixture(scope="module")
def german() -> pd.DataFrame:
    return datasets.load("german").head(40)


@pytest.fixture(scope="module")
def contract():
    return load_contract(schema_dir("german"))


def _validate(table: pd.DataFrame, contract, limit: float = 0.05):
    return validation.validate_table(
        table, contract.schema, contract.suite, max_rejected_fraction=limit,
        source="t.csv",
    )  # fmt: skip


def test_a_column_of_true_is_not_the_number_one(tmp_path, german, contract):
    path = tmp_path / "t.csv"
    german.assign(**{"credit-amount": "true"}).to_csv(path, index=False)
    table = ingest.load_source("csv", path)
    assert table["credit-amount"].dtype == bool  # how pandas reads it
    with pytest.raises(SchemaMismatchError) as refused:
        _validate(table, contract)
    assert str(refused.value) == (
        "t.csv: column 'credit-amount' cannot be read as int64: 40 of 40 values "
        "are not integers, e.g. True at row 0"
    )


def test_booleans_and_dates_among_numbers_are_rejected_rows(german, contract):
    table = german.astype({"duration": object, "age": object})
    table.loc[2, "duration"] = True
    table.loc[5, "age"] = pd.Timestamp("1970-01-31")
    outcome = _validate(table, contract, limit=0.1)
    rejected = dict(
        zip(outcome.quarantine["_source_row"], outcome.quarantine["_reasons"])
    )
    assert rejected == {
        2: "duration: True cannot be read as int64 [pandera]",
        5: "age: Timestamp('1970-01-31 00:00:00') cannot be read as int64 [pandera]",
    }
    assert len(outcome.clean) == len(german) - 2


def test_an_integer_beyond_64_bits_is_one_rejected_row(tmp_path, german, contract):
    path = tmp_path / "t.csv"
    spoiled = german.astype({"age": object})
    spoiled.loc[7, "age"] = 10**30
    spoiled.to_csv(path, index=False)
    table = ingest.load_source("csv", path)
    assert table["age"].dtype == "string"  # kept as its text, not rounded
    assert table.loc[7, "age"] == str(10**30) and table.loc[0, "age"] == str(
        german.loc[0, "age"]
    )
    outcome = _validate(table, contract)
    assert outcome.quarantine["_source_row"].tolist() == [7]
    assert outcome.quarantine["_reasons"].tolist() == [
        f"age: '{10**30}' cannot be read as int64 [pandera]"
    ]


def test_a_sqlite_column_of_numbers_text_and_blobs_is_read_as_text(tmp_path):
    path = tmp_path / "t.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (a, b)")
        connection.executemany(
            "INSERT INTO t VALUES (?, ?)",
            [(1, "x"), ("y", 2), (2**63 - 1, b"\x00\xff"), (None, 3.5)],
        )
    connection.close()
    table = ingest.load_source("sql", f"sqlite:///{path}", query="SELECT * FROM t")
    assert table["a"].tolist() == ["1", "y", str(2**63 - 1), pd.NA]
    assert table["b"].tolist() == ["x", "2", "\x00\\xff", "3.5"]


def test_a_parquet_column_of_lists_is_named(tmp_path, german, contract):
    arrow = pa.Table.from_pandas(german, preserve_index=False)
    column = arrow.schema.get_field_index("duration")
    arrow = arrow.set_column(
        column, "duration", pa.array([[int(v)] for v in german["duration"]])
    )
    pq.write_table(arrow, tmp_path / "t.parquet")
    table = ingest.load_source("parquet", tmp_path / "t.parquet")
    with pytest.raises(SchemaMismatchError, match="column 'duration' cannot be read"):
        _validate(table, contract)


@pytest.mark.parametrize("kind", ["csv", "parquet", "sql"])
def test_a_repeated_column_name_is_named_with_both_positions(tmp_path, german, kind):
    if kind == "csv":
        path = tmp_path / "t.csv"
        german.to_csv(path, index=False, header=[*german.columns[:-1], "age"])
        location, query, name = path, None, str(path)
    elif kind == "parquet":
        path = tmp_path / "t.parquet"
        arrow = pa.Table.from_pandas(german, preserve_index=False)
        pq.write_table(arrow.append_column("age", arrow.column("age")), path)
        location, query, name = path, None, str(path)
    else:
        path = tmp_path / "t.db"
        location = ingest.write_sqlite(german, path, "t")
        query, name = "SELECT *, age FROM t", f"sqlite:///{path}"
    last = len(german.columns) + (kind != "csv")
    expected = (
        f"column name 'age' appears twice in the header (columns 13 and {last}); "
        "every column needs a name of its own"
    )
    for read in (ingest.source_columns, ingest.load_source):
        with pytest.raises(SourceError) as refused:
            read(kind, location, query=query)
        assert str(refused.value).startswith(f"source {name}")
        assert str(refused.value).endswith(expected)


@pytest.mark.parametrize(("sep", "said"), [(";", "';'"), ("\t", "tabs"), ("|", "'|'")])
def test_another_delimiter_is_named(tmp_path, german, sep, said):
    path = tmp_path / "t.csv"
    german.to_csv(path, index=False, sep=sep)
    with pytest.raises(SourceError) as refused:
        ingest.source_columns("csv", path)
    written = json.dumps(sep)
    assert str(refused.value).endswith(
        f"the file looks separated by {said}: write `delimiter: {written}` under "
        "`source:` in the configuration"
    )
    # As the message says: with that delimiter it reads as the comma file does.
    assert ingest.source_columns("csv", path, delimiter=sep) == list(german.columns)


def test_text_that_is_not_utf8_names_its_byte_and_line(tmp_path, german):
    path = tmp_path / "t.csv"
    text = german.to_csv(index=False, lineterminator="\n")
    data = german.assign(purpose=german["purpose"].where(german.index != 2, "télé"))
    data = data.to_csv(index=False, lineterminator="\n").encode("latin-1")
    path.write_bytes(data)
    at = data.index("é".encode("latin-1"))
    for read in (ingest.source_columns, ingest.load_source):
        try:
            read("csv", path)
        except SourceError as refused:
            assert str(refused) == (
                f"source {path}: not UTF-8 text at byte {at} (line 4); save it as UTF-8"
            )
        else:
            assert read is ingest.source_columns  # the header alone is UTF-8
    path.write_bytes(text.encode("utf-16"))
    with pytest.raises(SourceError, match="it starts with a UTF-16 byte-order mark"):
        ingest.source_columns("csv", path)
    path.write_bytes(text.encode("utf-16-le"))
    with pytest.raises(SourceError, match="NUL bytes; the file looks like UTF-16"):
        ingest.source_columns("csv", path)


def test_a_first_row_with_a_surplus_field_is_refused(tmp_path, german):
    path = tmp_path / "t.csv"
    lines = german.to_csv(index=False, lineterminator="\n").split("\n")
    lines[1] += ",surplus"
    path.write_text("\n".join(lines))
    with pytest.raises(SourceError) as refused:
        ingest.load_source("csv", path)
    assert str(refused.value) == (
        f"source {path}: line 2 has more fields than the header's 21 columns (a "
        "value holding a comma must be quoted)"
    )


@pytest.mark.parametrize("kind", ["csv", "parquet", "sql"])
def test_a_source_with_no_rows_says_so_before_any_step(tmp_path, german, kind):
    empty = german.iloc[:0]
    if kind == "csv":
        path = tmp_path / "t.csv"
        empty.to_csv(path, index=False)
        location, query, name = path, None, str(path)
    elif kind == "parquet":
        path = tmp_path / "t.parquet"
        empty.to_parquet(path)
        location, query, name = path, None, str(path)
    else:
        location = ingest.write_sqlite(german, tmp_path / "t.db", "t")
        query = "SELECT * FROM t WHERE 1 = 0"
        name = f"{location} (query: {query})"
    with pytest.raises(SourceError) as refused:
        ingest.source_bounds(kind, location, query=query)
    assert str(refused.value) == f"source {name} holds no rows"


def test_preflight_leaves_no_database_file_behind_a_mistyped_path(tmp_path):
    absent = tmp_path / "typo.db"
    config = default_config("german").with_overrides(
        source={"kind": "sql", "url": f"sqlite:///{absent}", "query": "SELECT 1"}
    )
    with pytest.raises(SourceError, match="database file not found"):
        check_source_columns(config)
    assert ingest.source_bounds("sql", f"sqlite:///{absent}", query="SELECT 1") == (
        None,
        None,
    )
    assert not absent.exists()


def test_many_rejections_still_name_the_rows(german, contract):
    """A regression guard: the quarantine keeps its reasons per row."""
    table = german.astype({"age": object})
    rows = np.arange(0, 40, 4)
    table.loc[rows, "age"] = "abc"
    with pytest.raises(DataValidationError) as refused:
        _validate(table, contract)
    outcome = refused.value.outcome
    assert outcome.quarantine["_source_row"].tolist() == rows.tolist()
    assert set(outcome.quarantine["_reasons"]) == {
        "age: 'abc' cannot be read as int64 [pandera]"
    }
