"""Wall clock of `ppdm run` with no arguments (embedded Adult, defaults), Prefect start included.

    uv run python benchmarks/bench_release.py [--repeats 3]

Each repeat is a fresh `ppdm` process on an ephemeral Prefect API writing to a fresh output
directory. The first repeat uses a fresh PREFECT_HOME (database migrations included); the others
reuse it, as a data owner's machine would. Results go to benchmarks/results/release.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 60.0


def run_once(home: Path, out: Path) -> float:
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "MPLBACKEND": "Agg",
    }
    env.pop("PREFECT_API_URL", None)
    ppdm = Path(sys.executable).with_name("ppdm")
    start = time.perf_counter()
    done = subprocess.run(
        [str(ppdm), "run", "--out", str(out)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"ppdm run failed ({done.returncode}):\n{done.stderr[-4000:]}")
    last = done.stdout.strip().splitlines()[-1]
    assert Path(last).is_dir(), f"last line is not the release directory: {last!r}"
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-release-"))
    try:
        times = [
            run_once(scratch / "prefect-home", scratch / f"out{i}")
            for i in range(args.repeats)
        ]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    warm = times[1:] or times
    lines = [
        "# `ppdm run` (no arguments) wall clock",
        "",
        f"Command: `uv run python benchmarks/bench_release.py --repeats {args.repeats}`  ",
        f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; machine: {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; "
        f"load average at the end: {os.getloadavg()[0]:.2f}",
        "",
        "| run | seconds |",
        "|---|---|",
        *(
            f"| {i + 1}{' (fresh PREFECT_HOME)' if i == 0 else ''} | {t:.1f} |"
            for i, t in enumerate(times)
        ),
        "",
        f"Median of all runs: **{statistics.median(times):.1f} s**; median with an existing "
        f"Prefect home: **{statistics.median(warm):.1f} s** (target <= {TARGET_SECONDS:.0f} s).",
        "",
    ]
    text = "\n".join(lines)
    (ROOT / "benchmarks" / "results" / "release.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
