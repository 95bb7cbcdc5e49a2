"""DMPD scalability: German credit enlarged x1, x5, x10, x20 (paper, Section 5.6).

Run from the repository root::

    uv run python benchmarks/bench_dmpd_scale.py [--scales 1,5,10,20]
        [--generations 100] [--population 50] [--inducer decision_tree]

Setting (Matatov et al. 2010, Table 2): every original record q gets
``sigma - 1`` variations, each drawn at random from the features' domains
(here: every feature value and the class drawn uniformly from the values the
column holds, with the generator seeded); quasi-identifier = the top 5
features ranked by a C4.5-style tree (the root feature of an entropy tree,
removed, again, five times); k = 10; 100 generations x 50 partitionings.
Numeric columns are cut into 5 equal-frequency bins first (the paper
discretizes numbers). Each scale runs in a fresh process so that its peak
memory (``ru_maxrss``) is its own. Recorded: seconds, fitness evaluations
computed per second, the share of fitness requests answered from the memo,
peak memory. Writes ``benchmarks/results/dmpd_scale.md``.
"""

# ruff: noqa: E501 - Markdown table rows
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

from ppdm.algorithms.dmpd import Dmpd, feature_codes
from ppdm.model import AnonymizationSpec
from ppdm.prepare import datasets
from ppdm.prepare.discretize import discretize
from ppdm.verify import verify_tables

TARGET = "credit"
OUT = Path(__file__).parent / "results" / "dmpd_scale.md"


def german_binned() -> pd.DataFrame:
    table = datasets.load("german")
    numeric = [c for c in table.columns if c != TARGET and table[c].dtype.kind in "if"]
    return discretize(table, numeric, None, method="equal-frequency", n_bins=5).table


def top_features(table: pd.DataFrame, n: int) -> list[str]:
    """Root features of successive entropy trees, each removed in turn."""
    features = [c for c in table.columns if c != TARGET]
    y = feature_codes(table[TARGET], exact=True)[0]
    chosen: list[str] = []
    for _ in range(n):
        rest = [f for f in features if f not in chosen]
        x = np.column_stack([feature_codes(table[f], exact=True)[0] for f in rest])
        tree = DecisionTreeClassifier(criterion="entropy", random_state=0).fit(x, y)
        chosen.append(rest[int(tree.tree_.feature[0])])
    return chosen


def enlarged(table: pd.DataFrame, sigma: int, seed: int = 0) -> pd.DataFrame:
    """The table plus ``sigma - 1`` random variations of every record."""
    if sigma == 1:
        return table
    rng = np.random.default_rng(seed)
    n = len(table) * (sigma - 1)
    extra = {}
    for column in table.columns:
        values = table[column].dropna().unique()
        extra[column] = pd.Series(values[rng.integers(0, len(values), n)]).astype(
            table[column].dtype
        )
    return pd.concat([table, pd.DataFrame(extra)], ignore_index=True)


def run_one(sigma: int, generations: int, population: int, inducer: str) -> dict:
    base = german_binned()
    qis = top_features(base, 5)
    table = enlarged(base, sigma)
    spec = AnonymizationSpec.of(tuple(qis), None, TARGET, k=10)
    spec = AnonymizationSpec(
        Dmpd().adapt_requirement(spec.requirement, target=TARGET), TARGET
    )
    algorithm = Dmpd(generations=generations, population=population, inducer=inducer)
    start = time.perf_counter()
    release = algorithm.anonymize(table, spec, np.random.default_rng(0))
    seconds = time.perf_counter() - start
    certificate = verify_tables(dict(release.tables), spec.requirement)
    evaluations = release.evidence["evaluations"]
    return {
        "sigma": sigma,
        "rows": len(table),
        "qis": qis,
        "seconds": round(seconds, 2),
        "computed": evaluations["computed"],
        "requested": evaluations["requested"],
        "per_second": round(evaluations["computed"] / seconds, 1),
        "memo_share": evaluations["memo_share"],
        "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "projections": len(release.tables),
        "part_al": release.evidence["part_al"],
        "verified": certificate.passed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1,5,10,20")
    parser.add_argument("--generations", type=int, default=100)
    parser.add_argument("--population", type=int, default=50)
    parser.add_argument("--inducer", default="decision_tree")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.one is not None:
        print(
            json.dumps(
                run_one(args.one, args.generations, args.population, args.inducer)
            )
        )
        return 0
    load = (
        Path("/proc/loadavg").read_text().strip()
        if Path("/proc/loadavg").exists()
        else "n/a"
    )
    rows = []
    for sigma in (int(s) for s in args.scales.split(",")):
        command = [
            sys.executable, __file__, "--one", str(sigma),
            "--generations", str(args.generations),
            "--population", str(args.population), "--inducer", args.inducer,
        ]  # fmt: skip
        result = json.loads(
            subprocess.run(command, check=True, capture_output=True, text=True).stdout
        )
        print(result, flush=True)
        rows.append(result)
    lines = [
        f"# DMPD scalability (German credit enlarged, paper Section 5.6), inducer {args.inducer}",
        "",
        f"- command: `uv run python benchmarks/bench_dmpd_scale.py --scales {args.scales} "
        f"--generations {args.generations} --population {args.population} --inducer {args.inducer}`",
        f"- date: {datetime.now(UTC).isoformat(timespec='seconds')}",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}; one process, one core used",
        f"- load at start (`/proc/loadavg`): {load}",
        f"- quasi-identifier (top 5 by successive entropy-tree roots): {', '.join(rows[0]['qis'])}; k = 10",
        "- paper (Table 2; Pentium 4 2.8 GHz, Weka J4.8): 32.8 minutes at x20; goal here <= 2 minutes",
        "",
        "| scale | rows | seconds | fitness evaluations computed | requested | evaluations / s | memo share | peak MB | projections | PartAL | verified |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| x{r['sigma']} | {r['rows']} | {r['seconds']} | {r['computed']} | {r['requested']} | "
            f"{r['per_second']} | {r['memo_share']:.1%} | {r['peak_mb']} | {r['projections']} | "
            f"{r['part_al']} | {r['verified']} |"
        )
    args.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
