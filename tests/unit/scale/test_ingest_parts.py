"""ppdm.scale.ingest_parts: partitions equal slices of the in-memory ingest, errors too."""

from __future__ import annotations

import io
import pickle
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdm.exceptions import InvalidParameterError, SourceError
from ppdm.prepare import datasets
from ppdm.prepare.ingest import file_sha256, fingerprint, load_source, write_sqlite
from ppdm.scale.ingest_parts import (
    PartitionedTable,
    ingest_partitions,
    partitioned_fingerprint,
)

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return datasets.load("adult")


@pytest.fixture(scope="module")
def sources(tmp_path_factory, adult) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("sources")
    adult.to_csv(folder / "adult.csv", index=False)  # missing -> empty cell
    adult.to_parquet(folder / "adult.parquet", row_group_size=5000)
    small = adult.iloc[:3000]
    small.to_csv(folder / "small.csv", index=False)
    return {
        "csv": str(folder / "adult.csv"),
        "parquet": str(folder / "adult.parquet"),
        "small": str(folder / "small.csv"),
        "sql": write_sqlite(small, folder / "small.db", "adult"),
    }


def _stored(frame: pd.DataFrame) -> pd.DataFrame:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return pd.read_parquet(buffer)


def _assert_slices(
    parts: PartitionedTable, whole: pd.DataFrame, rows: int, *, stored: bool = False
) -> None:
    """Each partition is the matching slice of ``whole``: values, dtypes, index.

    ``stored``: the slice as Parquet stores it (a column of Python objects,
    e.g. booleans with missing values, reads back in Parquet's type).
    """
    assert parts.rows == len(whole) == sum(parts.part_rows)
    assert parts.columns == tuple(whole.columns)
    expected = [min(rows, len(whole) - s) for s in range(0, len(whole), rows)]
    assert list(parts.part_rows) == expected
    assert list(parts.starts) == list(range(0, len(whole), rows))
    for index, start in enumerate(parts.starts):
        piece = whole.iloc[start : start + parts.part_rows[index]].reset_index(
            drop=True
        )
        pd.testing.assert_frame_equal(
            parts.read(index), _stored(piece) if stored else piece
        )
    if not stored:
        pd.testing.assert_frame_equal(parts.to_pandas(), whole)


@pytest.mark.parametrize("kind", ["embedded", "csv", "parquet"])
def test_adult_in_7000_row_parts_equals_the_in_memory_table(
    kind, sources, adult, tmp_path
):
    location = sources.get(kind)
    whole = load_source(kind, location, embedded="adult")
    parts = ingest_partitions(
        kind, location, embedded="adult", out_dir=tmp_path, partition_rows=7000
    )
    _assert_slices(parts, whole, 7000)
    pd.testing.assert_frame_equal(whole, adult)  # the shipped table, typed
    recorded = fingerprint(whole) if kind == "embedded" else file_sha256(location)
    assert parts.source_sha256 == recorded
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"part-{i:05d}.parquet" for i in range(7)
    ]


def test_tiny_parts_of_csv_and_sql_and_the_sql_fingerprint(sources, tmp_path):
    whole = load_source("csv", sources["small"])
    parts = ingest_partitions(
        "csv", sources["small"], out_dir=tmp_path / "csv", partition_rows=97
    )
    _assert_slices(parts, whole, 97)
    query = "SELECT * FROM adult"
    from_sql = load_source("sql", sources["sql"], query=query)
    sql_parts = ingest_partitions(
        "sql", sources["sql"], query=query, out_dir=tmp_path / "sql", partition_rows=97
    )
    _assert_slices(sql_parts, from_sql, 97)
    # what the in-memory ingest step records for SQL: the table's fingerprint
    assert sql_parts.source_sha256 == fingerprint(from_sql)
    assert partitioned_fingerprint(sql_parts) == fingerprint(from_sql)
    assert partitioned_fingerprint(sql_parts.paths) == fingerprint(from_sql)


