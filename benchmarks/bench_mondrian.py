"""Time Mondrian on the full UCI Adult table (48,842 rows, 8 quasi-identifiers).

Run from the repository root::

    uv run python benchmarks/bench_mondrian.py [--repeats 5]

Prints a Markdown report and writes it to ``benchmarks/results/mondrian.md``.
Each configuration (k in {5, 10, 100} alone, with distinct 2-diversity and
with entropy 2-diversity of occupation; k = 5 with recursive (3, 3)-diversity
and with 0.2-closeness; with a sensitive attribute, occupation is removed from
the quasi-identifiers) is timed ``--repeats`` times around
``Mondrian().anonymize`` (the whole release: coding, partitioning and writing
every generalized cell) and around the partitioning alone; medians are
reported. Loading the data is not timed. Every release is checked with the
independent verifier (:func:`ppdm.verify.verify_tables`) against its
requirement, and its k and distinct l measured with :mod:`ppdm.privacy.measures`.
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

from ppdm.algorithms.mondrian import Mondrian, mondrian_partition
from ppdm.model import AnonymizationSpec
from ppdm.prepare import datasets
from ppdm.privacy.measures import distinct_l_diversity, k_anonymity
from ppdm.verify import verify_tables

QUASI_IDENTIFIERS = [
    "age", "workclass", "education", "marital-status", "occupation", "race", "sex",
    "native-country",
]  # fmt: skip
SENSITIVE = "occupation"
RESULTS = Path(__file__).resolve().parent / "results" / "mondrian.md"
#: (label, k, shorthand arguments of ``AnonymizationSpec.of`` beyond k).
CONFIGURATIONS = [
    *[(f"{k}-anonymity", k, {}) for k in (5, 10, 100)],
    *[(f"k={k}, distinct l=2", k, {"l": 2}) for k in (5, 10, 100)],
    *[
        (f"k={k}, entropy l=2", k, {"l": 2, "l_variant": "entropy"})
        for k in (5, 10, 100)
    ],
    ("k=5, recursive (3, 3)", 5, {"l": 3, "l_variant": "recursive", "c": 3.0}),
    ("k=5, t=0.2", 5, {"t": 0.2}),
]

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
    for label, k, shorthand in CONFIGURATIONS:
        sensitive = SENSITIVE if shorthand else None
        qis = [q for q in QUASI_IDENTIFIERS if q != sensitive]
        spec = AnonymizationSpec.of(tuple(qis), sensitive, "income", k=k, **shorthand)
        release_times, release = _timed(
            lambda: Mondrian().anonymize(adult, spec, np.random.default_rng(0)),
            args.repeats,
        )
        partition_times, _ = _timed(
            lambda: mondrian_partition(adult, qis, requirement=spec.requirement),
            args.repeats,
        )
        table = release.table
        certificate = verify_tables({"release": table}, spec.requirement)
        assert certificate.passed, certificate.summary()
        achieved_k = k_anonymity(table, qis)
        achieved_l = distinct_l_diversity(table, qis, SENSITIVE)
        ev = release.evidence
        size = ev["partition_size"]
        rows.append({
            "requirement": label,
            "QIs": len(qis),
            "anonymize s (median)": f"{statistics.median(release_times):.3f}",
            "min-max s": f"{min(release_times):.3f}-{max(release_times):.3f}",
            "partition only s (median)": f"{statistics.median(partition_times):.3f}",
            "partitions": ev["n_partitions"],
            "size min/median/max": f"{size['min']}/{size['median']:g}/{size['max']}",
            "rounds": ev["rounds"],
            "verifier": "passed",
            "achieved k / distinct l": f"{achieved_k} / {achieved_l}",
            "anonypy k-anonymity (PEERS.md)": ANONYPY[k] if not shorthand else "-",
        })  # fmt: skip
        cut_rows.append({"label": label, "cuts": ev["cuts"]})
        print(f"{label}: {rows[-1]['anonymize s (median)']} s", flush=True)
    load_after = _loadavg()

    frame = pd.DataFrame(rows)
    header = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = "\n".join(
        "| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(False)
    )
    cuts = "\n".join(
        f"- {r['label']}: " + ", ".join(f"{name} {n}" for name, n in r["cuts"].items())
        for r in cut_rows
    )
    report = f"""# Mondrian on full UCI Adult

- Command: `uv run python benchmarks/bench_mondrian.py --repeats {args.repeats}`
- Date (UTC): {datetime.now(UTC).strftime("%Y-%m-%d %H:%M")}
- Machine: {_cpu()}, {os.cpu_count()} CPUs, Python {platform.python_version()},
  numpy {np.__version__}, pandas {pd.__version__} ({sys.platform})
- Load (`/proc/loadavg`) before / after: `{load_before}` / `{load_after}`
  (the 2 cores are shared with other engineers: treat timings as +-40%)
- Data: `ppdm.prepare.datasets.load("adult")`, 48,842 rows (train + test), missing
  values kept as NA; loading is not timed.
- Quasi-identifiers: {", ".join(QUASI_IDENTIFIERS)}; with a sensitive
  attribute ({SENSITIVE}: l-diversity, t-closeness) it is removed from the
  quasi-identifiers. Every requirement is given as privacy models
  (`AnonymizationSpec.of(..., k=, l=, l_variant=, c=, t=)`); Mondrian asks
  them through `spec.requirement` (k-anonymity alone: the size bound only).
- Timed: `Mondrian().anonymize(...)` (whole release) and
  `mondrian_partition(..., requirement=)` (partitioning only), {args.repeats}
  repeats each, median reported. Every release passed the independent
  verifier (`ppdm.verify.verify_tables`) against its requirement; k and
  distinct l of {SENSITIVE} measured with `ppdm.privacy.measures`.
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
