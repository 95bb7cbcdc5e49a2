"""Read a source table (the ``ingest`` step) and fingerprint its content.

A source is one of four kinds:

- ``"embedded"``: a data set shipped with the package (:func:`ppdm.prepare.datasets.load`);
- ``"csv"``: a file with a header row; ``?`` and empty cells are missing values;
  fields separated by commas, or by the ``delimiter`` given (``;``, a tab,
  ``|``; :func:`sniff_delimiter` finds it for ``ppdm init``);
- ``"parquet"``: a Parquet file (read with pyarrow);
- ``"sql"``: a query against a database URL (SQLAlchemy; SQLite is the embedded
  default, ``sqlite:///path/to/file.db``; PostgreSQL through psycopg 3,
  ``postgresql+psycopg://user@host:5432/db``; others need their driver). The
  rows are fetched in chunks of :data:`SQL_CHUNK_ROWS` through a server-side
  cursor, never the whole result at once. The password is best kept out of
  the URL: ``password="env:NAME"`` (or ``prefect-secret:<block>``, once the
  Prefect layer registered the scheme) names where it is.

Every route returns the same canonical table: integer and float columns as
numpy dtypes and text columns as the pandas ``string`` dtype with ``pd.NA`` for
missing values, the convention of :mod:`ppdm.prepare.datasets`. So one table written
to a CSV file, a Parquet file and a SQLite table reads back identically, and
its :func:`fingerprint` is the same whichever route it took.

A PostgreSQL column's declared type decides its dtype (the values of one
chunk do not): integers stay ``int64`` (``float64`` when a value is NULL),
``real``, ``double precision`` and ``numeric`` become ``float64``, ``date``
and ``timestamp`` become ISO date text ``YYYY-MM-DD`` (the day; a
``timestamptz`` its day in UTC), which profiling and the calendar hierarchy
read as dates, and ``text``, ``varchar`` and ``char`` stay text, codes with
their leading zeros. NULL is a missing value. Other types, and databases that
do not declare result types (SQLite), are converted as
:func:`pandas.read_sql` converts the whole result.

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

import contextlib
import hashlib
import json
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError, SourceError
from ppdm.prepare import datasets
from ppdm.release.artifacts import sha256_file

__all__ = [
    "CSV_DELIMITERS",
    "SOURCE_KINDS",
    "SQL_CHUNK_ROWS",
    "file_sha256",
    "fingerprint",
    "load_source",
    "sniff_delimiter",
    "source_bounds",
    "source_column",
    "source_columns",
    "source_name",
    "write_sqlite",
]

#: The kinds of source :func:`load_source` reads.
SOURCE_KINDS = ("embedded", "csv", "parquet", "sql")
#: The field separators of a CSV file that :func:`load_source` reads.
CSV_DELIMITERS = (",", ";", "\t", "|")

#: Rows a SQL source is fetched in at a time (one batch of the server-side
#: cursor): the driver's Python objects for this many rows are all the read
#: holds beyond the table itself.
SQL_CHUNK_ROWS = 10_000

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
    delimiter: str | None = None,
    password: str | None = None,
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
    delimiter : str, optional
        The field separator of a CSV file, one of :data:`CSV_DELIMITERS`
        (default: a comma).
    password : str, optional
        Where the database password is (``"sql"`` only): a key spec,
        ``"env:NAME"`` or ``"prefect-secret:<block>"``, for a URL without one.

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
    ppdm.release.keys.KeyConfigError
        ``password`` names a variable or block that holds nothing.
    """
    _check_arguments(kind, location, query, embedded)
    _check_delimiter(kind, delimiter)
    if kind == "embedded":
        frame, name = _read_embedded(str(embedded))
    elif kind == "sql":
        frame, name = _read_sql(str(location), str(query), password)
    else:
        frame, name = _read_file(kind, Path(str(location)), delimiter)
    _check_header([str(c) for c in frame.columns], name)
    if len(frame) == 0:
        raise SourceError(f"source {name} holds no rows")
    return _canonical(frame)


