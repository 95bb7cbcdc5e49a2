"""Read a source table (the ``ingest`` step) and fingerprint its content.

A source is one of four kinds:

- ``"embedded"``: a data set shipped with the package (:func:`ppdm.prepare.datasets.load`);
- ``"csv"``: a file with a header row; ``?`` and empty cells are missing values;
- ``"parquet"``: a Parquet file (read with pyarrow);
- ``"sql"``: a query against a database URL (SQLAlchemy; SQLite is the embedded
  default, ``sqlite:///path/to/file.db``; PostgreSQL and others need their driver).

Every route returns the same canonical table: integer and float columns as
numpy dtypes and text columns as the pandas ``string`` dtype with ``pd.NA`` for
missing values, the convention of :mod:`ppdm.prepare.datasets`. So one table written
to a CSV file, a Parquet file and a SQLite table reads back identically, and
its :func:`fingerprint` is the same whichever route it took.

Errors are :class:`~ppdm.exceptions.SourceError` naming the file or the
database URL (its password masked) and what went wrong. A source with zero
rows is an error too: an empty release is never what the owner meant.

Examples
--------
>>> from ppdm.prepare.ingest import load_source, fingerprint
>>> adult = load_source("embedded", None, embedded="adult")
>>> adult.shape
(48842, 15)
>>> len(fingerprint(adult))
64
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError, SourceError
from ppdm.prepare import datasets
from ppdm.release.artifacts import sha256_file

__all__ = [
    "SOURCE_KINDS",
    "file_sha256",
    "fingerprint",
    "load_source",
    "source_bounds",
    "source_columns",
    "write_sqlite",
]

#: The kinds of source :func:`load_source` reads.
SOURCE_KINDS = ("embedded", "csv", "parquet", "sql")

_CSV_MISSING = ["?", ""]
# Used only when a URL is too malformed for SQLAlchemy to parse (and mask) it.
_PASSWORD_IN_URL = re.compile(r"(//[^:/@]*:)[^@]*@")
# Some drivers also take credentials as query arguments (?password=...).
_SECRET_ARGUMENT = re.compile(r"pass|pwd|secret|token|key|credential", re.IGNORECASE)


def load_source(
    kind: str,
    location: str | Path | None,
    *,
    query: str | None = None,
    embedded: str | None = None,
) -> pd.DataFrame:
    """Read one source table.

    Parameters
    ----------
    kind : {"embedded", "csv", "parquet", "sql"}
        Which reader to use.
    location : str or pathlib.Path or None
        The file path (csv, parquet) or the database URL (sql); ignored for
        ``"embedded"``.
    query : str, optional
        The SQL query to run (required for ``"sql"``).
    embedded : str, optional
        The embedded data set's name, e.g. ``"adult"`` (required for
        ``"embedded"``).

    Returns
    -------
    pandas.DataFrame
        The table with a fresh ``RangeIndex``; numeric columns keep their numpy
        dtype and text columns are pandas ``string`` (missing = ``pd.NA``).

    Raises
    ------
    ppdm.exceptions.InvalidParameterError
        ``kind`` is unknown, or the argument that kind needs is missing.
    ppdm.exceptions.SourceError
        The source is not found, cannot be read, or holds no rows. The message
        names the file or the URL, never the URL's password.
    """
    if kind not in SOURCE_KINDS:
        raise InvalidParameterError(
            f"kind must be one of {', '.join(SOURCE_KINDS)}; got {kind!r}"
        )
    if kind == "embedded":
        if embedded is None:
            raise InvalidParameterError(
                "kind='embedded' needs embedded=<name>; available: "
                + ", ".join(datasets.DATASETS)
            )
        try:
            frame = datasets.load(embedded)
        except KeyError as exc:
            raise SourceError(f"source embedded:{embedded}: {exc.args[0]}") from exc
        name = f"embedded:{embedded}"
    elif location is None:
        raise InvalidParameterError(f"kind={kind!r} needs a location; got None")
    elif kind == "sql":
        if not query:
            raise InvalidParameterError("kind='sql' needs query=<SQL text>; got none")
        frame, name = _read_sql(str(location), query)
    else:
        frame, name = _read_file(kind, Path(location))
    if len(frame) == 0:
        raise SourceError(f"source {name} holds no rows")
    return _canonical(frame)


def source_columns(
    kind: str,
    location: str | Path | None,
    *,
    query: str | None = None,
    embedded: str | None = None,
) -> list[str] | None:
    """The column names of a source, read from its header alone (no rows).

    Returns None when they cannot be known cheaply (a SQL query the database
    will not wrap); :func:`load_source` then reports any problem.

    Raises
    ------
    ppdm.exceptions.SourceError
        The file is missing or unreadable.
    """
    if kind == "embedded":
        columns = {"adult": datasets.ADULT_COLUMNS, "german": datasets.GERMAN_COLUMNS}
        return list(columns[embedded]) if embedded in columns else None
    if location is None:
        return None
    if kind == "sql":
        return _sql_columns(str(location), query) if query else None
    path = Path(location)
    if not path.is_file():
        raise SourceError(f"source {path}: file not found")
    try:
        if kind == "csv":
            header = pd.read_csv(path, nrows=0, skipinitialspace=True)
            return [str(c) for c in header.columns]
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    except pd.errors.EmptyDataError as exc:
        raise SourceError(f"source {path}: no header row") from exc
    except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise SourceError(
            f"source {path}: cannot be read as {kind}: {_first_line(exc)}"
        ) from exc


def source_bounds(
    kind: str,
    location: str | Path | None,
    *,
    query: str | None = None,
    embedded: str | None = None,
    distinct_of: str | None = None,
) -> tuple[int | None, int | None]:
    """Cheap upper bounds on a source's row count and one column's distinct values.

    Both are bounds, never underestimates: a CSV's rows are at most its line
    breaks, and validation only removes rows, so the distinct values of the
    raw column bound those of the valid ones. A requirement above a bound is
    infeasible for certain (pre-flight refuses it at once); None means not
    known cheaply.
    """
    try:
        if kind == "embedded":
            table = datasets.load(embedded) if embedded else None
            if table is None:
                return None, None
            distinct = (
                int(table[distinct_of].nunique()) if distinct_of in table else None
            )
            return len(table), distinct
        if kind == "sql":
            return _sql_bounds(str(location), query, distinct_of)
        path = Path(str(location))
        if kind == "parquet":
            import pyarrow.parquet as pq

            rows = pq.ParquetFile(path).metadata.num_rows
            distinct = None
            if distinct_of is not None:
                column = pd.read_parquet(path, columns=[distinct_of])[distinct_of]
                distinct = int(column.nunique())
            return rows, distinct
        # Lines are line breaks, plus one if the last line has none; one line
        # is the header. Quoted line breaks only raise the bound.
        breaks, last = 0, b"\n"
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                breaks, last = breaks + chunk.count(b"\n"), chunk[-1:]
        rows = breaks + (last != b"\n") - 1
        distinct = None
        if distinct_of is not None:
            column = pd.read_csv(
                path, usecols=[distinct_of], dtype=str, skipinitialspace=True
            )[distinct_of]
            distinct = int(column.str.strip().nunique())
        return rows, distinct
    except Exception:  # noqa: BLE001 - a bound is optional; ingest reports problems
        return None, None


def _sql_bounds(
    url: str, query: str | None, distinct_of: str | None
) -> tuple[int | None, int | None]:
    import sqlalchemy as sa

    if not query:
        return None, None
    engine = sa.create_engine(url)
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


def _sql_columns(url: str, query: str) -> list[str] | None:
    import sqlalchemy as sa

    # Wrapping the query returns its columns without computing its rows; a
    # database that refuses the wrapper is asked nothing more here.
    try:
        engine = sa.create_engine(url)
        try:
            with engine.connect() as connection:
                result = connection.execute(
                    sa.text(f"SELECT * FROM ({query}) AS ppdm_header LIMIT 0")
                )
                return [str(c) for c in result.keys()]
        finally:
            engine.dispose()
    except Exception:  # noqa: BLE001 - any refusal means "not known cheaply"
        return None


def _read_file(kind: str, path: Path) -> tuple[pd.DataFrame, str]:
    name = str(path)
    if not path.exists():
        raise SourceError(f"source {name}: file not found")
    if not path.is_file():
        raise SourceError(f"source {name}: not a regular file")
    if path.stat().st_size == 0:
        raise SourceError(f"source {name}: file is empty (0 bytes)")
    try:
        if kind == "csv":
            frame = pd.read_csv(
                path,
                na_values=_CSV_MISSING,
                keep_default_na=False,  # "NA" or "None" may be real values
                skipinitialspace=True,  # UCI files separate fields with ", "
            )
        else:
            frame = pd.read_parquet(path)
    except pd.errors.EmptyDataError as exc:
        raise SourceError(f"source {name}: no header row ({exc})") from exc
    except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        # pyarrow's ArrowInvalid subclasses ValueError; a truncated file is OSError
        raise SourceError(
            f"source {name}: cannot be read as {kind}: {_first_line(exc)}"
        ) from exc
    return frame, name


def _read_sql(url: str, query: str) -> tuple[pd.DataFrame, str]:
    # SQLAlchemy is imported here: only the sql route needs it.
    import sqlalchemy as sa
    from sqlalchemy.exc import SQLAlchemyError

    try:
        parsed = sa.make_url(url)
    except (sa.exc.ArgumentError, ValueError) as exc:
        masked = _PASSWORD_IN_URL.sub(r"\1***@", url)
        raise SourceError(f"source {masked}: not a database URL") from exc
    name = _masked(parsed)
    secrets = [parsed.password] + [
        value for key, value in parsed.query.items() if _SECRET_ARGUMENT.search(key)
    ]
    database = parsed.database
    if (
        parsed.get_backend_name() == "sqlite"
        and database
        and database != ":memory:"
        and not database.startswith("file:")
        and not Path(database).is_file()
    ):
        # sqlite3 would silently create an empty database file instead
        raise SourceError(f"source {name}: database file not found")
    try:
        engine = sa.create_engine(parsed)
    except (SQLAlchemyError, ImportError) as exc:
        detail = _scrub(_first_line(exc), secrets)
        raise SourceError(f"source {name}: no usable driver ({detail})") from exc
    try:
        with engine.connect() as connection:
            frame = pd.read_sql(sa.text(query), connection)
    except (SQLAlchemyError, pd.errors.DatabaseError) as exc:
        # pandas wraps SQLAlchemy's error, which wraps the driver's: show the
        # driver's own first line ("no such table: x"), not the SQL echo.
        cause = exc.__cause__ if isinstance(exc.__cause__, SQLAlchemyError) else exc
        detail = _scrub(_first_line(getattr(cause, "orig", None) or cause), secrets)
        raise SourceError(
            f"source {name}: query failed: {detail} (query: {_shorten(query)})"
        ) from exc
    finally:
        engine.dispose()
    return frame, f"{name} (query: {_shorten(query)})"


def _masked(url: Any) -> str:  # sqlalchemy.engine.URL (imported lazily)
    """The URL as messages show it: password and secret-looking arguments masked."""
    hidden = {k: "***" for k in url.query if _SECRET_ARGUMENT.search(k)}
    if hidden:
        url = url.update_query_dict(hidden)
    return url.render_as_string(hide_password=True)


def _canonical(frame: pd.DataFrame) -> pd.DataFrame:
    """One representation whatever the reader: text as pandas ``string``."""
    frame = frame.reset_index(drop=True)
    text = {
        column: "string"
        for column in frame.columns
        if pd.api.types.is_string_dtype(frame[column].dtype)
        and not isinstance(frame[column].dtype, pd.CategoricalDtype)
        and pd.api.types.infer_dtype(frame[column], skipna=True) in ("string", "empty")
    }
    return frame.astype(text) if text else frame


def fingerprint(frame: pd.DataFrame) -> str:
    """Content hash of a table: column names, dtypes and values, in order.

    The hash is the sha256 of a JSON header (column names, dtypes, row count)
    followed by one 64-bit hash per cell from
    :func:`pandas.util.hash_pandas_object`, column by column. That function
    uses a fixed key, so the fingerprint is the same in every process and on
    every machine with the same pandas major version. The index is not part of
    the content.

    Parameters
    ----------
    frame : pandas.DataFrame

    Returns
    -------
    str
        64 hexadecimal digits.

    Examples
    --------
    >>> import pandas as pd
    >>> a = pd.DataFrame({"age": [30, 41], "sex": ["Male", "Female"]})
    >>> fingerprint(a) == fingerprint(a.copy())
    True
    >>> fingerprint(a) == fingerprint(a.assign(age=[30, 42]))
    False
    """
    digest = hashlib.sha256()
    header = {
        "columns": [str(column) for column in frame.columns],
        "dtypes": [str(dtype) for dtype in frame.dtypes],
        "rows": len(frame),
    }
    digest.update(json.dumps(header, sort_keys=True).encode("utf-8"))
    for position in range(frame.shape[1]):
        hashes = pd.util.hash_pandas_object(
            frame.iloc[:, position], index=False, categorize=True
        )
        digest.update(np.ascontiguousarray(hashes.to_numpy(), dtype="<u8").tobytes())
    return digest.hexdigest()


def file_sha256(path: str | Path) -> str:
    """sha256 of a file's bytes, read in 1 MiB chunks.

    Raises
    ------
    ppdm.exceptions.SourceError
        The file does not exist or cannot be read.
    """
    try:
        return sha256_file(path)
    except OSError as exc:
        raise SourceError(f"source {path}: cannot be read ({exc.strerror})") from exc


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


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _scrub(text: str, secrets: list) -> str:
    """Belt and braces: a driver message should never echo a password."""
    for secret in secrets:
        for value in secret if isinstance(secret, tuple) else (secret,):
            if value:
                text = text.replace(str(value), "***")
    return text


def _shorten(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