def test_csv_types_settle_across_parser_blocks_as_the_whole_file_read(tmp_path):
    """pandas infers a CSV column's type per block of 65,536 rows (8 columns).

    One text cell in the last block makes the whole column text, a missing
    cell in the first block makes it float, a column missing in a whole block
    is float, and "007" in an integer block reads as 7 (as the whole-file
    reader gives it). The partitions must agree with the whole file.
    """
    n = 140_000
    rng = np.random.default_rng(3)
    columns = {
        f"c{i}": rng.integers(0, 100, n).astype(str).astype(object) for i in range(8)
    }
    columns["c0"][135_000] = "abc"
    columns["c1"][5] = ""
    columns["c2"][10] = "x"
    columns["c2"][100_000] = "007"
    columns["c3"][:65_536] = ""
    columns["c4"][70_000:80_000] = "1.5"
    path = tmp_path / "mixed.csv"
    pd.DataFrame(columns).to_csv(path, index=False)
    whole = load_source("csv", path)
    assert whole["c0"].dtype == "string" and whole["c1"].dtype == "float64"
    assert whole["c2"].iloc[100_000] == "7"  # the block of integers read "007" as 7
    parts = ingest_partitions(
        "csv", path, out_dir=tmp_path / "p", partition_rows=50_000
    )
    _assert_slices(parts, whole, 50_000)


def test_parquet_row_groups_settle_to_the_whole_file_types(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 20_000
    frame = pd.DataFrame(
        {
            "i": np.arange(n),
            "cat": pd.Categorical(np.where(np.arange(n) < 15_000, "a", "z")),
            "flag": np.ones(n, dtype=bool),
        }
    )
    table = pa.Table.from_pandas(frame, preserve_index=False)
    # a missing integer and a missing flag in the last row group only
    table = table.set_column(0, "i", pa.array([*range(n - 1), None]))
    table = table.set_column(2, "flag", pa.array([True] * (n - 1) + [None]))
    path = tmp_path / "groups.parquet"
    pq.write_table(table, path, row_group_size=4000)
    whole = load_source("parquet", path)
    assert whole["i"].dtype == "float64" and whole["flag"].dtype == object
    parts = ingest_partitions(
        "parquet", path, out_dir=tmp_path / "p", partition_rows=3000
    )
    _assert_slices(parts, whole, 3000, stored=True)
    assert parts.read(0)["i"].dtype == "float64"  # no missing value in this part


def test_sql_columns_whose_chunks_hold_different_kinds(tmp_path):
    path = tmp_path / "kinds.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (a, b, c, d, e, f)")
        connection.executemany(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    "abc" if i == 4000 else i,  # one text value among integers
                    None if i < 2500 else i,  # NULL in the first chunks only
                    None if i % 7 == 0 else i * 0.5,
                    None,  # NULL everywhere
                    b"\xff" if i == 10 else i,  # bytes, not UTF-8, among integers
                    b"raw" if i == 4990 else "text",  # bytes among text
                )
                for i in range(5000)
            ],
        )
    url, query = f"sqlite:///{path}", "SELECT * FROM t"
    whole = load_source("sql", url, query=query)
    assert list(whole.dtypes.astype(str)) == [
        "string", "float64", "float64", "string", "string", "object"
    ]  # fmt: skip
    assert whole["e"].iloc[10] == "\\xff" and whole["e"].iloc[11] == "11"
    parts = ingest_partitions(
        "sql", url, query=query, out_dir=tmp_path / "p", partition_rows=333
    )
    # the fingerprint is of the converted chunks, before Parquet: equal
    assert parts.source_sha256 == fingerprint(whole)
    # Parquet stores the object column f (text and bytes) as bytes
    _assert_slices(parts, whole, 333, stored=True)


