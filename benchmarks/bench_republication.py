"""Three monthly releases of a changing Adult table: differencing leaks with and without hold-back.

Month 1 releases a seeded 96 % of Adult (46,888 rows), month 2 all 48,842
rows (the 1,954 others arrive), month 3 month 2 without a seeded 2 % (people
leave) plus 3 % newcomers (rows of month 2 copied with a fresh seeded
identity: their quasi-identifiers and sensitive value are those of real rows,
which is what newcomers look like to the release). Each month is released
with the shipped Adult configuration (k = 10, distinct l = 2 of occupation)
into one output directory, once with ``republication: {policy: off}`` and
once with the default ``hold-back``.

The attacker reads the released files only: for every class present in two
consecutive releases, the rows only added (only removed) are the newcomers
(leavers) of that class; a newcomer whose added group holds one sensitive
value is disclosed with certainty, one whose value makes up more than 1/l of
the group is disclosed above 1/l. Also measured: rows held back, the hold-out
accuracy of the release (utility report, C4.5-like tree) with and without the
policy, and the time of the differencing check next to the anonymization on
Adult x10.

Run from the repository root::

    uv run python benchmarks/bench_republication.py \\
        --algorithms mondrian,lattice-optimal --out benchmarks/results/republication.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ppdm import pipeline
from ppdm.config import default_config
from ppdm.prepare import datasets
from ppdm.verify.certificate import read_released_table
from ppdm.verify.series import class_changes


def months(seed: int) -> list[pd.DataFrame]:
    """The three monthly tables (see the module docstring)."""
    rng = np.random.default_rng(seed)
    whole = datasets.load("adult").reset_index(drop=True)
    n = len(whole)
    first = whole.iloc[np.sort(rng.choice(n, size=round(0.96 * n), replace=False))]
    leaving = rng.choice(n, size=round(0.02 * n), replace=False)
    stay = whole.drop(index=leaving)
    arrive = whole.iloc[rng.choice(n, size=round(0.03 * n), replace=False)]
    third = pd.concat([stay, arrive], ignore_index=True)
    return [first.reset_index(drop=True), whole, third]


def disclosed(
    new: pd.DataFrame, old: pd.DataFrame, qis: list[str], sensitive: str, l_: int
) -> dict[str, int]:
    """Newcomers and leavers the two released tables disclose (attacker's view)."""
    change = class_changes(new, old, qis)
    figures = {}
    for label, rows in (("newcomers", change.added), ("leavers", change.removed)):
        if rows.empty:
            figures.update({f"{label} certain": 0, f"{label} > 1/l": 0, label: 0})
            continue
        group = rows.groupby(["_class", sensitive]).size()
        share = group / group.groupby(level="_class").transform("sum")
        figures[label] = int(len(rows))
        figures[f"{label} certain"] = int(group[share >= 1.0].sum())
        figures[f"{label} > 1/l"] = int(group[share > 1.0 / l_].sum())
    return figures


def tables(release_dir: Path) -> pd.DataFrame:
    (path,) = sorted((release_dir / "data").glob("*.csv"))
    return read_released_table(path)


def run_series(algorithm: str, policy: str, frames: list[pd.DataFrame], root: Path):
    rows = []
    config = default_config("adult")
    qis = list(config.quasi_identifiers)
    sensitive = config.sensitive_attribute
    released = []
    for month, frame in enumerate(frames, start=1):
        source = root / f"{algorithm}-{policy}-month-{month}.csv"
        frame.to_csv(source, index=False)
        run = config.with_overrides(
            algorithm=algorithm,
            source={"kind": "csv", "path": str(source)},
            output_dir=str(root / f"out-{algorithm}-{policy}"),
            work_dir=str(root / f"work-{algorithm}-{policy}"),
            republication={"policy": policy},
        )
        started = time.perf_counter()
        outcome = pipeline.run_release(run)
        seconds = time.perf_counter() - started
        release = tables(outcome.release_dir)
        utility = json.loads((outcome.release_dir / "utility.json").read_text())
        accuracy = utility["holdout"]["accuracy"]["decision_tree"]
        row = {
            "algorithm": algorithm,
            "policy": policy,
            "month": month,
            "rows in": len(frame),
            "rows released": len(release),
            "release s": round(seconds, 1),
            "tree accuracy": round(accuracy["anonymized"], 4),
        }
        if released:
            row.update(disclosed(release, released[-1], qis, sensitive, config.l))
        released.append(release)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def check_timing(frames: list[pd.DataFrame], root: Path) -> dict[str, float]:
    """The differencing check and Mondrian's anonymization on Adult x10."""
    config = default_config("adult")
    qis = list(config.quasi_identifiers)
    released = [
        tables(d)
        for d in sorted((root / "out-mondrian-hold-back" / "adult").iterdir())
        if (d / "data").is_dir()
    ]
    if len(released) < 2:
        return {}
    big = [pd.concat([t] * 10, ignore_index=True) for t in released[:2]]
    started = time.perf_counter()
    class_changes(big[1], big[0], qis)
    check = time.perf_counter() - started
    from ppdm.algorithms import get_algorithm
    from ppdm.model import AnonymizationSpec

    table = pd.concat([frames[1]] * 10, ignore_index=True)
    spec = AnonymizationSpec(requirement=config.requirement, target=config.target)
    numeric = [q for q in qis if pd.api.types.is_numeric_dtype(table[q])]
    for q in numeric:  # the release bins numeric QIs; equal-width 10 bins here
        table[q] = pd.cut(table[q], 10).astype(str)
    started = time.perf_counter()
    get_algorithm("mondrian").anonymize(table, spec, np.random.default_rng(0))
    anonymize = time.perf_counter() - started
    return {
        "rows": len(big[1]),
        "differencing check s": round(check, 2),
        "mondrian anonymize s": round(anonymize, 2),
    }


def _markdown(table: pd.DataFrame) -> str:
    cells = table.astype(object).where(table.notna(), "")
    head = "| " + " | ".join(map(str, table.columns)) + " |"
    rule = "|" + "---|" * len(table.columns)
    body = ["| " + " | ".join(map(str, row)) + " |" for row in cells.to_numpy()]
    return "\n".join([head, rule, *body])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithms", default="mondrian,lattice-optimal")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/republication.md")
    )
    args = parser.parse_args(argv)
    frames = months(args.seed)
    results = []
    with tempfile.TemporaryDirectory(prefix="ppdm-series-") as tmp:
        root = Path(tmp)
        for algorithm in args.algorithms.split(","):
            for policy in ("off", "hold-back"):
                results.extend(run_series(algorithm, policy, frames, root))
        timing = check_timing(frames, root)
    table = pd.DataFrame(results)
    lines = [
        "# Three monthly releases of a changing Adult table",
        "",
        "Command: `uv run python benchmarks/bench_republication.py "
        f"--algorithms {args.algorithms} --seed {args.seed}`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{sys.version.split()[0]}; other jobs were running (timings are upper bounds).",
        "",
        "Month 1: 96 % of Adult; month 2: all 48,842 rows; month 3: month 2 less 2 %, "
        "plus 3 % newcomers. Shipped Adult configuration (k = 10, distinct l = 2 of "
        "occupation). Disclosure counted from two consecutive released files "
        "(newcomers / leavers of classes present in both; certain: their added "
        "(removed) group has one occupation; > 1/l: their occupation is more than "
        "half of the group).",
        "",
        _markdown(table),
        "",
        "Differencing check vs anonymization on Adult x10:",
        "",
        "```",
        json.dumps(timing, indent=2),
        "```",
        "",
    ]
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
