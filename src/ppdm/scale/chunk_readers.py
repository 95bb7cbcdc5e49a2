"""The readers of the out-of-core ingest: a source in chunks, typed as read whole.

:func:`ppdm.scale.ingest_parts.ingest_partitions` reads a source through one
of these readers in two passes (see that module): the first keeps each raw
chunk and its type witness, :meth:`Reader.settle` then decides each column's
type as the whole-source reader would, and :meth:`Reader.frame` converts a
kept chunk to it. How each reader reproduces the whole-source types is told
in :mod:`ppdm.scale.ingest_parts`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import SourceError
from ppdm.prepare import ingest
from ppdm.prepare.ingest import files, messages, sql

__all__ = [
    "CsvReader",
    "FrameReader",
    "ParquetReader",
    "Reader",
    "SqlReader",
]

# Rows a reader asks for at a time: the partition's rows, within these bounds
# (rounded up to the CSV parser's block); the writer cuts the partitions.
_READ_ROWS = (1 << 16, 1 << 20)


def _read_rows(partition_rows: int) -> int:
    """Rows a reader asks for at a time, for partitions of ``partition_rows``."""
    return min(max(partition_rows, _READ_ROWS[0]), _READ_ROWS[1])


def _low_memory_rows(width: int) -> int:
    """Rows per block of pandas' C parser (``low_memory=True``) for ``width`` columns."""
    heuristic = 2**20 // max(width, 1)
    rows = 1
    while rows * 2 < heuristic:
        rows *= 2
    return rows


class _parser_warnings:  # noqa: N801 - used as a context manager, like warnings'
    """Record warnings, every ``ParserWarning`` (as the in-memory reader does)."""

    def __enter__(self) -> list:
        self._context = warnings.catch_warnings(record=True)
        caught = self._context.__enter__()
        warnings.simplefilter("always", pd.errors.ParserWarning)
        return caught

    def __exit__(self, *exc: object) -> None:
        self._context.__exit__(*exc)


class Reader:
    """A source read in chunks; see the module docstring for each kind."""

    name: str
    columns: list
    dtypes: dict
    scan: Any = None  # a future of scan_file's answer while one runs

    def chunks(self) -> Iterator[Any]:
        raise NotImplementedError

    def rows(self, raw: Any) -> int:
        return len(raw)

    def witness(self, raw: Any) -> Any:
        raise NotImplementedError

    def finish(self, n_rows: int) -> None:
        messages._check_header([str(c) for c in self.columns], self.name)
        if n_rows == 0:
            raise SourceError(f"source {self.name} holds no rows")

    def settle(self, witnesses: list) -> None:
        raise NotImplementedError

    def read_again(self) -> bool:
        """Whether the settled types call for reading the chunks again."""
        return False

    def frame(self, raw: Any) -> pd.DataFrame:
        raise NotImplementedError


class FrameReader(Reader):
    """Chunks that are frames already: settle by concatenating one-row witnesses."""

    def witness(self, raw: pd.DataFrame) -> pd.DataFrame:
        # rebuilt from Python values: a slice would keep the chunk's buffers
        return pd.DataFrame(
            {
                position: pd.Series(raw.iloc[:1, position].tolist(), dtype=dtype)
                for position, dtype in enumerate(raw.dtypes)
            }
        )

    def settle(self, witnesses: list) -> None:
        self.dtypes = {}
        for position, column in enumerate(self.columns):
            pieces = [w.iloc[:, position] for w in witnesses]
            kinds = {p.dtype for p in pieces}
            if len(kinds) <= 1:
                dtype = pieces[0].dtype if pieces else np.dtype(object)
            elif all(isinstance(k, pd.CategoricalDtype) for k in kinds):
                from pandas.api.types import union_categoricals

                union = union_categoricals(
                    [p.astype(p.dtype) for p in pieces], sort_categories=False
                )
                dtype = pd.CategoricalDtype(
                    union.categories, ordered=pieces[0].dtype.ordered
                )
            else:
                dtype = pd.concat(pieces, ignore_index=True).dtype
            self.dtypes[column] = dtype

    def frame(self, raw: pd.DataFrame) -> pd.DataFrame:
        frame = raw.reset_index(drop=True)
        change = {
            position: dtype
            for position, dtype in enumerate(self.dtypes.values())
            if frame.dtypes.iloc[position] != dtype
        }
        if not change:
            return frame
        frame = frame.copy()
        for position, dtype in change.items():
            frame.isetitem(position, frame.iloc[:, position].astype(dtype))
        return frame


