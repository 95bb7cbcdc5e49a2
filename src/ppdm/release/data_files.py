"""The data files of a published release: one writer, one reader, every format.

A release publishes each table in one of two formats, by the engine that
made it:

- the pandas engine: one CSV file, ``data/<table>.csv`` (header, no index,
  missing as empty, LF line ends: :func:`ppdm.release.artifacts.table_to_csv_bytes`);
- the Dask engine (out of core): Parquet parts, ``data/<table>/part-00000.parquet,
  ...`` (zstd: :func:`write_released_part`).

The writer: the anonymize and republication steps store a candidate table as
the CSV it is published as (:func:`put_released_table`) or write its parts
(:func:`write_released_part`); :func:`data_file_names` lays the stored tables
out under ``data/`` for :func:`ppdm.release.publish.publish_directory`, which
stages, syncs and renames them into place.

The reader: whoever reads a published table (``ppdm verify`` and its
differencing against earlier releases, the release series and the
republication step, ``ppdm show``, the utility report, the tests) reads it
through :func:`read_released_table`, so both formats give the same frame:
every cell as text, ``*`` (suppressed) and ``""`` (missing) kept as values,
as an analyst reading the CSV would see them. :func:`read_release` reads a
release directory whole; :func:`lazy_released_table` gives the out-of-core
verifier a Dask frame of the same text, read block by block.

:func:`released_tables` groups the files a manifest (or an audit entry) lists
by table, so a table of six parts is one table, not six.

>>> released_tables(["data/release.csv"])
{'release': [PosixPath('data/release.csv')]}
>>> parts = ["data/release/part-00001.parquet", "data/release/part-00000.parquet"]
>>> [p.name for p in released_tables(parts)["release"]]
['part-00000.parquet', 'part-00001.parquet']
>>> sorted(data_file_names({}))
[]
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePath
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import SourceError
from ppdm.release.artifacts import (
    ArtifactRef,
    ArtifactStore,
    sha256_file,
    table_to_csv_bytes,
)
from ppdm.values import canonical_label

__all__ = [
    "DATA_DIR",
    "ReleasedFiles",
    "as_released",
    "data_file_names",
    "lazy_released_table",
    "put_released_table",
    "read_release",
    "read_released_table",
    "release_data",
    "released_header",
    "released_sha256",
    "released_tables",
    "released_text",
    "table_files",
    "write_released_part",
]

#: The folder of a release directory that holds its data files.
DATA_DIR = "data"

#: One released table: a CSV file, a Parquet file, a directory of Parquet
#: parts, or the parts themselves.
ReleasedFiles = str | Path | Sequence[str | Path]


# -- the writer ------------------------------------------------------------------
def put_released_table(store: ArtifactStore, frame: pd.DataFrame) -> ArtifactRef:
    """Store a candidate table as the CSV file it is published as."""
    return store.put_csv(frame, kind="release-candidate")


def write_released_part(frame: pd.DataFrame, path: Path) -> None:
    """Write one part of a table released out of core: Parquet, zstd, no index."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(path, index=False, engine="pyarrow", compression="zstd")


def data_file_names(
    tables: Mapping[str, ArtifactRef],
) -> dict[str, tuple[Path, int | None]]:
    """Where each stored table goes in the release: path inside it -> (file, rows).

    A CSV table is ``data/<table>.csv``; a partitioned one (written by the
    Dask engine) is its parts, ``data/<table>/part-00000.parquet, ...``, each
    with the rows its footer records.
    """
    import pyarrow.parquet as pq

    named: dict[str, tuple[Path, int | None]] = {}
    for name, ref in tables.items():
        if ref.partitioned:
            for part in ref.parts:
                rows = int(pq.ParquetFile(part).metadata.num_rows)
                named[f"{DATA_DIR}/{name}/{part.name}"] = (part, rows)
        else:
            named[f"{DATA_DIR}/{name}.csv"] = (Path(ref.path), ref.rows)
    return named


