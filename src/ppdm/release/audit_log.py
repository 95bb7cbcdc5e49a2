"""The audit log's files: reading, locked appending, crash recovery and key rotation.

:func:`opened` takes the log's exclusive lock, moves a torn tail aside and
records the release directories a crashed publisher left; :class:`AuditLog`
appends one entry with one write, ``fsync`` and a new head.
:mod:`ppdm.release.audit` describes the invariants.
"""

from __future__ import annotations

import errno
import fcntl
import hmac
import json
import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ppdm.exceptions import AuditLogError, PPDMWarning
from ppdm.release.artifacts import json_text, sha256_bytes, sha256_file, write_atomic
from ppdm.release.audit_chain import (
    AUDIT_KEY_PURPOSE,
    AUDIT_LOG_NAME,
    DEFAULT_AUDIT_KEY,
    GENESIS_HASH,
    HEAD_NAME,
    RELEASE_EVENTS,
    TORN_SUFFIX,
    AuditKey,
    KeyArg,
    _head_for,
    _head_problems,
    _now,
    _seal_problem,
    audit_key,
    entry_hash,
    entry_mac,
)
from ppdm.release.keys import (
    KeyConfigError,
    MissingKeyError,
    key_id,
    resolve_key,
)


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


def release_entries(
    out_dir: Path | str, dataset: str
) -> Iterator[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    """The releases of ``dataset`` the log of ``out_dir`` records, oldest first.

    Each as ``(release_dir, entry, released)``: the first entry naming the
    directory ``<dataset>/<id>``, and its records of released files (under
    the release's ``data/``); a release without any is left out.
    """
    seen = set()
    for entry in read_entries(Path(out_dir) / AUDIT_LOG_NAME):
        where = entry.get("release_dir")
        if entry.get("event") not in RELEASE_EVENTS or not isinstance(where, str):
            continue
        parts = Path(where).parts
        if len(parts) != 2 or parts[0] != dataset or where in seen:
            continue
        released = [
            r
            for r in entry.get("files", [])
            if isinstance(r, dict) and Path(r.get("path", "")).parts[2:3] == ("data",)
        ]
        if released:
            seen.add(where)
            yield where, entry, released


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
