"""The keyed hash chain of the audit log: entry hashes, MACs, the head's and the seal's.

An entry's ``entry_hash`` is the sha256 of its canonical JSON without that
field, and its ``mac`` an HMAC-SHA256 of its content under the audit key
(:func:`audit_key` resolves a key spec). The head and a release's manifest
seal are MACs of the same key under labels of their own.
:mod:`ppdm.release.audit` describes the log as a whole.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ppdm.release.artifacts import json_text
from ppdm.release.keys import (
    MIN_KEY_BYTES,
    KeyConfigError,
    key_id,
    optional_key,
)

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


def _head_for(seq: int, hash_: str, key: bytes | None) -> dict[str, Any]:
    return {
        "seq": seq,
        "entry_hash": hash_,
        "key_id": None if key is None else key_id(key),
        "mac": None if key is None else _head_mac(key, seq, hash_),
    }
