"""Content-addressed, atomically written artifacts.

Every step writes its output here and passes on an :class:`ArtifactRef`
(path + sha256). A file is first written under a temporary name in the same
directory, flushed to disk, then renamed into place, so a crash never leaves a
half-written artifact visible.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import numbers
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ppdm.exceptions import storage_error

__all__ = [
    "ArtifactRef",
    "ArtifactStore",
    "sha256_bytes",
    "sha256_file",
    "canonical_json",
    "json_text",
    "write_atomic",
    "write_json",
    "readable_mode",
    "table_to_csv_bytes",
    "sha256_parts",
    "part_files",
    "recorded_file_problem",
    "storage_failures",
]

_CHUNK = 1 << 20


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path | str) -> str:
    """sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def part_files(directory: Path | str) -> list[Path]:
    """The files of a partitioned artifact, in name order (``part-00000...``)."""
    return sorted(p for p in Path(directory).iterdir() if p.is_file())


def sha256_parts(directory: Path | str) -> str:
    """sha256 of a partitioned artifact: of its sorted (file name, file sha256) lines."""
    digest = hashlib.sha256()
    for path in part_files(directory):
        digest.update(f"{path.name}\t{sha256_file(path)}\n".encode())
    return digest.hexdigest()


#: The layouts of :func:`json_text`: a file (indented), one JSON Lines record,
#: and the compact form that hashes and MACs are taken over.
_LAYOUTS: dict[str, dict[str, Any]] = {
    "indented": {"indent": 2},
    "line": {},
    "compact": {"separators": (",", ":")},
}


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float (NaN, +inf, -inf) replaced by None.

    numpy floats count as floats (``numbers.Real``); keys are left as they
    are (``json`` writes them); anything else is left to ``json``.
    """
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if (
        isinstance(value, numbers.Real)
        and not isinstance(value, numbers.Integral)
        and not math.isfinite(value)
    ):
        return None
    return value


def json_text(obj: Any, *, layout: str = "indented") -> str:
    """The one JSON encoding of the project's artifacts, logs and hashes.

    One rule for every value, whatever the layout:

    - keys sorted (the bytes depend on the content only, never on the order
      a dict was built in; the release id, the manifest seal and the audit
      chain hash these bytes);
    - non-ASCII text written as UTF-8 characters, not ``\\u`` escapes;
    - NaN, +inf and -inf written as ``null``: JSON has no such numbers, and a
      file with ``NaN`` in it is refused by strict readers (JavaScript,
      ``jq``, Go); ``null`` reads as "no finite value";
    - a value JSON has no type for (a path, a date, a numpy scalar other than
      a float) written as its ``str()``.

    ``layout`` is ``"indented"`` (files: two-space indent), ``"line"`` (one
    line, a JSON Lines record) or ``"compact"`` (no spaces: what hashes and
    MACs are taken over). No final newline.

    Examples
    --------
    >>> json_text({"b": float("nan"), "a": [1.5, float("-inf")]}, layout="line")
    '{"a": [1.5, null], "b": null}'
    >>> json_text({"name": "Zürich", "n": 3}, layout="compact")
    '{"n":3,"name":"Zürich"}'
    """
    return json.dumps(
        _finite(obj),
        sort_keys=True,
        ensure_ascii=False,
        allow_nan=False,
        default=str,
        **_LAYOUTS[layout],
    )


def canonical_json(obj: Any) -> bytes:
    """The bytes of a JSON artifact: :func:`json_text` indented, UTF-8, final newline."""
    return (json_text(obj) + "\n").encode("utf-8")


def write_json(path: Path | str, obj: Any) -> Path:
    """Write ``obj`` to ``path`` as :func:`canonical_json`, atomically (:func:`write_atomic`)."""
    return write_atomic(path, canonical_json(obj))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def readable_mode(directory: bool = False) -> int:
    """The mode a normally created file (0o666) or directory (0o777) gets."""
    return (0o777 if directory else 0o666) & ~_umask()


def write_atomic(path: Path | str, data: bytes) -> Path:
    """Write ``data`` to ``path`` via a temporary file and an atomic rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes the file private (0600); a release is meant to be read.
        os.fchmod(fd, readable_mode())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(err, OSError) and err.errno is not None and err.filename is None:
            # A write into an open file (a full disk) names no file: say which.
            err.filename = str(path)
        raise
    return path


def table_to_csv_bytes(table: pd.DataFrame) -> bytes:
    """A released table as CSV bytes: header, no index, missing as empty, LF."""
    buffer = io.StringIO()
    table.to_csv(buffer, index=False, lineterminator="\n")
    return buffer.getvalue().encode("utf-8")


@dataclass(frozen=True)
class ArtifactRef:
    """Where an artifact lives and what its bytes hash to.

    Attributes
    ----------
    path : str
        Absolute path of the file, or of the directory of a partitioned
        table (``<sha>.parts/part-00000.parquet, ...``).
    sha256 : str
        Hex digest of its bytes (also its name in the store); of a
        partitioned table, :func:`sha256_parts`.
    kind : str
        What it holds, e.g. "raw-snapshot", "clean-table", "certificate".
    rows : int or None
        Number of rows, for tables.
    """

    path: str
    sha256: str
    kind: str
    rows: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def partitioned(self) -> bool:
        """True for a directory of Parquet parts (an out-of-core table)."""
        return self.path.endswith(PARTS_SUFFIX)

    @property
    def parts(self) -> list[Path]:
        """The part files of a partitioned table, in order."""
        return part_files(self.path)

    def verify(self) -> None:
        """Raise if the file is gone or its bytes changed since it was written."""
        from ppdm.exceptions import ArtifactIntegrityError

        path = Path(self.path)
        if self.partitioned:
            if not path.is_dir():
                raise ArtifactIntegrityError(
                    f"artifact {self.kind} missing: {self.path}"
                )
            actual = sha256_parts(path)
        elif not path.is_file():
            raise ArtifactIntegrityError(f"artifact {self.kind} missing: {self.path}")
        else:
            actual = sha256_file(path)
        if actual != self.sha256:
            raise ArtifactIntegrityError(
                f"artifact {self.kind} at {self.path} changed: recorded sha256 "
                f"{self.sha256}, found {actual}"
            )


