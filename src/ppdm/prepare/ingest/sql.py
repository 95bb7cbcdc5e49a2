"""Database sources: a query read through SQLAlchemy, in chunks, its password masked.

The rows are fetched in chunks of :data:`SQL_CHUNK_ROWS` through a
server-side cursor, never the whole result at once. A PostgreSQL column's
declared type decides its dtype (:func:`sql_column_kinds`,
:func:`sql_typed_values`). Messages name the URL with its password and
secret-looking arguments masked; a password kept out of the URL is named by a
key spec (``env:NAME``, ``prefect-secret:<block>``).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import SourceError
from ppdm.prepare.ingest.messages import _first_line, _shorten

__all__ = [
    "SQL_CHUNK_ROWS",
    "sql_column_kinds",
    "sql_typed_values",
    "sqlite_file",
    "write_sqlite",
]


#: Rows a SQL source is fetched in at a time (one batch of the server-side
#: cursor): the driver's Python objects for this many rows are all the read
#: holds beyond the table itself.
SQL_CHUNK_ROWS = 10_000


# Used only when a URL is too malformed for SQLAlchemy to parse (and mask) it.
_PASSWORD_IN_URL = re.compile(r"(//[^:/@]*:)[^@]*@")


# Some drivers also take credentials as query arguments (?password=...).
_SECRET_ARGUMENT = re.compile(r"pass|pwd|secret|token|key|credential", re.IGNORECASE)


def _sql_column(
    url: str, query: str | None, column: str, password: str | None = None
) -> pd.Series | None:
    import sqlalchemy as sa

    if not query:
        return None
    # The engine the ingest step uses: a URL without its password reads the
    # column with the password its key spec names, as the whole table is read.
    engine, name, secrets = _sql_engine(url, password)
    try:
        with _connected(engine, name, secrets) as connection:
            quoted = engine.dialect.identifier_preparer.quote(column)
            frame = pd.read_sql(
                sa.text(f"SELECT {quoted} FROM ({query}) AS ppdm_column"), connection
            )
    finally:
        engine.dispose()
    return frame.iloc[:, 0].rename(column)


def _sql_bounds(
    url: str, query: str | None, distinct_of: str | None, password: str | None = None
) -> tuple[int | None, int | None]:
    import sqlalchemy as sa

    if not query:
        return None, None
    engine, _, _ = _sql_engine(url, password)
    try:
        with engine.connect() as connection:
            preparer = engine.dialect.identifier_preparer
            distinct = (
                f", COUNT(DISTINCT {preparer.quote(distinct_of)})"
                if distinct_of
                else ""
            )
            row = connection.execute(
                sa.text(f"SELECT COUNT(*){distinct} FROM ({query}) AS ppdm_bounds")
            ).one()
            return int(row[0]), (int(row[1]) if distinct_of else None)
    finally:
        engine.dispose()


def _sql_columns(url: str, query: str, password: str | None = None) -> list[str] | None:
    import sqlalchemy as sa
    from sqlalchemy.exc import SQLAlchemyError

    try:
        sa.make_url(url)
    except (sa.exc.ArgumentError, ValueError):
        return None  # load_source names the malformed URL
    # What makes the read fail for certain is reported now, before any step:
    # a missing SQLite file, an unset password variable, a server that does
    # not answer or refuses the login, a query it cannot run.
    engine, name, secrets = _sql_engine(url, password)
    try:
        with _connected(engine, name, secrets) as connection:
            # Wrapping the query returns its columns without computing its rows.
            try:
                result = connection.execute(
                    sa.text(f"SELECT * FROM ({query}) AS ppdm_header LIMIT 0")
                )
                return [str(c) for c in result.keys()]
            except SQLAlchemyError:
                connection.rollback()  # PostgreSQL: the transaction is aborted
            # A database that refuses the wrapper runs the query itself, its
            # rows left unfetched on a server-side cursor; a failure is the
            # query's own.
            with _query_errors(name, secrets, query):
                result = connection.execution_options(stream_results=True).execute(
                    sa.text(query)
                )
                names = [str(c) for c in result.keys()]
                result.close()
                return names
    finally:
        engine.dispose()


def _read_sql(
    url: str, query: str, password: str | None = None
) -> tuple[pd.DataFrame, str]:
    # SQLAlchemy is imported here: only the sql route needs it.
    import sqlalchemy as sa

    engine, name, secrets = _sql_engine(url, password)
    try:
        with _connected(engine, name, secrets) as connection:
            with _query_errors(name, secrets, query):
                # A server-side cursor (psycopg: a named cursor) holds the
                # result on the server; the driver never holds more than one
                # chunk of rows, and each chunk is converted as it arrives.
                result = connection.execution_options(
                    stream_results=True, max_row_buffer=SQL_CHUNK_ROWS
                ).execute(sa.text(query))
                frame = _sql_frame(result, connection.dialect.name)
    finally:
        engine.dispose()
    return frame, f"{name} (query: {_shorten(query)})"


def _sql_engine(url: str, password: str | None = None) -> tuple[Any, str, list]:
    """An engine for ``url``, the URL as messages show it, and its secrets.

    ``password`` is a key spec (``"env:NAME"``, ``"prefect-secret:<block>"``)
    naming the password of a URL without one; the engine gets it, messages
    never show it.

    Raises
    ------
    ppdm.exceptions.SourceError
        The URL is malformed, names a missing SQLite file, or has no driver.
    ppdm.release.keys.KeyConfigError
        ``password`` is malformed or names a variable or block holding nothing.
    """
    import sqlalchemy as sa
    from sqlalchemy.exc import SQLAlchemyError

    try:
        parsed = sa.make_url(url)
    except (sa.exc.ArgumentError, ValueError) as exc:
        masked = _PASSWORD_IN_URL.sub(r"\1***@", url)
        raise SourceError(f"source {masked}: not a database URL") from exc
    # Messages name the URL as the configuration writes it: a password kept
    # elsewhere is not shown as one in the URL.
    name = _masked(parsed)
    if password is not None:
        parsed = parsed.set(password=_database_password(password, parsed))
    secrets = [parsed.password] + [
        value for key, value in parsed.query.items() if _SECRET_ARGUMENT.search(key)
    ]
    _check_sqlite_file(parsed)
    options: dict[str, Any] = {}
    if parsed.get_backend_name() == "postgresql" and "connect_timeout" not in (
        parsed.query
    ):
        # libpq waits for an unreachable host as long as TCP does (minutes);
        # the URL's own connect_timeout wins.
        options["connect_args"] = {"connect_timeout": _CONNECT_TIMEOUT_S}
    try:
        engine = sa.create_engine(parsed, **options)
    except (SQLAlchemyError, ImportError) as exc:
        detail = _scrub(_first_line(exc), secrets)
        raise SourceError(f"source {name}: no usable driver ({detail})") from exc
    return engine, name, secrets


#: Seconds a PostgreSQL server has to answer a connection (unless the URL says).
_CONNECT_TIMEOUT_S = 15


def _database_password(spec: str, url: Any) -> str:  # sqlalchemy.engine.URL
    """The password ``spec`` names, for ``url`` (which must not hold one)."""
    from ppdm.release.keys import resolve_secret

    if url.password is not None:
        raise SourceError(
            f"source {_masked(url)}: the URL holds a password and password "
            f"{spec!r} names another; keep the URL without one (user@host)"
        )
    return resolve_secret(spec, purpose=f"the password of the database {_masked(url)}")


@contextlib.contextmanager
def _connected(engine: Any, name: str, secrets: list) -> Iterator[Any]:
    """A connection of ``engine``; a refused one is a :class:`SourceError`.

    The server unreachable, a wrong password, an unknown database: the
    message is the driver's own first line, with the URL's password masked.
    """
    from sqlalchemy.exc import SQLAlchemyError

    try:
        connection = engine.connect()
    except SQLAlchemyError as exc:
        detail = _scrub(_first_line(getattr(exc, "orig", None) or exc), secrets)
        raise SourceError(f"source {name}: cannot connect: {detail}") from exc
    with connection:
        yield connection


def _sql_frame(result: Any, dialect: str) -> pd.DataFrame:
    """The rows of a streamed ``result``, fetched and converted chunk by chunk.

    A column whose database type is known (:func:`sql_column_kinds`) is
    converted chunk by chunk to its compact dtype; any other column keeps its
    values until the end and is then converted as :func:`pandas.read_sql`
    converts a whole result, so it comes out the same as a read in one go.
    """
    from pandas._libs import lib
    from pandas.core.internals.construction import convert_object_array
    from pandas.io.sql import _parse_date_columns

    columns = list(result.keys())
    kinds = sql_column_kinds(result, dialect)
    pieces: list[list[np.ndarray]] = [[] for _ in columns]
    n_rows = 0
    while rows := result.fetchmany(SQL_CHUNK_ROWS):
        content = lib.to_object_array_tuples(rows)
        del rows
        n_rows += len(content)
        for position, kind in enumerate(kinds):
            values = content[:, position]
            pieces[position].append(
                sql_typed_values(values, kind) if kind else values.copy()
            )
        del content
    arrays = [_concatenated(parts) for parts in pieces]
    pieces.clear()
    untyped = [i for i, kind in enumerate(kinds) if kind is None]
    converted = convert_object_array(
        [arrays[i] for i in untyped], dtype=None, coerce_float=True
    )
    for position, array in zip(untyped, converted, strict=True):
        arrays[position] = array
    frame = pd.DataFrame._from_arrays(
        arrays, columns=columns, index=range(n_rows), verify_integrity=False
    )
    return _parse_date_columns(frame, None)


def _concatenated(parts: list) -> Any:
    """One column from its chunks (numpy arrays, or pandas string arrays)."""
    if not parts:
        return np.empty(0, dtype=object)
    if isinstance(parts[0], np.ndarray):
        return np.concatenate(parts)  # int64 and float64 chunks make float64
    return type(parts[0])._concat_same_type(parts)


#: PostgreSQL's built-in type oids (fixed across versions) -> how a column
#: of that type is read.
_POSTGRES_KINDS = {
    20: "integer",  # bigint
    21: "integer",  # smallint
    23: "integer",  # integer
    700: "decimal",  # real
    701: "decimal",  # double precision
    1700: "decimal",  # numeric
    1082: "date",
    1114: "timestamp",
    1184: "timestamp",  # timestamp with time zone
    18: "text",  # "char"
    25: "text",
    1042: "text",  # char(n)
    1043: "text",  # varchar
}


def sql_column_kinds(result: Any, dialect: str) -> list[str | None]:
    """How each column of a query's ``result`` is read, from its database type.

    One of ``"integer"``, ``"decimal"``, ``"date"``, ``"timestamp"``,
    ``"text"``, or None (converted by pandas from the values). Only
    PostgreSQL declares its result types here; other databases give None
    for every column.
    """
    description = getattr(result.cursor, "description", None) or []
    if dialect != "postgresql":
        return [None] * len(description)
    return [_POSTGRES_KINDS.get(getattr(c, "type_code", None)) for c in description]


def sql_typed_values(values: np.ndarray, kind: str) -> np.ndarray:
    """One chunk of a typed column (object values, None = NULL) in its dtype.

    ``integer``: int64, or float64 when a value is missing (concatenated,
    the chunks give float64 as soon as one of them has a missing value);
    ``decimal``: float64; ``date`` and ``timestamp``: the day as ISO text
    ``YYYY-MM-DD`` (an aware timestamp's day in UTC); ``text``: as it is.
    Dates and text become pandas ``string`` arrays at once (the canonical
    text dtype): a chunk's Python strings are freed with the chunk.
    """
    import datetime

    missing = pd.isna(values) if len(values) else np.zeros(0, dtype=bool)
    if kind == "integer":
        if missing.any():
            out = np.full(len(values), np.nan)
            out[~missing] = values[~missing].astype(np.float64)
            return out
        return values.astype(np.int64)
    if kind == "decimal":
        out = np.full(len(values), np.nan)
        out[~missing] = [float(v) for v in values[~missing]]
        return out
    if kind in ("date", "timestamp"):
        utc = datetime.UTC

        def day(value: Any) -> str:
            if isinstance(value, datetime.datetime):
                if value.tzinfo is not None:
                    value = value.astimezone(utc)
                value = value.date()
            return value.isoformat()

        out = np.empty(len(values), dtype=object)
        out[:] = None
        out[~missing] = [day(v) for v in values[~missing]]
        return pd.array(out, dtype="string")
    return pd.array(values, dtype="string")


@contextlib.contextmanager
def _query_errors(name: str, secrets: list, query: str) -> Iterator[None]:
    """Turn a failed query into a :class:`SourceError` with the driver's own words."""
    from sqlalchemy.exc import SQLAlchemyError

    try:
        yield
    except (SQLAlchemyError, pd.errors.DatabaseError) as exc:
        # pandas wraps SQLAlchemy's error, which wraps the driver's: show the
        # driver's own first line ("no such table: x"), not the SQL echo.
        cause = exc.__cause__ if isinstance(exc.__cause__, SQLAlchemyError) else exc
        detail = _scrub(_first_line(getattr(cause, "orig", None) or cause), secrets)
        raise SourceError(
            f"source {name}: query failed: {detail} (query: {_shorten(query)})"
        ) from exc


def _check_sqlite_file(url: Any) -> None:  # sqlalchemy.engine.URL
    """Refuse a SQLite URL whose database file does not exist.

    sqlite3 would silently create an empty database file there instead, and
    the query would then fail with "no such table" (or pre-flight would leave
    an empty file behind a mistyped path).
    """
    database = sqlite_file(url)
    if database is not None and not Path(database).is_file():
        raise SourceError(f"source {_masked(url)}: database file not found")


def sqlite_file(url: Any) -> str | None:  # sqlalchemy.engine.URL
    """The database file a SQLite URL names, as written; None for any other URL.

    An in-memory database (``:memory:``) and a ``file:`` URI name no file
    of their own.
    """
    database = url.database
    if (
        url.get_backend_name() == "sqlite"
        and database
        and database != ":memory:"
        and not database.startswith("file:")
    ):
        return database
    return None


def _masked(url: Any) -> str:  # sqlalchemy.engine.URL (imported lazily)
    """The URL as messages show it: password and secret-looking arguments masked."""
    hidden = {k: "***" for k in url.query if _SECRET_ARGUMENT.search(k)}
    if hidden:
        url = url.update_query_dict(hidden)
    return url.render_as_string(hide_password=True)


def write_sqlite(frame: pd.DataFrame, path: str | Path, table: str) -> str:
    """Write a table into a SQLite file, replacing a table of the same name.

    Parameters
    ----------
    frame : pandas.DataFrame
        Written without its index; missing values become SQL ``NULL``.
    path : str or pathlib.Path
        The database file; created if absent.
    table : str
        The table's name in the database.

    Returns
    -------
    str
        The SQLAlchemy URL of the file (``sqlite:///<absolute path>``), ready
        for ``load_source("sql", url, query=...)``.
    """
    import sqlalchemy as sa

    url = f"sqlite:///{Path(path).resolve()}"
    engine = sa.create_engine(url)
    try:
        frame.to_sql(table, engine, index=False, if_exists="replace")
    finally:
        engine.dispose()
    return url


def _scrub(text: str, secrets: list) -> str:
    """Belt and braces: a driver message should never echo a password."""
    for secret in secrets:
        for value in secret if isinstance(secret, tuple) else (secret,):
            if value:
                text = text.replace(str(value), "***")
    return text
