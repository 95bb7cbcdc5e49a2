"""Count the fuzz cases of tests/fuzz and how each ended, by running them.

    uv run python benchmarks/fuzz_counts.py [--write]

Runs ``pytest tests/fuzz`` with ``PPDM_FUZZ_COUNTS`` set: every case the
fuzz tests generate is judged by ``tests/fuzz/fuzz_cases.judge`` (a
documented error naming the file, column or key with nothing published, or
a release the independent verifier accepts), and the fuzz folder's conftest
writes the outcomes there. The hypothesis examples are derandomized, so a
run of the same code generates the same cases. Prints the tables as
Markdown; ``--write`` also puts them into benchmarks/results/fuzzing.md
between its ``<!-- counts -->`` markers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "fuzzing.md"
BEGIN, END = "<!-- counts -->", "<!-- /counts -->"
FAMILIES = ("csv", "parquet", "sql", "config", "release")
#: pytest's last line: "3 failed, 40 passed in 91.2s (0:01:31)".
_SUMMARY = re.compile(r"^=* ?\d+ (passed|failed|error).* in [\d.]+s")


def run_fuzz_folder() -> tuple[list[list], float, str, int]:
    """Run tests/fuzz; return the counted outcomes, seconds, pytest's summary, code."""
    with tempfile.TemporaryDirectory() as folder:
        counts = Path(folder) / "counts.json"
        start = time.perf_counter()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "tests/fuzz",
                "-q",
                "-p",
                "no:cacheprovider",
            ],
            cwd=ROOT,
            env={**os.environ, "PPDM_FUZZ_COUNTS": str(counts)},
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - start
        rows = json.loads(counts.read_text()) if counts.is_file() else []
    finals = [ln for ln in done.stdout.splitlines() if _SUMMARY.match(ln)]
    summary = finals[-1].strip("= ") if finals else f"pytest exit {done.returncode}"
    return rows, seconds, summary, done.returncode


def markdown(rows: list[list], seconds: float, summary: str) -> str:
    by_family: dict[str, Counter] = defaultdict(Counter)
    by_kind: dict[tuple[str, str], Counter] = defaultdict(Counter)
    examples: dict[str, str] = {}
    for family, spoiled, outcome, n, example in rows:
        by_family[family][outcome] += n
        by_kind[(family, spoiled)][outcome] += n
        if example and outcome not in examples:
            examples[outcome] = example
    total = sum(n for *_, n, _ in rows)
    errors = sum(n for _, _, outcome, n, _ in rows if outcome != "release verified")
    outcomes = sorted({outcome for _, _, outcome, _, _ in rows})
    lines = [
        f"Generated cases judged: **{total}** ({errors} refused with a documented "
        f"error, {total - errors} ended in a release the verifier accepts; none "
        "ended otherwise: any other end fails the test run).",
        "",
        f"`pytest tests/fuzz`: {summary}; {seconds:.0f} s wall clock for the whole "
        "folder (the fuzz cases, the issue's configuration cases through `ppdm run`, "
        f"the hold-out cross-check), {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
        f"{platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end.",
        "",
        "### Outcomes by source",
        "",
        "| outcome (error class, stage) | " + " | ".join(FAMILIES) + " | all |",
        "|---|" + "---:|" * (len(FAMILIES) + 1),
    ]
    for outcome in outcomes:
        cells = [by_family[f][outcome] for f in FAMILIES]
        lines.append(
            f"| {outcome} | "
            + " | ".join(str(c or "") for c in cells)
            + f" | {sum(cells)} |"
        )
    cells = [sum(by_family[f].values()) for f in FAMILIES]
    lines.append("| **all** | " + " | ".join(map(str, cells)) + f" | {sum(cells)} |")
    lines += ["", "### Outcomes by what was spoiled", ""]
    lines += ["| source | spoiled | cases | outcomes |", "|---|---|---:|---|"]
    for (family, spoiled), counter in sorted(by_kind.items()):
        said = ", ".join(f"{outcome}: {n}" for outcome, n in sorted(counter.items()))
        lines.append(f"| {family} | {spoiled} | {sum(counter.values())} | {said} |")
    lines += ["", "### One message of each error class and stage", ""]
    for outcome in outcomes:
        if outcome in examples:
            shown = examples[outcome].replace("|", "\\|")
            shown = shown if len(shown) <= 300 else shown[:297] + "..."
            lines.append(f"- {outcome}: `{shown}`")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"update {RESULTS.name}")
    args = parser.parse_args(argv)
    rows, seconds, summary, code = run_fuzz_folder()
    text = markdown(rows, seconds, summary)
    print(text)
    if args.write:
        page = RESULTS.read_text(encoding="utf-8")
        head, rest = page.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        RESULTS.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}", encoding="utf-8")
    return code


if __name__ == "__main__":
    sys.exit(main())