def _check_arguments(
    kind: str, location: str | Path | None, query: str | None, embedded: str | None
) -> None:
    """Refuse an unknown kind, or a kind without the argument it needs."""
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
    elif location is None:
        raise InvalidParameterError(f"kind={kind!r} needs a location; got None")
    elif kind == "sql" and not query:
        raise InvalidParameterError("kind='sql' needs query=<SQL text>; got none")


def _check_delimiter(kind: str, delimiter: str | None) -> None:
    if delimiter is None:
        return
    if kind != "csv":
        raise InvalidParameterError(
            f"delimiter is for CSV files; the source is of kind {kind!r}"
        )
    if delimiter not in CSV_DELIMITERS:
        raise InvalidParameterError(
            f"delimiter must be one of {', '.join(map(repr, CSV_DELIMITERS))}; "
            f"got {delimiter!r}"
        )


def _csv_options(delimiter: str | None) -> dict[str, Any]:
    """How a CSV file is read: :data:`_CSV_OPTIONS` with its field separator."""
    return {**_CSV_OPTIONS, "sep": delimiter or ","}


def sniff_delimiter(path: str | Path) -> str:
    """The field separator of a CSV file, from its first lines.

    One of :data:`CSV_DELIMITERS`: the one that splits the header and the
    next lines into the same number of fields, more than one (Python's
    :class:`csv.Sniffer`, restricted to those four), else a comma, the
    default. ``ppdm init`` writes it into the configuration, so that every
    later run reads the file the same way rather than guessing again.

    Raises
    ------
    ppdm.exceptions.SourceError
        The file is missing or unreadable.
    """
    import csv

    path = Path(path)
    _check_file(path)
    try:
        with path.open("r", encoding="utf-8", newline="") as handle:
            sample = handle.read(64 * 1024)
    except UnicodeDecodeError as exc:
        raise SourceError(_not_utf8(path)) from exc
    except OSError as exc:
        raise SourceError(f"source {path}: cannot be read: {_first_line(exc)}") from exc
    lines = sample.splitlines()
    if len(sample) == 64 * 1024 and len(lines) > 1:
        sample = "\n".join(lines[:-1])  # the last line may be cut
    try:
        found = csv.Sniffer().sniff(sample, delimiters="".join(CSV_DELIMITERS))
        if found.delimiter in CSV_DELIMITERS:
            return found.delimiter
    except csv.Error:
        pass
    # The sniffer gives up on a single line or uneven quoting: the header
    # decides, by the separator it holds most often.
    header = lines[0] if lines else ""
    counts = {d: header.count(d) for d in CSV_DELIMITERS}
    best = max(CSV_DELIMITERS, key=lambda d: counts[d])
    return best if counts[best] > 0 else ","


#: Files that are not CSV text, by name, with what to do instead.
_OTHER_FORMATS = {
    ".xlsx": "an Excel workbook",
    ".xlsm": "an Excel workbook",
    ".xls": "an Excel workbook",
    ".ods": "an OpenDocument spreadsheet",
    ".numbers": "a Numbers spreadsheet",
    ".json": "a JSON file",
    ".jsonl": "a JSON lines file",
    ".ndjson": "a JSON lines file",
    ".xml": "an XML file",
    ".sav": "an SPSS file",
    ".dta": "a Stata file",
    ".sas7bdat": "a SAS file",
    ".feather": "a Feather file",
    ".gz": "a compressed file",
    ".zip": "a compressed file",
}
#: The first bytes of a spreadsheet (a zip archive: .xlsx, .ods; an OLE
#: compound file: .xls) named like a CSV file.
_SPREADSHEET_MAGIC = (b"PK\x03\x04", b"\xd0\xcf\x11\xe0")


def other_format(path: str | Path) -> str | None:
    """What a file that is not CSV text or Parquet is (by its name), else None."""
    return _OTHER_FORMATS.get(Path(path).suffix.lower())