class CsvReader(FrameReader):
    def __init__(
        self, path: Path, partition_rows: int, delimiter: str | None = None
    ) -> None:
        self.path, self.name = path, str(path)
        self.partition_rows = partition_rows
        self.delimiter = delimiter
        self.surplus = False
        self.columns = []
        self.codes: list = []  # number columns read as text: codes with leading zeros
        files._check_file(path)
        files._check_csv_text(path)

    def _chunk_rows(self) -> int:
        block = _low_memory_rows(len(self.columns))
        return block * math.ceil(_read_rows(self.partition_rows) / block)

    def chunks(self) -> Iterator[pd.DataFrame]:
        options = files._csv_options(self.delimiter)
        if self.codes:
            options["dtype"] = dict.fromkeys(self.codes, str)
        with files._file_errors("csv", self.path), _parser_warnings() as caught:
            self.columns = list(pd.read_csv(self.path, nrows=0, **options).columns)
            reader = pd.read_csv(self.path, chunksize=self._chunk_rows(), **options)
        self.surplus = files._surplus_field(caught)
        try:
            while True:
                with (
                    files._file_errors("csv", self.path),
                    _parser_warnings() as caught,
                ):
                    try:
                        chunk = reader.get_chunk()
                    except StopIteration:
                        break
                self.surplus = self.surplus or files._surplus_field(caught)
                if chunk.empty:
                    break
                yield chunk
        finally:
            reader.close()

    def finish(self, n_rows: int) -> None:
        if self.surplus:
            raise files._surplus_field_error(self.path, len(self.columns))
        # pandas renamed a repeated header name ("age", "age.1"): check the
        # names as written, as load_source does.
        ingest.source_columns("csv", self.path, delimiter=self.delimiter)
        super().finish(n_rows)

    def read_again(self) -> bool:
        """Read again with codes as text: a number column whose cells have leading zeros.

        The whole-file reader (``files._leading_zero_columns``) reads a column
        that parses as numbers but whose text is all digits with some
        ``0``-led value (zip ``01001``) as text. Decided here from the settled
        types and the text of those columns, read chunk by chunk.
        """
        numeric = [
            c
            for c, d in self.dtypes.items()
            if pd.api.types.is_numeric_dtype(d) and not pd.api.types.is_bool_dtype(d)
        ]
        if not numeric or self.codes:
            return False
        if self.scan is not None and not self.scan.result()[1]:
            return False  # no field of the file starts with 0 and a digit
        digits = dict.fromkeys(numeric, True)
        zero_led = dict.fromkeys(numeric, False)
        options = files._csv_options(self.delimiter)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            with pd.read_csv(
                self.path, **options, dtype=str, usecols=numeric,
                chunksize=self._chunk_rows(),
            ) as texts:  # fmt: skip
                for chunk in texts:
                    for column in numeric:
                        if not digits[column]:
                            continue
                        present = chunk[column].dropna()
                        digits[column] = bool(present.str.fullmatch(r"\d+").all())
                        zero_led[column] = zero_led[column] or bool(
                            present.str.match(r"0\d").any()
                        )
        self.codes = [c for c in numeric if digits[c] and zero_led[c]]
        return bool(self.codes)


class ParquetReader(FrameReader):
    def __init__(self, path: Path, partition_rows: int) -> None:
        self.path, self.name = path, str(path)
        self.batch_rows = _read_rows(partition_rows)
        self.columns = []
        files._check_file(path)

    def chunks(self) -> Iterator[pd.DataFrame]:
        import pyarrow as pa
        import pyarrow.parquet as pq
        from pandas.io._util import arrow_table_to_pandas

        with files._file_errors("parquet", self.path):
            # as load_source: pyarrow refuses a repeated name with "Multiple
            # matches for FieldRef", so check the names first
            messages._check_header(list(pq.read_schema(self.path).names), self.name)
            handle = pq.ParquetFile(self.path)
            schema = handle.schema_arrow
            self.columns = list(arrow_table_to_pandas(schema.empty_table()).columns)
            batches = handle.iter_batches(
                batch_size=self.batch_rows, use_pandas_metadata=True
            )
        try:
            while True:
                with files._file_errors("parquet", self.path):
                    try:
                        batch = next(batches)
                    except StopIteration:
                        break
                    table = pa.Table.from_batches([batch], schema=schema)
                    frame = arrow_table_to_pandas(table)
                yield frame
        finally:
            handle.close()


