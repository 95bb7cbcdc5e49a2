"""The project's code passes ruff's lint and format checks (settings in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CODE = ["src", "tasks", "flows", "tests", "benchmarks", "deployments", "hatch_build.py"]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, *CODE],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )


def test_ruff_lint():
    result = _ruff("check", "--output-format", "concise")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format():
    result = _ruff("format", "--check")
    assert result.returncode == 0, result.stdout + result.stderr
