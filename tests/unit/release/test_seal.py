"""The seal check of one release: the manifest is the one its audit entry binds.

A consistent tamper (a row edited, its sha256 fixed in manifest.json, k
lowered there) matches the manifest; only the seal and the entry, under the
audit key, tell it from the release as published.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from ppdm.privacy import Requirement
from ppdm.release.audit import rotate_key, seal_manifest
from ppdm.release.publish import publish_directory
from ppdm.release.seal import check_seal
from ppdm.verify.release_check import check_release

KEY = b"seal-test-audit-key-0123456789ab"
NEXT = b"seal-test-next-key-0123456789abc"
ATTACKER = b"attacker-key-0123456789abcdef!!"
REQUIREMENT = Requirement.of(("age",), k=2)
ROWS = "age,income\n[20-29],a\n[20-29],b\n[30-39],a\n[30-39],b\n"


def _publish(out: Path, name: str, key: bytes | None) -> Path:
    source = out.parent / f"{name}.csv"
    source.write_text(ROWS)
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    manifest = {
        "dataset": "ds",
        "release_id": name,
        "algorithm": "hand",
        "requirement": REQUIREMENT.to_dict(),
        "files": [{"path": "data/release.csv", "sha256": digest, "rows": 4}],
        "artifacts": {},
    }
    entry = {
        "dataset": "ds",
        "release_id": name,
        "algorithm": "hand",
        "requirement": REQUIREMENT.to_dict()["models"],
    }
    return publish_directory(
        out,
        out / "ds" / name,
        {"data/release.csv": source},
        {"data/release.csv": digest},
        manifest,
        entry,
        audit_key=key,
    )


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sealed")
    return _publish(root / "out", "r1", KEY)


def _copy(release_dir: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(release_dir.parent.parent, out)
    return out / "ds" / release_dir.name


def _tamper(release_dir: Path) -> None:
    """Edit a row, fix its sha256 in manifest.json, set k to 1 there."""
    data = release_dir / "data" / "release.csv"
    data.write_text(ROWS.replace("[30-39],b", "[30-39],z"))
    manifest = json.loads((release_dir / "manifest.json").read_text())
    manifest["files"][0]["sha256"] = hashlib.sha256(data.read_bytes()).hexdigest()
    manifest["requirement"]["models"][0]["k"] = 1
    (release_dir / "manifest.json").write_text(json.dumps(manifest))


def test_a_release_as_published_passes(published):
    seal = check_seal(published, KEY)
    assert seal.passed and not seal.problems
    assert seal.note.startswith("OK: manifest.json sealed with key id")
    assert "audit entry seq=0" in seal.note
    outcome = check_release(published, key=KEY)
    assert outcome.passed and outcome.seal_checked and outcome.lines[-1] == "PASS"


def test_a_consistent_tamper_fails_naming_what_changed(published, tmp_path):
    release_dir = _copy(published, tmp_path)
    _tamper(release_dir)
    seal = check_seal(release_dir, KEY)
    assert not seal.passed
    text = "\n".join(seal.problems)
    assert "manifest.json does not match its audit seal" in text
    assert (
        "manifest.json requires 1-anonymity; audit entry seq=0 records 2-anonymity"
        in text
    )
    assert "data/release.csv changed since it was published" in text
    assert "manifest.json's sha256 of data/release.csv was rewritten" in text
    outcome = check_release(release_dir, key=KEY)
    assert not outcome.passed and outcome.lines[-1] == "FAIL"
    assert outcome.problems[0].startswith("manifest.json does not match its audit seal")
    # The same tamper without a key passes every other check: the outcome
    # says the seal was not checked rather than vouch for it.
    unsealed = check_release(release_dir)
    assert unsealed.passed and not unsealed.seal_checked
    assert unsealed.lines[-1] == "PASS, but the seal was NOT CHECKED"
    assert any(
        line.startswith("seal NOT CHECKED: no audit key") for line in unsealed.lines
    )


def test_a_manifest_resealed_without_the_key_is_named(published, tmp_path):
    release_dir = _copy(published, tmp_path)
    _tamper(release_dir)
    path = release_dir / "manifest.json"
    resealed = seal_manifest(json.loads(path.read_text()), ATTACKER)
    path.write_text(json.dumps(resealed))
    problems = check_seal(release_dir, KEY).problems
    assert "which is not at hand" in problems[0]
    assert any("not the one audit entry seq=0 records" in p for p in problems)


def test_no_key_means_not_checked(published, monkeypatch):
    monkeypatch.delenv("PPDM_AUDIT_KEY", raising=False)
    for key in (None, "env:PPDM_AUDIT_KEY"):
        seal = check_seal(published, key)
        assert not seal.checked and not seal.passed and not seal.problems
        assert seal.note.startswith("NOT CHECKED: no audit key at hand")


def test_a_release_away_from_its_log_or_unsealed_fails(published, tmp_path):
    moved = tmp_path / "elsewhere" / "ds" / published.name
    shutil.copytree(published, moved)
    assert check_seal(moved, KEY).problems[0].startswith("no audit log")
    unkeyed = _publish(tmp_path / "plain", "r2", None)
    problems = check_seal(unkeyed, KEY).problems
    assert problems[0].startswith("manifest.json carries no audit seal")
    assert "audit entry seq=0 carries no MAC" in problems[1]


def test_a_release_sealed_before_a_rotation_passes_with_the_previous_key(tmp_path):
    out = tmp_path / "out"
    release_dir = _publish(out, "r1", KEY)
    rotate_key(out, KEY, NEXT)
    assert check_seal(release_dir, NEXT, previous_keys=(KEY,)).passed
    alone = check_seal(release_dir, NEXT, previous_keys=())
    assert "which is not at hand" in alone.problems[0]
