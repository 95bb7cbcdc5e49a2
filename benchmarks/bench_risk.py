"""Benchmark of the journalist and marketer risk on an owner's kind of release.

A hospital's table holds birth dates in a national format, zip codes with
leading zeros and a length of stay. The release is a local recoding as the
partition algorithms write it: classes of ``k`` rows in birth-date order,
each released as the whole months its dates span (``[1961-03-01,
1962-01-31]``), the zips' common prefix (``010**``) and the stays' range. The
risk counts, for every released class, the population rows its cells cover
(ranges overlap, so a row may fall in several classes).

Run from the repository root:

    uv run python benchmarks/bench_risk.py [--rows 50000,500000] [--k 5]

Each size runs in a fresh process, so ``ru_maxrss`` is that size's own peak.
Writes benchmarks/results/risk.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

RESULTS = Path(__file__).parent / "results" / "risk.md"
QIS = ["birth_date", "zip", "length_of_stay"]


def owner_release(
    rows: int, k: int, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(population, released) as described in the module docstring."""
    rng = np.random.default_rng(seed)
    days = rng.integers(0, 365 * 80, rows)
    birth = pd.Timestamp("1930-01-01") + pd.to_timedelta(days, unit="D")
    population = pd.DataFrame(
        {
            "birth_date": birth.strftime("%d.%m.%Y"),
            "zip": [f"{z:05d}" for z in rng.integers(1000, 99999, rows)],
            "length_of_stay": rng.integers(0, 60, rows),
        }
    )
    order = np.argsort(days, kind="stable")
    released = population.iloc[order].reset_index(drop=True)
    group = np.arange(rows) // k
    when = pd.to_datetime(released["birth_date"], format="%d.%m.%Y")
    first = when.groupby(group).transform("min").dt.strftime("%Y-%m-01")
    last = when.groupby(group).transform("max") + pd.offsets.MonthEnd(0)
    zips = released["zip"]
    low = zips.groupby(group).transform("min").to_numpy()
    high = zips.groupby(group).transform("max").to_numpy()
    common = [next((i for i in range(5) if a[i] != b[i]), 5) for a, b in zip(low, high)]
    stay = released["length_of_stay"]
    out = pd.DataFrame(
        {
            "birth_date": "[" + first + ", " + last.dt.strftime("%Y-%m-%d") + "]",
            "zip": [a[:c] + "*" * (5 - c) for a, c in zip(low, common)],
            "length_of_stay": "["
            + stay.groupby(group).transform("min").astype(str)
            + ", "
            + stay.groupby(group).transform("max").astype(str)
            + "]",
        }
    )
    return population, out


def measure(rows: int, k: int) -> dict:
    from ppdm.privacy.risk import reidentification_risk

    population, released = owner_release(rows, k)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    risk = reidentification_risk(released, QIS, population=population)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "rows": rows,
        "classes": risk.n_classes,
        "seconds": seconds,
        "peak_mb": peak / 1024,
        "growth_mb": (peak - before) / 1024,
        "not_in_population": risk.classes_not_in_population,
        "journalist_max": risk.journalist_max,
        "marketer": risk.marketer,
        "note": risk.population_note,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default="50000,500000")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.k)))
        return
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    lines = []
    for rows in (int(r) for r in args.rows.split(",")):
        done = subprocess.run(
            [sys.executable, __file__, "--one", str(rows), "--k", str(args.k)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        m = json.loads(done.stdout.strip().splitlines()[-1])
        print(m, flush=True)
        journalist = (
            "-" if m["journalist_max"] is None else f"{m['journalist_max']:.3f}"
        )
        marketer = "-" if m["marketer"] is None else f"{m['marketer']:.4f}"
        missing = "-" if m["not_in_population"] is None else m["not_in_population"]
        lines.append(
            f"| {m['rows']:,} | {m['classes']:,} | {m['seconds']:.2f} | "
            f"{m['peak_mb']:,.0f} / {m['growth_mb']:,.0f} | {missing} | "
            f"{journalist} | {marketer} |"
        )
    head = [
        "# Journalist and marketer risk of an owner's release",
        "",
        f"Command: `uv run python benchmarks/bench_risk.py --rows {args.rows} "
        f"--k {args.k}`",
        f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; machine: {platform.machine()}, "
        f"Python {platform.python_version()}; load average at start: {load} "
        "(shared machine).",
        "",
        "Release: birth dates (DD.MM.YYYY in the population) as month ranges, zips "
        "masked to their common prefix, stays as ranges; classes of k rows in "
        "birth-date order (a local recoding: ranges overlap).",
        "",
        "| rows | classes | seconds | peak RSS / growth (MB) | classes not found "
        "in population | journalist max | marketer |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    RESULTS.write_text("\n".join(head + lines) + "\n" + _kept_notes())


def _kept_notes() -> str:
    """The hand-written section below the table, kept when the script rewrites it."""
    if not RESULTS.exists():
        return ""
    text = RESULTS.read_text()
    at = text.find("\n## ")
    return "" if at < 0 else text[at:]


if __name__ == "__main__":
    main()
