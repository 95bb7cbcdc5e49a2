"""Read a source of any kind: the whole table, or cheaply its header, bounds or one column.

:func:`load_source` is the ingest step's reader; :func:`source_columns`,
:func:`source_bounds` and :func:`source_column` serve pre-flight, reading as
little as the question needs; :func:`source_name` names a source in messages.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pandas as pd

from ppdm.exceptions import InvalidParameterError, SourceError
from ppdm.prepare import datasets
from ppdm.prepare.ingest.canonical import _canonical
from ppdm.prepare.ingest.files import (
    CSV_DELIMITERS,
    _csv_options,
    _file_columns,
    _read_file,
)
from ppdm.prepare.ingest.messages import _check_header, _shorten
from ppdm.prepare.ingest.sql import (
    _PASSWORD_IN_URL,
    _masked,
    _read_sql,
    _sql_bounds,
    _sql_column,
    _sql_columns,
)

__all__ = [
    "SOURCE_KINDS",
    "load_source",
    "source_bounds",
    "source_column",
    "source_columns",
    "source_name",
]


#: The kinds of source :func:`load_source` reads.
SOURCE_KINDS = ("embedded", "csv", "parquet", "sql")


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
    return _file_columns(kind, Path(location), delimiter)


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


#: Files above this size get no bounds (reading a column of a census-sized file,
#: or counting its lines, is not a cheap check; validation and anonymization
#: report an infeasible k or l anyway, publication checks a privacy budget).
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
    if path.stat().st_size > _CHEAP_BYTES:
        # Counting a census-sized file's line breaks reads all of it (seconds
        # from memory, a minute or more from disk) for a bound no k comes near.
        return None, None
    # Lines are line breaks, plus one if the last line has none; one line
    # is the header. Quoted line breaks only raise the bound.
    breaks, last = 0, b"\n"
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            breaks, last = breaks + chunk.count(b"\n"), chunk[-1:]
    rows = breaks + (last != b"\n") - 1
    distinct = None
    if distinct_of is not None:
        # In blocks of a million rows, as a column of up to _CHEAP_BYTES.
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
