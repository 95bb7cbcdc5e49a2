"""The append-only, hash-chained and keyed audit log of releases.

``<out>/audit.jsonl`` holds one JSON object per line. Each entry carries the
``entry_hash`` of the entry before it (``prev_hash``; 64 zeros for the first)
and its own ``entry_hash``: the sha256 of its canonical JSON without that
field. Editing, reordering or deleting any entry breaks the chain, and every
file an entry records (path relative to ``<out>`` + sha256) is re-hashed by
:func:`verify_audit_log`, so a changed byte in a release is found too.

Keys: history that cannot be forged silently
--------------------------------------------
Unkeyed hashes only detect accidents: whoever can write ``<out>`` can edit an
entry and recompute every hash after it. So each entry also carries ``mac``,
an HMAC-SHA256 of its content (``prev_hash`` included, hence the whole chain
before it) under a secret key, and ``key_id`` (:func:`ppdm.release.keys.key_id`,
which names the key without revealing it). The key comes from a key spec,
by default ``env:PPDM_AUDIT_KEY`` (:data:`DEFAULT_AUDIT_KEY`).

- Deleting entries from the end leaves a valid chain, so a second file,
  ``audit.jsonl.head``, records the last entry's ``seq`` and ``entry_hash``
  under a MAC of the same key; it is rewritten after every append (it may lag
  the log by one entry after a crash, never lead it). A log that ends before
  its head, a keyed log without head and a head whose MAC fails are tampering.
- A release's ``manifest.json`` is bound to its entry (``manifest_sha256``)
  and sealed (``audit_seal``: a MAC of the manifest under the same key), so a
  release directory planted by someone without the key is not taken for one
  that a crashed publisher left (see below): it is recorded as not intact.
- Without a key, entries are written unkeyed (``"mac": null``, a
  :class:`~ppdm.exceptions.PPDMWarning` says so) and :func:`verify_audit_log`
  never reports such a log as intact: it is UNKEYED. The first entry written
  with a key chains over the unkeyed ones (they are then protected by its MAC),
  and from then on the log is keyed: an unkeyed entry, or one signed with
  another key, is refused by writers and reported by the verifier.
- Rotation (:func:`rotate_key`): a ``key-rotated`` entry signed by the old key
  names the new key's id and carries a second MAC by the new key
  (``new_key_mac``); later entries use the new key. Every entry is covered by
  the MAC of a later one (through ``prev_hash``), so the current key alone
  verifies the whole log; previous keys, when given, also check the older
  entries' own MACs.
- Not detected without an outside record: rolling the whole directory back to
  a state copied earlier (log and head together). Keep the head that
  ``ppdm audit verify`` reports somewhere the output directory's writers
  cannot reach.

Crash consistency
-----------------
The invariant: at every instant, every release directory visible under
``<out>`` has its audit entry, or the next opening of the log records it.

- An entry is appended with one ``write`` of the whole line on a file opened
  for appending, then ``fsync``, then the head is rewritten; the directory is
  synced when the log is created. An append that fails (the line or the head)
  is truncated away again, so a failed append leaves no entry. A crash (or a
  failure of that truncation) can still leave a *torn tail*: bytes after the
  last newline. Opening the log (:func:`opened`, which every writer and
  ``ppdm audit verify`` go through, under an exclusive lock) moves such bytes
  to a side file next to the log (``audit.jsonl.torn-<sha256>``, never
  deleted), truncates the log to its last complete line, and appends a
  ``recovered`` entry with the side file's name, size and sha256. Only bytes
  after the last newline, beyond what the head records, are a torn tail: a
  complete line that was edited or removed is tampering, and
  :func:`verify_audit_log` reports it as such.
- Publishing renames a release into place and appends its entry while holding
  the same lock (:func:`opened`), so another process never sees a release
  between the two. A crash between them leaves a release without an entry:
  opening the log finds it, re-checks its files against its manifest (and the
  manifest's seal) and appends a ``recovered`` entry recording them
  (``intact`` says whether every check passed). :func:`verify_audit_log`
  opens the log even where none exists yet if a release is visible (a crash
  before the log's first line).
"""

from __future__ import annotations

