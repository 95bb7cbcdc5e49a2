"""ppdm.prepare.ingest: every route reads the same table; errors name the source."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.exceptions import InvalidParameterError, SourceError
from ppdm.prepare import datasets, ingest
from ppdm.prepare.ingest import file_sha256, fingerprint, load_source, write_sqlite

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def adult_slice() -> pd.DataFrame:
    # 5,000 rows hold every kind of cell: ints, text, and real missing values
    table = datasets.load("adult").iloc[:5000].reset_index(drop=True)
    assert table.isna().any().any()
    return table


@pytest.fixture(scope="module")
def three_files(tmp_path_factory, adult_slice) -> dict[str, Path | str]:
    folder = tmp_path_factory.mktemp("ingest")
    adult_slice.to_csv(folder / "adult.csv", index=False)  # NA -> empty cell
    adult_slice.to_parquet(folder / "adult.parquet")
    url = write_sqlite(adult_slice, folder / "adult.db", "adult")
    return {"csv": folder / "adult.csv", "parquet": folder / "adult.parquet",
            "sql": url, "db": folder / "adult.db"}  # fmt: skip


def test_csv_parquet_and_sqlite_give_the_same_table(three_files, adult_slice):
    from_csv = load_source("csv", three_files["csv"])
    from_parquet = load_source("parquet", three_files["parquet"])
    from_sql = load_source("sql", three_files["sql"], query="SELECT * FROM adult")
    assert three_files["sql"].startswith("sqlite:///")
    for table in (from_csv, from_parquet, from_sql):
        pd.testing.assert_frame_equal(table, adult_slice)
        assert fingerprint(table) == fingerprint(adult_slice)
    assert int(from_sql["workclass"].isna().sum()) == int(
        adult_slice["workclass"].isna().sum()
    )


def test_sqlite_file_is_really_written(three_files, adult_slice):
    # independent reader: the standard library's sqlite3, not SQLAlchemy/pandas
    with sqlite3.connect(three_files["db"]) as connection:
        rows, ages = connection.execute(
            "SELECT COUNT(*), SUM(age) FROM adult"
        ).fetchone()
        missing = connection.execute(
            "SELECT COUNT(*) FROM adult WHERE workclass IS NULL"
        ).fetchone()[0]
    assert rows == len(adult_slice)
    assert ages == int(adult_slice["age"].sum())
    assert missing == int(adult_slice["workclass"].isna().sum())


def test_sql_query_selects_rows(three_files, adult_slice):
    table = load_source(
        "sql", three_files["sql"], query="SELECT age, sex FROM adult WHERE age > 60"
    )
    expected = adult_slice.loc[adult_slice["age"] > 60, ["age", "sex"]]
    pd.testing.assert_frame_equal(table, expected.reset_index(drop=True))


def test_embedded_route_is_datasets_load():
    pd.testing.assert_frame_equal(
        load_source("embedded", None, embedded="german"), datasets.load("german")
    )


def test_csv_question_marks_and_empty_cells_are_missing():
    table = load_source("csv", DATA / "ingest_adult_sample.csv")
    assert table.shape == (8, 15)
    assert table["age"].dtype == np.int64
    assert table["workclass"].dtype == "string"
    assert table["workclass"].isna().tolist() == [False] * 3 + [True] + [False] * 4
    # one '?' and one empty cell
    assert (
        table["occupation"].isna().tolist() == [False] * 2 + [True, True] + [False] * 4
    )
    assert table.loc[0, "native-country"] == "United-States"  # ", " split cleanly


def test_missing_file_names_the_path(tmp_path):
    path = tmp_path / "nowhere" / "adult.csv"
    with pytest.raises(SourceError, match="not found") as err:
        load_source("csv", path)
    assert str(path) in str(err.value)
    assert isinstance(err.value, OSError)


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_empty_file_names_the_path(tmp_path, kind):
    path = tmp_path / f"empty.{kind}"
    path.write_bytes(b"")
    with pytest.raises(SourceError, match="empty") as err:
        load_source(kind, path)
    assert str(path) in str(err.value)


def test_header_only_csv_holds_no_rows(tmp_path):
    path = tmp_path / "header.csv"
    path.write_text("age,sex\n", encoding="ascii")
    with pytest.raises(SourceError, match=r"holds no rows") as err:
        load_source("csv", path)
    assert str(err.value) == f"source {path} holds no rows"


def test_garbage_parquet_is_unreadable(tmp_path):
    path = tmp_path / "not.parquet"
    path.write_text("age,sex\n30,Male\n", encoding="ascii")
    with pytest.raises(SourceError, match="cannot be read as parquet") as err:
        load_source("parquet", path)
    assert str(path) in str(err.value)


def test_bad_sql_names_the_url_and_the_problem(three_files):
    with pytest.raises(SourceError, match="no such table: persons") as err:
        load_source("sql", three_files["sql"], query="SELECT * FROM persons")
    assert three_files["sql"] in str(err.value)


def test_zero_rows_from_sql_is_an_error(three_files):
    with pytest.raises(SourceError, match="holds no rows") as err:
        load_source(
            "sql", three_files["sql"], query="SELECT * FROM adult WHERE age > 200"
        )
    assert three_files["sql"] in str(err.value)


def test_missing_sqlite_file_is_not_created(tmp_path):
    path = tmp_path / "absent.db"
    with pytest.raises(SourceError, match="database file not found"):
        load_source("sql", f"sqlite:///{path}", query="SELECT 1")
    assert not path.exists()


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # sqlite ignores it
@pytest.mark.parametrize(
    "url",
    [
        "postgresql://alice:hunter2@127.0.0.1:9/payroll",  # no driver or no server
        "sqlite:///:memory:?password=hunter2",  # reaches the query
    ],
)
def test_password_never_appears_in_errors(url):
    with pytest.raises(SourceError) as err:
        load_source("sql", url, query="SELECT * FROM salaries")
    message = str(err.value)
    assert "hunter2" not in message
    assert "source " in message


def test_password_is_masked_not_dropped():
    with pytest.raises(SourceError) as err:
        load_source("sql", "postgresql://alice:hunter2@127.0.0.1:9/payroll",
                    query="SELECT 1")  # fmt: skip
    assert "postgresql://alice:***@127.0.0.1:9/payroll" in str(err.value)


def test_unknown_kind_and_missing_arguments():
    with pytest.raises(InvalidParameterError, match="kind must be one of"):
        load_source("excel", "a.xlsx")
    with pytest.raises(InvalidParameterError, match="query"):
        load_source("sql", "sqlite:///:memory:")
    with pytest.raises(InvalidParameterError, match="embedded"):
        load_source("embedded", None)
    with pytest.raises(SourceError, match="unknown embedded dataset"):
        load_source("embedded", None, embedded="titanic")


# -- fingerprints ---------------------------------------------------------------
def test_fingerprint_is_the_same_in_another_process():
    code = (
        "from ppdm.prepare import datasets; from ppdm.prepare.ingest import fingerprint; "
        "print(fingerprint(datasets.load('german')))"
    )
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert other == fingerprint(datasets.load("german"))


def test_fingerprint_sees_names_types_and_order_but_not_the_index():
    table = datasets.load("german").head(50)
    base = fingerprint(table)
    assert fingerprint(table.set_axis(range(100, 150))) == base
    assert fingerprint(table.rename(columns={"age": "Age"})) != base
    assert fingerprint(table.astype({"age": "float64"})) != base
    assert fingerprint(table.iloc[::-1]) != base
    assert fingerprint(table.iloc[:, ::-1]) != base
    assert fingerprint(table.head(49)) != base


@settings(max_examples=40, deadline=None)
@given(
    ints=st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=30),
    data=st.data(),
)
def test_fingerprint_changes_when_any_one_cell_changes(ints, data):
    texts = data.draw(
        st.lists(st.one_of(st.none(), st.text(max_size=5)), min_size=len(ints),
                 max_size=len(ints))
    )  # fmt: skip
    table = pd.DataFrame(
        {"n": np.array(ints, dtype=np.int64), "t": pd.array(texts, dtype="string")}
    )
    row = data.draw(st.integers(0, len(ints) - 1))
    changed_n = table.copy()
    changed_n.loc[row, "n"] = ints[row] + data.draw(st.integers(1, 1000))
    new_text = data.draw(st.one_of(st.none(), st.text(max_size=5)))
    changed_t = table.copy()
    changed_t.loc[row, "t"] = new_text
    base = fingerprint(table)
    assert fingerprint(table.copy()) == base
    assert fingerprint(changed_n) != base
    if new_text != texts[row]:
        assert fingerprint(changed_t) != base


def test_file_sha256_matches_hashlib_on_a_multichunk_file(tmp_path):
    payload = np.random.default_rng(7).bytes(3 * (1 << 20) + 12345)
    path = tmp_path / "blob.bin"
    path.write_bytes(payload)
    assert file_sha256(path) == hashlib.sha256(payload).hexdigest()
    with pytest.raises(SourceError, match="cannot be read"):
        file_sha256(tmp_path / "absent.bin")


def test_codes_with_leading_zeros_stay_text(tmp_path):
    path = tmp_path / "codes.csv"
    path.write_text(
        "zip,count,mrn,y\n01001,3,0000123,a\n02134,12,0000777,b\n10115,7,,a\n",
        encoding="utf-8",
    )
    frame = load_source("csv", path)
    assert frame["zip"].tolist() == ["01001", "02134", "10115"]
    assert frame["mrn"].tolist()[:2] == ["0000123", "0000777"]
    assert frame["mrn"].isna().tolist() == [False, False, True]
    assert isinstance(frame["zip"].dtype, pd.StringDtype)
    assert frame["count"].dtype == np.int64  # a number without leading zeros


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_the_delimiter_is_sniffed(tmp_path, sep):
    table = pd.DataFrame(
        {
            "age": [34, 51, 29, 62],
            "note": ["a, b; c", "x|y", "tab\there", "plain"],  # quoted separators
            "city": ["Graz", "Linz", "Wels", "Enns"],
        }
    )
    path = tmp_path / "t.csv"
    table.to_csv(path, index=False, sep=sep)
    assert ingest.sniff_delimiter(path) == sep
    read = ingest.load_source("csv", path, delimiter=sep)
    assert list(read.columns) == ["age", "note", "city"]
    assert list(read["note"]) == list(table["note"])


def test_a_single_column_or_header_only_file_sniffs_a_comma(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("age\n34\n51\n")
    assert ingest.sniff_delimiter(path) == ","
    path.write_text("age;sex\n")
    assert ingest.sniff_delimiter(path) == ";"


def test_a_bad_delimiter_is_refused(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(InvalidParameterError, match="delimiter must be one of"):
        ingest.load_source("csv", path, delimiter=":")


def test_bounds_of_a_csv_file_are_read_only_when_it_is_small(tmp_path, monkeypatch):
    """Rows and distinct values are counted in a small file; a census-sized one
    (above the cheap size) gets no bound rather than a read of all its bytes."""
    from ppdm.prepare.ingest import readers, source_bounds

    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,x\n2,y\n3,x\n")
    assert source_bounds("csv", path, distinct_of="b") == (3, 2)
    monkeypatch.setattr(readers, "_CHEAP_BYTES", path.stat().st_size - 1)
    assert source_bounds("csv", path, distinct_of="b") == (None, None)
