"""`ppdm run` on Adult scaled up, out of core (Dask engine) and in memory, end to end.

Make the tables first (seeded, not committed; see make_adult_scaled.py):

    uv run python benchmarks/make_adult_scaled.py --times 100 --out /tmp/adult-x100.csv
    uv run python benchmarks/make_adult_scaled.py --times 1000 --out /tmp/adult-x1000.csv

then, from the repository root:

    uv run python benchmarks/bench_out_of_core.py --table /tmp/adult-x100.csv \\
        [--table /tmp/adult-x1000.csv] [--algorithm mondrian --algorithm lattice-optimal] \\
        [--in-memory /tmp/adult-x100.csv]

Each run is a fresh `ppdm run --config ... --json` process on its own temporary
Prefect API, with Adult's shipped configuration pointed at the CSV file.
The runs share one Prefect home, whose database a first, untimed run (German,
in memory) creates, as a data owner's every run after their first finds it
(its time is reported: Prefect's first start migrates and registers its
database, about 14 s); `--fresh-prefect` gives each run a new home instead.
The source file is read once before the runs, so each run finds it in the
page cache as the previous one left it. Each run uses
`compute: {engine: dask}` with two local worker processes of `memory_limit: 2GB` each
(the in-memory runs: `engine: pandas`). The process tree is sampled every
0.2 s: the peak resident memory of every process (the `ppdm` driver, each
Dask worker, the Prefect API, the Dask nanny and scheduler) is reported.
Goal (x1000, 48.8M rows): under 10 minutes on a 2-core machine with no
process above 3 GB. Results are appended to benchmarks/results/out_of_core.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import psutil
import yaml

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "out_of_core.md"


def _role(process: psutil.Process) -> str:
    try:
        line = " ".join(process.cmdline())
    except psutil.Error:
        return "gone"
    if "distributed" in line or "dask" in line or "multiprocessing" in line:
        if "spawn_main" in line or "forkserver" in line:
            return "dask worker"
        return "dask"
    if "prefect" in line and "server" in line:
        return "prefect api"
    if "uvicorn" in line:
        return "prefect api"
    return "ppdm driver" if "ppdm" in line else Path(line.split(" ")[0]).name


class PeakMemory(threading.Thread):
    """Peak RSS of every process in a tree, sampled until stopped."""

    def __init__(self, root: int, every: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.root, self.every = root, every
        self.peaks: dict[int, tuple[str, int]] = {}
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            try:
                top = psutil.Process(self.root)
                tree = [top, *top.children(recursive=True)]
            except psutil.Error:
                break
            for process in tree:
                try:
                    rss = process.memory_info().rss
                except psutil.Error:
                    continue
                role, peak = self.peaks.get(process.pid, (None, 0))
                if role is None:
                    role = _role(process)
                self.peaks[process.pid] = (role, max(peak, rss))
            time.sleep(self.every)

    def stop(self) -> dict[int, tuple[str, int]]:
        self._halt.set()
        self.join()
        return self.peaks


def run(
    table: Path | None,
    algorithm: str,
    engine: str,
    workdir: Path,
    prefect_home: Path | None = None,
) -> dict:
    """One timed `ppdm run`; ``table`` None: German, embedded, in memory."""
    shipped = "adult.yaml" if table is not None else "german.yaml"
    config = yaml.safe_load((ROOT / "configs" / shipped).read_text())
    if table is not None:
        config["source"] = {"kind": "csv", "path": str(table)}
        config["algorithm"] = algorithm
        config["compute"] = {"engine": engine, "workers": 2, "memory_limit": "2GB"}
    config["output_dir"] = str(workdir / "releases")
    config["work_dir"] = str(workdir / "work")
    path = workdir / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {
        **os.environ,
        "PREFECT_HOME": str(prefect_home or workdir / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "MPLBACKEND": "Agg",
    }
    env.pop("PREFECT_API_URL", None)
    ppdm = Path(sys.executable).with_name("ppdm")
    start = time.perf_counter()
    process = subprocess.Popen(
        [str(ppdm), "run", "--config", str(path), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    sampler = PeakMemory(process.pid)
    sampler.start()
    out, err = process.communicate()
    wall = time.perf_counter() - start
    peaks = sampler.stop()
    summary = (
        json.loads(out.strip().splitlines()[-1]) if process.returncode == 0 else {}
    )
    return {
        "steps_s": _step_seconds((prefect_home or workdir / "prefect") / "prefect.db"),
        "table": table.name if table is not None else "german",
        "algorithm": algorithm,
        "engine": engine,
        "exit": process.returncode,
        "wall_s": wall,
        "peaks_mb": sorted(
            ((role, rss / 2**20) for role, rss in peaks.values() if rss > 50 * 2**20),
            key=lambda item: -item[1],
        ),
        "summary": summary,
        "error": err.strip().splitlines()[-3:] if process.returncode else [],
    }


def _step_seconds(database: Path) -> dict[str, float]:
    """Seconds of each step's task run, from the Prefect database (its last flow run)."""
    import sqlite3

    if not database.exists():
        return {}
    with sqlite3.connect(database) as db:
        found = db.execute(
            "select name, start_time, end_time from task_run "
            "where start_time is not null and end_time is not null and flow_run_id = "
            "(select id from flow_run order by start_time desc limit 1) "
            "order by start_time"
        ).fetchall()
    return {
        name.rsplit("-", 1)[0]: (
            datetime.fromisoformat(end) - datetime.fromisoformat(start)
        ).total_seconds()
        for name, start, end in found
    }