def test_rerun_leaves_exactly_the_new_parts_and_no_spool(sources, tmp_path):
    out = tmp_path / "parts"
    ingest_partitions("csv", sources["small"], out_dir=out, partition_rows=500)
    assert len(list(out.iterdir())) == 6
    parts = ingest_partitions("csv", sources["small"], out_dir=out, partition_rows=1000)
    assert sorted(p.name for p in out.iterdir()) == [
        "part-00000.parquet", "part-00001.parquet", "part-00002.parquet"
    ]  # fmt: skip
    assert [p.name for p in tmp_path.iterdir()] == ["parts"]  # spool removed
    assert PartitionedTable.of(parts.paths) == PartitionedTable(
        parts.paths, parts.part_rows, parts.columns, parts.rows
    )


def _errors(kind, location, tmp_path, query=None):
    try:
        load_source(kind, location, query=query)
    except SourceError as err:
        expected = str(err)
    else:
        raise AssertionError("the in-memory ingest accepted the source")
    with pytest.raises(SourceError) as caught:
        ingest_partitions(
            kind, location, query=query, out_dir=tmp_path / "o", partition_rows=3
        )
    return expected, str(caught.value)


GOOD = "a,b\n" + "".join(f"{i},{i}\n" for i in range(20))


@pytest.mark.parametrize(
    "name, content, where",
    [
        ("surplus.csv", "a,b\n1,2,3\n4,5\n", "line 2 has more fields"),
        ("late.csv", GOOD.replace("13,13", "13,13,13"), "in line 15, saw 3"),
        ("latin1.csv", (GOOD + "x,\xe9\n").encode("latin-1"), "(line 22)"),
        ("utf16.csv", GOOD.encode("utf-16"), "UTF-16 byte-order mark"),
        ("twice.csv", "a,a\n1,2\n", "appears twice in the header"),
        ("semicolons.csv", "a;b\n1;2\n", "separated by ';'"),
        ("header.csv", "a,b\n", "holds no rows"),
        ("blank.csv", "\n\n", "no header row"),
        ("empty.csv", "", "file is empty (0 bytes)"),
        ("quote.csv", 'a,b\n"1,2\n', "EOF inside string"),
        ("garbage.parquet", b"PAR1garbage", "magic bytes not found"),
    ],
)
def test_a_bad_file_gives_the_in_memory_error_naming_file_and_line(
    name, content, where, tmp_path
):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    kind = "parquet" if name.endswith(".parquet") else "csv"
    expected, got = _errors(kind, path, tmp_path)
    assert got == expected
    assert got.startswith(f"source {path}") and where in got


def test_missing_file_and_bad_queries_give_the_in_memory_errors(tmp_path):
    expected, got = _errors("csv", tmp_path / "nowhere.csv", tmp_path)
    assert got == expected and "nowhere.csv: file not found" in got
    url = write_sqlite(pd.DataFrame({"a": [1, 2]}), tmp_path / "s.db", "t")
    for query, where in [
        ("SELECT * FROM nope", "query failed: no such table: nope"),
        ("SELECT * FROM t WHERE a > 5", "holds no rows"),
        ("SELECT a, a FROM t", "appears twice"),
    ]:
        expected, got = _errors("sql", url, tmp_path, query=query)
        assert got == expected and where in got
    expected, got = _errors(
        "sql", "postgresql://ann:secret@db/x::", tmp_path, "SELECT 1"
    )
    assert got == expected and "secret" not in got


def test_partition_rows_and_arguments_are_checked(tmp_path):
    for bad in (0, -5, 2.5, True):
        with pytest.raises(InvalidParameterError, match="partition_rows"):
            ingest_partitions("embedded", None, embedded="german", out_dir=tmp_path,
                              partition_rows=bad)  # fmt: skip
    with pytest.raises(InvalidParameterError, match="needs query"):
        ingest_partitions("sql", "sqlite:///x.db", out_dir=tmp_path)
    with pytest.raises(InvalidParameterError, match="kind must be one of"):
        ingest_partitions("xlsx", "a.xlsx", out_dir=tmp_path)


