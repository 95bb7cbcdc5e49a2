"""Parse a CSV file's chunks on several workers, each from its own byte range.

The out-of-core ingest (:mod:`ppdm.scale.ingest_parts`) reads a CSV file in
chunks of a fixed number of records (a whole multiple of pandas' parser
block), because pandas infers each block's types alone. Read by one
process, the parse of a census-sized file is the longest wait of the
ingest. Here each chunk is parsed by a worker from the bytes it spans:

1. :func:`record_starts` finds, in one pass over the bytes (numpy, in blocks),
   where records ``0, every, 2 * every, ...`` start. A line break ends a
   record when an even number of quote characters precedes it (a quoted
   field may hold line breaks; ``""`` inside it keeps the count even).
2. :func:`parse_range` reads one range, behind the header's bytes, with the
   very reader and options of the one-process read, and keeps the chunk in
   the ingest's spool.
3. The ranges are accepted only when each but the last parsed without an
   error into exactly ``every`` records and the last into at most that.

Why this gives the one-process chunks exactly: the first range starts where
the file starts. If a range starts at a record and parses without an error,
pandas' tokenizer was outside any quoted field at its end (a file that ends
inside a quoted field is an error, "EOF inside string"), so the next range
starts at a record too; by induction every range holds the records the
one-process reader puts in that chunk, and the tokens are the same. A file
the quote count misreads (a stray quote inside an unquoted field, which
pandas reads as a character), a blank line (pandas skips it), a lone
carriage return as line end, an error anywhere: the ranges are not accepted
and the caller reads the file in one process, which also gives the exact
error message.

No library does this: pyarrow's CSV reader is multi-threaded but infers
types differently from pandas' (the whole-file read the partitions must
equal), and Dask's ``read_csv`` cuts at line breaks, not at records, and
infers types from a sample.
"""

from __future__ import annotations

import io
import pickle
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["low_memory_rows", "parse_range", "parser_warnings", "record_starts"]

#: Bytes read at a time when looking for record starts.
_BLOCK = 64 << 20
_NEWLINE, _QUOTE = ord("\n"), ord('"')


def low_memory_rows(width: int) -> int:
    """Rows per block of pandas' C parser (``low_memory=True``) for ``width`` columns."""
    heuristic = 2**20 // max(width, 1)
    rows = 1
    while rows * 2 < heuristic:
        rows *= 2
    return rows


class parser_warnings:  # noqa: N801 - used as a context manager, like warnings'
    """Record warnings, every ``ParserWarning`` (as the in-memory reader does)."""

    def __enter__(self) -> list:
        self._context = warnings.catch_warnings(record=True)
        caught = self._context.__enter__()
        warnings.simplefilter("always", pd.errors.ParserWarning)
        return caught

    def __exit__(self, *exc: object) -> None:
        self._context.__exit__(*exc)