def _check_csv_text(path: Path) -> None:
    """Refuse a spreadsheet or another format given as a CSV file, in one line."""
    what = other_format(path)
    if what is None:
        with path.open("rb") as handle:
            if handle.read(4) in _SPREADSHEET_MAGIC:
                what = "a spreadsheet (a zip or an OLE file), not text"
    if what is not None:
        raise SourceError(
            f"source {path}: {what}; ppdm reads CSV text (.csv), Parquet files "
            "(.parquet, .pq) and database queries: export the table as CSV "
            "(UTF-8) and name that file"
        )


def _read_embedded(embedded: str) -> tuple[pd.DataFrame, str]:
    try:
        frame = datasets.load(embedded)
    except KeyError as exc:
        raise SourceError(f"source embedded:{embedded}: {exc.args[0]}") from exc
    return frame, f"embedded:{embedded}"


def source_columns(
    kind: str,
    location: str | Path | None,
    *,
    query: str | None = None,
    embedded: str | None = None,
    delimiter: str | None = None,
    password: str | None = None,
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
        names = _sql_columns(str(location), query, password) if query else None
        if names is not None:
            # SQLite names the second "age" of a wrapped query "age:1"
            names = [
                base if (base := re.sub(r":\d+$", "", n)) != n and base in names else n
                for n in names
            ]
            _check_header(names, source_name(kind, location, query, embedded))
        return names
    path = Path(location)
    if not path.is_file():
        raise SourceError(f"source {path}: file not found")
    try:
        if kind == "csv":
            _check_csv_text(path)
            # header=None: the names as written (pandas would rename a second
            # "age" to "age.1"), so a repeated name is reported as such.
            header = pd.read_csv(
                path,
                nrows=1,
                header=None,
                dtype=str,
                skipinitialspace=True,
                sep=delimiter or ",",
            )
            names = [
                f"Unnamed: {i}" if pd.isna(c) else str(c)  # pandas' name for ""
                for i, c in enumerate(header.iloc[0])
            ]
            if any("\x00" in n for n in names):
                raise SourceError(
                    f"source {path}: the header holds NUL bytes; the file looks "
                    "like UTF-16 text: save it as UTF-8"
                )
            _check_header(names, str(path), delimiter)
            return names
        import pyarrow.parquet as pq

        names = list(pq.read_schema(path).names)
        _check_header(names, str(path))
        return names
    except SourceError:
        raise
    except pd.errors.EmptyDataError as exc:
        raise SourceError(f"source {path}: no header row") from exc
    except UnicodeDecodeError as exc:
        raise SourceError(_not_utf8(path)) from exc
    except (ValueError, OSError, pd.errors.ParserError) as exc:
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
    delimiter: str | None = None,
    password: str | None = None,
) -> tuple[int | None, int | None]:
    """Cheap upper bounds on a source's row count and one column's distinct values.

    Both are bounds, never underestimates: a CSV's rows are at most its line
    breaks, and validation only removes rows, so the distinct values of the
    raw column bound those of the valid ones. A requirement above a bound is
    infeasible for certain (pre-flight refuses it at once); None means not
    known cheaply.

    Raises
    ------
    ppdm.exceptions.SourceError
        The source holds no rows for certain (a header-only CSV file, a
        Parquet file or a query with zero rows), naming the source.
    """
    try:
        rows, distinct = _bounds(
            kind, location, query, embedded, distinct_of, delimiter, password
        )
    except Exception:  # noqa: BLE001 - a bound is optional; ingest reports problems
        return None, None
    if rows is not None and rows <= 0:
        raise SourceError(
            f"source {source_name(kind, location, query, embedded)} holds no rows"
        )
    return rows, distinct


