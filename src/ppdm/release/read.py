"""Reading a published release: every format, one function.

A release publishes each table either as one CSV file (``data/<table>.csv``,
the pandas engine) or as Parquet parts (``data/<table>/part-00000.parquet,
...``, the Dask engine). Whoever reads a published table (``ppdm verify`` and
its differencing against earlier releases, ``ppdm show``, the release series,
the tests) reads it through :func:`read_released_table`, so both formats give
the same frame: every cell as text, ``*`` (suppressed) and ``""`` (missing)
kept as values, as an analyst reading the CSV would see them.

:func:`released_tables` groups the files a manifest (or an audit entry) lists
by table, so a table of six parts is one table, not six.

>>> released_tables(["data/release.csv"])
{'release': [PosixPath('data/release.csv')]}
>>> parts = ["data/release/part-00001.parquet", "data/release/part-00000.parquet"]
>>> [p.name for p in released_tables(parts)["release"]]
['part-00000.parquet', 'part-00001.parquet']
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePath

import numpy as np
import pandas as pd

from ppdm.exceptions import SourceError
from ppdm.release.artifacts import sha256_file
from ppdm.values import canonical_label

__all__ = [
    "ReleasedFiles",
    "read_released_table",
    "released_sha256",
    "released_tables",
    "released_text",
]

#: One released table: a CSV file, a Parquet file, a directory of Parquet
#: parts, or the parts themselves.
ReleasedFiles = str | Path | Sequence[str | Path]


def released_text(frame: pd.DataFrame) -> pd.DataFrame:
    """Cells as a released CSV would hold them: text, missing as ``""``.

    Applied to every Parquet partition (and to the in-memory table), so a
    Parquet release is read exactly like its CSV form.
    """
    out = {}
    for name in frame.columns:
        column = frame[name]
        if isinstance(column.dtype, pd.StringDtype) and column.dtype.na_value is np.nan:
            text = column
        else:
            text = column.astype("str")
        out[name] = text.where(column.notna(), "")
    return pd.DataFrame(out, index=frame.index).astype("str")


def _files(files: ReleasedFiles) -> list[Path]:
    """The files of one released table, parts in name order."""
    if isinstance(files, str | Path):
        path = Path(files)
        if path.is_dir():
            parts = sorted(p for p in path.rglob("*.parquet") if p.is_file())
            if not parts:
                raise SourceError(f"no .parquet files under {str(path)!r}")
            return parts
        return [path]
    paths = sorted(Path(f) for f in files)
    if not paths:
        raise SourceError("no released file given")
    return paths


def read_released_table(
    files: ReleasedFiles, *, current_labels: bool = False
) -> pd.DataFrame:
    """Read one published table exactly as released: every cell is text.

    Parameters
    ----------
    files : str, pathlib.Path or sequence of them
        A released CSV (header row), a Parquet file, a directory of Parquet
        parts, or the parts of one table (read in name order, as
        :func:`released_tables` lists them).
    current_labels : bool, default=False
        Rewrite interval labels in the form this version writes
        (:func:`ppdm.values.canonical_label`: ``(-inf, 23.5)`` -> ``< 23.5``).
        An earlier release of a series is read so, because the series check
        compares its classes with the candidate's as text; the release being
        verified is read as it is.

    Returns
    -------
    pandas.DataFrame
        Cells as text; ``*`` (suppressed) and the empty string (missing) are
        kept as values, so they form equivalence classes of their own and no
        row is dropped. A Parquet table reads as its CSV form would.

    Raises
    ------
    SourceError
        A file is missing, unreadable, or not a CSV with a header row or a
        Parquet file.
    """
    paths = _files(files)
    frames = [_read_one(path) for path in paths]
    frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    return _current_labels(frame) if current_labels else frame


def _current_labels(frame: pd.DataFrame) -> pd.DataFrame:
    """Every column's labels in the current form, rewritten per distinct cell."""
    out = frame.copy()
    for name in frame.columns:
        codes, uniques = pd.factorize(frame[name])
        labels = [canonical_label(u) for u in uniques]
        if any(a != b for a, b in zip(labels, uniques)):
            table = np.asarray(labels, dtype=object)
            out[name] = np.where(codes >= 0, table[np.maximum(codes, 0)], frame[name])
    return out


def _read_one(path: Path) -> pd.DataFrame:
    # The suffix decides, as the publisher names the files; Parquet read as
    # CSV fails on its first non-UTF-8 byte with a message that names no format.
    try:
        if path.suffix == ".parquet":
            return released_text(pd.read_parquet(path))
        return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
    except FileNotFoundError as exc:
        raise SourceError(f"released table {str(path)!r} does not exist") from exc
    except pd.errors.EmptyDataError as exc:
        raise SourceError(
            f"released table {str(path)!r} is empty (no header row)"
        ) from exc
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        # pyarrow's ArrowInvalid and pandas' ParserError are ValueErrors.
        raise SourceError(f"cannot read released table {str(path)!r}: {exc}") from exc


def released_tables(paths: Iterable[str | PurePath]) -> dict[str, list[Path]]:
    """Released data files by table name, parts in name order.

    ``paths`` are data files only: a manifest's ``files`` (relative to the
    release directory), or an audit entry's records under ``<release>/data/``
    (relative to the output directory). ``data/<table>.csv`` is the table
    ``<table>``; ``data/<table>/<part>.parquet`` a part of the table
    ``<table>``. Paths are returned as given.
    """
    tables: dict[str, list[Path]] = {}
    for given in paths:
        path = Path(given)
        in_parts = path.suffix == ".parquet" and path.parent.name not in ("", "data")
        tables.setdefault(path.parent.name if in_parts else path.stem, []).append(path)
    return {name: sorted(files) for name, files in sorted(tables.items())}


def released_sha256(files: ReleasedFiles) -> str:
    """The hash the certificate records for one released table.

    A single file: its sha256. Parquet parts: the sha256 of the sorted
    ``(name relative to their directory, file sha256)`` lines, as the
    out-of-core verifier records a directory of parts.
    """
    paths = _files(files)
    if isinstance(files, str | Path) and Path(files).is_file():
        return sha256_file(paths[0])
    root = Path(files) if isinstance(files, str | Path) else paths[0].parent
    digest = hashlib.sha256()
    for f in paths:
        digest.update(f"{f.relative_to(root).as_posix()}\t{sha256_file(f)}\n".encode())
    return digest.hexdigest()
