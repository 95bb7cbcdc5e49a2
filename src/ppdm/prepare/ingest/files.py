"""CSV and Parquet files: how they are read, and refused in one line.

A CSV file has a header row; ``?`` and empty cells are missing values; its
fields are separated by commas or by the ``delimiter`` given
(:func:`sniff_delimiter` finds it for ``ppdm init``). A column of digits with
leading zeros (a zip code ``01001``) is read as text, not as a number. A
spreadsheet or another format named like a CSV file, text that is not UTF-8,
a row with more fields than the header: each is a
:class:`~ppdm.exceptions.SourceError` naming the file (and its line or byte).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from ppdm.exceptions import SourceError
from ppdm.prepare.ingest.messages import _check_header, _first_line

__all__ = [
    "CSV_DELIMITERS",
    "other_format",
    "sniff_delimiter",
]


#: The field separators of a CSV file that :func:`load_source` reads.
CSV_DELIMITERS = (",", ";", "\t", "|")


_CSV_MISSING = ["?", ""]


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


def _file_columns(kind: str, path: Path, delimiter: str | None = None) -> list[str]:
    """The column names of a CSV or Parquet file, as written in its header.

    Raises
    ------
    ppdm.exceptions.SourceError
        The file is missing or unreadable, or its header repeats a name.
    """
    if not path.is_file():
        raise SourceError(f"source {path}: file not found")
    with _file_errors(kind, path):
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
        _file_columns("csv", path, delimiter)
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
