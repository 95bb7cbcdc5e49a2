"""The append-only, hash-chained audit log of releases.

``<out>/audit.jsonl`` holds one JSON object per line. Each entry carries the
``entry_hash`` of the entry before it (``prev_hash``; 64 zeros for the first)
and its own ``entry_hash``: the sha256 of its canonical JSON without that
field. Editing, reordering or deleting any entry breaks the chain, and every
file an entry records (path relative to ``<out>`` + sha256) is re-hashed by
:func:`verify_audit_log`, so a changed byte in a release is found too.

Crash consistency
-----------------
The invariant: at every instant, every release directory visible under
``<out>`` has its audit entry, or the next opening of the log records it.

- An entry is appended with one ``write`` of the whole line on a file opened
  for appending, then ``fsync``; the directory is synced when the log is
  created. An append that fails is truncated away again, so a failed append
  leaves no entry. A crash (or a failure of that truncation) can still leave
  a *torn tail*: bytes after the last newline. Opening the log
  (:func:`opened`, which every writer and ``ppdm audit verify`` go through,
  under an exclusive lock) moves such bytes to a side file next to the log
  (``audit.jsonl.torn-<sha256>``, never deleted), truncates the log to its
  last complete line, and appends a ``recovered`` entry with the side file's
  name, size and sha256. Only bytes after the last newline are a torn tail:
  a complete line that was edited or removed is tampering, and
  :func:`verify_audit_log` reports it as such.
- Publishing renames a release into place and appends its entry while holding
  the same lock (:func:`opened`), so another process never sees a release
  between the two. A crash between them leaves a release without an entry:
  opening the log finds it, re-checks its files against its manifest and
  appends a ``recovered`` entry recording them (``intact`` says whether every
  hash matched). :func:`verify_audit_log` opens the log even where none
  exists yet if a release is visible (a crash before the log's first line).
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ppdm.exceptions import AuditLogError
from ppdm.release.artifacts import sha256_bytes, sha256_file, write_atomic

__all__ = [
    "AUDIT_LOG_NAME",
    "GENESIS_HASH",
    "AuditLog",
    "AuditReport",
    "append_entry",
    "entry_hash",
    "fsync_directory",
    "opened",
    "read_entries",
    "verify_audit_log",
]

AUDIT_LOG_NAME = "audit.jsonl"
GENESIS_HASH = "0" * 64
TORN_SUFFIX = ".torn-"
#: Events that record a release directory as published.
RELEASE_EVENTS = ("publish", "republish", "recovered")


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def entry_hash(entry: dict[str, Any]) -> str:
    """sha256 of an entry's canonical JSON, ``entry_hash`` itself left out."""
    body = {key: value for key, value in entry.items() if key != "entry_hash"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fsync_directory(path: Path | str) -> None:
    """Make a rename or a new file in ``path`` durable (a no-op where unsupported)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as err:  # some file systems refuse fsync on directories
        if err.errno not in (errno.EINVAL, errno.EBADF):
            raise
    finally:
        os.close(fd)


def _parse_lines(data: bytes, log_path: Path) -> list[dict[str, Any]]:
    entries = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            reason = err.msg if isinstance(err, json.JSONDecodeError) else str(err)
            raise AuditLogError(
                f"{log_path}: line {number} is not valid JSON ({reason}); the log "
                f"was edited or damaged, `ppdm audit verify --out {log_path.parent}` "
                "shows where"
            ) from None
        if not isinstance(entry, dict):
            raise AuditLogError(
                f"{log_path}: line {number} is not a JSON object; the log was "
                "edited or damaged"
            )
        entries.append(entry)
    return entries


def read_entries(log_path: Path | str) -> list[dict[str, Any]]:
    """Every complete entry of the log, in order (an absent log has none).

    Bytes after the last newline (a torn tail not yet recovered) are not an
    entry and are left out.

    Raises
    ------
    ValueError
        A complete line is not a JSON object (the log was edited).
    """
    log_path = Path(log_path)
    if not log_path.exists():
        return []
    data = log_path.read_bytes()
    complete = data[: data.rfind(b"\n") + 1]
    return _parse_lines(complete, log_path)


def _torn_tail(data: bytes) -> bytes:
    """The bytes after the last newline: what a crash or full disk leaves."""
    return data[data.rfind(b"\n") + 1 :]


def _append_line(log_path: Path, line: bytes) -> None:
    """Append ``line`` durably, or leave the log as it was and raise.

    A write, ``fsync`` or directory sync that fails (a full disk, an I/O
    error) truncates the log back to its length before the append: the caller
    learns the entry is not recorded, so it must not be in the log either (a
    publication then takes its release back). Only a crash, or a failure of
    that truncation too, leaves a torn tail for the next opening to set aside.
    """
    created = not log_path.exists()
    fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        before = os.fstat(fd).st_size  # the caller holds the lock: no other writer
        try:
            written = os.write(fd, line)
            if written != len(line):  # a short write: the disk is full
                raise OSError(
                    errno.ENOSPC,
                    f"wrote {written} of {len(line)} bytes of an audit entry",
                    str(log_path),
                )
            os.fsync(fd)
            if created:
                fsync_directory(log_path.parent)
        except BaseException:
            _take_back(fd, before)
            raise
    finally:
        os.close(fd)


def _take_back(fd: int, length: int) -> None:
    """Truncate a failed append away (best effort: a torn tail is recovered later)."""
    try:
        os.ftruncate(fd, length)
        os.fsync(fd)
    except OSError:
        pass


@dataclass
class AuditLog:
    """An opened audit log: read, recovered and locked (see :func:`opened`).

    Attributes
    ----------
    out_dir : pathlib.Path
    entries : list of dict
        Every entry, including those appended through this object.
    recovered : list of dict
        The ``recovered`` entries appended when the log was opened.
    """

    out_dir: Path
    entries: list[dict[str, Any]] = field(default_factory=list)
    recovered: list[dict[str, Any]] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return self.out_dir / AUDIT_LOG_NAME

    def append(self, event: dict[str, Any]) -> dict[str, Any]:
        """Append ``event`` to the chain and return the stored entry (with hashes)."""
        prev = self.entries[-1]["entry_hash"] if self.entries else GENESIS_HASH
        entry = {**event, "seq": len(self.entries), "prev_hash": prev}
        entry["entry_hash"] = entry_hash(entry)
        line = json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n"
        _append_line(self.path, line.encode("utf-8"))
        self.entries.append(entry)
        return entry

    def recorded_releases(self) -> set[str]:
        """Release directories (relative to ``out_dir``) the log records."""
        return {
            e["release_dir"]
            for e in self.entries
            if e.get("event") in RELEASE_EVENTS and "release_dir" in e
        }

    def _recover_tail(self) -> None:
        data = self.path.read_bytes() if self.path.exists() else b""
        tail = _torn_tail(data)
        if not tail:
            return
        digest = sha256_bytes(tail)
        side = self.path.with_name(self.path.name + TORN_SUFFIX + digest[:16])
        write_atomic(side, tail)  # set aside first: the bytes are never lost
        fsync_directory(side.parent)
        os.truncate(self.path, len(data) - len(tail))
        fd = os.open(self.path, os.O_WRONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        self.entries = _parse_lines(data[: len(data) - len(tail)], self.path)
        self.recovered.append(
            self.append(
                {
                    "event": "recovered",
                    "what": "torn-tail",
                    "side_file": side.name,
                    "bytes": len(tail),
                    "sha256": digest,
                    "created_at": _now(),
                }
            )
        )

    def _recover_releases(self, exclude: Sequence[str]) -> None:
        recorded = self.recorded_releases() | set(exclude)
        for release_dir in _release_dirs(self.out_dir):
            if release_dir.relative_to(self.out_dir).as_posix() in recorded:
                continue
            self.recovered.append(
                self.append(_recovered_release(self.out_dir, release_dir))
            )


def _release_dirs(out_dir: Path) -> list[Path]:
    """Visible release directories: ``<dataset>/<release>/`` with a manifest."""
    return [
        manifest.parent
        for manifest in sorted(out_dir.glob("*/*/manifest.json"))
        if not any(
            part.startswith(".") for part in manifest.parent.relative_to(out_dir).parts
        )
    ]


def _recovered_release(out_dir: Path, release_dir: Path) -> dict[str, Any]:
    """The ``recovered`` entry of a release that was renamed into place unlogged."""
    problems: list[str] = []
    try:
        manifest = json.loads((release_dir / "manifest.json").read_text("utf-8"))
        records = [
            *({"path": f["path"], "sha256": f["sha256"]} for f in manifest["files"]),
            *(
                {"path": p, "sha256": h}
                for p, h in sorted(manifest.get("artifacts", {}).items())
            ),
        ]
    except (OSError, ValueError, KeyError, TypeError) as err:
        manifest, records = {}, []
        problems.append(f"manifest.json is unreadable ({err})")
    files = []
    for record in records:
        path = release_dir / record["path"]
        relative = path.relative_to(out_dir).as_posix()
        if not path.is_file():
            problems.append(f"{relative} is missing")
            continue
        if sha256_file(path) != record["sha256"]:
            problems.append(f"{relative} differs from its manifest")
        files.append({"path": relative, "sha256": record["sha256"]})
    files.append(
        {
            "path": (release_dir / "manifest.json").relative_to(out_dir).as_posix(),
            "sha256": sha256_file(release_dir / "manifest.json"),
        }
    )
    return {
        "event": "recovered",
        "what": "release",
        "dataset": manifest.get("dataset"),
        "release_id": manifest.get("release_id", release_dir.name),
        "release_dir": release_dir.relative_to(out_dir).as_posix(),
        "algorithm": manifest.get("algorithm"),
        "requirement": (manifest.get("requirement") or {}).get("models"),
        "source_sha256": manifest.get("source_sha256"),
        "files": files,
        "intact": not problems,
        "problems": problems,
        "created_at": _now(),
    }


@contextmanager
def _locked(log_path: Path) -> Iterator[None]:
    # Two releases into one output directory must not interleave their appends.
    lock_path = log_path.with_name(log_path.name + ".lock")
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextmanager
def opened(out_dir: Path | str, *, exclude: Sequence[str] = ()) -> Iterator[AuditLog]:
    """Open ``<out_dir>/audit.jsonl`` exclusively, recovering what a crash left.

    Under the lock, a torn tail is set aside and every release directory
    without an entry is recorded (``exclude`` lists release directories,
    relative to ``out_dir``, that the caller is about to record itself).

    Raises
    ------
    ValueError
        A complete line of the log is not a JSON object (it was edited).
    OSError
        The log cannot be read or written.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    log = AuditLog(out_dir)
    with _locked(log.path):
        log.entries = read_entries(log.path)
        log._recover_tail()
        log._recover_releases(exclude)
        yield log


def append_entry(log_path: Path | str, event: dict[str, Any]) -> dict[str, Any]:
    """Open the log at ``log_path``, append ``event`` and return the stored entry."""
    log_path = Path(log_path)
    exclude = [event["release_dir"]] if "release_dir" in event else []
    with opened(log_path.parent, exclude=exclude) as log:
        return log.append(event)


@dataclass(frozen=True)
class AuditReport:
    """Outcome of :func:`verify_audit_log`.

    ``broken`` is None when the log is intact, otherwise a sentence naming the
    first broken entry (its sequence number and line) and what is wrong.
    ``recoveries`` lists, apart from tampering, every ``recovered`` entry of
    the chain (torn tails set aside, releases recorded after a crash) and
    ``recovered_now`` those this very call made.
    """

    entries: int
    files_checked: int
    broken: str | None = None
    problems: list[str] = field(default_factory=list)
    recoveries: list[str] = field(default_factory=list)
    recovered_now: int = 0

    @property
    def ok(self) -> bool:
        return self.broken is None


def _describe_recovery(entry: dict[str, Any]) -> str:
    where = f"entry seq={entry.get('seq', '?')}"
    if entry.get("what") == "torn-tail":
        return (
            f"{where}: a torn last line ({entry.get('bytes')} bytes, sha256 "
            f"{str(entry.get('sha256'))[:16]}...) was set aside in "
            f"{entry.get('side_file')} on {entry.get('created_at')}"
        )
    state = (
        "intact"
        if entry.get("intact")
        else "NOT intact: " + "; ".join(entry.get("problems", []))
    )
    return (
        f"{where}: release {entry.get('release_dir')} had no entry after a crash; "
        f"recorded on {entry.get('created_at')} ({state})"
    )


def _unrecordable(
    out_dir: Path, entries: list[dict[str, Any]], err: OSError
) -> list[str]:
    """What opening the log would record, where it cannot be written."""
    log_path = out_dir / AUDIT_LOG_NAME
    why = (
        f"cannot be recorded ({os.strerror(err.errno).lower()}: "
        f"{err.filename or out_dir})"
    )
    problems = []
    tail = _torn_tail(log_path.read_bytes()) if log_path.exists() else b""
    if tail:
        problems.append(
            f"{log_path} ends in a torn line ({len(tail)} bytes) that {why}"
        )
    recorded = AuditLog(out_dir, entries).recorded_releases()
    for release_dir in _release_dirs(out_dir):
        relative = release_dir.relative_to(out_dir).as_posix()
        if relative not in recorded:
            problems.append(f"release {relative} has no entry and {why}")
    return problems


def verify_audit_log(out_dir: Path | str) -> AuditReport:
    """Check the hash chain of ``<out_dir>/audit.jsonl`` and every recorded file.

    The log is opened as writers open it (:func:`opened`), so what a crash
    left is recovered and recorded first; recoveries are reported apart from
    tampering. Where the output directory is read-only (an archive), the log
    is checked as it is; what a crash left (a torn tail, a release without
    entry) cannot be recorded there and is reported as a problem.
    """
    out_dir = Path(out_dir)
    log_path = out_dir / AUDIT_LOG_NAME
    # A crash between the first release's rename and the log's first line
    # leaves releases and no log: opening it records them.
    if not log_path.exists() and not _release_dirs(out_dir):
        return AuditReport(0, 0, f"no audit log at {log_path}")
    problems: list[str] = []
    try:
        with opened(out_dir) as log:
            entries, recovered_now = list(log.entries), len(log.recovered)
    except ValueError as err:
        return AuditReport(0, 0, str(err))
    except OSError as err:
        if err.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise
        try:
            entries, recovered_now = read_entries(log_path), 0
        except ValueError as invalid:
            return AuditReport(0, 0, str(invalid))
        problems = _unrecordable(out_dir, entries, err)
    recoveries: list[str] = []
    prev = GENESIS_HASH
    files_checked = 0
    for line_no, entry in enumerate(entries, start=1):
        where = f"entry seq={entry.get('seq', '?')} (line {line_no})"
        if entry.get("seq") != line_no - 1:
            problems.append(f"{where}: sequence number should be {line_no - 1}")
        if entry.get("prev_hash") != prev:
            problems.append(f"{where}: prev_hash does not match the entry before it")
        if entry_hash(entry) != entry.get("entry_hash"):
            problems.append(f"{where}: entry_hash does not match its content (edited)")
        if entry.get("event") == "recovered":
            recoveries.append(_describe_recovery(entry))
        for record in entry.get("files", []):
            files_checked += 1
            path = out_dir / record["path"]
            if not path.is_file():
                problems.append(f"{where}: recorded file {record['path']} is missing")
            elif sha256_file(path) != record["sha256"]:
                problems.append(
                    f"{where}: file {record['path']} changed (sha256 differs from record)"
                )
        prev = entry.get("entry_hash", "")
    return AuditReport(
        len(entries),
        files_checked,
        problems[0] if problems else None,
        problems,
        recoveries,
        recovered_now,
    )
