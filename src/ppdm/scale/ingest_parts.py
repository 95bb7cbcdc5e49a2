"""Ingest out of core: stream a source into Parquet partitions.

:func:`ingest_partitions` reads a source in chunks and writes
``part-00000.parquet, part-00001.parquet, ...`` of ``partition_rows`` rows
each (the last one shorter), each written to a temporary name and renamed.
No step holds the whole table: the reader holds one chunk, the writer one
partition.

Every partition equals the corresponding slice of
:func:`ppdm.prepare.ingest.load_source` on the whole source: same columns,
dtypes and values, after the same canonical conversion (text as pandas
``string``). That needs care, because a reader that sees one chunk at a time
infers each chunk's types alone, while the whole-source reader infers them
across the table (one ``"abc"`` in a million ages makes the whole column
text). So ingestion runs in two passes over a private spool of the raw
chunks (a sibling directory of ``out_dir``, removed at the end):

1. read the source in chunks, keep each raw chunk in the spool, and note
   what decides each column's type: a one-row witness of each chunk's
   column (CSV, Parquet) or one value of each kind the column holds (SQL);
2. settle each column's type as the whole-source reader would, convert every
   chunk to it, decide which columns become text exactly as
   :func:`~ppdm.prepare.ingest.load_source` decides on the whole table, and
   write the partitions.

With workers (``map_parts``), the second pass mostly happens during the
first: each partition whose rows are kept is written as soon as they are,
with the types read so far, and kept when those are the settled types
(:class:`_WritingAhead`).

How each reader's whole-source types are reproduced:

- CSV: pandas' C parser infers types per block of rows (``low_memory``:
  2**20 / columns rows, rounded down to a power of two) and joins the
  blocks with :func:`pandas.concat`'s rules (ints and floats make floats,
  numbers and text make objects). The chunks here are whole multiples of
  that block, so each chunk holds the same blocks, and the settled type is
  the concatenation's type of the chunks' witnesses.
- Parquet: row batches converted as :func:`pandas.read_parquet` converts
  the whole file; an integer column with a missing value in some batch
  becomes float in all, a dictionary column's categories are the union.
- SQL: each partition's rows are converted by pandas' own
  ``read_sql`` conversion together with witness rows holding one value of
  each kind met anywhere in the column (and its smallest and largest
  integer), so a column that is ``NULL`` in one chunk and integer in
  another comes out as the whole-result conversion gives it.
- Embedded data sets ship with the package and are split as loaded.

:attr:`PartitionedTable.source_sha256` is what the in-memory ingest step
records: the sha256 of the file's bytes (CSV, Parquet; streamed) or the
:func:`~ppdm.prepare.ingest.fingerprint` of the table (SQL, embedded), here
computed from the partitions as they are written, column by column, so it is
equal bit for bit.

The errors are those of :func:`~ppdm.prepare.ingest.load_source`, with the
same messages (file not found, empty, not UTF-8 with its line and byte, a
malformed row with its line, repeated or run-together header names, no
rows, a failed query naming the URL with its password masked), raised in the
same order.

Examples
--------
>>> import tempfile
>>> from ppdm.scale.ingest_parts import ingest_partitions
>>> with tempfile.TemporaryDirectory() as out:
...     parts = ingest_partitions(
...         "embedded", None, embedded="german", out_dir=out, partition_rows=400
...     )
...     parts.part_rows, parts.rows, parts.to_pandas().shape
((400, 400, 200), 1000, (1000, 21))
"""

from __future__ import annotations

import contextvars
import copy
import hashlib
import io
import json
import pickle
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.prepare import ingest
from ppdm.prepare.ingest import canonical, files, readers
from ppdm.release.artifacts import write_atomic
from ppdm.scale.chunk_readers import (
    CsvReader,
    FrameReader,
    ParquetReader,
    Reader,
    SqlReader,
)
from ppdm.scale.file_scan import scan_on
from ppdm.scale.part_files import read_part

