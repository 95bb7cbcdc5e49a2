from __future__ import annotations

import json

from ppdm.release.artifacts import sha256_file
from ppdm.release.audit import (
    GENESIS_HASH,
    HEAD_NAME,
    append_entry,
    audit_key,
    read_entries,
    seal_manifest,
    verify_audit_log,
)


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


def _publish_like(out, name):
    """A release directory as publish writes it: data + manifest."""
    release = out / "ds" / name
    (release / "data").mkdir(parents=True)
    data = release / "data" / "release.csv"
    data.write_text(f"x\n{name}\n")
    manifest = {
        "dataset": "ds",
        "release_id": name,
        "files": [{"path": "data/release.csv", "sha256": sha256_file(data)}],
    }
    # sealed as a publisher holding the audit key seals it
    sealed = seal_manifest(manifest, audit_key().key)
    (release / "manifest.json").write_text(json.dumps(sealed))
    return release


def test_every_torn_tail_length_is_set_aside_and_recorded(tmp_path):
    log = _log_with_two_releases(tmp_path)
    intact = log.read_bytes()
    entry = {
        "event": "publish",
        "release_id": "c",
        "seq": 2,
        "prev_hash": read_entries(log)[-1]["entry_hash"],
    }
    whole = (json.dumps(entry, sort_keys=True) + "\n").encode()
    for cut in range(1, len(whole)):  # 1 byte .. a whole line but one byte
        out = tmp_path / f"cut{cut}"
        out.mkdir()
        for name in ("a", "b"):
            (out / name).mkdir()
            (out / name / "data.csv").write_bytes(
                (tmp_path / name / "data.csv").read_bytes()
            )
        (out / "audit.jsonl").write_bytes(intact + whole[:cut])
        (out / HEAD_NAME).write_bytes((tmp_path / HEAD_NAME).read_bytes())
        report = verify_audit_log(out)
        assert report.ok, (cut, report.problems)
        assert report.recovered_now == 1 and len(report.recoveries) == 1
        assert f"({cut} bytes" in report.recoveries[0]
        side = next(out.glob("audit.jsonl.torn-*"))
        assert side.read_bytes() == whole[:cut]  # never lost
        # the next writer appends after the recovered entry, chain intact
        append_entry(out / "audit.jsonl", {"event": "publish", "release_id": "d"})
        entries = read_entries(out / "audit.jsonl")
        assert [e["event"] for e in entries] == [
            "publish",
            "publish",
            "recovered",
            "publish",
        ]
        again = verify_audit_log(out)
        assert again.ok and again.recovered_now == 0 and len(again.recoveries) == 1


def test_a_release_without_entry_is_recorded_as_recovered(tmp_path):
    _log_with_two_releases(tmp_path)
    _publish_like(tmp_path, "orphan")
    report = verify_audit_log(tmp_path)
    assert report.ok and report.recovered_now == 1
    assert "release ds/orphan had no entry" in report.recoveries[0]
    recovered = read_entries(tmp_path / "audit.jsonl")[-1]
    assert recovered["event"] == "recovered" and recovered["intact"] is True
    assert {f["path"] for f in recovered["files"]} == {
        "ds/orphan/data/release.csv",
        "ds/orphan/manifest.json",
    }
    # recorded once: a second opening finds nothing new
    assert verify_audit_log(tmp_path).recovered_now == 0


def test_a_changed_unlogged_release_is_recorded_not_intact_and_fails(tmp_path):
    _log_with_two_releases(tmp_path)
    release = _publish_like(tmp_path, "orphan")
    (release / "data" / "release.csv").write_text("x\nforged\n")
    report = verify_audit_log(tmp_path)
    assert not report.ok
    assert "differs from its manifest" in report.recoveries[0]
    assert report.broken.startswith("entry seq=2 (line 3): release ds/orphan was ")
    assert "NOT intact: ds/orphan/data/release.csv differs" in report.broken
    assert (
        "entry seq=2 (line 3): file ds/orphan/data/release.csv changed"
        in (report.problems[1])
    )


def test_the_release_being_recorded_is_not_recovered_twice(tmp_path):
    _publish_like(tmp_path, "new")
    append_entry(
        tmp_path / "audit.jsonl",
        {"event": "publish", "release_dir": "ds/new", "files": []},
    )
    assert [e["event"] for e in read_entries(tmp_path / "audit.jsonl")] == ["publish"]


def test_an_edited_complete_line_is_tampering_not_a_torn_tail(tmp_path):
    log = _log_with_two_releases(tmp_path)
    lines = log.read_bytes().split(b"\n")
    lines[1] = lines[1][:-5]  # a complete (newline-ended) line cut short
    log.write_bytes(b"\n".join(lines))
    report = verify_audit_log(tmp_path)
    assert not report.ok and "line 2 is not valid JSON" in report.broken
    assert not list(tmp_path.glob("audit.jsonl.torn-*"))


def test_an_entry_with_a_non_finite_number_verifies_as_written(tmp_path):
    """The hash is taken over what the line says (null), not over NaN."""
    append_entry(tmp_path / "audit.jsonl", {"event": "note", "x": float("nan")})
    (entry,) = read_entries(tmp_path / "audit.jsonl")
    assert entry["x"] is None
    assert '"x": null' in (tmp_path / "audit.jsonl").read_text()
    assert verify_audit_log(tmp_path).ok
