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
import fcntl
import hashlib
import hmac
import json
import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ppdm.exceptions import AuditLogError, PPDMWarning
from ppdm.release.artifacts import json_text, sha256_bytes, sha256_file, write_atomic
from ppdm.release.keys import (
    MIN_KEY_BYTES,
    KeyConfigError,
    MissingKeyError,
    key_id,
    optional_key,
    resolve_key,
)

__all__ = [
    "AUDIT_LOG_NAME",
    "HEAD_NAME",
    "DEFAULT_AUDIT_KEY",
    "PREVIOUS_AUDIT_KEY",
    "GENESIS_HASH",
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

AUDIT_LOG_NAME = "audit.jsonl"
HEAD_NAME = AUDIT_LOG_NAME + ".head"
GENESIS_HASH = "0" * 64
TORN_SUFFIX = ".torn-"
#: Events that record a release directory as published.
RELEASE_EVENTS = ("publish", "republish", "recovered")
#: The key spec of the audit key, and of the one before a rotation.
DEFAULT_AUDIT_KEY = "env:PPDM_AUDIT_KEY"
PREVIOUS_AUDIT_KEY = "env:PPDM_AUDIT_KEY_PREVIOUS"
AUDIT_KEY_PURPOSE = (
    "the key that signs the audit log (an HMAC-SHA256 of every entry; see SECURITY.md)"
)
#: Fields of an entry that its MAC does not cover (they are made from it).
_UNSIGNED = ("entry_hash", "mac", "new_key_mac")
_ENTRY_LABEL = b"ppdm audit entry v1\n"
_HEAD_LABEL = b"ppdm audit head v1\n"
_SEAL_LABEL = b"ppdm manifest seal v1\n"


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def _canonical(obj: Any) -> bytes:
    return json_text(obj, layout="compact").encode("utf-8")


def entry_hash(entry: Mapping[str, Any]) -> str:
    """sha256 of an entry's canonical JSON, ``entry_hash`` itself left out."""
    body = {key: value for key, value in entry.items() if key != "entry_hash"}
    return hashlib.sha256(_canonical(body)).hexdigest()


def entry_mac(entry: Mapping[str, Any], key: bytes) -> str:
    """HMAC-SHA256 under ``key`` of an entry's content (all but ``entry_hash``, the MACs).

    The content includes ``seq``, ``prev_hash`` (the hash of the entry before,
    MAC included) and ``key_id``, so a MAC covers the whole chain up to it.
    """
    body = {k: v for k, v in entry.items() if k not in _UNSIGNED}
    return hmac.new(key, _ENTRY_LABEL + _canonical(body), hashlib.sha256).hexdigest()


def _head_mac(key: bytes, seq: int, hash_: str) -> str:
    message = _HEAD_LABEL + f"{seq}\n{hash_}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _seal_mac(key: bytes, manifest: Mapping[str, Any]) -> str:
    body = {k: v for k, v in manifest.items() if k != "audit_seal"}
    # The manifest as it reads back from its file (tuples as lists, ...).
    body = json.loads(json_text(body))
    return hmac.new(key, _SEAL_LABEL + _canonical(body), hashlib.sha256).hexdigest()


def seal_manifest(manifest: Mapping[str, Any], key: bytes | None) -> dict[str, Any]:
    """``manifest`` with its ``audit_seal``: the key id and a MAC of the rest (None unkeyed)."""
    sealed = {k: v for k, v in manifest.items() if k != "audit_seal"}
    sealed["audit_seal"] = (
        None if key is None else {"key_id": key_id(key), "mac": _seal_mac(key, sealed)}
    )
    return sealed


def _seal_problem(manifest: Mapping[str, Any], keys: Mapping[str, bytes]) -> str | None:
    """Why ``manifest`` is not sealed by one of ``keys`` (None: it is)."""
    seal = manifest.get("audit_seal")
    if not isinstance(seal, dict) or not seal.get("mac"):
        return (
            "manifest.json carries no audit seal (not written by a publisher "
            "holding the audit key)"
        )
    key = keys.get(str(seal.get("key_id")))
    if key is None:
        return f"manifest.json is sealed with key id {seal.get('key_id')}, which is not at hand"
    if not hmac.compare_digest(_seal_mac(key, manifest), str(seal["mac"])):
        return "manifest.json does not match its audit seal (edited, or sealed without the key)"
    return None


@dataclass(frozen=True)
class AuditKey:
    """The audit key at hand, resolved once.

    Attributes
    ----------
    key : bytes or None
        None: entries are written unkeyed.
    source : str
        Where it came from, for messages (``key spec 'env:PPDM_AUDIT_KEY'``).
    on_purpose : bool
        Unkeyed because the caller said so (``key=None``): no warning.
    """

    key: bytes | None = field(repr=False)  # never in a log or a traceback
    source: str = ""
    on_purpose: bool = False

    @property
    def id(self) -> str | None:
        return None if self.key is None else key_id(self.key)


#: A key argument: a spec (``"env:NAME"``), the key's bytes, a resolved
#: :class:`AuditKey`, or None (write unkeyed on purpose).
KeyArg = str | bytes | AuditKey | None


def audit_key(key: KeyArg = DEFAULT_AUDIT_KEY) -> AuditKey:
    """Resolve a key argument: a spec (naming nothing: unkeyed), the key's bytes, or None.

    Raises
    ------
    KeyConfigError
        A malformed spec, an unknown scheme, or a key shorter than
        :data:`~ppdm.release.keys.MIN_KEY_BYTES`.
    """
    if isinstance(key, AuditKey):
        return key
    if key is None:
        return AuditKey(None, "no key (unkeyed on purpose)", on_purpose=True)
    if isinstance(key, bytes):
        if len(key) < MIN_KEY_BYTES:
            raise KeyConfigError(
                f"the audit key is {len(key)} bytes long; it must be at least "
                f"{MIN_KEY_BYTES} bytes"
            )
        return AuditKey(key, "the key given")
    return AuditKey(optional_key(key, purpose=AUDIT_KEY_PURPOSE), f"key spec {key!r}")


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


def read_head(out_dir: Path | str) -> dict[str, Any] | None:
    """The head of ``<out_dir>/audit.jsonl`` (None when there is none).

    Raises
    ------
    AuditLogError
        The head file is not a JSON object with an integer ``seq``.
    """
    path = Path(out_dir) / HEAD_NAME
    if not path.exists():
        return None
    try:
        head = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        head = None
    seq = head.get("seq") if isinstance(head, dict) else None
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise AuditLogError(
            f"{path} is not an audit head (a JSON object with an integer seq); it "
            "was edited or damaged"
        )
    return head


def _head_problems(
    entries: Sequence[Mapping[str, Any]],
    head: Mapping[str, Any] | None,
    keys: Mapping[str, bytes],
) -> tuple[list[str], str | None]:
    """What is wrong with the head, and the key id it is signed with if none of ``keys``."""
    keyed = any(e.get("mac") is not None for e in entries)
    if head is None:
        if keyed:
            return [
                f"{HEAD_NAME} is missing although the log is keyed: entries may "
                "have been removed from its end"
            ], None
        return [], None
    problems = []
    seq = head["seq"]
    last = len(entries) - 1
    if seq < -1:
        problems.append(f"the head ({HEAD_NAME}) records seq={seq}, not an entry")
    elif seq > last:
        problems.append(
            f"the log ends at seq={last} but its head ({HEAD_NAME}) records "
            f"seq={seq}: entries were removed from its end"
        )
    else:
        expected = entries[seq].get("entry_hash") if seq >= 0 else GENESIS_HASH
        if head.get("entry_hash") != expected:
            problems.append(
                f"the head ({HEAD_NAME}) records another entry_hash for seq={seq} "
                "than the log holds: entries were replaced"
            )
    if not keyed:
        return problems, None
    mac, kid = head.get("mac"), str(head.get("key_id"))
    if not mac:
        problems.append(
            f"the head ({HEAD_NAME}) carries no MAC although the log is keyed"
        )
    elif kid not in keys:
        return problems, kid
    elif not hmac.compare_digest(
        _head_mac(keys[kid], seq, str(head.get("entry_hash"))), str(mac)
    ):
        problems.append(
            f"the head ({HEAD_NAME}) does not match its MAC (edited, or forged "
            "without the key)"
        )
    return problems, None


def _current_key_id(entries: Sequence[Mapping[str, Any]]) -> str | None:
    """The id of the key the next entry must be signed with (None: unkeyed log)."""
    current = None
    for entry in entries:
        if entry.get("mac") is not None:
            current = entry.get("key_id")
            if entry.get("event") == "key-rotated":
                current = entry.get("new_key_id")
    return current


def _torn_tail(data: bytes) -> bytes:
    """The bytes after the last newline: what a crash or full disk leaves."""
    return data[data.rfind(b"\n") + 1 :]


def _append_line(log_path: Path, line: bytes, then: Any = None) -> None:
    """Append ``line`` durably (then call ``then()``), or leave the log as it was and raise.

    A write, ``fsync``, directory sync or ``then()`` (the head's rewrite) that
    fails (a full disk, an I/O error) truncates the log back to its length
    before the append: the caller learns the entry is not recorded, so it must
    not be in the log either (a publication then takes its release back). Only
    a crash, or a failure of that truncation too, leaves a torn tail for the
    next opening to set aside.
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
            if then is not None:
                then()
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


def _write_head(out_dir: Path, head: Mapping[str, Any]) -> None:
    """Replace the head file; a fixed temporary name (the lock is held)."""
    path = out_dir / HEAD_NAME
    tmp = path.with_name(path.name + ".tmp")
    data = (json_text(head, layout="line") + "\n").encode("utf-8")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(errno.ENOSPC, "short write of the audit head", str(tmp))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _head_for(seq: int, hash_: str, key: bytes | None) -> dict[str, Any]:
    return {
        "seq": seq,
        "entry_hash": hash_,
        "key_id": None if key is None else key_id(key),
        "mac": None if key is None else _head_mac(key, seq, hash_),
    }


@dataclass
class AuditLog:
    """An opened audit log: read, checked, recovered and locked (see :func:`opened`).

    Attributes
    ----------
    out_dir : pathlib.Path
    entries : list of dict
        Every entry, including those appended through this object.
    recovered : list of dict
        The ``recovered`` entries appended when the log was opened.
    signer : AuditKey
        The key new entries are signed with (``signer.key`` None: unkeyed).
    keys : dict of str to bytes
        Every key at hand (the signing key and previous ones) by key id.
    head : dict or None
        The head file's content.
    """

    out_dir: Path
    entries: list[dict[str, Any]] = field(default_factory=list)
    recovered: list[dict[str, Any]] = field(default_factory=list)
    signer: AuditKey = AuditKey(None, "no key (unkeyed on purpose)", on_purpose=True)
    keys: dict[str, bytes] = field(default_factory=dict, repr=False)
    head: dict[str, Any] | None = None

    @property
    def path(self) -> Path:
        return self.out_dir / AUDIT_LOG_NAME

    @property
    def key_id(self) -> str | None:
        """The id of the key the log's next entry must be signed with (None: unkeyed)."""
        return _current_key_id(self.entries)

    def append(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """Append ``event`` to the chain and return the stored entry (with hashes, MAC).

        Raises
        ------
        MissingKeyError
            The log is keyed and no key is at hand.
        KeyConfigError
            The key at hand is not the log's current key.
        """
        return self._append(event)

    def _append(
        self, event: Mapping[str, Any], new_key: bytes | None = None
    ) -> dict[str, Any]:
        key = self._signing_key()
        prev = self.entries[-1]["entry_hash"] if self.entries else GENESIS_HASH
        entry = {
            **event,
            "seq": len(self.entries),
            "prev_hash": prev,
            "key_id": None if key is None else key_id(key),
        }
        if new_key is not None:
            entry["new_key_id"] = key_id(new_key)
        entry["mac"] = None if key is None else entry_mac(entry, key)
        if new_key is not None:
            entry["new_key_mac"] = entry_mac(entry, new_key)
        entry["entry_hash"] = entry_hash(entry)
        head_key = new_key if new_key is not None else key
        if head_key is not None and (
            self.head is None or self.head.get("key_id") != key_id(head_key)
        ):
            # Sign the head of the log as it is before the first entry under
            # this key: the head never lags more than one entry.
            last = self.entries[-1] if self.entries else None
            pre = _head_for(
                last["seq"] if last else -1,
                last["entry_hash"] if last else GENESIS_HASH,
                head_key,
            )
            _write_head(self.out_dir, pre)
            self.head = pre
        head = _head_for(entry["seq"], entry["entry_hash"], head_key)
        line = json_text(entry, layout="line") + "\n"
        _append_line(
            self.path,
            line.encode("utf-8"),
            then=lambda: _write_head(self.out_dir, head),
        )
        self.head = head
        self.entries.append(entry)
        return entry

    def _signing_key(self) -> bytes | None:
        current, key = self.key_id, self.signer.key
        if key is None:
            if current is not None:
                raise MissingKeyError(
                    f"{self.path} is signed (key id {current}) and no key is at hand "
                    f"({self.signer.source} holds none): it is {AUDIT_KEY_PURPOSE}; set "
                    "it to the log's key to write to the log"
                )
            if not self.signer.on_purpose:
                warnings.warn(
                    f"audit entry written to {self.path} without a MAC: "
                    f"{self.signer.source} holds no key, and `ppdm audit verify` will "
                    "report the log as UNKEYED; set it (see SECURITY.md)",
                    PPDMWarning,
                    stacklevel=4,
                )
            return None
        if current is not None and key_id(key) != current:
            raise KeyConfigError(
                f"{self.path} is signed with key id {current}, but {self.signer.source} "
                f"holds a key with id {key_id(key)}: the wrong key, or the log's key "
                "was rotated; set it to the log's current key"
            )
        return key

    def recorded_releases(self) -> set[str]:
        """Release directories (relative to ``out_dir``) the log records."""
        return {
            e["release_dir"]
            for e in self.entries
            if e.get("event") in RELEASE_EVENTS
            and isinstance(e.get("release_dir"), str)
        }

    def _check(self) -> None:
        """Refuse to write to a log whose end was tampered with."""
        problems, _ = _head_problems(self.entries, self.head, self.keys)
        last = self.entries[-1] if self.entries else None
        if last is not None and last.get("mac") is not None:
            key = self.keys.get(str(last.get("key_id")))
            if key is not None and not hmac.compare_digest(
                entry_mac(last, key), str(last["mac"])
            ):
                problems.append(
                    f"the last entry (seq={last.get('seq')}) does not match its MAC"
                )
        if problems:
            raise AuditLogError(
                f"{self.path}: {problems[0]}; nothing was written, `ppdm audit "
                f"verify --out {self.out_dir}` shows the whole report"
            )

    def _recover_tail(self) -> None:
        data = self.path.read_bytes() if self.path.exists() else b""
        tail = _torn_tail(data)
        if not tail:
            return
        self._signing_key()  # no key, no recovery: before anything is moved
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
            self._signing_key()
            self.recovered.append(
                self.append(
                    _recovered_release(
                        self.out_dir,
                        release_dir,
                        self.keys if self.signer.key else None,
                    )
                )
            )


def _inside(path: Any) -> bool:
    """``path`` is a relative path that stays inside the directory it is joined to."""
    if not isinstance(path, str) or not path:
        return False
    parts = Path(path).parts
    return not Path(path).is_absolute() and ".." not in parts and "\0" not in path


def _records(entry: Mapping[str, Any]) -> tuple[list[dict[str, str]], str | None]:
    """The well-formed file records of an entry, and what is malformed (None: nothing)."""
    files = entry.get("files", [])
    if not isinstance(files, list):
        return [], "its files are not a list"
    good = [
        r
        for r in files
        if isinstance(r, dict)
        and _inside(r.get("path"))
        and isinstance(r.get("sha256"), str)
    ]
    if len(good) != len(files):
        return good, "a file record is malformed or points outside the output directory"
    return good, None


def _release_dirs(out_dir: Path) -> list[Path]:
    """Visible release directories: ``<dataset>/<release>/`` with a manifest."""
    return [
        manifest.parent
        for manifest in sorted(out_dir.glob("*/*/manifest.json"))
        if not any(
            part.startswith(".") for part in manifest.parent.relative_to(out_dir).parts
        )
    ]


def _recovered_release(
    out_dir: Path, release_dir: Path, keys: Mapping[str, bytes] | None
) -> dict[str, Any]:
    """The ``recovered`` entry of a release that was renamed into place unlogged.

    With ``keys`` (the recovering writer holds the audit key) the manifest must
    carry a valid seal: a publisher with the key seals every manifest, so an
    unsealed release was not left by one.
    """
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
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        manifest, records = {}, []
        problems.append(f"manifest.json is unreadable ({err})")
    if keys is not None and manifest:
        sealed = _seal_problem(manifest, keys)
        if sealed is not None:
            problems.append(sealed)
    # The seal covers the manifest, not where it lies: a copy elsewhere is not it.
    for field_name, expected in (
        ("release_id", release_dir.name),
        ("dataset", release_dir.parent.name),
    ):
        if manifest.get(field_name, expected) != expected:
            problems.append(
                f"manifest.json names {field_name} {manifest.get(field_name)!r}, "
                f"not {expected!r}: it was copied or moved here"
            )
    files = []
    for record in records:
        if not _inside(record["path"]) or not isinstance(record["sha256"], str):
            problems.append(f"manifest.json records a bad file entry {record!r}")
            continue
        path = release_dir / record["path"]
        relative = path.relative_to(out_dir).as_posix()
        if not path.is_file():
            problems.append(f"{relative} is missing")
            continue
        if sha256_file(path) != record["sha256"]:
            problems.append(f"{relative} differs from its manifest")
        files.append({"path": relative, "sha256": record["sha256"]})
    manifest_sha256 = sha256_file(release_dir / "manifest.json")
    files.append(
        {
            "path": (release_dir / "manifest.json").relative_to(out_dir).as_posix(),
            "sha256": manifest_sha256,
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
        "manifest_sha256": manifest_sha256,
        "files": files,
        "intact": not problems,
        "problems": problems,
        "created_at": _now(),
        # A differentially private release spends its budget once visible:
        # the spend its manifest names goes on the record (ppdm.release.budget).
        **{
            name: manifest[name]
            for name in ("privacy_cost", "privacy_budget")
            if manifest.get(name) is not None
        },
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


def _keys_at_hand(key: bytes | None, previous: Sequence[KeyArg]) -> dict[str, bytes]:
    keys = {}
    for candidate in (*(audit_key(p).key for p in previous), key):
        if candidate is not None:
            keys[key_id(candidate)] = candidate
    return keys


@contextmanager
def opened(
    out_dir: Path | str,
    *,
    exclude: Sequence[str] = (),
    key: KeyArg = DEFAULT_AUDIT_KEY,
    previous_keys: Sequence[KeyArg] = (),
) -> Iterator[AuditLog]:
    """Open ``<out_dir>/audit.jsonl`` exclusively, checked, recovering what a crash left.

    Under the lock, the log's end is checked against its head (and the last
    entry against its MAC, when its key is at hand); then a torn tail is set
    aside and every release directory without an entry is recorded
    (``exclude`` lists release directories, relative to ``out_dir``, that the
    caller is about to record itself).

    Parameters
    ----------
    out_dir : path
    exclude : sequence of str
    key : str, bytes or None, default "env:PPDM_AUDIT_KEY"
        The key that signs new entries: a key spec, the key, or None to write
        unkeyed on purpose. A spec naming no key writes unkeyed with a
        :class:`~ppdm.exceptions.PPDMWarning`; a keyed log refuses either.
    previous_keys : sequence
        Older keys (specs or bytes; specs naming nothing are skipped), used
        only to check what they signed.

    Raises
    ------
    AuditLogError
        A complete line of the log is not a JSON object, or the log's end does
        not match its head (entries removed or replaced), or the last entry
        does not match its MAC: nothing is written.
    MissingKeyError, KeyConfigError
        Something must be recorded in a keyed log and the key at hand is
        missing or not the log's.
    OSError
        The log cannot be read or written.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    signer = audit_key(key)
    log = AuditLog(
        out_dir, signer=signer, keys=_keys_at_hand(signer.key, previous_keys)
    )
    with _locked(log.path):
        log.entries = read_entries(log.path)
        log.head = read_head(out_dir)
        log._check()
        log._recover_tail()
        log._recover_releases(exclude)
        yield log


def check_key(out_dir: Path | str, key: KeyArg = DEFAULT_AUDIT_KEY) -> AuditKey:
    """What a writer would refuse about ``key``, found before any work (a pre-flight).

    Reads ``<out_dir>/audit.jsonl`` without locking or writing it.

    Returns
    -------
    AuditKey
        The resolved key (``key`` None: the log is not keyed, entries will be
        written unkeyed).

    Raises
    ------
    MissingKeyError
        The log is keyed and ``key`` names no key.
    KeyConfigError
        A malformed spec or a short key, or the log is signed with another key.
    """
    signer = audit_key(key)
    log = AuditLog(Path(out_dir), signer=AuditKey(signer.key, signer.source, True))
    if log.path.exists():
        log.entries = read_entries(log.path)
        log._signing_key()
    return signer


def append_entry(
    log_path: Path | str, event: Mapping[str, Any], *, key: KeyArg = DEFAULT_AUDIT_KEY
) -> dict[str, Any]:
    """Open the log at ``log_path``, append ``event`` and return the stored entry.

    ``key`` as for :func:`opened`.
    """
    log_path = Path(log_path)
    exclude = [event["release_dir"]] if "release_dir" in event else []
    with opened(log_path.parent, exclude=exclude, key=key) as log:
        return log.append(event)


def rotate_key(
    out_dir: Path | str, old: str | bytes, new: str | bytes
) -> dict[str, Any]:
    """Hand the audit log of ``out_dir`` over from key ``old`` to key ``new``.

    Appends a ``key-rotated`` entry signed by ``old`` that names the new key's
    id and carries a second MAC by ``new``; the head is signed by ``new``, and
    every later entry must be. Afterwards set ``PPDM_AUDIT_KEY`` to the new
    key; the new key alone verifies the whole log (keep the old one as
    ``PPDM_AUDIT_KEY_PREVIOUS`` to check the older entries' own MACs too).

    Parameters
    ----------
    out_dir : path
    old, new : str or bytes
        Key specs (``"env:PPDM_AUDIT_KEY_PREVIOUS"``) or the keys themselves.

    Returns
    -------
    dict
        The ``key-rotated`` entry.

    Raises
    ------
    MissingKeyError
        A spec names no key.
    KeyConfigError
        ``old`` is not the log's current key, ``new`` equals it, or the log is
        not keyed yet (its next entry written with a key starts the keyed
        chain: nothing to rotate).
    """
    old_key, new_key = (
        audit_key(
            k if isinstance(k, bytes) else resolve_key(k, purpose=AUDIT_KEY_PURPOSE)
        )
        for k in (old, new)
    )
    assert old_key.key is not None and new_key.key is not None
    if old_key.id == new_key.id:
        raise KeyConfigError(
            f"rotating the audit key of {out_dir}: the new key is the old one "
            f"(key id {new_key.id})"
        )
    with opened(out_dir, key=old_key) as log:
        if log.key_id is None:
            raise KeyConfigError(
                f"{log.path} is not keyed yet: nothing to rotate; the next entry "
                "written with PPDM_AUDIT_KEY set starts the keyed chain"
            )
        return log._append(
            {"event": "key-rotated", "created_at": _now()}, new_key=new_key.key
        )


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
            key = keys.get(str(kid))
            if key is not None:
                if hmac.compare_digest(entry_mac(entry, key), str(mac)):
                    vouched = index
                else:
                    problems.append(
                        f"{where}: MAC does not match its content (edited, or "
                        "forged without the key)"
                    )
            if entry.get("event") == "key-rotated":
                new_id, new_mac = entry.get("new_key_id"), entry.get("new_key_mac")
                if not new_id or not new_mac:
                    problems.append(f"{where}: a key-rotated entry names no new key")
                else:
                    new_key = keys.get(str(new_id))
                    if new_key is not None:
                        if hmac.compare_digest(entry_mac(entry, new_key), str(new_mac)):
                            vouched = index
                        else:
                            problems.append(
                                f"{where}: the new key's MAC does not match (edited, "
                                "or forged without the new key)"
                            )
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
            path = out_dir / record["path"]
            if not path.is_file():
                problems.append(f"{where}: recorded file {record['path']} is missing")
            elif sha256_file(path) != record["sha256"]:
                problems.append(
                    f"{where}: file {record['path']} changed (sha256 differs from record)"
                )
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
                path = out_dir / manifest
                if not path.is_file():
                    problems.append(f"{where}: manifest {manifest} is missing")
                elif sha256_file(path) != entry["manifest_sha256"]:
                    problems.append(
                        f"{where}: manifest {manifest} is not the one its entry "
                        "records (sha256 differs)"
                    )
        prev = entry.get("entry_hash", "")
    return problems, recoveries, files_checked, vouched


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