import errno
import hmac
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ppdm.exceptions import AuditLogError
from ppdm.release.artifacts import recorded_file_problem
from ppdm.release.audit_chain import (
    AUDIT_LOG_NAME,
    DEFAULT_AUDIT_KEY,
    GENESIS_HASH,
    HEAD_NAME,
    PREVIOUS_AUDIT_KEY,
    RELEASE_EVENTS,
    AuditKey,
    KeyArg,
    _head_problems,
    audit_key,
    entry_hash,
    entry_mac,
    seal_manifest,
)
from ppdm.release.audit_log import (
    AuditLog,
    _current_key_id,
    _inside,
    _keys_at_hand,
    _records,
    _release_dirs,
    _torn_tail,
    append_entry,
    check_key,
    fsync_directory,
    opened,
    read_entries,
    read_head,
    rotate_key,
)
from ppdm.release.keys import (
    KeyConfigError,
    key_id,
)

__all__ = [
    "AUDIT_LOG_NAME",
    "HEAD_NAME",
    "DEFAULT_AUDIT_KEY",
    "PREVIOUS_AUDIT_KEY",
    "GENESIS_HASH",
    "RELEASE_EVENTS",
    "AuditKey",
    "AuditLog",
    "AuditReport",
    "KeyArg",
    "append_entry",
    "audit_key",
    "chain_problems",
    "check_key",
    "entry_hash",
    "entry_mac",
    "fsync_directory",
    "opened",
    "read_entries",
    "read_head",
    "rotate_key",
    "seal_manifest",
    "verify_audit_log",
]


@dataclass(frozen=True)
class AuditReport:
    """Outcome of :func:`verify_audit_log`.

    ``broken`` is None when the log is intact and keyed, otherwise a sentence
    naming the first problem (an entry's sequence number and line, and what is
    wrong; or that the log is UNKEYED, or that no key is at hand).
    ``recoveries`` lists, apart from tampering, every ``recovered`` entry of
    the chain (torn tails set aside, releases recorded after a crash) and
    ``recovered_now`` those this very call made. ``keyed`` says whether the
    log carries MACs, ``key_id`` names the key its next entry must be signed
    with, and ``head`` describes the last entry (seq, entry_hash): keep it
    outside the output directory to detect a later roll-back.
    """

    entries: int
    files_checked: int
    broken: str | None = None
    problems: list[str] = field(default_factory=list)
    recoveries: list[str] = field(default_factory=list)
    recovered_now: int = 0
    keyed: bool = False
    key_id: str | None = None
    head: str | None = None

    @property
    def ok(self) -> bool:
        return self.broken is None

    @property
    def unkeyed(self) -> bool:
        """The log has entries and none carries a MAC."""
        return self.entries > 0 and not self.keyed


def _describe_recovery(entry: Mapping[str, Any]) -> str:
    where = f"entry seq={entry.get('seq', '?')}"
    if entry.get("what") == "torn-tail":
        return (
            f"{where}: a torn last line ({entry.get('bytes')} bytes, sha256 "
            f"{str(entry.get('sha256'))[:16]}...) was set aside in "
            f"{entry.get('side_file')} on {entry.get('created_at')}"
        )
    state = "intact" if entry.get("intact") else "NOT intact: " + _listed(entry)
    return (
        f"{where}: release {entry.get('release_dir')} had no entry after a crash; "
        f"recorded on {entry.get('created_at')} ({state})"
    )


def _listed(entry: Mapping[str, Any]) -> str:
    problems = entry.get("problems", [])
    if not isinstance(problems, list):
        problems = [problems]
    return "; ".join(map(str, problems))


def _unrecordable(out_dir: Path, entries: list[dict[str, Any]], why: str) -> list[str]:
    """What opening the log would record, where it cannot be recorded (``why``)."""
    log_path = out_dir / AUDIT_LOG_NAME
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


