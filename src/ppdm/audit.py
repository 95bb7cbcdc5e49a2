"""The append-only, hash-chained audit log of releases.

``<out>/audit.jsonl`` holds one JSON object per line. Each entry carries the
``entry_hash`` of the entry before it (``prev_hash``; 64 zeros for the first)
and its own ``entry_hash``: the sha256 of its canonical JSON without that
field. Editing, reordering or deleting any entry breaks the chain, and every
file an entry records (path relative to ``<out>`` + sha256) is re-hashed by
:func:`verify_audit_log`, so a changed byte in a release is found too.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ppdm.artifacts import sha256_file

__all__ = [
    "AUDIT_LOG_NAME",
    "GENESIS_HASH",
    "AuditReport",
    "append_entry",
    "read_entries",
    "verify_audit_log",
    "entry_hash",
]

AUDIT_LOG_NAME = "audit.jsonl"
GENESIS_HASH = "0" * 64


def entry_hash(entry: dict[str, Any]) -> str:
    """sha256 of an entry's canonical JSON, ``entry_hash`` itself left out."""
    body = {key: value for key, value in entry.items() if key != "entry_hash"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    # Two releases into one output directory must not interleave their appends.
    lock_path = path.with_name(path.name + ".lock")
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def read_entries(log_path: Path | str) -> list[dict[str, Any]]:
    """Every entry of the log, in order (an absent log has none)."""
    log_path = Path(log_path)
    if not log_path.exists():
        return []
    entries = []
    with open(log_path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                entries.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise ValueError(
                    f"{log_path}: line {number} is not valid JSON ({err.msg})"
                ) from None
    return entries


def append_entry(log_path: Path | str, event: dict[str, Any]) -> dict[str, Any]:
    """Append ``event`` to the chain and return the stored entry (with hashes)."""
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(log_path):
        entries = read_entries(log_path)
        prev = entries[-1]["entry_hash"] if entries else GENESIS_HASH
        entry = {**event, "seq": len(entries), "prev_hash": prev}
        entry["entry_hash"] = entry_hash(entry)
        line = json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n"
        with open(log_path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
    return entry


@dataclass(frozen=True)
class AuditReport:
    """Outcome of :func:`verify_audit_log`.

    ``broken`` is None when the log is intact, otherwise a sentence naming the
    first broken entry (its sequence number and line) and what is wrong.
    """

    entries: int
    files_checked: int
    broken: str | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.broken is None


def verify_audit_log(out_dir: Path | str) -> AuditReport:
    """Check the hash chain of ``<out_dir>/audit.jsonl`` and every recorded file."""
    out_dir = Path(out_dir)
    log_path = out_dir / AUDIT_LOG_NAME
    if not log_path.exists():
        return AuditReport(0, 0, f"no audit log at {log_path}")
    try:
        entries = read_entries(log_path)
    except ValueError as err:
        return AuditReport(0, 0, str(err))
    problems: list[str] = []
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
        len(entries), files_checked, problems[0] if problems else None, problems
    )
