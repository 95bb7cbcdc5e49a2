"""Time Mondrian on the full UCI Adult table (48,842 rows, 8 quasi-identifiers).

Run from the repository root::

    uv run python benchmarks/bench_mondrian.py [--repeats 5]

Prints a Markdown report and writes it to ``benchmarks/results/mondrian.md``.
Each configuration (k in {5, 10, 100}, l in {1, 2}; with l=2 the sensitive
attribute is occupation, removed from the quasi-identifiers) is timed
``--repeats`` times around ``Mondrian().anonymize`` (the whole release: coding,
partitioning and writing every generalized cell) and around the partitioning
alone; medians are reported. Loading the data is not timed. Every release is
checked with the independent measures of :mod:`ppdm.measures`.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from ppdm import datasets
from ppdm.algorithms.mondrian import Mondrian, mondrian_partition
from ppdm.measures import distinct_l_diversity, k_anonymity
from ppdm.model import AnonymizationSpec

QUASI_IDENTIFIERS = [
    "age", "workclass", "education", "marital-status", "occupation", "race", "sex",
    "native-country",
]  # fmt: skip
SENSITIVE = "occupation"
RESULTS = Path(__file__).resolve().parent / "results" / "mondrian.md"

# anonypy 0.2.1 (Mondrian), measured on this project's machines: see
# the peers survey (shared/PEERS.md), section 3, "all" rows (48,842 rows), pass 1 / pass 2.
ANONYPY = {
    5: "45.6 / 46.6 s (5,743 ECs)",
    10: "25.5 / 24.9 s (3,052 ECs)",
    100: "2.94 / 3.07 s (341 ECs)",
}


def _loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "n/a"


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _timed(fn, repeats: int) -> tuple[list[float], object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return times, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()

    adult = datasets.load("adult")
    load_before = _loadavg()
    rows, cut_rows = [], []
    for l in (1, 2):  # noqa: E741
        for k in (5, 10, 100):
            qis = [q for q in QUASI_IDENTIFIERS if l == 1 or q != SENSITIVE]
            sensitive = SENSITIVE if l > 1 else None
            spec = AnonymizationSpec.of(tuple(qis), sensitive, "income", k=k, l=l)
            release_times, release = _timed(
                lambda: Mondrian().anonymize(adult, spec, np.random.default_rng(0)),
                args.repeats,
            )
            partition_times, _ = _timed(
                lambda: mondrian_partition(
                    adult, qis, k, sensitive_attribute=sensitive, l=l
                ),
                args.repeats,
            )
            table = release.table
            achieved_k = k_anonymity(table, qis)
            achieved_l = distinct_l_diversity(table, qis, SENSITIVE)
            assert achieved_k >= k and achieved_l >= l, (k, l, achieved_k, achieved_l)
            ev = release.evidence
            size = ev["partition_size"]
            rows.append({
                "k": k,
                "l": l,
                "QIs": len(qis),
                "anonymize s (median)": f"{statistics.median(release_times):.3f}",
                "min-max s": f"{min(release_times):.3f}-{max(release_times):.3f}",
                "partition only s (median)": f"{statistics.median(partition_times):.3f}",
                "partitions": ev["n_partitions"],
                "size min/median/max": f"{size['min']}/{size['median']:g}/{size['max']}",
                "rounds": ev["rounds"],
                "achieved k / l": f"{achieved_k} / {achieved_l}",
                "anonypy k-anonymity (PEERS.md)": ANONYPY[k] if l == 1 else "-",
            })  # fmt: skip
            cut_rows.append({"k": k, "l": l, "cuts": ev["cuts"]})
            print(f"k={k} l={l}: {rows[-1]['anonymize s (median)']} s", flush=True)
    load_after = _loadavg()

    frame = pd.DataFrame(rows)
    header = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = "\n".join(
        "| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(False)
    )
    cuts = "\n".join(
        f"- k={r['k']}, l={r['l']}: "
        + ", ".join(f"{name} {n}" for name, n in r["cuts"].items())
        for r in cut_rows
    )
    report = f"""# Mondrian on full UCI Adult

- Command: `uv run python benchmarks/bench_mondrian.py --repeats {args.repeats}`
- Date (UTC): {datetime.now(UTC).strftime("%Y-%m-%d %H:%M")}
- Machine: {_cpu()}, {os.cpu_count()} CPUs, Python {platform.python_version()},
  numpy {np.__version__}, pandas {pd.__version__} ({sys.platform})
- Load (`/proc/loadavg`) before / after: `{load_before}` / `{load_after}`
  (the 2 cores are shared with other engineers: treat timings as +-40%)
- Data: `ppdm.datasets.load("adult")`, 48,842 rows (train + test), missing
  values kept as NA; loading is not timed.
- Quasi-identifiers: {", ".join(QUASI_IDENTIFIERS)}; with l=2 the sensitive
  attribute is {SENSITIVE} and it is removed from the quasi-identifiers.
- Timed: `Mondrian().anonymize(...)` (whole release) and `mondrian_partition`
  (partitioning only), {args.repeats} repeats each, median reported. Every
  release was checked with `ppdm.measures` (achieved k / l column).
- anonypy figures are not re-measured (it is not installed): they are the
  published ones from PEERS.md (anonypy 0.2.1, `anonymize_k_anonymity`, same
  8 QIs but '?' kept as a category and SA income; pass 1 / pass 2).
  Partition counts differ slightly because anonypy splits categories by
  order of first appearance and treats ties differently.

{header}
{rule}
{body}

Cuts per quasi-identifier (from the release evidence):

{cuts}
"""
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(report, encoding="utf-8")
    print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
