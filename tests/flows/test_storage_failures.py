"""`ppdm run` on a full disk and on a read-only output directory, as users run it.

The output directory is a small tmpfs (4 MB) mounted for the test, filled so
the publication runs out of space part-way through copying the release; the
artifact store (``work_dir``) lives elsewhere, so every step before publishing
works. Then the space is freed and the same command publishes; then the file
system is remounted read-only. Without the right to mount (not root), a full
disk is made by refusing writes under the output directory with ENOSPC
inside the ``ppdm`` process, and a read-only directory by ``chmod`` (0555
directories, 0444 files; a mode does not bind root, hence the remount).
The runs use the session's Prefect API (``PREFECT_API_URL``), as a data owner
with a server does: what is under test is the output directory, not the API.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from ppdm.release.audit import AUDIT_LOG_NAME, read_entries

# Long end-to-end checks (mounts a tmpfs and fills it, then runs ppdm three times):
# .ci/run runs them after the README's command.
pytestmark = pytest.mark.slow

PPDM = Path(sys.executable).with_name("ppdm")
DISK_BYTES = 4 * 1024 * 1024
#: Free space left on the full disk: more than the released table (about
#: 270 kB), less than the whole release (about 370 kB): the copy fails midway.
LEFT_FREE = 320 * 1024

#: Outside the mount's reach: ENOSPC for every copy into the output directory.
_INJECT_ENOSPC = textwrap.dedent(
    """
    import errno, os, shutil, sys
    out, real = sys.argv[1], shutil.copyfile
    def copyfile(src, dst, *args, **kwargs):
        if str(dst).startswith(out):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        return real(src, dst, *args, **kwargs)
    shutil.copyfile = copyfile
    from ppdm.flows.cli import main
    sys.exit(main(sys.argv[2:]))
    """
)


def _can_mount(where: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", str(where)],
        capture_output=True,
    )
    return done.returncode == 0


@dataclass
class Disk:
    """The output directory's file system, and how to fill, free and freeze it."""

    root: Path
    mounted: bool

    @property
    def out(self) -> Path:
        return self.root / "out"

    def fill(self) -> None:
        if not self.mounted:
            return  # ENOSPC is injected by the command instead
        stat = os.statvfs(self.root)
        filler = stat.f_bavail * stat.f_frsize - LEFT_FREE
        with open(self.root / "filler", "wb") as handle:
            handle.write(b"\0" * filler)

    def free(self) -> None:
        (self.root / "filler").unlink(missing_ok=True)

    def freeze(self) -> None:
        if self.mounted:
            subprocess.run(["mount", "-o", "remount,ro", str(self.root)], check=True)
        else:
            for path in [self.out, *self.out.rglob("*")]:
                path.chmod(0o555 if path.is_dir() else 0o444)

    def command(self, args: list[str], *, inject_enospc: bool = False) -> list[str]:
        if inject_enospc and not self.mounted:
            return [sys.executable, "-c", _INJECT_ENOSPC, str(self.out), *args]
        return [str(PPDM), *args]


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Disk]:
    root = tmp_path / "disk"
    root.mkdir()
    mounted = _can_mount(root)
    try:
        yield Disk(root, mounted)
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(root)], check=True)
        else:
            for path in [root, *root.rglob("*")]:
                path.chmod(0o755 if path.is_dir() else 0o644)


def _config(tmp_path: Path, out: Path) -> Path:
    config = yaml.safe_load(
        (Path(__file__).resolve().parents[2] / "configs" / "german.yaml").read_text()
    )
    config.update(output_dir=str(out), work_dir=str(tmp_path / "work"))
    path = tmp_path / "german.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _run(
    command: list[str], cwd: Path, api: str | None = None
) -> subprocess.CompletedProcess:
    env = {**os.environ, "PREFECT_API_URL": api} if api else None
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def _one_error_line(done: subprocess.CompletedProcess) -> str:
    """The command's own error line; stderr holds no traceback."""
    assert "Traceback" not in done.stderr, done.stderr
    (line,) = [ln for ln in done.stderr.splitlines() if ln.startswith("ppdm run:")]
    return line


def _visible(out: Path) -> set[str]:
    if not out.is_dir():
        return set()
    return {
        f"{d.name}/{r.name}"
        for d in out.iterdir()
        if d.is_dir() and not d.name.startswith(".")
        for r in d.iterdir()
        if r.is_dir() and not r.name.startswith(".")
    }


def test_full_disk_then_freed_then_read_only(
    disk: Disk, tmp_path: Path, prefect_api_url: str
) -> None:
    config = _config(tmp_path, disk.out)
    run = ["run", "--config", str(config)]

    # 1. The disk is full: exit 4, one line naming the path, ENOSPC and the fix.
    disk.fill()
    full = _run(disk.command(run, inject_enospc=True), tmp_path, prefect_api_url)
    assert full.returncode == 4, full.stderr
    line = _one_error_line(full)
    print(f"\nfull disk ({'tmpfs' if disk.mounted else 'injected'}): {line}")
    assert line.startswith(f"ppdm run: cannot publish into {disk.out}/"), line
    assert line.endswith(
        ": no space left on device (ENOSPC); free space on that file system or "
        "choose another directory"
    ), line
    assert _visible(disk.out) == set()  # nothing published, so nothing unlogged
    assert list(disk.out.glob("*/.staging-*")) == []  # the staging was removed
    if (disk.out / AUDIT_LOG_NAME).exists():
        assert read_entries(disk.out / AUDIT_LOG_NAME) == []

    # 2. Space freed: the same command publishes, the audit chain verifies.
    disk.free()
    freed = _run(disk.command(run), tmp_path, prefect_api_url)
    assert freed.returncode == 0, freed.stderr
    release_dir = Path(freed.stdout.strip().splitlines()[-1])
    assert release_dir.parent.parent == disk.out and release_dir.is_dir()
    assert _visible(disk.out) == {release_dir.relative_to(disk.out).as_posix()}
    audit = _run([str(PPDM), "audit", "verify", "--out", str(disk.out)], tmp_path)
    assert audit.returncode in (0, 3), audit.stdout + audit.stderr
    assert "audit log OK" in audit.stdout
    assert [e["event"] for e in read_entries(disk.out / AUDIT_LOG_NAME)] == ["publish"]

    # 3. Read-only: exit 4, one clear line; the release stays as it was recorded.
    disk.freeze()
    frozen = _run(disk.command(run), tmp_path, prefect_api_url)
    assert frozen.returncode == 4, frozen.stderr
    line = _one_error_line(frozen)
    print(f"read-only ({'ro remount' if disk.mounted else 'chmod'}): {line}")
    assert line.startswith(f"ppdm run: cannot publish into {disk.out}"), line
    meaning = (
        "read-only file system (EROFS); choose a directory on a writable file system"
        if disk.mounted
        else "permission denied (EACCES); make the directory writable"
    )
    assert meaning in line, line
    assert [e["event"] for e in read_entries(disk.out / AUDIT_LOG_NAME)] == ["publish"]
    assert _visible(disk.out) == {release_dir.relative_to(disk.out).as_posix()}
    # A read-only archive of releases still verifies (nothing to record there).
    audit = _run([str(PPDM), "audit", "verify", "--out", str(disk.out)], tmp_path)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert audit.stdout.startswith("audit log OK: 1 entries"), audit.stdout