def test_the_shipped_dirty_file_in_parts_of_five(tmp_path):
    path = DATA / "validation_adult_dirty.csv"
    whole = load_source("csv", path)
    parts = ingest_partitions("csv", path, out_dir=tmp_path, partition_rows=5)
    _assert_slices(parts, whole, 5)
    # "abc" in the first part makes age text in every part, as in the whole file
    assert all(parts.read(i)["age"].dtype == "string" for i in range(3))


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_a_delimited_file_in_parts_equals_the_comma_file(sources, tmp_path, sep):
    """The out-of-core engine reads a ``delimiter`` as the in-memory ingest does."""
    comma = load_source("csv", sources["small"])
    path = tmp_path / "small.csv"
    pd.read_csv(sources["small"], dtype=str, keep_default_na=False).to_csv(
        path, index=False, sep=sep
    )
    whole = load_source("csv", path, delimiter=sep)
    pd.testing.assert_frame_equal(whole, comma)
    parts = ingest_partitions(
        "csv", path, out_dir=tmp_path / "parts", partition_rows=700, delimiter=sep
    )
    _assert_slices(parts, whole, 700)


def test_a_delimiter_is_for_csv_files_only(tmp_path):
    with pytest.raises(InvalidParameterError, match="delimiter is for CSV files"):
        ingest_partitions(
            "embedded", None, embedded="german", out_dir=tmp_path, delimiter=";"
        )


def _pickling(fn, items):
    """A mapper that sends each item and result through pickle, as a cluster does."""
    return [
        pickle.loads(pickle.dumps(fn(pickle.loads(pickle.dumps(i))))) for i in items
    ]


def _same_files(a: PartitionedTable, b: PartitionedTable) -> None:
    assert a.part_rows == b.part_rows and a.columns == b.columns
    assert a.source_sha256 == b.source_sha256
    for left, right in zip(a.paths, b.paths, strict=True):
        assert Path(left).read_bytes() == Path(right).read_bytes()


@pytest.mark.parametrize("rows", [50_000, 65_536, 131_072])
def test_the_second_pass_on_workers_writes_the_same_bytes(tmp_path, rows):
    """One partition per worker item, sliced from the kept chunks, converted there.

    The file's chunks (65,536 rows, a parser block for 8 columns) settle to
    text, float and integer columns; partitions that start inside a chunk,
    on its edge, and span two chunks must be the one-process bytes.
    """
    n = 140_000
    rng = np.random.default_rng(5)
    columns = {
        f"c{i}": rng.integers(0, 100, n).astype(str).astype(object) for i in range(8)
    }
    columns["c0"][135_000] = "abc"  # text, found in the last chunk only
    columns["c1"][5] = ""  # float, from the first chunk
    columns["c5"] = np.array([f"{v:05d}" for v in rng.integers(0, 99_999, n)])
    columns["c6"][::7] = "caf\u00e9"
    path = tmp_path / "mixed.csv"
    pd.DataFrame(columns).to_csv(path, index=False)
    one = ingest_partitions("csv", path, out_dir=tmp_path / "one", partition_rows=rows)
    farmed = ingest_partitions(
        "csv",
        path,
        out_dir=tmp_path / "farmed",
        partition_rows=rows,
        map_parts=_pickling,
    )
    _same_files(one, farmed)
    whole = load_source("csv", path)
    _assert_slices(farmed, whole, rows)
    assert farmed.source_sha256 == file_sha256(path)
    # codes with leading zeros stay text, as the whole-file reader keeps them
    assert whole["c5"].dtype == "string" and farmed.read(0)["c5"].dtype == "string"
    assert farmed.to_pandas()["c5"].str.startswith("0").any()