def source_column(
    kind: str,
    location: str | Path | None,
    column: str,
    *,
    query: str | None = None,
    embedded: str | None = None,
    delimiter: str | None = None,
    password: str | None = None,
) -> pd.Series | None:
    """One column of a source, read as :func:`load_source` reads it, for a cheap check.

    Only that column is read (``usecols`` of a CSV file, one Parquet column,
    ``SELECT column FROM (query)``), with the readers' options, so its
    missing values and distinct values are those of the ingested table.
    Returns None when that is not cheap (a file above 256 MiB) or not
    possible (a query the database will not wrap, a column it lacks): the
    steps report any problem then.
    """
    try:
        if kind == "embedded":
            table = datasets.load(embedded) if embedded else None
            return table[column] if table is not None and column in table else None
        if kind == "sql":
            return _sql_column(str(location), query, column, password)
        path = Path(str(location))
        if path.stat().st_size > _CHEAP_BYTES:
            return None
        if kind == "parquet":
            return pd.read_parquet(path, columns=[column])[column]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            return pd.read_csv(path, **_csv_options(delimiter), usecols=[column])[
                column
            ]
    except Exception:  # noqa: BLE001 - a cheap check is optional; ingest reports
        return None


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


def source_name(
    kind: str, location: str | Path | None, query: str | None, embedded: str | None
) -> str:
    """The source as messages name it: the file, or the URL (password masked) and query.

    >>> source_name("sql", "postgresql://ann:secret@db/x", "SELECT * FROM t", None)
    'postgresql://ann:***@db/x (query: SELECT * FROM t)'
    """
    if kind == "embedded":
        return f"embedded:{embedded}"
    if kind != "sql":
        return str(location)
    import sqlalchemy as sa

    try:
        name = _masked(sa.make_url(str(location)))
    except (sa.exc.ArgumentError, ValueError):
        name = _PASSWORD_IN_URL.sub(r"\1***@", str(location))
    return f"{name} (query: {_shorten(query or '')})"


#: Files above this size get no distinct-value bound (reading a column of a
#: census-sized file is not a cheap check; validation and anonymization
#: report an infeasible l anyway).
_CHEAP_BYTES = 256 * 2**20


def _bounds(
    kind: str,
    location: str | Path | None,
    query: str | None,
    embedded: str | None,
    distinct_of: str | None,
    delimiter: str | None = None,
    password: str | None = None,
) -> tuple[int | None, int | None]:
    if kind == "embedded":
        table = datasets.load(embedded) if embedded else None
        if table is None:
            return None, None
        distinct = int(table[distinct_of].nunique()) if distinct_of in table else None
        return len(table), distinct
    if kind == "sql":
        return _sql_bounds(str(location), query, distinct_of, password)
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
    if distinct_of is not None and path.stat().st_size <= _CHEAP_BYTES:
        # In blocks: a census-sized file's column would not fit in memory.
        seen: set[str] = set()
        for block in pd.read_csv(
            path,
            usecols=[distinct_of],
            dtype=str,
            skipinitialspace=True,
            chunksize=1_000_000,
            sep=delimiter or ",",
        ):
            seen.update(block[distinct_of].str.strip().dropna().unique())
        distinct = len(seen)
    return rows, distinct


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


def _read_file(
    kind: str, path: Path, delimiter: str | None = None
) -> tuple[pd.DataFrame, str]:
    name = str(path)
    _check_file(path)
    if kind == "csv":
        _check_csv_text(path)
    with _file_errors(kind, path):
        if kind == "csv":
            frame = _read_csv(path, delimiter)
        else:
            import pyarrow.parquet as pq

            # pyarrow refuses a repeated name with "Multiple matches for FieldRef"
            _check_header(list(pq.read_schema(path).names), name)
            frame = pd.read_parquet(path)
    if kind == "csv":
        # pandas renamed a repeated header name ("age", "age.1"): check the
        # names as written.
        source_columns("csv", path, delimiter=delimiter)
    return frame, name


def _check_file(path: Path) -> None:
    """Refuse a missing file, a directory and an empty file, naming the path."""
    if not path.exists():
        raise SourceError(f"source {path}: file not found")
    if not path.is_file():
        raise SourceError(f"source {path}: not a regular file")
    if path.stat().st_size == 0:
        raise SourceError(f"source {path}: file is empty (0 bytes)")


