from __future__ import annotations

import json

from ppdm.artifacts import sha256_file
from ppdm.audit import GENESIS_HASH, append_entry, read_entries, verify_audit_log


def _log_with_two_releases(out):
    for name in ("a", "b"):
        data = out / name / "data.csv"
        data.parent.mkdir(parents=True)
        data.write_text(f"x\n{name}\n")
        append_entry(
            out / "audit.jsonl",
            {
                "event": "publish",
                "release_id": name,
                "files": [{"path": f"{name}/data.csv", "sha256": sha256_file(data)}],
            },
        )
    return out / "audit.jsonl"


def test_chain_links_every_entry(tmp_path):
    log = _log_with_two_releases(tmp_path)
    first, second = read_entries(log)
    assert first["prev_hash"] == GENESIS_HASH
    assert second["prev_hash"] == first["entry_hash"]
    report = verify_audit_log(tmp_path)
    assert report.ok and report.entries == 2 and report.files_checked == 2


def test_edited_entry_is_named(tmp_path):
    log = _log_with_two_releases(tmp_path)
    lines = log.read_text().splitlines()
    entry = json.loads(lines[0])
    entry["release_id"] = "forged"
    lines[0] = json.dumps(entry, sort_keys=True)
    log.write_text("\n".join(lines) + "\n")
    report = verify_audit_log(tmp_path)
    assert not report.ok
    assert report.broken.startswith("entry seq=0 (line 1): entry_hash")


def test_deleted_entry_breaks_the_chain(tmp_path):
    log = _log_with_two_releases(tmp_path)
    log.write_text(log.read_text().splitlines()[1] + "\n")
    report = verify_audit_log(tmp_path)
    assert not report.ok and "line 1" in report.broken


def test_changed_release_file_is_named(tmp_path):
    _log_with_two_releases(tmp_path)
    (tmp_path / "b" / "data.csv").write_text("x\nB\n")
    report = verify_audit_log(tmp_path)
    assert (
        report.broken == "entry seq=1 (line 2): file b/data.csv changed (sha256 "
        "differs from record)"
    )


def test_missing_log_is_reported(tmp_path):
    assert not verify_audit_log(tmp_path).ok
