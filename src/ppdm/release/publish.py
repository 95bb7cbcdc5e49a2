"""Publishing a release directory atomically, together with its audit entry.

The invariant (README, SECURITY.md): at every instant, every release
directory visible under the output directory has its audit entry, or the next
opening of the audit log records it (see :mod:`ppdm.release.audit`). Files are
staged under a hidden temporary name beside the final place, each synced to
disk, then renamed into place in one step while the audit log is locked, and
the entry is appended under the same lock. A failure after the rename that
is not a crash (syncing the directory, appending the entry: a full disk, a
read-only log) renames the release back out of sight before the error is
raised; a failed append leaves no entry (:mod:`ppdm.release.audit`).

The audit key (``PPDM_AUDIT_KEY`` by default) signs the entry and seals the
manifest (``audit_seal``); the entry records the manifest's sha256
(``manifest_sha256``), binding the two.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ppdm.exceptions import ArtifactIntegrityError
from ppdm.release import audit
from ppdm.release.artifacts import (
    readable_mode,
    sha256_file,
    storage_failures,
    write_atomic,
    write_json,
)
from ppdm.release.audit import fsync_directory

__all__ = ["publish_directory"]


_STAGING = ".staging-"


def _remove_abandoned_staging(parent: Path) -> None:
    """Remove staging directories whose publisher was killed.

    A staging directory's name carries its publisher's process id; one whose
    process is gone was abandoned mid-copy (it never became visible: nothing
    but its own publisher renames it) and is deleted. Another live publisher's
    is left alone.
    """
    for staging in parent.glob(f"{_STAGING}*"):
        try:
            pid = int(staging.name[len(_STAGING) :].split("-")[1])
        except (IndexError, ValueError):
            continue  # not one of ours
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(staging, ignore_errors=True)
        except PermissionError:
            continue  # alive, under another user


def _copy_durably(source: Path, target: Path) -> None:
    try:
        shutil.copyfile(source, target)
    except OSError as err:
        # Only writing fills a disk: name the copy, not the file read (the
        # error of a sendfile names both, that of a plain write neither).
        if err.errno in (errno.ENOSPC, errno.EDQUOT):
            raise OSError(err.errno, err.strerror, str(target)) from err
        raise
    fd = os.open(target, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish_directory(
    out_dir: Path,
    release_dir: Path,
    named: Mapping[str, Path],
    hashes: Mapping[str, str],
    manifest: Mapping[str, Any],
    entry: Mapping[str, Any],
    page: Callable[[int], bytes] | None = None,
    *,
    audit_key: audit.KeyArg = audit.DEFAULT_AUDIT_KEY,
    check: Callable[[audit.AuditLog, str], None] | None = None,
) -> Path:
    """Publish ``named`` files and ``manifest`` as ``release_dir``, with its audit entry.

    Parameters
    ----------
    out_dir : pathlib.Path
        The shared output directory (holds the audit log).
    release_dir : pathlib.Path
        ``<out_dir>/<dataset>/<release_id>``; never overwritten: an existing
        one must hold the same data files (then the run is a ``republish``).
    named : mapping of str to pathlib.Path
        Path inside the release -> file to copy there.
    hashes : mapping of str to str
        sha256 of each of ``named``.
    manifest : mapping
        The ``manifest.json`` content; its ``files`` list the data files.
    entry : mapping
        The audit entry's fields (the event, the release directory, the files
        with their hashes and the manifest's sha256 are added here).
    audit_key : str, bytes or None, default "env:PPDM_AUDIT_KEY"
        The key that signs the entry and seals the manifest: a key spec
        (naming no key: unkeyed, with a warning), the key, or None (unkeyed on
        purpose). A keyed log refuses an unkeyed entry or another key.
    page : callable, optional
        ``page(seq) -> bytes``: ``report.html``, rendered under the audit
        log's lock once the sequence number of this release's entry is known,
        so the page can name it. It is listed in the manifest's
        ``artifacts`` and the entry's files like every other file. A
        republication keeps the page first published.
    check : callable, optional
        ``check(log, release_dir relative to out_dir)``, run under the audit
        log's lock before anything is renamed into place: it raises to refuse
        the publication on what the log records (a dataset's privacy budget,
        :mod:`ppdm.release.budget`), with no other writer in between.

    Returns
    -------
    pathlib.Path
        ``release_dir``.

    Raises
    ------
    StorageError
        The file system refused (full disk, read-only, no permission).
    ArtifactIntegrityError
        ``release_dir`` exists with other data.
    AuditLogError
        The audit log was tampered with (its end does not match its head);
        nothing is published.
    KeyConfigError
        The log is keyed and the key is missing or not the log's; nothing is
        published.

    Notes
    -----
    Stage, then rename into place and log, both under the audit log's lock.

    Holding the lock across the rename and the append means no other process
    sees the release without its entry. A crash between the two is recorded
    as ``recovered`` by the next opening of the log; any other failure after
    the rename (the directory sync, the append: a full disk, a read-only log)
    renames the release back out of sight before the error is raised: the
    entry-less release never stays.
    """
    signer = audit.audit_key(audit_key)
    with storage_failures("publish into"):
        files = {f["path"]: f["sha256"] for f in manifest["files"]}
        hashes = dict(hashes)
        release_dir.parent.mkdir(parents=True, exist_ok=True)
        _remove_abandoned_staging(release_dir.parent)
        staging: Path | None = None
        if not release_dir.exists():
            staging = Path(
                tempfile.mkdtemp(
                    prefix=f"{_STAGING}{release_dir.name}-{os.getpid()}-",
                    dir=release_dir.parent,
                )
            )
        try:
            if staging is not None:
                staging.chmod(readable_mode(directory=True))  # mkdtemp makes it private
                for rel, path in named.items():
                    (staging / rel).parent.mkdir(parents=True, exist_ok=True)
                    _copy_durably(path, staging / rel)
                fsync_directory(staging / "data")
            with audit.opened(out_dir, key=signer) as log:
                if check is not None:
                    check(log, release_dir.relative_to(out_dir).as_posix())
                event = "publish"
                if staging is not None and not release_dir.exists():
                    # Under the lock: the next entry's number is this release's.
                    if page is not None:
                        write_atomic(staging / "report.html", page(len(log.entries)))
                        hashes["report.html"] = sha256_file(staging / "report.html")
                        manifest = {
                            **manifest,
                            "artifacts": {
                                **manifest.get("artifacts", {}),
                                "report.html": hashes["report.html"],
                            },
                        }
                    sealed = audit.seal_manifest(manifest, signer.key)
                    write_json(staging / "manifest.json", sealed)
                    fsync_directory(staging)
                if release_dir.exists():
                    existing = _existing_data_hashes(release_dir)
                    if existing != files:
                        raise ArtifactIntegrityError(
                            f"{release_dir} already exists with different content; "
                            "a published release is never overwritten"
                        )
                    event = "republish"  # same content: nothing to write, the run is recorded
                    if page is not None and (release_dir / "report.html").is_file():
                        hashes["report.html"] = sha256_file(release_dir / "report.html")
                else:
                    assert staging is not None
                    os.rename(staging, release_dir)
                try:
                    if event == "publish":
                        fsync_directory(release_dir.parent)
                    log.append(_entry(event, out_dir, release_dir, hashes, entry))
                except BaseException:
                    if event == "publish":  # not a crash: take the release back
                        os.rename(release_dir, staging)
                        fsync_directory(release_dir.parent)
                    raise
        finally:
            if staging is not None and staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        return release_dir


def _entry(
    event: str,
    out_dir: Path,
    release_dir: Path,
    hashes: Mapping[str, str],
    fields: Mapping[str, Any],
) -> dict[str, Any]:
    manifest_path = release_dir / "manifest.json"
    recorded = [
        {"path": str((release_dir / rel).relative_to(out_dir)), "sha256": h}
        for rel, h in sorted(hashes.items())
    ]
    recorded.append(
        {
            "path": str(manifest_path.relative_to(out_dir)),
            "sha256": sha256_file(manifest_path),
        }
    )
    return {
        "event": event,
        **fields,
        "release_dir": str(release_dir.relative_to(out_dir)),
        "files": recorded,
        "manifest_sha256": recorded[-1]["sha256"],
    }


def _existing_data_hashes(release_dir: Path) -> dict[str, str]:
    manifest = json.loads((release_dir / "manifest.json").read_text(encoding="utf-8"))
    return {f["path"]: f["sha256"] for f in manifest["files"]}