__all__ = [
    "PART_NAME",
    "PartitionedTable",
    "ingest_partitions",
    "partitioned_fingerprint",
    "write_part",
]

#: File name of partition ``i``: ``PART_NAME.format(i)``.
PART_NAME = "part-{:05d}.parquet"
_PART_PATTERN = re.compile(r"^part-(\d{5,})\.parquet$")


@dataclass(frozen=True)
class PartitionedTable:
    """A table stored as Parquet partitions, in row order.

    Attributes
    ----------
    paths : tuple of str
        The partition files, in row order.
    part_rows : tuple of int
        Rows of each partition.
    columns : tuple of str
        The table's columns, in order (the same in every partition).
    rows : int
        Rows of the whole table, ``sum(part_rows)``.
    source_sha256 : str or None
        Set by :func:`ingest_partitions`: the sha256 of the source file (CSV,
        Parquet) or the :func:`~ppdm.prepare.ingest.fingerprint` of the table
        (SQL, embedded), as the in-memory ingest step records it.
    """

    paths: tuple[str, ...]
    part_rows: tuple[int, ...]
    columns: tuple[str, ...]
    rows: int
    source_sha256: str | None = None

    @property
    def starts(self) -> tuple[int, ...]:
        """Row number (0-based, in the whole table) of each partition's first row."""
        return tuple(int(s) for s in np.cumsum((0, *self.part_rows[:-1])))

    def read(self, index: int, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """Partition ``index`` (optionally only ``columns``), index ``0..n-1``."""
        return read_part(self.paths[index], columns)

    def to_pandas(self) -> pd.DataFrame:
        """The whole table in memory (for small tables and tests)."""
        frames = [self.read(i) for i in range(len(self.paths))]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    @classmethod
    def of(cls, parts: PartitionedTable | Sequence[str | Path]) -> PartitionedTable:
        """``parts`` itself, or the table of these Parquet files (rows from footers).

        Raises
        ------
        ppdm.exceptions.InvalidParameterError
            No partition given, or partitions with different columns.
        """
        if isinstance(parts, PartitionedTable):
            return parts
        import pyarrow.parquet as pq

        paths = tuple(str(p) for p in parts)
        if not paths:
            raise InvalidParameterError("parts must name at least one Parquet file")
        rows, columns = [], None
        for path in paths:
            meta = pq.ParquetFile(path)
            rows.append(int(meta.metadata.num_rows))
            names = tuple(_frame_columns(meta.schema_arrow))
            if columns is None:
                columns = names
            elif names != columns:
                raise InvalidParameterError(
                    f"partition {path} has columns {list(names)}; the first "
                    f"partition has {list(columns)}"
                )
        return cls(paths, tuple(rows), columns or (), int(sum(rows)))


def _frame_columns(schema: Any) -> list[str]:
    """The columns pandas reads from a Parquet schema (index columns left out)."""
    index = set()
    if schema.pandas_metadata:
        index = {
            c
            for c in schema.pandas_metadata.get("index_columns", [])
            if isinstance(c, str)
        }
    return [name for name in schema.names if name not in index]


def write_part(frame: pd.DataFrame, path: str | Path) -> None:
    """Write one partition as Parquet (zstd, no index) to a temporary name, then rename.

    Without column statistics: a partition is read whole by the next step,
    never filtered by them, and the minimum and maximum of every column were
    about a third of a partition's write (0.068 -> 0.047 s for 250,000 Adult
    rows). The released parts keep theirs (``ppdm.release.data_files``).
    """
    buffer = io.BytesIO()
    frame.to_parquet(
        buffer,
        index=False,
        engine="pyarrow",
        compression="zstd",
        write_statistics=False,
    )
    write_atomic(path, buffer.getvalue())


def ingest_partitions(
    kind: str,
    path_or_url: str | Path | None,
    *,
    query: str | None = None,
    embedded: str | None = None,
    out_dir: str | Path,
    partition_rows: int = 1_000_000,
    delimiter: str | None = None,
    password: str | None = None,
    map_parts: Callable[[Callable[[Any], Any], Sequence[Any]], Iterable[Any]]
    | None = None,
) -> PartitionedTable:
    """Read a source into Parquet partitions equal to slices of ``load_source``.

    Parameters
    ----------
    kind : {"embedded", "csv", "parquet", "sql"}
        Which reader to use, as for :func:`~ppdm.prepare.ingest.load_source`.
    path_or_url : str or pathlib.Path or None
        The file (csv, parquet) or the database URL (sql); ignored for
        ``"embedded"``.
    query : str, optional
        The SQL query (required for ``"sql"``); its rows are fetched in chunks.
    embedded : str, optional
        The embedded data set's name (required for ``"embedded"``).
    out_dir : str or pathlib.Path
        Where ``part-00000.parquet, ...`` are written (created if absent).
        Partition files of an earlier run beyond the new last one are
        removed, so the directory holds exactly this table's partitions.
    partition_rows : int, default=1_000_000
        Rows per partition (the last one may have fewer).
    delimiter : str, optional
        The field separator of a CSV file (default: a comma), as for
        :func:`~ppdm.prepare.ingest.load_source`.
    password : str, optional
        Where the database password is (``"sql"``), as for
        :func:`~ppdm.prepare.ingest.load_source`.
    map_parts : callable, optional
        ``map_parts(fn, items)`` (e.g. Dask-backed): the second pass of a
        CSV or Parquet file -- converting the kept chunks to the settled types
        and writing the partitions -- runs one partition per item on it.
        The partitions are the same bytes as without it. None: one process.

    Returns
    -------
    PartitionedTable
        The partitions, their rows, the columns and ``source_sha256``.

    Raises
    ------
    ppdm.exceptions.InvalidParameterError
        ``kind`` is unknown, the argument it needs is missing, or
        ``partition_rows`` is not a positive integer.
    ppdm.exceptions.SourceError
        As :func:`~ppdm.prepare.ingest.load_source`, with the same message.
    """
    readers._check_arguments(kind, path_or_url, query, embedded)
    readers._check_delimiter(kind, delimiter)
    if (
        isinstance(partition_rows, bool)
        or not isinstance(partition_rows, (int, np.integer))
        or partition_rows < 1
    ):
        raise InvalidParameterError(
            f"partition_rows must be an integer >= 1; got {partition_rows!r}"
        )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    partition_rows = int(partition_rows)
    if kind == "embedded":
        frame = ingest.load_source("embedded", None, embedded=embedded)
        writer = _PartWriter(out, partition_rows, None)
        writer.add(frame)
        paths, rows = writer.close()
        columns = tuple(str(c) for c in frame.columns)
        sha = ingest.fingerprint(frame)
    else:
        location = str(path_or_url)
        reader: Reader
        if kind == "csv":
            reader = CsvReader(Path(location), partition_rows, delimiter)
        elif kind == "parquet":
            reader = ParquetReader(Path(location), partition_rows)
        else:
            reader = SqlReader(location, str(query), partition_rows, password)
        # The file's bytes are hashed and scanned beside the two passes
        # (ppdm.scale.file_scan) rather than read again after them.
        with ThreadPoolExecutor(1) as pool:
            hashing = None
            if kind != "sql":
                # On a worker when there are workers: the scan's numpy passes
                # hold the GIL often enough to halve the parser's speed if
                # they ran in this process (87 s against 43 s for Adult x1000).
                # The thread only waits; it runs in a copy of this context,
                # which knows the run's cluster.
                hashing = pool.submit(
                    contextvars.copy_context().run,
                    scan_on,
                    map_parts,
                    {
                        "path": location,
                        "delimiter": files._csv_options(delimiter)["sep"],
                    },
                )
                reader.scan = hashing
            with _Spool(out) as spool:
                paths, rows, columns, hashed = _two_passes(
                    reader,
                    spool,
                    out,
                    partition_rows,
                    hash_cells=kind == "sql",
                    map_parts=map_parts,
                )
            sha = hashed if hashing is None else hashing.result()[0]
    _remove_stale(out, len(paths))
    return PartitionedTable(
        tuple(paths), tuple(rows), tuple(columns), int(sum(rows)), sha
    )


def _two_passes(
    reader: Reader,
    spool: _Spool,
    out: Path,
    partition_rows: int,
    *,
    hash_cells: bool,
    map_parts: Callable[[Callable[[Any], Any], Sequence[Any]], Iterable[Any]]
    | None = None,
) -> tuple[list[str], list[int], list[str], str | None]:
    in_parallel = (
        map_parts is not None and not hash_cells and isinstance(reader, FrameReader)
    )
    ahead = _WritingAhead(reader, spool, out, partition_rows, map_parts)
    with ahead:
        n_rows, witnesses = _first_pass(
            reader, spool, ahead.after_chunk if in_parallel else None
        )
        reader.finish(n_rows)  # the in-memory reader's checks, in its order
        reader.settle(witnesses)
        if reader.read_again():
            ahead.abandon()  # its partitions have the first read's types
            spool.clear()
            n_rows, witnesses = _first_pass(reader, spool)
            reader.settle(witnesses)
        reader.scan = None  # answered; the reader travels to the workers without it
        text, one_by_one = _text_plan(reader, spool)
        if in_parallel:
            assert map_parts is not None and isinstance(reader, FrameReader)
            written = ahead.finished(reader.dtypes, (text, one_by_one))
            paths, rows = _write_in_parallel(
                reader, spool, out, partition_rows, (text, one_by_one), map_parts,
                first=len(written),
            )  # fmt: skip
            return (
                [job_path for job_path, _ in written] + paths,
                [job_rows for _, job_rows in written] + rows,
                [str(c) for c in reader.columns],
                None,
            )
    writer = _PartWriter(out, partition_rows, spool.directory if hash_cells else None)
    for raw in spool:
        frame = reader.frame(raw)
        writer.add(canonical._as_string(frame, text, one_by_one=one_by_one))
    paths, rows = writer.close()
    return paths, rows, [str(c) for c in reader.columns], writer.fingerprint()


def _first_pass(
    reader: Reader,
    spool: _Spool,
    after_chunk: Callable[[Any], None] | None = None,
) -> tuple[int, list]:
    """Read every chunk into the spool; the rows and each chunk's type witness.

    ``after_chunk(raw)`` is called once each chunk is kept.
    """
    witnesses = []
    n_rows = 0
    for raw in reader.chunks():
        rows = reader.rows(raw)
        if rows == 0:
            continue
        n_rows += rows
        spool.put(raw, rows)
        witnesses.append(reader.witness(raw))
        if after_chunk is not None:
            after_chunk(raw)
    return n_rows, witnesses


def _partition_jobs(
    reader: FrameReader,
    chunk_rows: Sequence[int],
    spool: _Spool,
    out: Path,
    partition_rows: int,
    text_plan: tuple[list, bool],
    partitions: range,
) -> list[dict[str, Any]]:
    """The jobs of :func:`_write_partition` for ``partitions`` (their numbers).

    Each partition's rows are sliced from the kept chunks they fall in
    (``chunk_rows``: the rows of each kept chunk, in order).
    """
    starts = np.concatenate([[0], np.cumsum(chunk_rows)]).astype(np.int64)
    total = int(starts[-1])
    jobs = []
    for index in partitions:
        first = index * partition_rows
        last = min(first + partition_rows, total)
        pieces = [
            (str(spool.path(c)), max(first, int(starts[c])) - int(starts[c]),
             min(last, int(starts[c + 1])) - int(starts[c]))
            for c in range(len(chunk_rows))
            if starts[c] < last and starts[c + 1] > first
        ]  # fmt: skip
        jobs.append(
            {
                "reader": reader,
                "text_plan": text_plan,
                "pieces": pieces,
                "path": str(out / PART_NAME.format(index)),
            }
        )
    return jobs


def _write_in_parallel(
    reader: FrameReader,
    spool: _Spool,
    out: Path,
    partition_rows: int,
    text_plan: tuple[list, bool],
    map_parts: Callable[[Callable[[Any], Any], Sequence[Any]], Iterable[Any]],
    *,
    first: int = 0,
) -> tuple[list[str], list[int]]:
    """The second pass from partition ``first`` on, one partition per item of ``map_parts``.

    Each partition's rows are sliced from the kept chunks they fall in and
    converted there; the conversions (a dtype cast, text) go value by value,
    so converting a slice gives the rows :class:`_PartWriter` cuts from the
    converted chunk.
    """
    total = int(sum(spool.rows))
    jobs = _partition_jobs(
        reader, spool.rows, spool, out, partition_rows, text_plan,
        range(first, -(-total // partition_rows)),
    )  # fmt: skip
    rows = [int(n) for n in map_parts(_write_partition, jobs)]
    return [job["path"] for job in jobs], rows


class _WritingAhead:
    """Partitions written on the workers while the first pass still reads.

    The second pass converts the kept chunks to the settled types, which are
    known only once every chunk is read. But on most tables every chunk
    reads with the same types as the first one, and those are then the
    settled types: each partition whose rows are kept is sent to the workers
    right away, converted to the types seen so far, so the writes overlap
    the parse (which runs in this process) instead of following it. A chunk
    with other types (a text cell in a column of numbers, a column of
    Python objects) stops it. At the end, the partitions written ahead are
    kept only if the settled types and text columns are those they were
    written with (the same job of :func:`_write_partition` on the same
    chunks: the same bytes); otherwise the second pass writes them again.
    """

    def __init__(
        self,
        reader: Reader,
        spool: _Spool,
        out: Path,
        partition_rows: int,
        map_parts: Callable[[Callable[[Any], Any], Sequence[Any]], Iterable[Any]]
        | None,
    ) -> None:
        self.reader, self.spool, self.out = reader, spool, out
        self.partition_rows, self.map_parts = partition_rows, map_parts
        self.dtypes: dict | None = None  # the types of every chunk so far
        self.plan: tuple[list, bool] | None = None
        self.sent = 0  # partitions sent
        self.on = True
        self.batches: list[tuple[list[dict[str, Any]], Future]] = []
        # Each batch waits for its results in a thread: a Dask map blocks.
        # Two at a time: the workers are busy anyway; the rest wait here.
        self.pool = ThreadPoolExecutor(2)

    def __enter__(self) -> _WritingAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        # No write may still read the spool when it is removed.
        self.pool.shutdown(wait=True, cancel_futures=True)

    def after_chunk(self, raw: pd.DataFrame) -> None:
        """Send the partitions the kept chunks now hold, if the types still agree."""
        if not self.on:
            return
        dtypes = dict(zip(self.reader.columns, raw.dtypes, strict=True))
        if self.dtypes is None:
            candidates = [c for c, d in dtypes.items() if canonical._may_be_text(d)]
            if any(pd.api.types.is_object_dtype(dtypes[c]) for c in candidates):
                # Python objects: which become text is decided on the whole column
                self.on = False
                return
            self.dtypes = dtypes
            self.plan = (candidates, False)  # as _text_plan decides without objects
        elif list(dtypes.values()) != list(self.dtypes.values()):
            self.on = False
            return
        ready = int(sum(self.spool.rows)) // self.partition_rows
        if ready <= self.sent:
            return
        writer = copy.copy(self.reader)
        writer.scan, writer.dtypes = None, dict(self.dtypes)
        assert self.plan is not None
        jobs = _partition_jobs(
            writer, list(self.spool.rows), self.spool, self.out,
            self.partition_rows, self.plan, range(self.sent, ready),
        )  # fmt: skip
        self.sent = ready
        assert self.map_parts is not None
        self.batches.append(
            (
                jobs,
                self.pool.submit(
                    contextvars.copy_context().run,
                    _mapped_list,
                    self.map_parts,
                    jobs,
                ),
            )
        )

    def abandon(self) -> None:
        """Stop; wait for the partitions sent (the spool is about to change)."""
        self.on = False
        for _, batch in self.batches:
            batch.exception()  # waited for; a failed write is written again
        self.batches = []
        self.sent = 0

    def finished(self, dtypes: dict, plan: tuple[list, bool]) -> list[tuple[str, int]]:
        """``(path, rows)`` of the partitions written ahead with these types and plan.

        Empty when they were written with others (the second pass writes
        every partition). A failed write raises its error, as in the second pass.
        """
        if (
            not self.batches
            or self.dtypes is None
            or list(dtypes.items()) != list(self.dtypes.items())
            or plan != self.plan
        ):
            self.abandon()
            return []
        written = []
        for jobs, batch in self.batches:
            rows = batch.result()
            written.extend(
                (job["path"], int(n)) for job, n in zip(jobs, rows, strict=True)
            )
        return written


def _mapped_list(
    map_parts: Callable[[Callable[[Any], Any], Sequence[Any]], Iterable[Any]],
    jobs: list[dict[str, Any]],
) -> list:
    return list(map_parts(_write_partition, jobs))


def _write_partition(job: dict[str, Any]) -> int:
    """Write one partition from its slices of the kept chunks; return its rows."""
    reader: FrameReader = job["reader"]
    text, one_by_one = job["text_plan"]
    frames = []
    for path, first, last in job["pieces"]:
        piece = reader.frame(_read_kept(Path(path), first, last))
        frames.append(canonical._as_string(piece, text, one_by_one=one_by_one))
    frame = (
        frames[0].reset_index(drop=True)
        if len(frames) == 1
        else pd.concat(frames, ignore_index=True)
    )
    write_part(frame, job["path"])
    return len(frame)


# -- the spool of raw chunks ------------------------------------------------------
class _Spool:
    """Raw chunks kept on disk between the two passes, losslessly.

    A frame whose columns Arrow holds as pandas does (numbers, booleans,
    text the parser gave as Arrow strings) is kept as an Arrow IPC file: it
    is written without a copy of its text, and a partition's slice of it is
    read through a memory map, touching only the slice's pages (a pickle is
    read whole, twice for a partition that spans two chunks). Anything else
    (Python objects, categories, a database's rows) is pickled.
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        self.paths: list[Path] = []
        self.rows: list[int] = []
        self.directory = Path()

    @property
    def count(self) -> int:
        return len(self.paths)

    def path(self, index: int) -> Path:
        return self.paths[index]

    def __enter__(self) -> _Spool:
        self.directory = Path(
            tempfile.mkdtemp(prefix=f".{self.out.name}.spool-", dir=self.out.parent)
        )
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    def clear(self) -> None:
        for path in self.paths:
            path.unlink(missing_ok=True)
        self.paths, self.rows = [], []

    def put(self, raw: Any, rows: int) -> None:
        name = self.directory / f"chunk-{self.count:06d}"
        if _arrow_keeps(raw):
            import pyarrow as pa

            path = name.with_suffix(".arrow")
            table = pa.Table.from_pandas(raw, preserve_index=False)
            with pa.OSFile(str(path), "wb") as sink:
                with pa.ipc.new_file(sink, table.schema) as writer:
                    writer.write_table(table)
        else:
            path = name.with_suffix(".pkl")
            with open(path, "wb") as handle:
                pickle.dump(raw, handle, protocol=pickle.HIGHEST_PROTOCOL)
        self.paths.append(path)
        self.rows.append(rows)

    def __iter__(self) -> Iterator[Any]:
        for path in self.paths:
            yield _read_kept(path)


def _arrow_keeps(raw: Any) -> bool:
    """Whether an Arrow IPC file gives ``raw`` back as it is (index aside)."""
    if not isinstance(raw, pd.DataFrame) or not raw.columns.is_unique:
        return False
    if not all(isinstance(c, str) for c in raw.columns):
        return False
    return all(
        (isinstance(d, np.dtype) and d.kind in "iufb")
        or (isinstance(d, pd.StringDtype) and d.storage == "pyarrow")
        for d in raw.dtypes
    )


def _read_kept(path: Path, first: int = 0, last: int | None = None) -> Any:
    """Rows ``first:last`` of a kept chunk (all of it by default).

    A frame's index is not kept: the second pass renumbers the rows.
    """
    if path.suffix == ".arrow":
        import pyarrow as pa

        with pa.memory_map(str(path)) as source:
            table = pa.ipc.open_file(source).read_all()
            stop = table.num_rows if last is None else last
            return table.slice(first, stop - first).to_pandas()
    # our own spool file, written by this ingest: not untrusted input
    with open(path, "rb") as handle:
        raw = pickle.load(handle)  # noqa: S301
    return raw if first == 0 and last is None else raw.iloc[first:last]


# -- the writer of partitions -------------------------------------------------------
class _PartWriter:
    """Cuts a stream of frames into partitions of ``partition_rows`` rows.

    With ``hash_dir``, it also keeps each column's cell hashes (as
    :func:`~ppdm.prepare.ingest.fingerprint` computes them) in one file per
    column, so the table's fingerprint can be streamed in its column order.
    """

    def __init__(self, out: Path, partition_rows: int, hash_dir: Path | None) -> None:
        self.out, self.partition_rows, self.hash_dir = out, partition_rows, hash_dir
        self.pending: list[pd.DataFrame] = []
        self.pending_rows = 0
        self.paths: list[str] = []
        self.rows: list[int] = []
        self.header: dict[str, Any] | None = None

    def add(self, frame: pd.DataFrame) -> None:
        start = 0
        while start < len(frame):
            take = min(self.partition_rows - self.pending_rows, len(frame) - start)
            self.pending.append(frame.iloc[start : start + take])
            self.pending_rows += take
            start += take
            if self.pending_rows == self.partition_rows:
                self._emit()

    def close(self) -> tuple[list[str], list[int]]:
        if self.pending_rows:
            self._emit()
        return self.paths, self.rows

    def _emit(self) -> None:
        if len(self.pending) == 1:
            frame = self.pending[0].reset_index(drop=True)
        else:
            frame = pd.concat(self.pending, ignore_index=True)
        self.pending, self.pending_rows = [], 0
        path = self.out / PART_NAME.format(len(self.paths))
        write_part(frame, path)
        self.paths.append(str(path))
        self.rows.append(len(frame))
        if self.hash_dir is not None:
            if self.header is None:
                self.header = {
                    "columns": [str(c) for c in frame.columns],
                    "dtypes": [str(d) for d in frame.dtypes],
                }
            for position in range(frame.shape[1]):
                hashes = pd.util.hash_pandas_object(
                    frame.iloc[:, position], index=False, categorize=True
                )
                with open(self.hash_dir / f"hash-{position:05d}.bin", "ab") as handle:
                    handle.write(
                        np.ascontiguousarray(hashes.to_numpy(), dtype="<u8").tobytes()
                    )

    def fingerprint(self) -> str | None:
        """:func:`~ppdm.prepare.ingest.fingerprint` of all rows written, or None."""
        if self.hash_dir is None or self.header is None:
            return None
        digest = hashlib.sha256()
        header = {**self.header, "rows": int(sum(self.rows))}
        digest.update(json.dumps(header, sort_keys=True).encode("utf-8"))
        for position in range(len(self.header["columns"])):
            with open(self.hash_dir / f"hash-{position:05d}.bin", "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        return digest.hexdigest()


def _remove_stale(out: Path, n_parts: int) -> None:
    """Remove partition files numbered ``n_parts`` and above (an earlier run's)."""
    for path in out.iterdir():
        found = _PART_PATTERN.match(path.name)
        if found and int(found.group(1)) >= n_parts:
            path.unlink(missing_ok=True)


def partitioned_fingerprint(parts: PartitionedTable | Sequence[str | Path]) -> str:
    """:func:`~ppdm.prepare.ingest.fingerprint` of a partitioned table, read back.

    Reads one column of one partition at a time. Equal to the fingerprint of
    the concatenated table for the canonical dtypes (numbers, booleans,
    ``string``, categories); a column that Parquet cannot store as it was in
    memory (a mix of Python objects) reads back in the type Parquet gave it.
    """
    table = PartitionedTable.of(parts)
    digest = hashlib.sha256()
    head = table.read(0)
    header = {
        "columns": [str(c) for c in head.columns],
        "dtypes": [str(d) for d in head.dtypes],
        "rows": table.rows,
    }
    digest.update(json.dumps(header, sort_keys=True).encode("utf-8"))
    for column in table.columns:
        for index in range(len(table.paths)):
            hashes = pd.util.hash_pandas_object(
                table.read(index, [column])[column], index=False, categorize=True
            )
            digest.update(
                np.ascontiguousarray(hashes.to_numpy(), dtype="<u8").tobytes()
            )
    return digest.hexdigest()


# -- which columns become text ------------------------------------------------------------
def _text_plan(reader: Reader, spool: _Spool) -> tuple[list, bool]:
    """The columns ``_canonical`` turns to text on the whole table, and how.

    A column of a text dtype is text. A column of Python objects is text
    when every chunk infers as text, or when the whole column cannot be
    stored as one Arrow type: decided from each chunk's answer and from a
    witness of each chunk's value kinds (one value per Python type, the
    smallest and largest integer), which Arrow infers as it would the whole
    column. ``one_by_one``: some value of a text column is bytes that are not
    UTF-8, so every text column converts value by value, as on the whole table.
    """
    candidates = [c for c, d in reader.dtypes.items() if canonical._may_be_text(d)]
    objects = [c for c in candidates if pd.api.types.is_object_dtype(reader.dtypes[c])]
    text = [c for c in candidates if c not in objects]
    if not objects:
        return _in_order(reader, text), False
    inferred_text = dict.fromkeys(objects, True)
    storable = dict.fromkeys(objects, True)
    samples: dict[Any, list] = {c: [] for c in objects}
    fails = dict.fromkeys(objects, False)
    for raw in spool:
        frame = reader.frame(raw)
        for column in objects:
            values = frame[column]
            if (
                pd.api.types.infer_dtype(values, skipna=True)
                not in canonical._TEXT_INFERRED
            ):
                inferred_text[column] = False
            storable[column] = storable[column] and canonical._storable(values)
            samples[column].extend(_kinds_sample(values))
            if not fails[column]:
                try:
                    values.astype("string")
                except (TypeError, ValueError):
                    fails[column] = True
    for column in objects:
        if inferred_text[column] or not (
            storable[column]
            and canonical._storable(pd.Series(samples[column], dtype=object))
        ):
            text.append(column)
    text = _in_order(reader, text)
    return text, any(fails.get(c, False) for c in text)


def _in_order(reader: Reader, columns: list) -> list:
    return [c for c in reader.dtypes if c in set(columns)]


def _kinds_sample(values: pd.Series) -> list:
    """One present value of each Python type, and the extreme integers."""
    present = values[values.notna()]
    if not len(present):
        return []
    kinds = present.map(type)
    sample = list(present[~kinds.duplicated()])
    integers = present[kinds.map(lambda k: issubclass(k, (int, np.integer)))]
    integers = integers[~integers.map(lambda v: isinstance(v, (bool, np.bool_)))]
    if len(integers):
        sample += [integers.min(), integers.max()]
    return sample
