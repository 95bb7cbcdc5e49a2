"""The verify step on a 50,000-row release of every shape the algorithms publish.

A data owner's table (the seeded messy hospital export of tests/messy_hospital.py: names,
e-mails, zips with leading zeros, ISO birth dates, DD.MM.YYYY admission dates) is given a
dataset folder by `ppdm init`'s own code, then released by each algorithm in one process.
Each algorithm publishes its own shape of cells: Mondrian intervals, date ranges, masked zips
and value sets; kACTUS stars; lattice-optimal and PBG-EA hierarchy labels; DMPD projections;
feature selection's 0/1 feature table.

The figure is the verify step's own wall time (the independent verifier re-reading the
candidate files, with the risk against the clean table and the pass-through check), taken
from the step as the pipeline runs it, then once more warm (the same call again).

    uv run python benchmarks/bench_verify_shapes.py [--rows 50000] [--algorithm NAME ...]

Writes benchmarks/results/verify-shapes.md. The goal: under 1 s for every shape.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "verify-shapes.md"
sys.path.insert(0, str(ROOT / "tests"))

ALGORITHMS = ("mondrian", "kactus", "lattice-optimal", "pbg-ea", "dmpd", "fs-anonymity")


def run(algorithm: str, config, work: Path) -> dict:
    from ppdm import pipeline

    timings: dict[str, float] = {}

    def timed(name, fn, *args):
        start = time.perf_counter()
        out = fn(*args)
        timings[name] = time.perf_counter() - start
        if name == "verify":
            start = time.perf_counter()
            fn(*args)
            timings["verify-warm"] = time.perf_counter() - start
        return out

    # Feature selection releases no sensitive attribute: l-diversity is not
    # asked of it (init's configuration asks l = 2 of the others).
    extra = {"l": 1} if algorithm == "fs-anonymity" else {}
    run_config = config.with_overrides(
        **extra,
        algorithm=algorithm,
        output_dir=str(work / "out" / algorithm),
        work_dir=str(work / "work" / algorithm),
    )
    started = time.perf_counter()
    try:
        outcome = pipeline.run_steps(run_config, run_step=timed)
    except Exception as err:  # noqa: BLE001 - a row of the table says why
        return {"error": f"{type(err).__name__}: {str(err)[:160]}", **timings}
    total = time.perf_counter() - started
    tables = outcome.certificate["tables"]
    return {
        **timings,
        "total": total,
        "tables": len(tables),
        "rows": sum(t["rows"] for t in tables.values()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--algorithm", action="append", choices=ALGORITHMS)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("PPDM_AUDIT_KEY", "bench-verify-shapes-key-0123456789abcdef")
    from messy_hospital import messy_hospital

    from ppdm.config import load_config
    from ppdm.prepare.init_folder import OwnerRoles, init_dataset

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        source = work / "hospital.csv"
        messy_hospital(args.rows, seed=7).to_csv(source, index=False)
        path = init_dataset(
            source,
            dataset="hospital",
            directory=work,
            roles=OwnerRoles(target="readmitted"),
        )
        config = load_config(path)
        for algorithm in args.algorithm or ALGORITHMS:
            result = run(algorithm, config, work)
            rows.append((algorithm, result))
            print(algorithm, result, flush=True)
    lines = [
        "# The verify step on a 50,000-row release of every shape",
        "",
        f"Command: `uv run python benchmarks/bench_verify_shapes.py --rows {args.rows}`  ",
        f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; machine: {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; "
        f"load average at start: {load} (shared machine)",
        "",
        "Table: tests/messy_hospital.py, seed 7, "
        f"{args.rows:,} rows; roles from `ppdm init` (target readmitted).",
        "",
        "| algorithm | tables | rows released | verify (s) | verify warm (s) | run (s) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for algorithm, r in rows:
        if "error" in r:
            lines.append(f"| {algorithm} | refused: {r['error']} | | | | |")
            continue
        lines.append(
            f"| {algorithm} | {r['tables']} | {r['rows']:,} | {r['verify']:.2f} | "
            f"{r['verify-warm']:.2f} | {r['total']:.1f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        RESULTS.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
