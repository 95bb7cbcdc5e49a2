"""Whether a release directory is the one its audit entry records: the seal check.

A release's hashes are in its own ``manifest.json``, so whoever can write the
directory can change a row, put the new sha256 in the manifest and lower the
requirement there, and every file then matches its manifest. What the editor
cannot redo without the audit key is the manifest's seal (``audit_seal``, a
MAC of the manifest) and the audit entry that binds it (its
``manifest_sha256``, the hash of every published file, under the entry's own
MAC). :func:`check_seal` checks both for one release, reading the output
directory's log without locking or writing it (an archive may be read-only),
and names what differs from the entry: the files, the requirement, the
source. The whole chain, head and every other entry are ``ppdm audit
verify``'s business.

Without a key nothing of this can be checked, and :func:`check_seal` says so
instead of passing.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ppdm.exceptions import AnonymizationError
from ppdm.release.artifacts import sha256_file
from ppdm.release.audit import (
    AUDIT_LOG_NAME,
    DEFAULT_AUDIT_KEY,
    PREVIOUS_AUDIT_KEY,
    RELEASE_EVENTS,
    KeyArg,
    audit_key,
    entry_hash,
    entry_mac,
    read_entries,
)
from ppdm.release.audit_chain import _seal_problem
from ppdm.release.audit_log import _keys_at_hand

__all__ = ["SealCheck", "check_seal", "models_in_words"]

#: Fields an audit entry copies from the manifest it binds.
_RECORDED = ("dataset", "release_id", "algorithm", "source_sha256", "seed")


@dataclass(frozen=True)
class SealCheck:
    """The outcome of :func:`check_seal`.

    Attributes
    ----------
    checked : bool
        A key was at hand; False: nothing was checked (``note`` says so).
    problems : tuple of str
        What does not match, one sentence each, naming the file.
    note : str
        One line on what was checked (``OK: ...``) or why not
        (``NOT CHECKED: ...``); empty when there are problems.
    """

    checked: bool
    problems: tuple[str, ...] = ()
    note: str = ""

    @property
    def passed(self) -> bool:
        """Checked, and nothing differs."""
        return self.checked and not self.problems


def check_seal(
    release_dir: Path | str,
    key: KeyArg = DEFAULT_AUDIT_KEY,
    previous_keys: Sequence[KeyArg] = (PREVIOUS_AUDIT_KEY,),
) -> SealCheck:
    """Check a release's manifest seal and the audit entry that binds it.

    Parameters
    ----------
    release_dir : path
        ``<out>/<dataset>/<release_id>``; its entry is looked up in
        ``<out>/audit.jsonl``.
    key : key spec, bytes, AuditKey or None, default "env:PPDM_AUDIT_KEY"
        The audit key. A spec naming no key (the variable unset), or None:
        not checked.
    previous_keys : sequence, default ("env:PPDM_AUDIT_KEY_PREVIOUS",)
        Keys before a rotation, for a release sealed with one of them.

    Returns
    -------
    SealCheck

    Raises
    ------
    KeyConfigError
        A malformed key spec, or a key shorter than the minimum.
    """
    release_dir = Path(release_dir)
    signer = audit_key(key)
    if signer.key is None:
        return SealCheck(
            False,
            note=(
                "NOT CHECKED: no audit key at hand "
                f"({signer.source if not signer.on_purpose else 'none given'}); "
                "manifest.json is taken as found, and whoever can write the "
                "release directory can change its data, hashes and requirement "
                "together; set PPDM_AUDIT_KEY to check it against the audit log"
            ),
        )
    keys = _keys_at_hand(signer.key, previous_keys)
    manifest_path = release_dir / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        return SealCheck(True, (f"{manifest_path} is unreadable ({err})",))
    problems: list[str] = []
    sealed = _seal_problem(manifest, keys)
    if sealed is not None:
        problems.append(sealed)
    out_dir = release_dir.parent.parent
    where = f"{release_dir.parent.name}/{release_dir.name}"
    log = out_dir / AUDIT_LOG_NAME
    entry = None
    if not log.is_file():
        problems.append(
            f"no audit log {log}: nothing binds manifest.json to a published "
            "release (a release is checked where it was published)"
        )
    else:
        try:
            entry = next(
                (
                    e
                    for e in read_entries(log)
                    if e.get("release_dir") == where
                    and e.get("event") in RELEASE_EVENTS
                ),
                None,
            )
        except (OSError, AnonymizationError, ValueError) as err:
            problems.append(f"cannot read the audit log: {err}")
        else:
            if entry is None:
                problems.append(f"the audit log {log} has no entry for {where}")
    if entry is not None:
        problems.extend(_entry_problems(release_dir, where, manifest, entry, keys))
    if problems:
        return SealCheck(True, tuple(problems))
    seal = manifest.get("audit_seal") or {}
    return SealCheck(
        True,
        note=(
            f"OK: manifest.json sealed with key id {seal.get('key_id')} and "
            f"bound to audit entry seq={entry.get('seq') if entry else '?'} of {log}"
        ),
    )


def _entry_problems(
    release_dir: Path,
    where: str,
    manifest: Mapping[str, Any],
    entry: Mapping[str, Any],
    keys: Mapping[str, bytes],
) -> list[str]:
    """What of the release differs from ``entry``, and whether the entry is genuine."""
    name = f"audit entry seq={entry.get('seq', '?')}"
    problems = []
    if entry_hash(entry) != entry.get("entry_hash"):
        problems.append(f"{name} was edited (its entry_hash does not match)")
    mac, kid = entry.get("mac"), str(entry.get("key_id"))
    if mac is None:
        problems.append(f"{name} carries no MAC (written without the audit key)")
    elif kid not in keys:
        problems.append(f"{name} is signed with key id {kid}, which is not at hand")
    elif not hmac.compare_digest(entry_mac(entry, keys[kid]), str(mac)):
        problems.append(f"{name} does not match its MAC (edited, or forged)")
    if sha256_file(release_dir / "manifest.json") != entry.get("manifest_sha256"):
        problems.append(f"manifest.json is not the one {name} records (sha256 differs)")
    for field_name in _RECORDED:
        if field_name in entry and manifest.get(field_name) != entry[field_name]:
            problems.append(
                f"manifest.json's {field_name} is {manifest.get(field_name)!r}; "
                f"{name} records {entry[field_name]!r}"
            )
    recorded = (manifest.get("requirement") or {}).get("models")
    if "requirement" in entry and recorded != entry["requirement"]:
        problems.append(
            f"manifest.json requires {models_in_words(recorded)}; {name} records "
            f"{models_in_words(entry['requirement'])}"
        )
    listed = {
        f"{where}/{r.get('path')}": r.get("sha256")
        for r in manifest.get("files") or ()
        if isinstance(r, dict)
    }
    listed.update(
        {f"{where}/{p}": h for p, h in (manifest.get("artifacts") or {}).items()}
    )
    for record in entry.get("files") or ():
        path = record.get("path") if isinstance(record, dict) else None
        if not isinstance(path, str) or path == f"{where}/manifest.json":
            continue
        inside = path[len(where) + 1 :] if path.startswith(where + "/") else path
        file = release_dir / inside
        if not file.is_file():
            problems.append(f"{inside} is missing ({name} records it)")
        elif sha256_file(file) != record.get("sha256"):
            problems.append(
                f"{inside} changed since it was published (sha256 differs from {name})"
            )
        if path in listed and listed[path] != record.get("sha256"):
            problems.append(
                f"manifest.json's sha256 of {inside} was rewritten ({name} "
                "records another)"
            )
    return problems


def models_in_words(described: Any) -> str:
    """``5-anonymity; distinct 2-diversity of purpose`` from recorded models.

    ``described`` is a recorded requirement (a dict with ``models``) or its
    list of models; an older or foreign record is shown as it is.
    """
    from ppdm.privacy import model_from_description

    if isinstance(described, dict):
        described = described.get("models")
    try:
        return "; ".join(str(model_from_description(m)) for m in described or ())
    except (AnonymizationError, TypeError, KeyError, ValueError):
        return str(described)
