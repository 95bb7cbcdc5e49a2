"""The keyed audit log: every forgery without the key is detected.

One output directory is built once with the real publisher: three releases,
a rejected release, a key rotation and a republication (six entries, the last
two signed by the new key), then copied for each case. An attacker with write
access to the directory but without the key edits, deletes, reorders,
appends and truncates, in two ways: naively, and *re-chained* (every
``entry_hash``, ``prev_hash`` and ``seq`` recomputed, and the head's
``seq``/``entry_hash`` set to the new last entry, all that can be done
without the key). Every case must fail :func:`verify_audit_log` with the
current key alone; the counts are printed (``-s``) and recorded in
``benchmarks/results/reliability.md``.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdm.exceptions import ArtifactIntegrityError, AuditLogError, PPDMWarning
from ppdm.release import audit, audit_chain
from ppdm.release.artifacts import sha256_file
from ppdm.release.audit import (
    AUDIT_LOG_NAME,
    GENESIS_HASH,
    HEAD_NAME,
    append_entry,
    entry_hash,
    read_entries,
    rotate_key,
    verify_audit_log,
)
from ppdm.release.keys import KeyConfigError, MissingKeyError, key_id
from ppdm.release.publish import publish_directory

OLD = b"old-audit-key-0123456789abcdef"
NEW = b"new-audit-key-0123456789abcdef"
ATTACKER = b"attacker-key-0123456789abcdef!"


def _verify(out: Path, key: bytes = NEW, previous: tuple = ()) -> audit.AuditReport:
    return verify_audit_log(out, key=key, previous_keys=previous)


def _publish(out: Path, name: str, content: str, key: bytes) -> Path:
    """A small release through the real publisher (data file + manifest)."""
    source = out.parent / f"src-{name}-{abs(hash(content))}.csv"
    source.write_text(content)
    digest = sha256_file(source)
    release_dir = out / "ds" / name
    manifest = {
        "dataset": "ds",
        "release_id": name,
        "files": [{"path": "data/release.csv", "sha256": digest, "rows": 2}],
        "artifacts": {},
    }
    entry = {"dataset": "ds", "release_id": name, "verified": True}
    return publish_directory(
        out,
        release_dir,
        {"data/release.csv": source},
        {"data/release.csv": digest},
        manifest,
        entry,
        audit_key=key,
    )


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("keyed")
    out = root / "out"
    _publish(out, "r0", "x,y\n1,2\n", OLD)
    append_entry(
        out / AUDIT_LOG_NAME,
        {"event": "release-rejected", "dataset": "ds", "reason": "k < 5"},
        key=OLD,
    )
    _publish(out, "r1", "x,y\n3,4\n", OLD)
    rotate_key(out, OLD, NEW)
    _publish(out, "r2", "x,y\n5,6\n", NEW)
    _publish(out, "r2", "x,y\n5,6\n", NEW)  # the same again: a republication
    events = [e["event"] for e in read_entries(out / AUDIT_LOG_NAME)]
    assert events == [
        "publish",
        "release-rejected",
        "publish",
        "key-rotated",
        "publish",
        "republish",
    ]
    return out


# -- an intact log ---------------------------------------------------------------
def test_the_intact_log_verifies_with_the_current_key_alone(base: Path) -> None:
    report = _verify(base)
    assert report.ok, report.problems
    assert report.keyed and report.key_id == key_id(NEW)
    assert report.entries == 6 and report.recovered_now == 0
    # with the previous key too, each older entry's own MAC is checked as well
    assert _verify(base, NEW, (OLD,)).ok


def test_every_entry_carries_a_mac_an_independent_hmac_reproduces(base: Path) -> None:
    entries = read_entries(base / AUDIT_LOG_NAME)
    for entry in entries:
        key = OLD if entry["key_id"] == key_id(OLD) else NEW
        body = {
            k: v
            for k, v in entry.items()
            if k not in ("entry_hash", "mac", "new_key_mac")
        }
        text = json.dumps(body, sort_keys=True, separators=(",", ":"))
        expected = hmac.new(
            key, b"ppdm audit entry v1\n" + text.encode(), hashlib.sha256
        ).hexdigest()
        assert entry["mac"] == expected
    assert [e["key_id"] for e in entries] == [key_id(OLD)] * 4 + [key_id(NEW)] * 2
    rotated = entries[3]
    assert rotated["new_key_id"] == key_id(NEW)
    assert rotated["new_key_mac"] == audit.entry_mac(rotated, NEW)
    head = json.loads((base / HEAD_NAME).read_text())
    assert head["seq"] == 5 and head["entry_hash"] == entries[-1]["entry_hash"]
    assert head["key_id"] == key_id(NEW)


def test_the_manifest_is_bound_to_its_entry_and_sealed(base: Path) -> None:
    entries = read_entries(base / AUDIT_LOG_NAME)
    for entry in entries:
        if entry["event"] not in ("publish", "republish"):
            continue
        manifest_path = base / entry["release_dir"] / "manifest.json"
        assert entry["manifest_sha256"] == sha256_file(manifest_path)
        manifest = json.loads(manifest_path.read_text())
        seal = manifest["audit_seal"]
        signer = OLD if entry["release_dir"] != "ds/r2" else NEW
        assert seal["key_id"] == key_id(signer)
        assert audit_chain._seal_problem(manifest, {key_id(signer): signer}) is None


def test_the_old_key_alone_cannot_vouch_for_entries_after_the_rotation(
    base: Path,
) -> None:
    report = _verify(base, OLD)
    assert not report.ok
    assert report.broken.startswith("wrong key: entries seq=4..5 signed with key id")


def test_a_wrong_key_fails(base: Path) -> None:
    report = _verify(base, ATTACKER)
    assert not report.ok
    assert report.broken.startswith("wrong key: entries seq=0..5")
    assert key_id(ATTACKER) in report.broken


def test_a_missing_key_fails_naming_the_variable(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PPDM_AUDIT_KEY", raising=False)
    monkeypatch.delenv("PPDM_AUDIT_KEY_PREVIOUS", raising=False)
    report = verify_audit_log(base)
    assert not report.ok
    assert report.broken.startswith(
        "no key at hand (key spec 'env:PPDM_AUDIT_KEY' holds none): entries seq=0..5"
    )


def test_the_environment_holds_the_key_by_default(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PPDM_AUDIT_KEY", NEW.decode())
    monkeypatch.delenv("PPDM_AUDIT_KEY_PREVIOUS", raising=False)
    assert verify_audit_log(base).ok
    monkeypatch.setenv("PPDM_AUDIT_KEY", OLD.decode())
    assert not verify_audit_log(base).ok
    monkeypatch.setenv("PPDM_AUDIT_KEY_PREVIOUS", OLD.decode())
    monkeypatch.setenv("PPDM_AUDIT_KEY", NEW.decode())
    assert verify_audit_log(base).ok


# -- the tamper positions ------------------------------------------------------------
def _lines(out: Path) -> list[dict[str, Any]]:
    return read_entries(out / AUDIT_LOG_NAME)


def _write(out: Path, entries: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(e, sort_keys=True) + "\n" for e in entries)
    (out / AUDIT_LOG_NAME).write_text(text)


def _rechain(out: Path, entries: list[dict[str, Any]]) -> None:
    """Recompute what needs no key: seq, prev_hash, entry_hash, the head's fields."""
    prev = GENESIS_HASH
    for seq, entry in enumerate(entries):
        entry["seq"] = seq
        entry["prev_hash"] = prev
        entry["entry_hash"] = entry_hash(entry)
        prev = entry["entry_hash"]
    _write(out, entries)
    head_path = out / HEAD_NAME
    head = json.loads(head_path.read_text())  # its MAC cannot be recomputed
    head["seq"] = len(entries) - 1
    head["entry_hash"] = prev
    head_path.write_text(json.dumps(head, sort_keys=True) + "\n")