def _check_entries(
    out_dir: Path,
    entries: list[dict[str, Any]],
    keys: Mapping[str, bytes],
) -> tuple[list[str], list[str], int, int]:
    """Problems, recoveries, files checked, index of the last entry a MAC vouches for."""
    problems: list[str] = []
    recoveries: list[str] = []
    prev = GENESIS_HASH
    files_checked = 0
    expected_key: str | None = None  # the key the next keyed entry must use
    vouched = -1  # every entry up to here is covered by a verified MAC
    for index, entry in enumerate(entries):
        line_no = index + 1
        where = f"entry seq={entry.get('seq', '?')} (line {line_no})"
        if entry.get("seq") != index:
            problems.append(f"{where}: sequence number should be {index}")
        if entry.get("prev_hash") != prev:
            problems.append(f"{where}: prev_hash does not match the entry before it")
        if entry_hash(entry) != entry.get("entry_hash"):
            problems.append(f"{where}: entry_hash does not match its content (edited)")
        mac, kid = entry.get("mac"), entry.get("key_id")
        if mac is None:
            if expected_key is not None:
                problems.append(
                    f"{where}: carries no MAC in a keyed log (forged without the "
                    "key, or written without it)"
                )
        else:
            if expected_key is not None and kid != expected_key:
                problems.append(
                    f"{where}: signed with key id {kid}, but the log's key here is "
                    f"{expected_key} (a new key needs a key-rotated entry)"
                )
            elif expected_key is None:
                expected_key = str(kid)
            wrong = "MAC does not match its content (edited, or forged without the key)"
            if _vouches(entry, keys.get(str(kid)), mac, problems, f"{where}: {wrong}"):
                vouched = index
            if entry.get("event") == "key-rotated":
                new_id, new_mac = entry.get("new_key_id"), entry.get("new_key_mac")
                if not new_id or not new_mac:
                    problems.append(f"{where}: a key-rotated entry names no new key")
                else:
                    wrong = (
                        "the new key's MAC does not match (edited, or forged "
                        "without the new key)"
                    )
                    new_key = keys.get(str(new_id))
                    if _vouches(entry, new_key, new_mac, problems, f"{where}: {wrong}"):
                        vouched = index
                    expected_key = str(new_id)
        if entry.get("event") == "recovered":
            recoveries.append(_describe_recovery(entry))
            if entry.get("what") == "release" and not entry.get("intact", True):
                problems.append(
                    f"{where}: release {entry.get('release_dir')} was recorded NOT "
                    "intact: " + _listed(entry)
                )
        records, malformed = _records(entry)
        if malformed is not None:
            problems.append(f"{where}: {malformed}")
        recorded = {}
        for record in records:
            files_checked += 1
            recorded[record["path"]] = record["sha256"]
            said = {
                "missing": f"recorded file {record['path']} is missing",
                "changed": f"file {record['path']} changed (sha256 differs from record)",
            }
            found = recorded_file_problem(out_dir / record["path"], record["sha256"])
            if found is not None:
                problems.append(f"{where}: {said[found]}")
        if "manifest_sha256" in entry and _inside(entry.get("release_dir")):
            manifest = f"{entry['release_dir']}/manifest.json"
            if manifest in recorded:  # checked with the files
                if recorded[manifest] != entry["manifest_sha256"]:
                    problems.append(
                        f"{where}: manifest_sha256 differs from the file record of "
                        f"{manifest}"
                    )
            else:
                files_checked += 1
                said = {
                    "missing": f"manifest {manifest} is missing",
                    "changed": f"manifest {manifest} is not the one its entry "
                    "records (sha256 differs)",
                }
                found = recorded_file_problem(
                    out_dir / manifest, entry["manifest_sha256"]
                )
                if found is not None:
                    problems.append(f"{where}: {said[found]}")
        prev = entry.get("entry_hash", "")
    return problems, recoveries, files_checked, vouched


def _vouches(
    entry: Mapping[str, Any],
    key: bytes | None,
    mac: Any,
    problems: list[str],
    wrong: str,
) -> bool:
    """Whether ``mac`` is the entry's MAC under ``key``.

    A MAC that does not match adds ``wrong`` to ``problems``; with no key at
    hand nothing is checked (False, no problem).
    """
    if key is None:
        return False
    if hmac.compare_digest(entry_mac(entry, key), str(mac)):
        return True
    problems.append(wrong)
    return False


def chain_problems(
    out_dir: Path | str,
    entries: list[dict[str, Any]],
    keys: Mapping[str, bytes],
) -> list[str]:
    """What :func:`verify_audit_log` would find wrong with ``entries``, as they are.

    For a writer holding the log's lock (:func:`opened`), which cannot open
    it a second time: the chain, every MAC and recorded file, and entries no
    key in ``keys`` vouches for. An unkeyed log is one problem of its own.
    """
    problems, _, _, vouched = _check_entries(Path(out_dir), entries, keys)
    if not entries:
        return problems
    if not any(e.get("mac") is not None for e in entries):
        return [
            *problems,
            f"the log is UNKEYED: its {len(entries)} entries carry no MAC",
        ]
    signing = next(iter(keys.values()), None) if keys else None
    return problems + _key_problems(entries, vouched, signing, "the keys at hand")