#: Name ending of the store directory of a partitioned table.
PARTS_SUFFIX = ".parts"


class ArtifactStore:
    """A directory of content-addressed artifacts: ``<root>/<sha[:2]>/<sha>.<ext>``.

    The store holds raw data (the source snapshot, the clean table), so its
    directory is created readable by its owner only (mode 0700).

    Parameters
    ----------
    root : path
        Directory of the store (created on first write).
    """

    GENERATION_FILE = "GENERATION"

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def _ensure_root(self) -> None:
        if not self.root.is_dir():
            self.root.parent.mkdir(parents=True, exist_ok=True)
            try:
                self.root.mkdir(mode=0o700)
            except FileExistsError:  # another run made it first
                return
            os.chmod(self.root, 0o700)  # whatever the umask

    def generation(self) -> str:
        """An id of this store's lifetime, written when the store is first created.

        Caches that hold references into the store key on it, so a store that
        was deleted and made anew never serves references to files it lost.
        """
        self._ensure_root()
        marker = self.root / self.GENERATION_FILE
        if not marker.is_file():
            # Not a data choice (nothing released depends on it): a creation time.
            write_atomic(marker, f"{time.time_ns()}\n".encode())
        return marker.read_text(encoding="utf-8").strip()

    def put_bytes(
        self, data: bytes, *, kind: str, suffix: str, rows: int | None = None
    ) -> ArtifactRef:
        digest = sha256_bytes(data)
        path = self.root / digest[:2] / f"{digest}.{suffix}"
        with storage_failures("write to the work directory (work_dir):", path):
            self._ensure_root()
            if not (path.is_file() and sha256_file(path) == digest):
                write_atomic(path, data)
        return ArtifactRef(str(path.resolve()), digest, kind, rows)

    def put_json(self, obj: Any, *, kind: str) -> ArtifactRef:
        return self.put_bytes(canonical_json(obj), kind=kind, suffix="json")

    def put_table(self, table: pd.DataFrame, *, kind: str) -> ArtifactRef:
        """Store a typed table as Parquet (dtypes, categories and order preserved)."""
        buffer = io.BytesIO()
        table.to_parquet(buffer, index=False, engine="pyarrow", compression="zstd")
        return self.put_bytes(
            buffer.getvalue(), kind=kind, suffix="parquet", rows=len(table)
        )

    def put_csv(self, table: pd.DataFrame, *, kind: str) -> ArtifactRef:
        return self.put_bytes(
            table_to_csv_bytes(table), kind=kind, suffix="csv", rows=len(table)
        )

    def staging(self) -> Path:
        """A new private directory in the store to write parts into before :meth:`put_parts`."""
        self._ensure_root()
        area = self.root / ".staging"
        area.mkdir(mode=0o700, exist_ok=True)
        return Path(tempfile.mkdtemp(dir=area))

    def put_parts(self, directory: Path | str, *, kind: str, rows: int) -> ArtifactRef:
        """Move a directory of part files (from :meth:`staging`) into the store.

        Content-addressed like the files: ``<sha[:2]>/<sha>.parts`` with
        ``sha`` = :func:`sha256_parts`; the rename makes it visible whole.
        """
        directory = Path(directory)
        digest = sha256_parts(directory)
        path = self.root / digest[:2] / f"{digest}{PARTS_SUFFIX}"
        with storage_failures("write to the work directory (work_dir):", path):
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir() and sha256_parts(path) == digest:
                _remove_tree(directory)
            else:
                if path.exists():
                    _remove_tree(path)
                os.chmod(directory, 0o700)
                os.rename(directory, path)
        return ArtifactRef(str(path.resolve()), digest, kind, rows)

    @staticmethod
    def read_table(ref: ArtifactRef) -> pd.DataFrame:
        ref.verify()
        return pd.read_parquet(ref.path, engine="pyarrow")

    @staticmethod
    def read_json(ref: ArtifactRef) -> Any:
        ref.verify()
        return json.loads(Path(ref.path).read_text(encoding="utf-8"))


@contextlib.contextmanager
def storage_failures(action: str, path: Path | None = None) -> Iterator[None]:
    """An ``OSError`` inside raised as :func:`ppdm.exceptions.storage_error` says it.

    A full disk or a read-only directory is no reason to retry: the error
    says what was done (``action``) and to which file (``path`` when the
    error names none, as a write into an open file does not).
    """
    try:
        yield
    except OSError as err:
        if path is not None and err.filename is None:
            err.filename = str(path)
        raise (storage_error(err, action) or err) from err


def recorded_file_problem(path: Path | str, sha256: str) -> str | None:
    """``"missing"`` or ``"changed"`` when the file at ``path`` is not the one recorded.

    None when it exists with the recorded ``sha256``. Every check of a
    published file against its record (``ppdm verify``, ``ppdm audit
    verify``, the release series) asks this one question.
    """
    if not Path(path).is_file():
        return "missing"
    if sha256_file(path) != sha256:
        return "changed"
    return None


def _remove_tree(directory: Path) -> None:
    import shutil

    shutil.rmtree(directory, ignore_errors=True)
