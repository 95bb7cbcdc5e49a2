"""Verifying the audit log of a read-only output directory (an archive of releases).

Opening the log takes a lock file and may record what a crash left; on a
read-only file system neither is possible. The log is then checked as it is:
an intact one verifies, and a torn tail or a release without entry, which
cannot be recorded there, is reported by name instead of raising.
"""

from __future__ import annotations

import errno
import json
import os
from contextlib import contextmanager
from pathlib import Path

import pytest

from ppdm.release import audit, audit_log
from ppdm.release.artifacts import sha256_file
from ppdm.release.audit import append_entry, verify_audit_log


def _release(out: Path, name: str) -> Path:
    release = out / "ds" / name
    (release / "data").mkdir(parents=True)
    data = release / "data" / "release.csv"
    data.write_text(f"x\n{name}\n")
    files = [{"path": "data/release.csv", "sha256": sha256_file(data)}]
    sealed = audit.seal_manifest({"files": files}, audit.audit_key().key)
    (release / "manifest.json").write_text(json.dumps(sealed))
    return release


def _publish(out: Path, name: str) -> None:
    release = _release(out, name)
    append_entry(
        out / "audit.jsonl",
        {
            "event": "publish",
            "release_dir": f"ds/{name}",
            "files": [
                {
                    "path": f"ds/{name}/{rel}",
                    "sha256": sha256_file(release / rel),
                }
                for rel in ("data/release.csv", "manifest.json")
            ],
        },
    )


@pytest.fixture
def read_only(monkeypatch: pytest.MonkeyPatch):
    """The lock file cannot be opened for writing, as on a read-only mount."""

    def make(code: int) -> None:
        @contextmanager
        def refused(log_path: Path):
            lock = log_path.with_name(log_path.name + ".lock")
            raise OSError(code, os.strerror(code), str(lock))
            yield  # pragma: no cover - never reached

        monkeypatch.setattr(audit_log, "_locked", refused)

    return make


def test_an_intact_read_only_log_verifies(tmp_path, read_only):
    _publish(tmp_path, "a")
    _publish(tmp_path, "b")
    before = (tmp_path / "audit.jsonl").read_bytes()
    read_only(errno.EROFS)
    report = verify_audit_log(tmp_path)
    assert report.ok and report.entries == 2 and report.files_checked == 4
    assert report.recovered_now == 0
    assert (tmp_path / "audit.jsonl").read_bytes() == before


def test_a_changed_file_is_still_found_read_only(tmp_path, read_only):
    _publish(tmp_path, "a")
    (tmp_path / "ds" / "a" / "data" / "release.csv").write_text("x\nforged\n")
    read_only(errno.EACCES)
    report = verify_audit_log(tmp_path)
    assert report.broken == (
        "entry seq=0 (line 1): file ds/a/data/release.csv changed (sha256 "
        "differs from record)"
    )


def test_what_a_crash_left_is_named_when_it_cannot_be_recorded(tmp_path, read_only):
    _publish(tmp_path, "a")
    _release(tmp_path, "orphan")  # renamed into place, then the crash
    log = tmp_path / "audit.jsonl"
    with log.open("ab") as handle:
        handle.write(b'{"event": "publ')  # and a torn last line
    before = log.read_bytes()
    read_only(errno.EROFS)
    report = verify_audit_log(tmp_path)
    lock = tmp_path / "audit.jsonl.lock"
    assert report.problems == [
        f"{log} ends in a torn line (15 bytes) that cannot be recorded "
        f"(read-only file system: {lock})",
        "release ds/orphan has no entry and cannot be recorded "
        f"(read-only file system: {lock})",
    ]
    assert not report.ok and report.entries == 1 and report.recovered_now == 0
    assert log.read_bytes() == before  # nothing was written


def test_a_release_without_any_log_is_named_read_only(tmp_path, read_only):
    _release(tmp_path, "first")  # a crash before the log's first line
    read_only(errno.EROFS)
    report = verify_audit_log(tmp_path)
    assert report.problems == [
        "release ds/first has no entry and cannot be recorded (read-only file "
        f"system: {tmp_path / 'audit.jsonl.lock'})"
    ]
    assert not (tmp_path / "audit.jsonl").exists()


def test_a_writable_directory_records_the_release_without_any_log(tmp_path):
    _release(tmp_path, "first")
    report = verify_audit_log(tmp_path)
    assert report.ok and report.recovered_now == 1
    assert "release ds/first had no entry" in report.recoveries[0]


def test_other_errors_are_not_taken_for_read_only(tmp_path, read_only):
    _publish(tmp_path, "a")
    read_only(errno.EIO)
    with pytest.raises(OSError) as raised:
        verify_audit_log(tmp_path)
    assert raised.value.errno == errno.EIO


def test_an_edited_line_is_one_clear_error_for_writers(tmp_path):
    from ppdm.exceptions import AnonymizationError, AuditLogError
    from ppdm.release.audit import append_entry

    log = tmp_path / "audit.jsonl"
    append_entry(log, {"event": "publish", "release_id": "a"})
    log.write_text(log.read_text().replace('"publish"', '"publish'))
    with pytest.raises(AuditLogError) as err:
        append_entry(log, {"event": "publish", "release_id": "b"})
    assert isinstance(err.value, AnonymizationError)  # the CLI's one-line errors
    assert "line 1 is not valid JSON" in str(err.value)
    assert "ppdm audit verify --out" in str(err.value)
