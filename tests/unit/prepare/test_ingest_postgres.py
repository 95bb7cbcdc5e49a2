"""Reading a real PostgreSQL server: types, chunks, the password, and the errors.

Every test reads the session's throwaway server (the ``postgres_server``
fixture of ``tests/conftest.py``), through psycopg 3 as a data owner's
configuration names it: ``postgresql+psycopg://user@host:port/db``.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import psycopg
import pytest
import sqlalchemy as sa

from ppdm.config import SourceConfig
from ppdm.exceptions import SourceError
from ppdm.prepare import ingest
from ppdm.prepare.ingest import fingerprint, load_source, source_bounds, source_columns
from ppdm.prepare.ingest import sql as sql_source
from ppdm.release.keys import MissingKeyError
from ppdm.scale.ingest_parts import ingest_partitions

QUERY = "SELECT * FROM visits ORDER BY id"
#: One row per case: an integer without NULL, one with a NULL only in the last
#: row (a later chunk), numeric, real, date, timestamp, timestamptz, a code
#: with leading zeros, free text, a boolean (left to pandas' conversion).
ROWS = [
    (1, 10, "1.25", 0.5, "1950-02-03", "2021-01-01 10:00", "2021-01-01 23:30+05",
     "01001", "flu", True),
    (2, 11, "2.50", 1.5, "1961-12-31", "2021-06-30 00:00", "2021-01-01 00:30+02",
     "00012", "cold", False),
    (3, 12, None, None, None, None, None, None, None, None),
    (4, None, "-7.75", 2.25, "1999-01-01", "1999-01-01 23:59", "1999-12-31 22:00-03",
     "99999", "", True),
]  # fmt: skip


@pytest.fixture(scope="module")
def visits(postgres_server) -> str:
    """A database holding the table ``visits`` with every mapped type."""
    database = postgres_server.create_database("ingest_types")
    with postgres_server.connect(database) as connection:
        connection.execute(
            "CREATE TABLE visits (id integer, stays bigint, cost numeric(8, 2), "
            "score real, birth date, admitted timestamp, seen timestamptz, "
            "zip text, note varchar(20), flag boolean)"
        )
        with connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO visits VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                ROWS,
            )
    return postgres_server.url(database)


def test_database_types_become_the_products_types(visits):
    frame = load_source("sql", visits, query=QUERY)
    assert list(frame.columns) == [
        "id", "stays", "cost", "score", "birth", "admitted", "seen", "zip", "note",
        "flag",
    ]  # fmt: skip
    assert frame["id"].dtype == np.int64
    assert frame["stays"].dtype == np.float64  # a NULL: as pandas reads integers
    assert frame["stays"].isna().tolist() == [False, False, False, True]
    assert frame["cost"].dtype == np.float64
    assert frame["cost"].tolist()[:2] == [1.25, 2.5] and frame["cost"][3] == -7.75
    assert frame["score"].dtype == np.float64
    # dates and timestamps: the day as ISO text, which profiling reads as dates
    for column in ("birth", "admitted", "seen", "zip", "note"):
        assert isinstance(frame[column].dtype, pd.StringDtype), column
    assert frame["birth"].tolist() == ["1950-02-03", "1961-12-31", pd.NA, "1999-01-01"]
    assert frame["admitted"].tolist() == [
        "2021-01-01", "2021-06-30", pd.NA, "1999-01-01",
    ]  # fmt: skip
    # an aware timestamp's day in UTC, whatever the session's time zone
    assert frame["seen"].tolist() == ["2021-01-01", "2020-12-31", pd.NA, "2000-01-01"]
    assert frame["zip"].tolist() == ["01001", "00012", pd.NA, "99999"]
    assert frame["note"][3] == ""  # an empty text is a value; NULL is missing
    assert frame["note"].isna().tolist() == [False, False, True, False]


def test_dates_from_postgres_get_the_calendar_hierarchy(visits):
    from ppdm.generalization.ordered_text import date_format
    from ppdm.prepare.profile import propose_hierarchy

    frame = load_source("sql", visits, query=QUERY)
    assert date_format(frame["birth"]) == "%Y-%m-%d"
    plan = propose_hierarchy(frame["birth"])
    assert plan.file_name == "birth.csv"
    (line,) = [x for x in plan.text().splitlines() if x.startswith("1950-02-03;")]
    assert line.count(";") == 5 and line.endswith(";*")  # day, month, ..., *


def test_the_read_is_chunked_and_gives_the_same_table_as_one_chunk(visits, monkeypatch):
    whole = load_source("sql", visits, query=QUERY)
    # The reader fetches as many rows a chunk as its module says.
    monkeypatch.setattr(sql_source, "SQL_CHUNK_ROWS", 1)
    chunked = load_source("sql", visits, query=QUERY)
    pd.testing.assert_frame_equal(chunked, whole)
    assert fingerprint(chunked) == fingerprint(whole)


def test_rows_are_fetched_through_a_server_side_cursor(visits):
    cursors: list = []

    def seen(conn, cursor, statement, parameters, context, executemany):
        cursors.append(cursor)

    sa.event.listen(sa.engine.Engine, "before_cursor_execute", seen)
    try:
        load_source("sql", visits, query=QUERY)
    finally:
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", seen)
    # psycopg's ServerCursor: a named cursor, the result stays on the server
    # and is fetched chunk by chunk (a client cursor would hold it all).
    assert [type(c) for c in cursors] == [psycopg.ServerCursor]


def test_the_dask_engine_reads_the_same_table_in_partitions(visits, tmp_path):
    whole = load_source("sql", visits, query=QUERY)
    parts = ingest_partitions(
        "sql", visits, query=QUERY, out_dir=tmp_path / "parts", partition_rows=1
    )
    assert parts.part_rows == (1, 1, 1, 1)
    pd.testing.assert_frame_equal(parts.to_pandas(), whole)
    assert parts.source_sha256 == fingerprint(whole)


def test_a_password_from_the_environment_never_shows(
    postgres_server, visits, monkeypatch
):
    monkeypatch.setenv("PPDM_TEST_PG_PASSWORD", postgres_server.password)
    bare = postgres_server.url("ingest_types", password="")
    frame = load_source("sql", bare, query=QUERY, password="env:PPDM_TEST_PG_PASSWORD")
    assert len(frame) == len(ROWS)
    assert source_columns(
        "sql", bare, query=QUERY, password="env:PPDM_TEST_PG_PASSWORD"
    )
    assert source_bounds(
        "sql", bare, query=QUERY, password="env:PPDM_TEST_PG_PASSWORD"
    ) == (len(ROWS), None)
    # pre-flight's target check reads one column with the same password
    zips = ingest.source_column(
        "sql", bare, "zip", query=QUERY, password="env:PPDM_TEST_PG_PASSWORD"
    )
    assert zips is not None
    assert zips.isna().tolist() == [False, False, True, False]
    assert zips.dropna().tolist() == ["01001", "00012", "99999"]
    # and a configuration hands every reader the same arguments
    configured = SourceConfig(
        kind="sql", url=bare, query=QUERY, password="env:PPDM_TEST_PG_PASSWORD"
    )
    assert configured.location == bare
    pd.testing.assert_frame_equal(
        load_source(
            configured.kind, configured.location, **configured.reader_options()
        ),
        frame,
    )

    monkeypatch.setenv("PPDM_TEST_PG_PASSWORD", "not-the-password")
    with pytest.raises(SourceError) as wrong:
        load_source("sql", bare, query=QUERY, password="env:PPDM_TEST_PG_PASSWORD")
    assert "password authentication failed" in str(wrong.value)
    assert "not-the-password" not in str(wrong.value)

    monkeypatch.delenv("PPDM_TEST_PG_PASSWORD")
    with pytest.raises(MissingKeyError, match="PPDM_TEST_PG_PASSWORD holds nothing"):
        source_columns("sql", bare, query=QUERY, password="env:PPDM_TEST_PG_PASSWORD")


def test_a_password_in_two_places_is_refused(postgres_server):
    with pytest.raises(SourceError, match="holds a password and password"):
        load_source("sql", postgres_server.url(), query="SELECT 1", password="env:ANY")
    with pytest.raises(ValueError, match="keep the URL without one"):
        SourceConfig(
            kind="sql", url=postgres_server.url(), query="SELECT 1", password="env:X"
        )
    with pytest.raises(ValueError, match="is for a database"):
        SourceConfig(kind="csv", path="x.csv", password="env:X")


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("unreachable", "cannot connect: .*Connection refused"),
        ("wrong password", "cannot connect: .*password authentication failed"),
        ("unknown database", 'cannot connect: .*database "nowhere" does not exist'),
        ("unknown table", 'query failed: relation "nowhere" does not exist'),
        ("failing query", "query failed: division by zero"),
        ("no rows", "holds no rows"),
    ],
)
def test_errors_are_one_line_with_the_password_masked(
    postgres_server, visits, case, expected
):
    secret = "s3cret-Pa55"
    port = postgres_server.port
    url, query = {
        "unreachable": (
            # a port nobody listens on: the server's own, once free, is not safe
            f"postgresql+psycopg://ppdm:{secret}@127.0.0.1:{_closed_port()}/x",
            QUERY,
        ),
        "wrong password": (postgres_server.url("ingest_types", password=secret), QUERY),
        "unknown database": (postgres_server.url("nowhere"), QUERY),
        "unknown table": (visits, "SELECT * FROM nowhere"),
        "failing query": (visits, "SELECT id / 0 FROM visits"),
        "no rows": (visits, "SELECT * FROM visits WHERE id < 0"),
    }[case]
    # pre-flight's reads (the header, the row count) report what they can know
    # without computing the rows; a query failing on a row is ingest's.
    reads = {"failing query": [load_source], "no rows": [source_bounds, load_source]}
    for read in reads.get(case, [source_columns, load_source]):
        with pytest.raises(SourceError, match=expected) as raised:
            read("sql", url, query=query)
        message = str(raised.value)
        assert "\n" not in message
        assert secret not in message and postgres_server.password not in message
        assert f"127.0.0.1:{port}" in message or case == "unreachable"
        assert ":***@" in message


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_test_server_runs_as_an_unprivileged_user(postgres_server):
    with postgres_server.connect() as connection:
        directory = connection.execute("SHOW data_directory").fetchone()[0]
    owner = os.stat(directory).st_uid
    assert owner != 0  # PostgreSQL refuses root; as root the fixture uses nobody
    assert directory.startswith(str(postgres_server.directory))