@contextlib.contextmanager
def _file_errors(kind: str, path: Path) -> Iterator[None]:
    """Turn a reader's exceptions into a :class:`SourceError` naming the file."""
    try:
        yield
    except SourceError:
        raise
    except pd.errors.EmptyDataError as exc:
        raise SourceError(f"source {path}: no header row ({exc})") from exc
    except UnicodeDecodeError as exc:
        raise SourceError(_not_utf8(path)) from exc
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        # pyarrow's ArrowInvalid subclasses ValueError; a truncated file is OSError
        raise SourceError(
            f"source {path}: cannot be read as {kind}: {_first_line(exc)}"
        ) from exc


#: How :func:`load_source` reads a CSV file (also in chunks, out of core).
_CSV_OPTIONS: dict[str, Any] = {
    "na_values": _CSV_MISSING,
    "keep_default_na": False,  # "NA" or "None" may be real values
    "skipinitialspace": True,  # UCI files separate fields with ", "
    "index_col": False,
}


def _read_csv(path: Path, delimiter: str | None = None) -> pd.DataFrame:
    """Read a CSV file; a row with more fields than the header is an error.

    By default pandas would take the first column of such a file for the
    index and shift every value one column to the left; with
    ``index_col=False`` it drops the surplus field of the first row with a
    warning only (later rows are a parser error, naming their line).
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pd.errors.ParserWarning)
        frame = pd.read_csv(path, **_csv_options(delimiter))
    if _surplus_field(caught):
        raise _surplus_field_error(path, frame.shape[1])
    codes = _leading_zero_columns(path, frame, delimiter)
    if codes:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            frame = pd.read_csv(
                path, **_csv_options(delimiter), dtype=dict.fromkeys(codes, str)
            )
    return frame


def _leading_zero_columns(
    path: Path, frame: pd.DataFrame, delimiter: str | None = None
) -> list[str]:
    """Columns read as numbers whose text has leading zeros (zip ``01001``).

    Such a column is a code, not a number: read as a number ``01001`` would
    become ``1001``, a different zip. Only the columns pandas read as numbers
    are read again as text (the whole column, every row).
    """
    numeric = [
        c
        for c in frame.columns
        if pd.api.types.is_numeric_dtype(frame[c].dtype)
        and not pd.api.types.is_bool_dtype(frame[c].dtype)
    ]
    if not numeric:
        return []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pd.errors.ParserWarning)
        text = pd.read_csv(path, **_csv_options(delimiter), dtype=str, usecols=numeric)
    return [
        c
        for c in numeric
        if text[c].dropna().str.fullmatch(r"\d+").all()
        and text[c].dropna().str.match(r"0\d").any()
    ]


def _surplus_field(caught: list[warnings.WarningMessage]) -> bool:
    return any(issubclass(w.category, pd.errors.ParserWarning) for w in caught)


def _surplus_field_error(path: Path, n_columns: int) -> SourceError:
    return SourceError(
        f"source {path}: line 2 has more fields than the header's "
        f"{n_columns} columns (a value holding a comma must be quoted)"
    )


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
    database = url.database
    if (
        url.get_backend_name() == "sqlite"
        and database
        and database != ":memory:"
        and not database.startswith("file:")
        and not Path(database).is_file()
    ):
        raise SourceError(f"source {_masked(url)}: database file not found")


def _masked(url: Any) -> str:  # sqlalchemy.engine.URL (imported lazily)
    """The URL as messages show it: password and secret-looking arguments masked."""
    hidden = {k: "***" for k in url.query if _SECRET_ARGUMENT.search(k)}
    if hidden:
        url = url.update_query_dict(hidden)
    return url.render_as_string(hide_password=True)


def _canonical(frame: pd.DataFrame) -> pd.DataFrame:
    """One representation whatever the reader: text as pandas ``string``.

    A column that no typed array can hold, such as an integer beyond 64 bits
    in a CSV file (``age`` = 10^30) or a SQLite column mixing numbers and
    text, is kept as the text of its values: nothing is rounded or dropped
    here, and validation then judges each value against the column's
    declared type (the 10^30 row is quarantined as not an int64).
    """
    frame = frame.reset_index(drop=True)
    text = [
        column
        for column in frame.columns
        if _may_be_text(frame[column].dtype)
        and (
            pd.api.types.infer_dtype(frame[column], skipna=True) in _TEXT_INFERRED
            or not _storable(frame[column])
        )
    ]
    return _as_string(frame, text)


#: What :func:`pandas.api.types.infer_dtype` says of a column that is text.
_TEXT_INFERRED = ("string", "empty")


def _may_be_text(dtype: Any) -> bool:
    """Whether :func:`_canonical` considers a column of this dtype for text."""
    return not isinstance(dtype, pd.CategoricalDtype) and (
        pd.api.types.is_string_dtype(dtype) or pd.api.types.is_object_dtype(dtype)
    )


def _as_string(
    frame: pd.DataFrame, text: list, *, one_by_one: bool | None = None
) -> pd.DataFrame:
    """``frame`` with the ``text`` columns as pandas ``string``.

    ``one_by_one`` converts each value with :func:`_as_text` (bytes that are
    not UTF-8 kept as escapes); None does so only when the plain conversion
    fails, which is what :func:`_canonical` does with a whole table.
    """
    if not text:
        return frame
    if not one_by_one:
        try:
            return frame.astype(dict.fromkeys(text, "string"))
        except (TypeError, ValueError):  # bytes that are not UTF-8: one by one
            if one_by_one is False:
                raise
    return frame.assign(
        **{
            column: frame[column].map(_as_text, na_action="ignore").astype("string")
            for column in text
        }
    )


def _as_text(value: Any) -> str:
    """A cell's text: bytes decoded (undecodable bytes as escapes), else ``str``."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="backslashreplace")
    return str(value)