def _rows(table: Path) -> int:
    with table.open("rb") as handle:
        return (
            sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 24), b""))
            - 1
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, action="append", required=True)
    parser.add_argument("--algorithm", action="append")
    parser.add_argument("--in-memory", type=Path, action="append", default=[])
    parser.add_argument(
        "--fresh-prefect",
        action="store_true",
        help="each run on a new Prefect home (its database created in the run)",
    )
    args = parser.parse_args()
    algorithms = args.algorithm or ["mondrian", "lattice-optimal"]
    cases = [(t, a, "dask") for t in args.table for a in algorithms]
    cases += [(t, a, "pandas") for t in args.in_memory for a in algorithms]
    lines = [
        "",
        f"## {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "",
        "Command: `uv run python benchmarks/bench_out_of_core.py "
        + " ".join(f"--table {t}" for t in args.table)
        + "".join(f" --algorithm {a}" for a in algorithms)
        + "".join(f" --in-memory {t}" for t in args.in_memory)
        + "`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"{psutil.virtual_memory().total / 2**30:.0f} GiB, Python "
        f"{platform.python_version()}; load average at the start "
        + " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "",
        "| table | rows | algorithm | engine | exit | wall (s) "
        "| peak memory per process (MB) | achieved | rows released |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    rows_of = {t: _rows(t) for t in {c[0] for c in cases}}  # also reads each once
    timings: list[str] = []
    session = tempfile.TemporaryDirectory(prefix="ppdm-ooc-prefect-")
    home = None if args.fresh_prefect else Path(session.name)
    if home is not None:
        with tempfile.TemporaryDirectory(prefix="ppdm-ooc-") as tmp:
            first = run(None, "", "pandas", Path(tmp), home)
        lines.insert(
            -3,
            f"Prefect home shared by the runs, created by a first run (German, in "
            f"memory, exit {first['exit']}) in {first['wall_s']:.0f} s.\n",
        )
    for table, algorithm, engine in cases:
        with tempfile.TemporaryDirectory(prefix="ppdm-ooc-") as tmp:
            result = run(table, algorithm, engine, Path(tmp), home)
        peaks = ", ".join(f"{role} {mb:,.0f}" for role, mb in result["peaks_mb"])
        summary = result["summary"]
        achieved = released = ""
        if summary:
            achieved = "; ".join(
                f"{row['check']}: {row['achieved']}"
                for row in summary.get("checks", [])
            )
            released = f"{sum(summary.get('rows', {}).values()):,}"
        line = (
            f"| {table.name} | {rows_of[table]:,} | {algorithm} | {engine} | "
            f"{result['exit']} | {result['wall_s']:.0f} | {peaks} | {achieved} | {released} |"
        )
        print(line, flush=True)
        lines.append(line)
        if result["steps_s"]:
            steps = ", ".join(f"{n} {s:.0f}" for n, s in result["steps_s"].items())
            timings.append(f"- {table.name}, {algorithm}, {engine}: {steps}")
            print(timings[-1], flush=True)
        if result["error"]:
            print("   ", " / ".join(result["error"]), flush=True)
    if timings:
        lines += ["", "Seconds per step (the step's Prefect task run):", "", *timings]
    lines.append("")
    lines.append(
        f"Load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    session.cleanup()
    if not RESULTS.exists():
        RESULTS.write_text(
            "# Out-of-core releases: Adult x100 and x1000 end to end\n\n"
            "See the docstring of benchmarks/bench_out_of_core.py for the method.\n"
        )
    with RESULTS.open("a") as handle:
        handle.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
