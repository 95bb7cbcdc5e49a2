"""Benchmark of the ingest and validate steps on the full UCI Adult (48,842 rows).

Run from the repository root:

    uv run python benchmarks/bench_validation.py [--repeats 5]

Measures, as medians of ``--repeats`` runs after one warm-up run:

- ``load_source`` through each route (csv, parquet, sqlite, embedded);
- ``fingerprint`` of the table;
- ``validate_table`` on the clean table, and on a copy with 1% of its rows
  corrupted (so both validators report and the quarantine is built), plus its
  two validators alone (pandera's lazy validation; the GX suite);
- the one-off import of Great Expectations, paid once per process.

Writes benchmarks/results/validation.md. The machine is shared, so the load
average is recorded next to the timings.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from ppdm import resources
from ppdm.prepare import datasets
from ppdm.prepare.dataset_folder import load_contract
from ppdm.prepare.ingest import fingerprint, load_source, write_sqlite
from ppdm.prepare.validation import _run_gx, validate_table

ROOT = Path(__file__).resolve().parent.parent

RESULTS = Path(__file__).parent / "results" / "validation.md"


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def median_time(fn, repeats: int) -> tuple[float, float]:
    fn()  # warm-up: imports, caches, arrow kernels
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def corrupted(table: pd.DataFrame, fraction: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = rng.choice(len(table), size=int(fraction * len(table)), replace=False)
    out = table.astype({"age": object})
    thirds = np.array_split(rows, 3)
    out.loc[thirds[0], "age"] = 230
    out.loc[thirds[1], "sex"] = "X"
    out.loc[thirds[2], "age"] = "abc"
    return out


def gx_import_seconds() -> float:
    code = "import time; t=time.perf_counter(); import great_expectations; "
    code += "print(time.perf_counter()-t)"
    runs = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True,
                             text=True, check=True).stdout)
        for _ in range(3)
    ]  # fmt: skip
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    start_load = loadavg()
    contract = load_contract(resources.schema_dir("adult"))
    schema, suite = contract.schema, contract.suite
    adult = datasets.load("adult")
    dirty = corrupted(adult, 0.01, seed=0)
    rows: list[tuple[str, float, float, str]] = []

    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        adult.to_csv(folder / "adult.csv", index=False)
        adult.to_parquet(folder / "adult.parquet")
        url = write_sqlite(adult, folder / "adult.db", "adult")
        routes = {
            "load_source csv": lambda: load_source("csv", folder / "adult.csv"),
            "load_source parquet": lambda: load_source(
                "parquet", folder / "adult.parquet"
            ),
            "load_source sqlite": lambda: load_source(
                "sql", url, query="SELECT * FROM adult"
            ),
            "load_source embedded": lambda: load_source(
                "embedded", None, embedded="adult"
            ),
        }
        for label, fn in routes.items():
            rows.append((label, *median_time(fn, args.repeats), "48,842 rows"))

    rows.append(
        ("fingerprint", *median_time(lambda: fingerprint(adult), args.repeats), "")
    )
    clean = validate_table(adult, schema, suite)
    rows.append((
        "validate_table, clean Adult",
        *median_time(lambda: validate_table(adult, schema, suite), args.repeats),
        f"{clean.report['rows_rejected']} rejected",
    ))  # fmt: skip
    outcome = validate_table(dirty, schema, suite)
    rows.append((
        "validate_table, 1% of rows corrupted",
        *median_time(lambda: validate_table(dirty, schema, suite), args.repeats),
        f"{outcome.report['rows_rejected']} rejected",
    ))  # fmt: skip
    frame_schema = schema.to_schema()
    rows.append((
        "  pandera alone (lazy, clean Adult)",
        *median_time(lambda: frame_schema.validate(adult, lazy=True), args.repeats),
        f"{len(frame_schema.columns)} columns",
    ))  # fmt: skip
    rows.append((
        "  GX suite alone (clean Adult)",
        *median_time(lambda: _run_gx(adult, suite), args.repeats),
        f"{len(suite['expectations'])} expectations",
    ))  # fmt: skip
    gx_import = gx_import_seconds()
    end_load = loadavg()

    command = f"uv run python benchmarks/bench_validation.py --repeats {args.repeats}"
    machine = (
        f"{platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, pandas {pd.__version__}, numpy {np.__version__}"
    )
    full = {label: med for label, med, _, _ in rows}["validate_table, clean Adult"]
    verdict = "meets" if full < 2.0 else "misses"
    table = [
        f"| {label} | {med:.3f} | {low:.3f} | {note} |"
        for label, med, low, note in rows
    ]
    gx_row = (
        f"| `import great_expectations` (once per process, median of 3) "
        f"| {gx_import:.2f} | | not part of validate_table |"
    )
    lines = [
        "# Ingest and validation benchmark",
        "",
        f"Command: `{command}`",
        f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; machine: {machine}.",
        (
            f"Load average at start: {start_load}; at end: {end_load} "
            "(the machine is shared; treat timings as +-40%)."
        ),
        f"Timings: median (and minimum) of {args.repeats} runs after one warm-up.",
        "",
        "| operation | median (s) | min (s) | note |",
        "|---|---|---|---|",
        *table,
        gx_row,
        "",
        (
            f"Full Adult through `validate_table`: median {full:.2f} s, which "
            f"{verdict} the target of well under 2 s. The GX suite is most of it: "
            "a fixed cost per expectation, nearly independent of the row count."
        ),
        "",
    ]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