def _mutated(value: Any) -> Any:
    """A different value of the same kind."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value[:-1] + ("0" if value[-1:] != "0" else "1") if value else "x"
    if value is None:
        return "forged"
    if isinstance(value, list):
        if value and isinstance(value[0], dict):  # a file record: another hash
            changed = copy.deepcopy(value)
            changed[0]["sha256"] = _mutated(changed[0]["sha256"])
            return changed
        return value[:-1] if value else ["forged"]
    if isinstance(value, dict):
        return {**value, "forged": True}
    raise TypeError(type(value))


Tamper = Callable[[Path], None]


def _cases(base: Path) -> dict[str, dict[str, Tamper]]:
    """Family -> case name -> what the attacker does to a copy of ``base``."""
    entries = _lines(base)
    n = len(entries)
    families: dict[str, dict[str, Tamper]] = {
        "edit a field": {},
        "edit a field, re-chained": {},
        "delete an entry": {},
        "delete an entry, re-chained": {},
        "swap adjacent entries": {},
        "swap adjacent entries, re-chained": {},
        "append a forged entry": {},
        "truncate": {},
        "head file": {},
        "release files": {},
    }

    def edit(i: int, field: str, rechain: bool) -> Tamper:
        def tamper(out: Path) -> None:
            changed = _lines(out)
            changed[i][field] = _mutated(changed[i][field])
            (_rechain if rechain else _write)(out, changed)

        return tamper

    for i, entry in enumerate(entries):
        for field in sorted(entry):
            families["edit a field"][f"seq={i} {field}"] = edit(i, field, False)
            if field not in ("seq", "prev_hash", "entry_hash"):  # recomputed
                families["edit a field, re-chained"][f"seq={i} {field}"] = edit(
                    i, field, True
                )

    def delete(i: int, rechain: bool) -> Tamper:
        def tamper(out: Path) -> None:
            changed = _lines(out)
            del changed[i]
            (_rechain if rechain else _write)(out, changed)

        return tamper

    def swap(i: int, rechain: bool) -> Tamper:
        def tamper(out: Path) -> None:
            changed = _lines(out)
            changed[i], changed[i + 1] = changed[i + 1], changed[i]
            (_rechain if rechain else _write)(out, changed)

        return tamper

    for i in range(n):
        families["delete an entry"][f"seq={i}"] = delete(i, False)
        families["delete an entry, re-chained"][f"seq={i}"] = delete(i, True)
    for i in range(n - 1):
        families["swap adjacent entries"][f"seq={i},{i + 1}"] = swap(i, False)
        families["swap adjacent entries, re-chained"][f"seq={i},{i + 1}"] = swap(
            i, True
        )

    def append(make: Callable[[list[dict[str, Any]]], dict[str, Any]]) -> Tamper:
        def tamper(out: Path) -> None:
            changed = _lines(out)
            changed.append(make(changed))
            _rechain(out, changed)

        return tamper

    def publish_like(entries: list[dict[str, Any]]) -> dict[str, Any]:
        forged = copy.deepcopy(entries[4])
        forged["release_id"] = "forged"
        return forged

    def signed_by(key: bytes, event: dict[str, Any]) -> Callable[..., dict]:
        def make(entries: list[dict[str, Any]]) -> dict[str, Any]:
            forged = {
                **event,
                "seq": len(entries),
                "prev_hash": entries[-1]["entry_hash"],
                "key_id": key_id(key),
            }
            if event.get("event") == "key-rotated":
                forged["new_key_id"] = key_id(ATTACKER)
                forged["new_key_mac"] = audit.entry_mac(forged, ATTACKER)
            forged["mac"] = audit.entry_mac(forged, key)
            return forged

        return make

    appended = families["append a forged entry"]
    appended["a copy of the last entry (replay)"] = append(
        lambda e: copy.deepcopy(e[-1])
    )
    appended["an edited copy, MAC kept"] = append(publish_like)
    appended["no MAC"] = append(lambda e: {**publish_like(e), "mac": None})
    appended["no MAC, no key id"] = append(
        lambda e: {**publish_like(e), "mac": None, "key_id": None}
    )
    appended["a random MAC"] = append(lambda e: {**publish_like(e), "mac": "ab" * 32})
    appended["signed with the attacker's key"] = append(
        signed_by(ATTACKER, {"event": "publish", "release_id": "forged"})
    )
    appended["signed with the attacker's key, current key id"] = append(
        lambda e: {
            **signed_by(ATTACKER, {"event": "publish", "release_id": "forged"})(e),
            "key_id": key_id(NEW),
        }
    )
    appended["signed with the rotated-out key"] = append(
        signed_by(OLD, {"event": "publish", "release_id": "forged"})
    )
    appended["a rotation to the attacker's key"] = append(
        signed_by(ATTACKER, {"event": "key-rotated"})
    )

    def forged_recovery(out: Path) -> None:  # a whole forged release + entry
        shutil.copytree(out / "ds" / "r0", out / "ds" / "forged")
        changed = _lines(out)
        changed.append({**copy.deepcopy(changed[0]), "release_dir": "ds/forged"})
        _rechain(out, changed)

    appended["a copied release with a copied entry"] = forged_recovery

    def append_unrechained(out: Path) -> None:  # head left as it is
        changed = _lines(out)
        extra = publish_like(changed)
        extra["seq"], extra["prev_hash"] = n, changed[-1]["entry_hash"]
        extra["entry_hash"] = entry_hash(extra)
        _write(out, [*changed, extra])

    appended["an edited copy, head left behind"] = append_unrechained

    truncate = families["truncate"]

    def drop(k: int, head: str) -> Tamper:
        def tamper(out: Path) -> None:
            _write(out, _lines(out)[: n - k])
            if head == "deleted":
                (out / HEAD_NAME).unlink()
            elif head == "re-pointed":
                _rechain(out, _lines(out))

        return tamper

    for k in range(1, n + 1):
        for head in ("kept", "deleted", "re-pointed"):
            if k == n and head != "kept":
                # log and head gone as a whole: the documented limit, see
                # test_a_deleted_log_and_head_show_as_recoveries_only
                continue
            truncate[f"last {k} entries, head {head}"] = drop(k, head)

    def cut(fraction: float) -> Tamper:
        def tamper(out: Path) -> None:
            data = (out / AUDIT_LOG_NAME).read_bytes()
            last = data[:-1].rfind(b"\n") + 1
            keep = last + int((len(data) - last) * fraction)
            (out / AUDIT_LOG_NAME).write_bytes(data[:keep])

        return tamper

    for fraction in (0.1, 0.5, 0.99):
        truncate[f"the last line cut to {fraction:.0%}"] = cut(fraction)

    head_family = families["head file"]
    head_family["deleted"] = lambda out: (out / HEAD_NAME).unlink()
    for field in ("seq", "entry_hash", "key_id", "mac"):

        def edit_head(out: Path, field: str = field) -> None:
            head = json.loads((out / HEAD_NAME).read_text())
            head[field] = _mutated(head[field])
            (out / HEAD_NAME).write_text(json.dumps(head))

        head_family[f"{field} edited"] = edit_head

    files = families["release files"]

    def edit_file(rel: str) -> Tamper:
        def tamper(out: Path) -> None:
            path = out / rel
            path.write_bytes(path.read_bytes() + b"\n")

        return tamper

    for release in ("r0", "r1", "r2"):
        for rel in ("data/release.csv", "manifest.json"):
            files[f"ds/{release}/{rel} changed"] = edit_file(f"ds/{release}/{rel}")

    def rebound_manifest(out: Path) -> None:
        """Edit a manifest and re-record its hash in the entry: needs the key."""
        path = out / "ds" / "r1" / "manifest.json"
        manifest = json.loads(path.read_text())
        manifest["release_id"] = "forged"
        path.write_text(json.dumps(manifest))
        changed = _lines(out)
        digest = sha256_file(path)
        changed[2]["manifest_sha256"] = digest
        for record in changed[2]["files"]:
            if record["path"].endswith("manifest.json"):
                record["sha256"] = digest
        _rechain(out, changed)

    files["a manifest edited and re-recorded"] = rebound_manifest

    def planted(seal: str) -> Tamper:
        def tamper(out: Path) -> None:
            shutil.copytree(out / "ds" / "r0", out / "ds" / "planted")
            path = out / "ds" / "planted" / "manifest.json"
            manifest = json.loads(path.read_text())
            manifest["release_id"] = "planted"
            if seal == "none":
                del manifest["audit_seal"]
            path.write_text(json.dumps(manifest))

        return tamper

    files["a planted release, seal copied"] = planted("copied")
    files["a planted release, no seal"] = planted("none")
    return families


def _snapshot(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


#: Who verifies: the current key alone, and with the rotated-out key too.
VERIFIERS = {"current key": (NEW, ()), "current + previous key": (NEW, (OLD,))}


def test_every_tamper_position_is_detected(base: Path, tmp_path: Path) -> None:
    families = _cases(base)
    counts: Counter[str] = Counter()
    missed = []
    pristine = _snapshot(base)
    case = 0
    for family, cases in families.items():
        for name, tamper in cases.items():
            for verifier, (key, previous) in VERIFIERS.items():
                case += 1
                out = tmp_path / str(case) / "out"
                shutil.copytree(base, out)
                tamper(out)
                assert _snapshot(out) != pristine, f"{family}: {name} changed nothing"
                report = _verify(out, key, previous)
                counts[f"{family}: tried"] += 1
                if not report.ok:
                    counts[f"{family}: detected"] += 1
                else:
                    missed.append(f"{family}: {name} ({verifier})")
    tried = sum(v for k, v in counts.items() if k.endswith("tried"))
    detected = sum(v for k, v in counts.items() if k.endswith("detected"))
    print()
    for family in families:
        print(
            f"{family}: {counts[f'{family}: tried']} tried, "
            f"{counts[f'{family}: detected']} detected"
        )
    print(f"total: {tried} tried, {detected} detected (each case by both verifiers)")
    assert not missed, missed
    assert tried == 356  # 178 cases (6 entries x their fields, ...) x 2 verifiers


def test_a_forged_entry_is_named(base: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(base, out)
    entries = _lines(out)
    entries[2]["release_id"] = "forged"
    _rechain(out, entries)
    report = _verify(out, NEW, (OLD,))
    # with the old key the edited entry itself is named; the rotation's MAC
    # by the new key fails too (it vouches for everything before it)
    assert report.problems[:3] == [
        "entry seq=2 (line 3): MAC does not match its content (edited, or forged "
        "without the key)",
        "entry seq=3 (line 4): MAC does not match its content (edited, or forged "
        "without the key)",
        "entry seq=3 (line 4): the new key's MAC does not match (edited, or forged "
        "without the new key)",
    ]


def test_writers_refuse_a_log_whose_end_was_removed(base: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(base, out)
    _write(out, _lines(out)[:-2])  # the republication and r2's publication gone
    before = (out / AUDIT_LOG_NAME).read_bytes()
    with pytest.raises(AuditLogError, match="entries were removed from its end"):
        append_entry(out / AUDIT_LOG_NAME, {"event": "publish"}, key=NEW)
    # r2 is not taken for a release a crash left: nothing was recorded
    assert (out / AUDIT_LOG_NAME).read_bytes() == before
    report = _verify(out)
    assert not report.ok and report.recovered_now == 0
    assert "release ds/r2 has no entry and is not recorded" in " ".join(report.problems)


def test_a_planted_release_is_recorded_not_intact(base: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(base, out)
    shutil.copytree(out / "ds" / "r0", out / "ds" / "planted")
    report = _verify(out, NEW, (OLD,))  # its seal is valid: a copy of r0's
    assert not report.ok and report.recovered_now == 1
    assert report.broken == (
        "entry seq=6 (line 7): release ds/planted was recorded NOT intact: "
        "manifest.json names release_id 'r0', not 'planted': it was copied or "
        "moved here"
    )


def test_a_deleted_log_and_head_show_as_recoveries_only(
    base: Path, tmp_path: Path
) -> None:
    """The documented limit: the whole history removed at once."""
    out = tmp_path / "out"
    shutil.copytree(base, out)
    (out / AUDIT_LOG_NAME).unlink()
    (out / HEAD_NAME).unlink()
    report = _verify(out, NEW, (OLD,))
    # not silent: every release is recorded again, as after a crash (exit 3)
    assert report.ok and report.recovered_now == 3
    assert len(report.recoveries) == 3
    for name, recovery in zip(("r0", "r1", "r2"), report.recoveries, strict=True):
        assert f"release ds/{name} had no entry after a crash" in recovery
        assert recovery.endswith("(intact)")
    # with the key used before the rotation out of reach, r0 and r1 are NOT intact
    again = tmp_path / "again"
    shutil.copytree(base, again)
    (again / AUDIT_LOG_NAME).unlink()
    (again / HEAD_NAME).unlink()
    assert not _verify(again).ok


def test_a_rollback_to_a_saved_copy_shows_as_a_recovery_only(
    base: Path, tmp_path: Path
) -> None:
    """The documented limit: log and head restored together from an earlier copy."""
    saved = tmp_path / "saved"
    out = tmp_path / "out"
    shutil.copytree(base, out)
    _publish(out, "r3", "x,y\n7,8\n", NEW)
    shutil.copytree(out, saved)
    _publish(out, "r4", "x,y\n9,0\n", NEW)
    for name in (AUDIT_LOG_NAME, HEAD_NAME):
        shutil.copy(saved / name, out / name)
    report = _verify(out)
    # not silent while the release exists: recorded again, as after a crash
    assert report.ok and report.recovered_now == 1
    assert "release ds/r4 had no entry after a crash" in report.recoveries[-1]


# -- a property: any change to what the log or head says is found -----------------
@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_any_byte_changed_in_the_log_or_head_is_detected(
    base: Path, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from([AUDIT_LOG_NAME, HEAD_NAME]))
    original = (base / name).read_bytes()
    position = data.draw(st.integers(0, len(original) - 1))
    byte = data.draw(st.integers(0, 255).filter(lambda b: b != original[position]))
    changed = original[:position] + bytes([byte]) + original[position + 1 :]

    def parsed(raw: bytes) -> Any:
        try:
            lines = raw.decode("utf-8").splitlines()
            return [json.loads(line) for line in lines if line.strip()]
        except (UnicodeDecodeError, ValueError):
            return None

    # A change that leaves the same JSON (a space for a tab) says nothing new.
    if parsed(changed) == parsed(original) and raw_torn(changed) == raw_torn(original):
        return
    out = tmp_path_factory.mktemp("flip") / "out"
    shutil.copytree(base, out)
    (out / name).write_bytes(changed)
    report = _verify(out)
    assert not report.ok, (name, position, byte)


def raw_torn(raw: bytes) -> bytes:
    return raw[raw.rfind(b"\n") + 1 :]


# -- keys at write time --------------------------------------------------------------
def test_writers_refuse_a_wrong_or_missing_key(base: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(base, out)
    before = (out / AUDIT_LOG_NAME).read_bytes()
    with pytest.raises(KeyConfigError, match=f"signed with key id {key_id(NEW)}"):
        append_entry(out / AUDIT_LOG_NAME, {"event": "publish"}, key=OLD)
    with pytest.raises(MissingKeyError, match="PPDM_NO_SUCH_KEY"):
        append_entry(
            out / AUDIT_LOG_NAME, {"event": "publish"}, key="env:PPDM_NO_SUCH_KEY"
        )
    with pytest.raises(MissingKeyError, match="unkeyed on purpose"):
        append_entry(out / AUDIT_LOG_NAME, {"event": "publish"}, key=None)
    # a publication with the wrong key is taken back whole
    with pytest.raises(KeyConfigError):
        _publish(out, "r9", "x,y\n1,1\n", OLD)
    assert not (out / "ds" / "r9").exists()
    assert not list((out / "ds").glob(".staging-*"))
    assert (out / AUDIT_LOG_NAME).read_bytes() == before
    assert _verify(out).ok


def test_a_published_release_is_never_overwritten(base: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(base, out)
    before = (out / "ds" / "r1" / "data" / "release.csv").read_bytes()
    with pytest.raises(ArtifactIntegrityError, match="never overwritten"):
        _publish(out, "r1", "x,y\nother,data\n", NEW)
    assert (out / "ds" / "r1" / "data" / "release.csv").read_bytes() == before
    assert _verify(out).ok


def test_an_unkeyed_log_is_reported_unkeyed_then_keyed_by_its_next_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    monkeypatch.delenv("PPDM_NO_SUCH_KEY", raising=False)
    with pytest.warns(PPDMWarning, match="without a MAC"):
        _publish(out, "u0", "x,y\n1,2\n", "env:PPDM_NO_SUCH_KEY")
    append_entry(out / AUDIT_LOG_NAME, {"event": "note"}, key=None)  # no warning
    entries = _lines(out)
    assert [e["mac"] for e in entries] == [None, None]
    manifest = json.loads((out / "ds" / "u0" / "manifest.json").read_text())
    assert manifest["audit_seal"] is None
    report = _verify(out)
    assert not report.ok and report.unkeyed
    assert report.broken.startswith("the log is UNKEYED: its 2 entries carry no MAC")

    _publish(out, "k0", "x,y\n3,4\n", NEW)  # keys the log from here on
    assert _verify(out).ok
    # the unkeyed entries before are protected by the keyed one's MAC
    edited = tmp_path / "edited"
    shutil.copytree(out, edited)
    changed = _lines(edited)
    changed[0]["release_id"] = "forged"
    _rechain(edited, changed)
    assert not _verify(edited).ok
    # and the log no longer takes unkeyed entries
    with pytest.raises(MissingKeyError, match=f"signed \\(key id {key_id(NEW)}\\)"):
        append_entry(out / AUDIT_LOG_NAME, {"event": "note"}, key=None)


# -- rotation ----------------------------------------------------------------------
def test_rotation_refuses_the_wrong_old_key_the_same_key_and_an_unkeyed_log(
    base: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    shutil.copytree(base, out)
    with pytest.raises(KeyConfigError, match="the wrong key, or the log's key was"):
        rotate_key(out, OLD, ATTACKER)  # OLD was rotated out already
    with pytest.raises(KeyConfigError, match="the new key is the old one"):
        rotate_key(out, NEW, NEW)
    with pytest.raises(MissingKeyError, match="PPDM_NO_SUCH_KEY"):
        rotate_key(out, "env:PPDM_NO_SUCH_KEY", NEW)
    unkeyed = tmp_path / "unkeyed"
    append_entry(unkeyed / AUDIT_LOG_NAME, {"event": "note"}, key=None)
    with pytest.raises(KeyConfigError, match="not keyed yet"):
        rotate_key(unkeyed, OLD, NEW)
    assert _verify(out).ok


def test_a_second_rotation_verifies_with_the_newest_key(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    shutil.copytree(base, out)
    third = b"third-audit-key-0123456789abcd"
    monkeypatch.setenv("PPDM_AUDIT_KEY_PREVIOUS", NEW.decode())
    monkeypatch.setenv("PPDM_AUDIT_KEY", third.decode())
    entry = rotate_key(out, "env:PPDM_AUDIT_KEY_PREVIOUS", "env:PPDM_AUDIT_KEY")
    assert entry["key_id"] == key_id(NEW) and entry["new_key_id"] == key_id(third)
    assert verify_audit_log(out).ok  # environment: the new key and the one before
    assert _verify(out, third).ok  # the newest key alone
    assert not _verify(out, NEW).ok
    _publish(out, "r5", "x,y\n0,0\n", third)
    assert _verify(out, third).ok
    assert _lines(out)[-1]["key_id"] == key_id(third)


def test_the_pre_flight_check_finds_what_a_writer_would_refuse(
    base: Path, tmp_path: Path
) -> None:
    before = (base / AUDIT_LOG_NAME).read_bytes()
    assert audit.check_key(base, NEW).id == key_id(NEW)
    with pytest.raises(KeyConfigError, match=f"signed with key id {key_id(NEW)}"):
        audit.check_key(base, OLD)
    with pytest.raises(MissingKeyError, match="PPDM_NO_SUCH_KEY"):
        audit.check_key(base, "env:PPDM_NO_SUCH_KEY")
    assert (base / AUDIT_LOG_NAME).read_bytes() == before  # nothing written
    # a new output directory takes any key, or none
    assert audit.check_key(tmp_path / "new", "env:PPDM_NO_SUCH_KEY").key is None
    assert not (tmp_path / "new").exists()