class SqlReader(Reader):
    """Rows fetched in chunks; converted with the witness rows of the whole result."""

    def __init__(
        self, url: str, query: str, partition_rows: int, password: str | None = None
    ) -> None:
        self.url, self.query, self.password = url, query, password
        self.fetch_rows = _read_rows(partition_rows)
        self.columns = []
        self.kinds: list[str | None] = []
        self.name = url
        self.extra: list[tuple] = []

    def chunks(self) -> Iterator[list[tuple]]:
        import sqlalchemy as sa

        engine, name, secrets = sql._sql_engine(self.url, self.password)
        self.name = f"{name} (query: {messages._shorten(self.query)})"
        try:
            with (
                sql._connected(engine, name, secrets) as connection,
                sql._query_errors(name, secrets, self.query),
            ):
                result = connection.execution_options(stream_results=True).execute(
                    sa.text(self.query)
                )
                self.columns = list(result.keys())
                # the database's declared types, as the in-memory reader uses
                self.kinds = ingest.sql_column_kinds(result, connection.dialect.name)
                while True:
                    rows = result.fetchmany(self.fetch_rows)
                    if not rows:
                        break
                    yield [tuple(row) for row in rows]
        finally:
            engine.dispose()

    def witness(self, raw: list[tuple]) -> list[list]:
        from pandas._libs import lib

        content = lib.to_object_array_tuples(raw)
        return [
            _kinds_sample_sql(content[:, position])
            for position in range(content.shape[1])
        ]

    def settle(self, witnesses: list) -> None:
        width = len(self.columns)
        merged: list[list] = [[] for _ in range(width)]
        for chunk in witnesses:
            for position in range(width):
                merged[position].extend(chunk[position])
        merged = [_kinds_sample_sql(_objects(values)) or [None] for values in merged]
        height = max(len(values) for values in merged) if merged else 0
        self.extra = [
            tuple(values[i] if i < len(values) else values[0] for values in merged)
            for i in range(height)
        ]
        empty = self.frame([])
        self.dtypes = dict(zip(empty.columns, empty.dtypes, strict=True))

    def frame(self, raw: list[tuple]) -> pd.DataFrame:
        from pandas._libs import lib
        from pandas.io.sql import _wrap_result

        # pandas' read_sql conversion of the rows and the witness rows together
        rows = list(raw) + self.extra
        frame = _wrap_result(
            rows, self.columns, coerce_float=True, dtype_backend="numpy"
        )
        if any(self.kinds):
            # A typed column is converted from its values as the in-memory
            # reader converts each chunk; with the witness rows (a NULL when
            # the column has one anywhere) every partition gets one dtype.
            content = lib.to_object_array_tuples(rows)
            for position, kind in enumerate(self.kinds):
                if kind:
                    frame.isetitem(
                        position, ingest.sql_typed_values(content[:, position], kind)
                    )
        return frame.iloc[: len(raw)].reset_index(drop=True)


def _kinds_sample_sql(values: np.ndarray) -> list:
    """One value of each kind a database column holds (what decides its dtype).

    Kinds are Python types, with NaN apart from numbers (floats, decimals)
    and datetimes by time zone; integers also give their smallest and
    largest value (which decide between int64, uint64 and objects).
    """
    import datetime

    if not len(values):
        return []
    series = pd.Series(values, dtype=object)
    types = series.map(type)
    sample = list(series[~types.duplicated()])
    for kind in types.unique():
        if issubclass(kind, (bool, np.bool_, str)) or kind is type(None):
            continue
        mine = series[(types == kind).to_numpy()]
        if issubclass(kind, (int, np.integer)):
            sample += [mine.min(), mine.max()]
        elif issubclass(kind, datetime.datetime):
            zones = mine.map(lambda v: str(v.tzinfo))
            sample += list(mine[~zones.duplicated()])
        else:
            missing = pd.isna(mine.to_numpy())
            if missing.any() and not missing.all():
                sample += [mine[missing].iloc[0], mine[~missing].iloc[0]]
    return sample


def _objects(values: list) -> np.ndarray:
    """A 1-d object array of ``values`` (never nested, whatever they hold)."""
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array