def _key_problems(
    entries: list[dict[str, Any]],
    vouched: int,
    signing: bytes | None,
    source: str,
) -> list[str]:
    """Entries no MAC at hand vouches for: the key is missing or wrong."""
    if vouched >= len(entries) - 1:
        return []
    first = entries[vouched + 1 :]
    ids = sorted({str(e.get("key_id")) for e in first if e.get("mac") is not None})
    span = (
        f"entries seq={vouched + 1}..{len(entries) - 1}"
        if len(first) > 1
        else f"entry seq={vouched + 1}"
    )
    if signing is None:
        return [
            f"no key at hand ({source} holds none): {span} signed with key id "
            f"{', '.join(ids)} cannot be checked; set it to the log's key"
        ]
    return [
        f"wrong key: {span} signed with key id {', '.join(ids) or '(none)'} cannot "
        f"be checked with {source} (key id {key_id(signing)})"
    ]


def verify_audit_log(
    out_dir: Path | str,
    *,
    key: str | bytes = DEFAULT_AUDIT_KEY,
    previous_keys: Sequence[str | bytes] = (PREVIOUS_AUDIT_KEY,),
) -> AuditReport:
    """Check the chain, the MACs and the head of ``<out_dir>/audit.jsonl``, and every recorded file.

    The log is opened as writers open it (:func:`opened`), so what a crash
    left is recovered and recorded first; recoveries are reported apart from
    tampering. Where the output directory is read-only (an archive), where the
    log's end was tampered with, or where no key is at hand, the log is
    checked as it is, and what a crash left (a torn tail, a release without
    entry) is reported as a problem that cannot be recorded.

    The log is intact (``ok``) only when it is keyed and every entry is
    vouched for by a MAC checked with a key at hand: the current key alone
    vouches for everything before the last entry it signed. An unkeyed log is
    never ``ok``: nothing protects it from whoever can write the directory.

    Parameters
    ----------
    out_dir : path
    key : str or bytes, default "env:PPDM_AUDIT_KEY"
        The log's current key (spec or bytes).
    previous_keys : sequence, default ("env:PPDM_AUDIT_KEY_PREVIOUS",)
        Keys before a rotation; specs naming nothing are skipped.
    """
    out_dir = Path(out_dir)
    log_path = out_dir / AUDIT_LOG_NAME
    # A crash between the first release's rename and the log's first line
    # leaves releases and no log: opening it records them.
    if not log_path.exists() and not _release_dirs(out_dir):
        return AuditReport(0, 0, f"no audit log at {log_path}")
    signer = audit_key(key)
    signing, source = signer.key, signer.source
    keys = _keys_at_hand(signing, previous_keys)
    problems: list[str] = []
    recovered_now = 0
    quiet = AuditKey(signing, source, on_purpose=True)  # verifying warns of nothing
    try:
        with opened(out_dir, key=quiet, previous_keys=list(keys.values())) as log:
            entries, recovered_now = list(log.entries), len(log.recovered)
    except OSError as err:
        if err.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise
        why = (
            f"cannot be recorded ({os.strerror(err.errno).lower()}: "
            f"{err.filename or out_dir})"
        )
        checked_as_is = why
    except KeyConfigError as err:  # a recovery to record, the key missing or wrong
        checked_as_is = f"cannot be recorded: {err}"
    except AuditLogError:  # tampered with (or not JSON): nothing is recorded
        checked_as_is = "is not recorded in a log that was tampered with"
    else:
        checked_as_is = None
    if checked_as_is is not None:
        try:
            entries = read_entries(log_path)
            head = read_head(out_dir)
        except ValueError as invalid:
            return AuditReport(0, 0, str(invalid))
        problems = _unrecordable(out_dir, entries, checked_as_is)
    else:
        head = read_head(out_dir)
    found, recoveries, files_checked, vouched = _check_entries(out_dir, entries, keys)
    keyed = any(e.get("mac") is not None for e in entries)
    head_problems, head_key = _head_problems(entries, head, keys)
    if keyed:
        unchecked = _key_problems(entries, vouched, signing, source)
        found += unchecked
        if head_key is not None and not unchecked:
            found.append(
                f"the head ({HEAD_NAME}) is signed with key id {head_key}, which is "
                f"not at hand ({source})"
            )
    elif entries:
        found.append(
            f"the log is UNKEYED: its {len(entries)} entries carry no MAC, so "
            "nothing protects them from whoever can write the output directory; "
            "set PPDM_AUDIT_KEY before publishing (see SECURITY.md)"
        )
    problems = found + head_problems + problems
    last = entries[-1] if entries else None
    head_text = (
        f"seq={last.get('seq')} entry_hash={last.get('entry_hash')}"
        if last is not None
        else None
    )
    return AuditReport(
        len(entries),
        files_checked,
        problems[0] if problems else None,
        problems,
        recoveries,
        recovered_now,
        keyed,
        _current_key_id(entries),
        head_text,
    )