def record_starts(path: str | Path, every: int) -> list[int] | None:
    """Byte offsets where data records ``0, every, 2 * every, ...`` start.

    The first offset is the end of the header line. None when the file's
    line breaks cannot be read as record ends this way: a blank line
    (``\\n\\n``, which pandas skips and so does not count), a carriage
    return that is not part of ``\\r\\n``, an odd number of quotes at the end
    (the reader will report it), or no line break after the header.
    """
    starts: list[int] = []
    ends_seen = 0  # line breaks read as record ends so far (the header's first)
    odd = 0  # whether an odd number of quotes precedes the current position
    offset = 0
    tail = b"\n"  # the file's start counts as a line start: a blank first line
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            data = np.frombuffer(block, dtype=np.uint8)
            breaks = np.flatnonzero(data == _NEWLINE)
            if _blank_line(data, breaks, tail + block[:2]) or _lone_return(
                block, data, breaks, tail
            ):
                return None
            tail = block[-2:]
            if odd or block.find(b'"') >= 0:
                quotes = np.flatnonzero(data == _QUOTE)
                outside = ((np.searchsorted(quotes, breaks) + odd) & 1) == 0
                breaks = breaks[outside]
                odd = (odd + len(quotes)) & 1
            # record r (0-based, after the header) starts after record end r
            first = -(-ends_seen // every) * every
            wanted = np.arange(first, ends_seen + len(breaks), every) - ends_seen
            starts.extend((offset + breaks[wanted] + 1).tolist())
            ends_seen += len(breaks)
            offset += len(block)
    if odd or tail.endswith(b"\r") or not starts:
        return None
    return [start for start in starts if start < offset] or None


def _blank_line(data: np.ndarray, breaks: np.ndarray, edge: bytes) -> bool:
    """Whether a line of a block is empty (``edge``: the two bytes before it and its first two)."""
    if b"\n\n" in edge or b"\n\r\n" in edge:
        return True
    gaps = np.diff(breaks)
    return bool((gaps == 1).any() or ((gaps == 2) & (data[breaks[1:] - 1] == 13)).any())


def _lone_return(
    block: bytes, data: np.ndarray, breaks: np.ndarray, tail: bytes
) -> bool:
    """Whether a carriage return of a block (or ending the one before) is not in ``\r\n``."""
    if tail.endswith(b"\r") and not block.startswith(b"\n"):
        return True
    returns = block.count(b"\r") if block.find(b"\r") >= 0 else 0
    if not returns:
        return False
    inner = breaks[breaks > 0]
    paired = int(np.count_nonzero(data[inner - 1] == 13))
    # a block may end between the two bytes of "\r\n": judged with the next one
    return returns - block.endswith(b"\r") != paired


def parse_range(job: dict[str, Any]) -> dict[str, Any]:
    """Parse the records of ``job["start"]:job["stop"]`` into one chunk, kept in the spool.

    The job holds the file's ``path``, its ``header`` bytes (put before a
    range that does not start the file), the reader's ``options``, the
    chunk's ``rows``, the ``first_row`` (the chunk's index starts there, as
    the one-process reader numbers it), the spool file ``keep`` and the
    ``witness`` function. Returns ``ok`` (False: any error; the caller
    reads the file in one process, which reports it), the records read,
    whether more than ``rows`` were there, the columns, the witness and
    whether a row had more fields than the header.
    """
    with open(job["path"], "rb") as handle:
        handle.seek(job["start"])
        body = handle.read(job["stop"] - job["start"])
    data = body if job["start"] == 0 else job["header"] + body
    try:
        with parser_warnings() as caught:
            reader = pd.read_csv(
                io.BytesIO(data), chunksize=job["rows"], **job["options"]
            )
            with reader:
                chunk = reader.get_chunk()
                try:
                    more = len(reader.get_chunk()) > 0
                except StopIteration:
                    more = False
    # Any failure only means this range is not read here: the one-process
    # read that follows raises it with the file's own line numbers.
    except Exception:  # noqa: BLE001
        return {"ok": False}
    del data, body
    chunk.index = pd.RangeIndex(job["first_row"], job["first_row"] + len(chunk))
    with open(job["keep"], "wb") as handle:
        pickle.dump(chunk, handle, protocol=pickle.HIGHEST_PROTOCOL)
    return {
        "ok": True,
        "rows": len(chunk),
        "more": more,
        "columns": [str(c) for c in chunk.columns],
        "witness": job["witness"](chunk),
        "surplus": any(issubclass(w.category, pd.errors.ParserWarning) for w in caught),
    }


def parse_ranges(
    path: Path,
    *,
    options: dict[str, Any],
    rows: int,
    columns: Sequence[str],
    keep: Callable[[int], Path],
    witness: Callable[[pd.DataFrame], Any],
    map_parts: Callable[[Callable[[Any], Any], Sequence[Any]], Iterable[Any]],
) -> list[dict[str, Any]] | None:
    """Every chunk of ``rows`` records parsed by :func:`parse_range` on ``map_parts``.

    The answers in file order, or None when the file cannot be cut at its
    records or a range did not parse into the records expected (see the
    module docstring); chunk ``i`` is kept at ``keep(i)``.
    """
    starts = record_starts(path, rows)
    if starts is None:
        return None
    size = path.stat().st_size
    with open(path, "rb") as handle:
        header = handle.read(starts[0])
    stops = [*starts[1:], size]
    jobs = [
        {
            "path": str(path),
            "header": header,
            "start": 0 if index == 0 else start,
            "stop": stop,
            "options": options,
            "rows": rows,
            "first_row": index * rows,
            "keep": str(keep(index)),
            "witness": witness,
        }
        for index, (start, stop) in enumerate(zip(starts, stops, strict=True))
    ]
    found = list(map_parts(parse_range, jobs))
    last = len(found) - 1
    for index, answer in enumerate(found):
        if not (
            answer["ok"]
            and not answer["more"]
            and list(answer["columns"]) == [str(c) for c in columns]
            and (answer["rows"] == rows if index < last else 0 < answer["rows"] <= rows)
        ):
            return None
    return found
