"""Benchmark SafePub on Adult: classification accuracy by epsilon, and its speed.

Run from the repository root::

    PPDM_BENCH_SAFEPUB_KEY=<any 16+ byte text> uv run python benchmarks/bench_safepub.py \\
        [--epsilons 0.01,0.1,0.5,1,2] [--repeats 5] [--steps 300]
        [--search-fraction 0.1] [--out PATH]

Setting: ``configs/adult-safepub.yaml`` (the quasi-identifiers with hierarchies
in ``hierarchies/adult/``: age, workclass, education, marital-status, race,
sex, native-country; target income), the embedded Adult rows with no missing
value. Protocol: the project's ``ppdm compare`` folds (``repeats`` x 2-fold
cross-validation, stratified, seeded): SafePub anonymizes the training half
only, the learners (decision tree, naive Bayes, logistic regression) train on
the release and are tested on the untouched other half, with the original
data as the baseline. SafePub runs with keyed randomness (this script's key),
so a re-run reproduces every figure.

Beside ``safepub`` the script measures ``safepub-best-pivot``: the same search
returning the pivot of best score, as ARX's implementation does. That output
rule reads the data outside the exponential mechanism, so it is NOT
differentially private; it is measured to show how much of the difference to
the paper comes from it.

Speed: SafePub on the whole table at epsilon = 1, three runs, median.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ppdm.algorithms import ALGORITHMS
from ppdm.algorithms.safepub import SafePub, safepub_search
from ppdm.config import load_config
from ppdm.experiments import compare as C
from ppdm.generalization.hierarchies import load_hierarchies
from ppdm.model import AnonymizationSpec

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "adult-safepub.yaml"
KEY = "env:PPDM_BENCH_SAFEPUB_KEY"


class SafePubBestPivot(SafePub):
    """SafePub's search returning the best-scoring pivot (ARX's rule; not DP)."""

    name: ClassVar[str] = "safepub-best-pivot"

    def _search(self, scorer: Any, heights: Any, p: Any, rng: Any) -> Any:
        result = safepub_search(
            heights,
            lambda node: scorer.score(node, self.score),
            epsilon=p.epsilon_search,
            sensitivity=scorer.sensitivity(self.score),
            steps=int(self.steps),
            rng=rng,
        )
        best = max(result.pivots, key=lambda node: scorer.score(node, self.score))
        return type(result)(best, result.pivots, result.draws, result.epsilon_per_draw)


def run(
    epsilons: list[float], repeats: int, steps: int, search_fraction: float
) -> dict[str, Any]:
    ALGORITHMS["safepub-best-pivot"] = SafePubBestPivot
    config = load_config(CONFIG)
    table = C.load_table(config).dropna().reset_index(drop=True)
    rows = []
    baseline = None
    for epsilon in epsilons:
        params = {
            "epsilon": epsilon,
            "steps": steps,
            "search_fraction": search_fraction,
            "randomness": "keyed",
            "key": KEY,
        }
        plan = C.plan_comparison(
            config,
            [2],
            algorithms=["safepub", "safepub-best-pivot"],
            table=table,
            params={"safepub": params, "safepub-best-pivot": params},
            repeats=repeats,
        )
        started = time.perf_counter()
        result = C.run_comparison(plan, measure_memory=False)
        print(f"epsilon={epsilon}: {time.perf_counter() - started:.0f} s", flush=True)
        for _, row in result.summary.iterrows():
            if row["algorithm"] == C.BASELINE:
                baseline = row
                continue
            rows.append({"epsilon": epsilon, **row.to_dict()})
    # speed on the whole table
    hierarchies = load_hierarchies(config.hierarchy_dir)
    spec = AnonymizationSpec(
        config.requirement,
        config.target,
        0.0,
        {q: hierarchies[q] for q in config.quasi_identifiers},
    )
    seconds = []
    for seed in range(3):
        started = time.perf_counter()
        SafePub(epsilon=1.0, steps=steps, search_fraction=search_fraction).anonymize(
            table, spec, np.random.default_rng(seed)
        )
        seconds.append(time.perf_counter() - started)
    return {
        "rows": rows,
        "baseline": baseline,
        "n": len(table),
        "seconds": seconds,
        "k": {
            e: SafePub(epsilon=e, search_fraction=search_fraction)
            .parameters(len(table))
            .k
            for e in epsilons
        },
        "beta": {
            e: SafePub(epsilon=e, search_fraction=search_fraction)
            .parameters(len(table))
            .beta
            for e in epsilons
        },
    }


def fmt(mean: float, sd: float) -> str:
    if mean != mean:  # NaN
        return "-"
    return f"{100 * mean:.1f} +- {100 * sd:.1f}"


def write(results: dict[str, Any], args: argparse.Namespace, load: str) -> str:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    command = (
        "PPDM_BENCH_SAFEPUB_KEY=... uv run python benchmarks/bench_safepub.py "
        f"--epsilons {args.epsilons} --repeats {args.repeats} --steps {args.steps} "
        f"--search-fraction {args.search_fraction}"
    )
    base = results["baseline"]
    lines = [
        "# SafePub on Adult: classification accuracy by epsilon, and speed",
        "",
        f"- command: `{command}`",
        f"- date: {datetime.now(UTC).isoformat(timespec='seconds')}; code: {commit}",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}",
        f"- load at start: {load}",
        f"- data: embedded Adult, rows with no missing value ({results['n']:,}); "
        "quasi-identifiers age, workclass, education, marital-status, race, sex, "
        "native-country (hierarchies/adult/), target income; nothing else released",
        f"- protocol: {args.repeats} x 2-fold stratified cross-validation "
        "(`ppdm compare` folds); SafePub on the training half, learners trained on "
        "the release, tested on the untouched half; search_fraction "
        f"{args.search_fraction}, "
        f"steps {args.steps}, score classification, delta default "
        "10^-(ceil(log10 n_train)+1), keyed randomness",
        "",
        "| epsilon | beta | k (whole table) | algorithm | folds ok | DT acc % | NB acc % | "
        "LR acc % | rows released (of n/2) | smallest class | s per fold |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in results["rows"]:
        e = row["epsilon"]
        lines.append(
            f"| {e:g} | {results['beta'][e]:.3f} | {results['k'][e]} | "
            f"{row['algorithm']} | {row.get('folds', '-')} | "
            f"{fmt(row['acc_decision_tree'], row['sd_decision_tree'])} | "
            f"{fmt(row['acc_naive_bayes'], row['sd_naive_bayes'])} | "
            f"{fmt(row['acc_logistic_regression'], row['sd_logistic_regression'])} | "
            f"{results['n'] // 2 - row.get('lost_records', float('nan')):,.0f} | "
            f"{row.get('achieved_k', float('nan')):.0f} | "
            f"{row.get('seconds', float('nan')):.2f} |"
        )
    if base is not None:
        lines.append(
            "| - | - | - | original data | - | "
            f"{fmt(base['acc_decision_tree'], base['sd_decision_tree'])} | "
            f"{fmt(base['acc_naive_bayes'], base['sd_naive_bayes'])} | "
            f"{fmt(base['acc_logistic_regression'], base['sd_logistic_regression'])} "
            f"| {results['n'] // 2:,} | - | - |"
        )
    s = results["seconds"]
    lines += [
        "",
        f"Speed, whole table ({results['n']:,} rows), epsilon = 1: "
        f"{', '.join(f'{x:.2f}' for x in s)} s (median {statistics.median(s):.2f} s).",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", default="0.01,0.1,0.5,1,2")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--search-fraction", type=float, default=0.1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    load = Path("/proc/loadavg").read_text().strip()
    epsilons = [float(e) for e in args.epsilons.split(",")]
    results = run(epsilons, args.repeats, args.steps, args.search_fraction)
    text = write(results, args, load)
    print(text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