def _storable(column: pd.Series) -> bool:
    """Whether a typed (Arrow) array can hold the column's values as they are."""
    import pyarrow as pa

    try:
        pa.array(column, from_pandas=True)
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        return False
    return True


def _check_header(names: list[str], source: str, delimiter: str | None = None) -> None:
    """Refuse repeated column names and a header that is one run-together name."""
    seen: dict[str, int] = {}
    for position, column in enumerate(names, start=1):
        if column in seen:
            raise SourceError(
                f"source {source}: column name {column!r} appears twice in the "
                f"header (columns {seen[column]} and {position}); every column "
                "needs a name of its own"
            )
        seen[column] = position
    if len(names) == 1:
        for separator, label in (
            (",", "commas"),
            (";", "';'"),
            ("\t", "tabs"),
            ("|", "'|'"),
        ):
            if separator != (delimiter or ",") and separator in names[0]:
                raise SourceError(
                    f"source {source}: the header is one column "
                    f"({_shorten(repr(names[0]))}); the file looks separated by "
                    f"{label}: write `delimiter: {json.dumps(separator)}` under "
                    "`source:` in the configuration"
                )


def _not_utf8(path: Path) -> str:
    """Where a file stops being UTF-8 text: its line and byte, and a hint."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, line, position = 0, 1, None
    with path.open("rb") as handle:
        head = handle.read(4)
        handle.seek(0)
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as err:
                # err.start may point into bytes held back from the last chunk
                position = max(offset + err.start - len(decoder.getstate()[0]), 0)
                line += chunk[: max(err.start, 0)].count(b"\n")
                break
            offset += len(chunk)
            line += chunk.count(b"\n")
    where = f"at byte {position} (line {line})" if position is not None else ""
    hint = ""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        hint = " (it starts with a UTF-16 byte-order mark)"
    return (
        f"source {path}: not UTF-8 text {where or 'at its end'}{hint}; save it as UTF-8"
    )


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