# -- the reader ------------------------------------------------------------------
def as_released(frame: pd.DataFrame) -> pd.DataFrame:
    """A table as its published CSV reads back: every cell text, as written."""
    return pd.read_csv(
        io.BytesIO(table_to_csv_bytes(frame)),
        dtype=str,
        keep_default_na=False,
        na_filter=False,
    )


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


def table_files(files: ReleasedFiles) -> list[Path]:
    """The files of one released table, parts in name order.

    A file is itself (whether it exists is the reader's to say); a directory
    its ``*.parquet`` parts; a sequence, its files sorted.
    """
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
    paths = table_files(files)
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
    paths = table_files(files)
    if isinstance(files, str | Path) and Path(files).is_file():
        return sha256_file(paths[0])
    root = Path(files) if isinstance(files, str | Path) else paths[0].parent
    digest = hashlib.sha256()
    for f in paths:
        digest.update(f"{f.relative_to(root).as_posix()}\t{sha256_file(f)}\n".encode())
    return digest.hexdigest()


def release_data(
    release_dir: Path, manifest: Mapping[str, Any]
) -> dict[str, ReleasedFiles]:
    """The released tables a manifest lists, by name: a CSV, or the Parquet parts.

    Missing files are left out (:func:`ppdm.verify.release_check.changed_files`
    names them).
    """
    tables = released_tables(f["path"] for f in manifest["files"])
    data: dict[str, ReleasedFiles] = {}
    for name, paths in tables.items():
        present = [release_dir / p for p in paths if (release_dir / p).is_file()]
        if present:
            single = len(present) == 1 and present[0].suffix != ".parquet"
            data[name] = present[0] if single else present
    return data


def read_release(
    release_dir: Path | str, *, current_labels: bool = False
) -> dict[str, pd.DataFrame]:
    """Every table of a published release directory, by name, in whatever format.

    From a notebook: ``tables = read_release("releases/adult/<release id>")``.
    ``current_labels`` as for :func:`read_released_table`.

    Raises
    ------
    SourceError
        No manifest, or a data file it lists is missing or unreadable.
    """
    release_dir = Path(release_dir)
    manifest_path = release_dir / "manifest.json"
    if not manifest_path.is_file():
        raise SourceError(f"no manifest.json in {str(release_dir)!r}")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    listed = released_tables(f["path"] for f in manifest["files"])
    return {
        name: read_released_table(
            [release_dir / p for p in paths], current_labels=current_labels
        )
        for name, paths in listed.items()
    }


def released_header(files: ReleasedFiles) -> list[str]:
    """The column names of a released table, CSV or Parquet parts.

    [] when unreadable: the full read says why.
    """
    try:
        paths = table_files(files)
    except SourceError:
        return []
    first = paths[0]
    try:
        if first.suffix == ".parquet":
            import pyarrow.parquet as pq

            names = pq.ParquetFile(first).schema_arrow.names
            return [n for n in names if not n.startswith("__index_level_")]
        # The header row as written (what an analyst receives), not as
        # pandas would rename repeated names.
        with open(first, newline="", encoding="utf-8") as handle:
            return next(csv.reader(handle), [])
    except (
        OSError,
        UnicodeDecodeError,
        ValueError,  # pyarrow's ArrowInvalid: not a Parquet file
        csv.Error,
    ):
        return []


def lazy_released_table(files: ReleasedFiles, columns: Sequence[str]) -> Any:
    """``columns`` of one released table as a Dask frame of text cells, read in blocks.

    Each block reads as :func:`read_released_table` reads the whole table
    (``*`` and ``""`` kept as values; Parquet cells as their CSV text), so
    the out-of-core verifier aggregates exactly what the in-memory one reads.
    Dask is imported here only.
    """
    import dask.dataframe as dd

    paths = table_files(files)
    wanted = list(columns)
    if paths[0].suffix != ".parquet":
        return dd.read_csv(
            [str(p) for p in paths],
            usecols=wanted,
            dtype=str,
            keep_default_na=False,
            blocksize="64MB",
        )
    frame = dd.read_parquet([str(f) for f in paths], columns=wanted)
    meta = pd.DataFrame({c: pd.Series([], dtype="str") for c in wanted})
    return frame.map_partitions(released_text, meta=meta)
