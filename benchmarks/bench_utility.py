"""Discretization and utility-report benchmark (ppdm.discretize, ppdm.utility).

Times, as medians of ``--repeats`` runs on Adult (48,842 rows) and on Adult
replicated 10 times (488,420 rows):

- MDL (Fayyad-Irani) and equal-frequency cut points of the 6 numeric columns;
- the information-loss bundle (NCP, DM, CM, suppressed cells) of a release
  whose numeric quasi-identifiers are written as ranges;
- the featurizer on that release;
- one hold-out evaluation (3 models trained twice) on Adult.

Run from the repository root::

    uv run python benchmarks/bench_utility.py  # -> benchmarks/results/utility.md
    uv run python benchmarks/bench_utility.py --quick  # Adult only, 3 repeats
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from ppdm import datasets
from ppdm.datasets import ADULT_NUMERIC
from ppdm.discretize import apply_cut_points, discretize
from ppdm.model import AnonymizationSpec
from ppdm.utility.classification import holdout_utility
from ppdm.utility.features import CellFeaturizer
from ppdm.utility.loss import information_loss

RESULTS = Path(__file__).parent / "results" / "utility.md"
QI = ("age", "education-num", "hours-per-week", "workclass", "marital-status", "sex")


def _median_seconds(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _as_ranges(table: pd.DataFrame) -> pd.DataFrame:
    """A release-like table: numeric QIs as 10-wide ranges, sex suppressed."""
    out = table.copy()
    for name in ("age", "education-num", "hours-per-week"):
        low = out[name] // 10 * 10
        out[name] = "[" + low.astype(str) + ", " + (low + 9).astype(str) + "]"
    out["sex"] = "*"
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()

    adult = datasets.load("adult")
    sizes = {"adult": adult}
    if not args.quick:
        sizes["adult x10"] = pd.concat([adult] * 10, ignore_index=True)
    spec = AnonymizationSpec.of(
        quasi_identifiers=QI, sensitive_attribute=None, target="income", k=1
    )
    rows = []
    for label, table in sizes.items():
        release = _as_ranges(table)
        featurizer = CellFeaturizer(exclude=["income"]).fit(table)
        mdl = discretize(table, ADULT_NUMERIC, "income")
        cases = {
            "MDL cut points, 6 numeric columns": lambda t=table: discretize(
                t, ADULT_NUMERIC, "income"
            ),
            "equal-frequency (10 bins), 6 numeric columns": lambda t=table: discretize(
                t, ADULT_NUMERIC, None, method="equal-frequency", n_bins=10
            ),
            "apply saved MDL cut points": lambda t=table, m=mdl: apply_cut_points(
                t, m.cut_points
            ),
            "information loss (NCP, DM, CM, suppressed)": lambda t=table, r=release: (
                information_loss(t, r, spec)
            ),
            "featurize the release": lambda r=release, f=featurizer: f.transform(r),
        }
        for name, fn in cases.items():
            rows.append((label, len(table), name, _median_seconds(fn, args.repeats)))
        rows.append(
            (
                label,
                len(table),
                "MDL cuts per column",
                str({c: len(v) for c, v in mdl.cut_points.items()}),
            )
        )
    holdout = _median_seconds(
        lambda: holdout_utility(adult, _as_ranges, target="income", seed=0),
        args.repeats,
    )
    rows.append(
        ("adult", len(adult), "hold-out utility, 3 models x 2 trainings", holdout)
    )

    load = Path("/proc/loadavg").read_text().split()[:3]
    lines = [
        "# Discretization and utility metrics",
        "",
        "Command: `uv run python benchmarks/bench_utility.py"
        + (" --quick" if args.quick else "")
        + "`",
        (
            f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}; load average at the end: "
            f"{' '.join(load)} (the machine is shared: timings are noisy)."
        ),
        (
            f"Date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}; "
            f"medians of {args.repeats} runs."
        ),
        "",
        "| data | rows | operation | median |",
        "|---|---:|---|---:|",
    ]
    for label, n, name, value in rows:
        shown = f"{value * 1000:.1f} ms" if isinstance(value, float) else value
        lines.append(f"| {label} | {n:,} | {name} | {shown} |")
    text = "\n".join(lines) + "\n"
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
