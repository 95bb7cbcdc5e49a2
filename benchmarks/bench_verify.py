"""Benchmark of the verifier: Adult x10 in memory, Adult x100 through Dask.

Run from the repository root:

    uv run python benchmarks/bench_verify.py [--repeats 5] [--no-pycanon] [--no-dask]

Writes benchmarks/results/verify.md. Timings are medians; the machine is
shared, so the load average is recorded next to them.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from ppdm.prepare.datasets import load
from ppdm.privacy import (
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    Requirement,
    TCloseness,
)
from ppdm.privacy.measures import ClassPartition
from ppdm.release.data_files import released_text
from ppdm.verify import read_released_table, verify_tables
from ppdm.verify.out_of_core import verify_parquet

QI8 = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex",
       "native-country"]  # fmt: skip
RUNS = [("income", QI8), ("occupation", [q for q in QI8 if q != "occupation"])]
RESULTS = Path(__file__).parent / "results" / "verify.md"


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def median_time(fn, repeats: int, warmup: bool = True) -> tuple[float, float, object]:
    """(median wall s, median CPU s of this process, last result)."""
    walls, cpus, out = [], [], None
    if warmup:  # first call pays one-off costs (imports, arrow kernels)
        fn()
    for _ in range(repeats):
        gc.collect()
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus), out


def ours_k_l(table, qis, sa):
    p = ClassPartition.of(table, qis)
    k = KAnonymity(5).check(p, qis).achieved
    return k, DistinctLDiversity(sa, 2).check(p, qis).achieved


def ours_all(table, qis, sa):
    p = ClassPartition.of(table, qis)
    return (
        KAnonymity(5).check(p, qis).achieved,
        DistinctLDiversity(sa, 2).check(p, qis).achieved,
        EntropyLDiversity(sa, 2).check(p, qis).achieved,
        TCloseness(sa, 0.2).check(p, qis).achieved,
    )


def peak_memory(fn) -> tuple[float, float]:
    """(tracemalloc peak MB, growth of ru_maxrss MB) while running fn."""
    gc.collect()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20, (after - before) / 1024


def adult_x(n: int) -> pd.DataFrame:
    one = released_text(load("adult"))
    return pd.concat([one] * n, ignore_index=True)


def bench_in_memory(repeats: int, with_pycanon: bool) -> list[str]:
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "adult10.csv"
        adult_x(10).to_csv(csv, index=False)
        table = read_released_table(csv)
    rss_loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines.append(
        f"Adult x10: {len(table):,} rows read back with `read_released_table` "
        f"(dtype {table.dtypes.iloc[0]}); process peak RSS after loading "
        f"{rss_loaded:.0f} MB.\n"
    )
    lines.append(
        "| SA (QIs) | k + distinct l: wall / CPU (s) | k + distinct + entropy l + t: "
        "wall / CPU (s) | full `verify_tables` k,l,t + risk: wall / CPU (s) | "
        "tracemalloc peak / ru_maxrss growth (MB) | result k, l, entropy l, t |"
    )
    lines.append("|---|---|---|---|---|---|")
    pyc_rows = []
    for sa, qis in RUNS:
        kl = median_time(lambda: ours_k_l(table, qis, sa), repeats)
        full = median_time(lambda: ours_all(table, qis, sa), repeats)
        req = Requirement.of(tuple(qis), sa, k=5, l=2, t=0.2)
        ver = median_time(lambda: verify_tables({"r": table}, req), repeats)
        traced, rss = peak_memory(lambda: ours_all(table, qis, sa))
        k, l_, ent, t = full[2]
        lines.append(
            f"| {sa} ({len(qis)}) | {kl[0]:.3f} / {kl[1]:.3f} | "
            f"{full[0]:.3f} / {full[1]:.3f} | {ver[0]:.3f} / {ver[1]:.3f} | "
            f"{traced:.0f} / {rss:.0f} | {k}, {l_}, {ent:.3f}, {t:.4f} |"
        )
        print(lines[-1], "load", loadavg(), flush=True)
        if with_pycanon:
            pyc_rows.append(bench_pycanon(table, qis, sa, (kl, full), full[2]))
    if pyc_rows:
        lines += [
            "",
            "pyCANON 1.3.5 on the same table, same run "
            "(`reset_index(drop=True).astype(object)`):",
            "",
            "Cells are wall / CPU seconds; speed-ups are pyCANON / ours (wall / CPU).",
            "",
            "| SA | pycanon k | pycanon distinct l | pycanon entropy l | pycanon t | "
            "speed-up k+l | speed-up k+l+entropy+t | same k, l, floor(entropy l), t |",
            "|---|---|---|---|---|---|---|---|",
            *pyc_rows,
        ]
    return lines


def bench_pycanon(table, qis, sa, ours_times, ours_result) -> str:
    from pycanon import anonymity as pa

    # object dtype: pyCANON runs 2-3x faster on it than on pandas 3's arrow
    # strings (measured), and it is what its pinned pandas 2.3 would use.
    frame = table.reset_index(drop=True).astype(object)
    k_t = median_time(lambda: pa.k_anonymity(frame, qis), 3, warmup=False)
    l_t = median_time(lambda: pa.l_diversity(frame, qis, [sa]), 1, warmup=False)
    e_t = median_time(lambda: pa.entropy_l_diversity(frame, qis, [sa]), 1, warmup=False)
    t_t = median_time(lambda: pa.t_closeness(frame, qis, [sa]), 1, warmup=False)
    ok_k, ok_l, ok_e, ok_t = ours_result
    ent, t = e_t[2], t_t[2]
    same = (
        k_t[2] == ok_k
        and l_t[2] == ok_l
        and ent in (int(ok_e - 1e-9), int(ok_e + 1e-9))
        and abs(t - ok_t) < 1e-9
    )
    kl, full = ours_times
    row = (
        f"| {sa} | {k_t[0]:.2f} / {k_t[1]:.2f} | {l_t[0]:.2f} / {l_t[1]:.2f} | "
        f"{e_t[0]:.2f} / {e_t[1]:.2f} | {t_t[0]:.2f} / {t_t[1]:.2f} | "
        f"{(k_t[0] + l_t[0]) / kl[0]:.0f}x / {(k_t[1] + l_t[1]) / kl[1]:.0f}x | "
        f"{(k_t[0] + l_t[0] + e_t[0] + t_t[0]) / full[0]:.0f}x / "
        f"{(k_t[1] + l_t[1] + e_t[1] + t_t[1]) / full[1]:.0f}x | {same} |"
    )
    print(row, "load", loadavg(), flush=True)
    return row


def bench_dask(copies: int, memory_limit: str) -> list[str]:
    from distributed import Client, LocalCluster
    from distributed.diagnostics import MemorySampler

    one = released_text(load("adult"))
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        parts = Path(tmp) / "adult100"
        parts.mkdir()
        first = parts / "part-000.parquet"
        one.to_parquet(first, index=False)
        data = first.read_bytes()
        for i in range(1, copies):  # identical parts: copies of the bytes
            (parts / f"part-{i:03d}.parquet").write_bytes(data)
        size_mb = sum(p.stat().st_size for p in parts.iterdir()) / 2**20
        lines.append(
            f"Adult x{copies}: {copies * len(one):,} rows in {copies} Parquet parts "
            f"({size_mb:.0f} MB on disk), `verify_parquet(engine='dask')`, one local "
            f"worker process (2 threads) with memory_limit={memory_limit}.\n"
        )
        lines.append(
            "| SA (QIs) | cluster start (s) | verify (s) | worker memory peak (MB) "
            "| driver ru_maxrss (MB) | k, distinct l, entropy l, t | passed |"
        )
        lines.append("|---|---|---|---|---|---|---|")
        for sa, qis in RUNS:
            t0 = time.perf_counter()
            with (
                LocalCluster(
                    n_workers=1,
                    threads_per_worker=2,
                    memory_limit=memory_limit,
                    dashboard_address=None,
                ) as cluster,
                Client(cluster) as client,
            ):
                started = time.perf_counter() - t0
                sampler = MemorySampler()
                req = Requirement.of(tuple(qis), sa, k=5, l=2, t=0.2)
                t1 = time.perf_counter()
                with sampler.sample("verify", client=client, interval=0.1):
                    cert = verify_parquet(parts, req, engine="dask", client=client)
                took = time.perf_counter() - t1
                peak = sampler.to_pandas().max().iloc[0] / 2**20
            m = cert.tables[0].measures
            driver = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            lines.append(
                f"| {sa} ({len(qis)}) | {started:.1f} | {took:.1f} | {peak:.0f} | "
                f"{driver:.0f} | {m['k']}, {m['distinct_l']}, {m['entropy_l']:.3f}, "
                f"{m['t']:.4f} | {cert.passed} |"
            )
            print(lines[-1], "load", loadavg(), flush=True)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-pycanon", action="store_true")
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--copies", type=int, default=100)
    parser.add_argument("--memory-limit", default="2GB")
    args = parser.parse_args()

    header = [
        "# Verifier benchmark",
        "",
        "Command: `"
        + " ".join(["uv run python", "benchmarks/bench_verify.py", *sys.argv[1:]])
        + "`",
        f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; machine: "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, pandas {pd.__version__}, "
        f"numpy {np.__version__}.",
        f"Load average at start: {loadavg()} (the machine is shared; "
        "treat timings as +-40%).",
        f"Timings: median of {args.repeats} after one warm-up call, wall clock and "
        "CPU time of the process (CPU time is less sensitive to the other jobs on "
        "the machine); pyCANON: median of 3 for k, one run for l, entropy l "
        "and t (each takes minutes on this loaded machine).",
        "",
        "## In memory",
        "",
    ]
    lines = header + bench_in_memory(args.repeats, not args.no_pycanon)
    if not args.no_dask:
        dask_lines = bench_dask(args.copies, args.memory_limit)
        lines += ["", "## Out of core (Dask)", "", *dask_lines]
    lines += ["", f"Load average at end: {loadavg()}.", ""]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