@pytest.mark.parametrize(
    ("change", "kept_ahead"),
    [(None, 2), ("text", 0), ("missing", 0), ("zero-led", 0)],
)
def test_partitions_written_ahead_are_kept_only_with_the_settled_types(
    tmp_path, change, kept_ahead
):
    """While the file is read, each partition whose rows are read is written on
    the workers with the types read so far; a later chunk that changes a
    column's type (a text cell, a missing number, codes with leading zeros
    read again as text) has every partition written again. Either way the
    bytes are the one-process bytes."""
    n = 140_000  # 8 columns: chunks of 65,536 rows; partitions of 50,000
    rng = np.random.default_rng(11)
    columns = {f"c{i}": rng.integers(1, 100, n) for i in range(7)}
    columns["c7"] = rng.choice(["north", "south", "caf\u00e9"], n)
    frame = pd.DataFrame(columns)
    if change == "text":
        frame["c2"] = frame["c2"].astype(object)
        frame.loc[139_000, "c2"] = "n/a"
    elif change == "missing":
        frame["c3"] = frame["c3"].astype("Int64")
        frame.loc[139_000, "c3"] = pd.NA
    elif change == "zero-led":
        frame["c4"] = [f"{v:05d}" for v in rng.integers(1, 99_999, n)]
    path = tmp_path / "table.csv"
    frame.to_csv(path, index=False)
    calls: list[tuple[str, int]] = []

    def recording(fn, items):
        items = list(items)
        calls.append((fn.__name__, len(items)))
        return _pickling(fn, items)

    one = ingest_partitions(
        "csv", path, out_dir=tmp_path / "one", partition_rows=50_000
    )
    farmed = ingest_partitions(
        "csv", path, out_dir=tmp_path / "farmed", partition_rows=50_000,
        map_parts=recording,
    )  # fmt: skip
    _same_files(one, farmed)
    _assert_slices(farmed, load_source("csv", path), 50_000)
    writes = [count for name, count in calls if name == "_write_partition"]
    # the last call is the second pass: the partitions not kept from ahead
    assert sum(writes) - writes[-1] >= 2  # written ahead, kept or not
    assert writes[-1] == 3 - kept_ahead


def test_a_parquet_file_on_a_dask_cluster_writes_the_same_bytes(sources, tmp_path):
    from distributed import Client, LocalCluster

    one = ingest_partitions(
        "parquet", sources["parquet"], out_dir=tmp_path / "one", partition_rows=7000
    )
    with (
        LocalCluster(
            processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):

        def farm(fn, items):
            return client.gather(client.map(fn, list(items), pure=False))

        farmed = ingest_partitions(
            "parquet", sources["parquet"], out_dir=tmp_path / "dask",
            partition_rows=7000, map_parts=farm,
        )  # fmt: skip
    _same_files(one, farmed)


@pytest.mark.parametrize("block", [3, 4, 5, 1 << 20])
def test_the_file_scan_hashes_and_finds_fields_led_by_zero(
    tmp_path, monkeypatch, block
):
    """A field starting 0-and-digit is found after a delimiter, line break, space or
    quote, across read blocks; the hash is the file's sha256 either way."""
    from ppdm.scale import file_scan

    monkeypatch.setattr(file_scan, "SCAN_BLOCK", block)
    cases = {
        b"a,b\n1,0\n10,20\n": False,  # a lone 0, and 0 inside a number
        b"a,b\n1,2\n3,01001\n": True,
        b"a;b\n1;2\n3; 07\n": True,  # after the delimiter and a space
        b'a,b\n1,"0123"\n': True,
        b"a,b\n0123,4\n": True,  # at a line start
        b"a,b\n1,2\n3,4.05\n": False,  # 0 after a decimal point
    }
    for number, (content, expected) in enumerate(cases.items()):
        path = tmp_path / f"f{number}.csv"
        path.write_bytes(content)
        delimiter = ";" if b";" in content else ","
        sha, found = file_scan.scan_file(str(path), delimiter)
        assert sha == file_sha256(path)
        assert found is expected, content
