"""What code made a release: package version, git commit, library versions."""

from __future__ import annotations

import functools
import hashlib
import platform
import subprocess
from importlib import metadata
from pathlib import Path

import ppdm

__all__ = ["code_version", "library_versions"]

_LIBRARIES = (
    "numpy", "pandas", "scikit-learn", "scipy", "pandera", "great-expectations",
    "prefect", "pyarrow", "pydantic",
)  # fmt: skip


@functools.cache
def source_fingerprint() -> str:
    """sha256 over the core library's Python sources (paths and bytes).

    A cached step result is valid only for the code that made it: a new
    version of a core function (a discretizer, an algorithm) must not be
    served a result computed by the old one, and a version string or a git
    commit does not change while a checkout is being edited.
    """
    root = Path(ppdm.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix().encode()
        data = path.read_bytes()
        digest.update(len(name).to_bytes(8, "big") + name)
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def code_version() -> str:
    """``<version>`` plus ``+g<commit>`` (and ``.dirty``) when run from a git checkout."""
    root = Path(ppdm.__file__).resolve().parents[2]

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()

    try:
        commit = git("rev-parse", "--short=12", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return ppdm.__version__
    return f"{ppdm.__version__}+g{commit}" + (".dirty" if dirty else "")


def library_versions() -> dict[str, str]:
    """Installed versions of the libraries a release depends on."""
    versions = {"python": platform.python_version()}
    for name in _LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions
