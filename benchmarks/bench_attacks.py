"""Linkage and homogeneity attacks on every algorithm's release of Adult and German.

For each dataset, registered algorithm and k, the release is made in this
process as ``ppdm run`` makes it (:func:`ppdm.experiments.attacks.release_for_attack`:
the dataset's shipped default configuration with the algorithm, the
algorithm's parameters from a shipped configuration of it when one exists,
and k), then attacked by :func:`ppdm.experiments.attacks.attack_release`: an
attacker who knows the original quasi-identifier values of a random sample of
the released people links each to the released records that cover those
values and picks one uniformly (re-identification rate = mean expected
success; requirement: mean and max <= 1/k), and infers the sensitive value
when the candidates hold one value only (homogeneity attack; requirement:
success <= 1/l where l-diversity is required).

Run from the repository root::

    uv run python benchmarks/bench_attacks.py --datasets adult,german \\
        --algorithms mondrian,kactus,pbg-ea,lattice-optimal --k 5,10,50 \\
        --sample 1000,all --seed 0 --out benchmarks/results/attacks.md

(the defaults: Adult and German, every registered algorithm, k in {5, 10,
50}, 1,000 targets then every released person, seed 0). ``--sample`` takes a
comma-separated list of sizes, ``all`` meaning every released person; each
size is one table. A control follows (skip it with ``--no-control``): the
same releases with l = 1, attacked with the first sample size, to show what
the homogeneity attack finds without l-diversity. Writes ``--out`` (default
``benchmarks/results/attacks.md``) and prints it; exits with status 1 when a
release misses a requirement (a control release that cannot be made with
l = 1 is listed, not counted).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from ppdm.algorithms import ALGORITHMS
from ppdm.config import ReleaseConfig, default_config
from ppdm.experiments.attacks import run_attacks

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "attacks.md"
DATASETS = ("adult", "german")
KS = (5, 10, 50)


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _samples(text: str) -> list[int | None]:
    out: list[int | None] = []
    for part in _names(text):
        out.append(None if part == "all" else int(part))
    return out


def _fmt(value: float, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def _verdict(row: pd.Series) -> str:
    if row["error"]:
        return f"not released ({row['error']})"
    failed = [
        name
        for name, ok in (
            ("mean > 1/k", row["rate_ok"]),
            ("max > 1/k", row["max_ok"]),
            ("homogeneity > 1/l", row["homogeneity_ok"]),
        )
        if not ok
    ]
    return "pass" if not failed else "FAIL: " + ", ".join(failed)


def _params(params: dict) -> str:
    if not params:
        return "defaults"
    return ", ".join(f"{key}={value}" for key, value in sorted(params.items()))


def _models(config: ReleaseConfig) -> list[str]:
    """The requirement's models, k-anonymity written with k varied."""
    models = config.requirement.models
    return [
        "k-anonymity (k per row)" if m.name == "k-anonymity" else str(m) for m in models
    ]


def table_markdown(frame: pd.DataFrame) -> list[str]:
    """The measured table, one row per release."""
    lines = [
        "| dataset | algorithm | k | l | rows released / in | targets "
        "| re-id rate mean | max | 1/k | true record not a candidate "
        "| homogeneity success | confidence mean / max | majority guess | 1/l "
        "| result | s (release + attack) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for _, row in frame.iterrows():
        if row["error"]:
            lines.append(
                f"| {row['dataset']} | {row['algorithm']} | {row['k']} | {row['l']} "
                + "| - " * 10
                + f"| {_verdict(row)} | - |"
            )
            continue
        lines.append(
            f"| {row['dataset']} | {row['algorithm']} | {row['k']} | {row['l']} "
            f"| {int(row['rows_released']):,} / {int(row['rows_in']):,} "
            f"| {int(row['targets']):,} "
            f"| {_fmt(row['rate_mean'], 5)} | {_fmt(row['rate_max'], 5)} "
            f"| {_fmt(row['inv_k'], 3)} | {int(row['not_covered'])} "
            f"| {_fmt(row['homogeneity'], 3)} "
            f"| {_fmt(row['confidence_mean'], 3)} / {_fmt(row['confidence_max'], 3)} "
            f"| {_fmt(row['majority_guess'], 3)} | {_fmt(row['inv_l'], 2)} "
            f"| {_verdict(row)} "
            f"| {row['seconds_anonymize']:.2f} + {row['seconds_attack']:.2f} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--algorithms", default=",".join(ALGORITHMS))
    parser.add_argument("--k", default=",".join(map(str, KS)))
    parser.add_argument(
        "--sample",
        default="1000,all",
        help="comma-separated target counts; 'all' = every released person",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--no-control",
        action="store_true",
        help="skip the control run with l = 1 (k-anonymity alone)",
    )
    args = parser.parse_args(argv)
    datasets, algorithms = _names(args.datasets), _names(args.algorithms)
    ks, samples = _ints(args.k), _samples(args.sample)
    out = args.out.resolve()
    try:
        shown_out = out.relative_to(ROOT)
    except ValueError:
        shown_out = out
    command = (
        f"uv run python benchmarks/bench_attacks.py --datasets {','.join(datasets)} "
        f"--algorithms {','.join(algorithms)} --k {','.join(map(str, ks))} "
        f"--sample {args.sample} --seed {args.seed} --out {shown_out}"
        + (" --no-control" if args.no_control else "")
    )
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if dirty:
            commit += " with uncommitted changes in the tree"
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    load_start = Path("/proc/loadavg").read_text().strip()
    started = time.perf_counter()
    frames = []
    for sample in samples:
        frame = run_attacks(datasets, algorithms, ks, sample=sample, seed=args.seed)
        frame["sample"] = "all" if sample is None else sample
        frames.append(frame)
    control = None
    if not args.no_control:
        control = run_attacks(
            datasets, algorithms, ks, sample=samples[0], seed=args.seed, l=1
        )
        control["sample"] = "all" if samples[0] is None else samples[0]
    elapsed = time.perf_counter() - started
    everything = pd.concat(frames, ignore_index=True)

    lines = ["# Linkage and homogeneity attacks on the releases", ""]
    lines += [
        f"- command: `{command}`",
        f"- date: {datetime.now(UTC).isoformat(timespec='seconds')}; code: {commit}",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}, pandas "
        f"{pd.__version__}",
        f"- load at start (`/proc/loadavg`): {load_start}",
        "",
        "## Releases attacked",
        "",
        "Each release is the dataset's shipped default configuration "
        "(`ppdm.config.default_config`) with the algorithm and k replaced, made "
        "in-process as the pipeline makes it (`ppdm.pipeline.plan_release`: "
        "only the columns the roles let leave, numeric quasi-identifiers "
        "discretized first for algorithms taking binned "
        "input, the shipped hierarchies given to algorithms that generalize along "
        "them, `rng = default_rng(seed)`); the input is the embedded table, which "
        "validation passes whole. Algorithm parameters come from a shipped "
        "configuration of that algorithm and dataset when there is one "
        "(`ppdm.experiments.attacks.shipped_params`), else the defaults.",
        "",
        "| dataset | quasi-identifiers | sensitive | target | requirement "
        "| suppression limit | discretize | seed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for dataset in datasets:
        config = default_config(dataset)
        lines.append(
            f"| {dataset} | {', '.join(config.quasi_identifiers)} "
            f"| {config.sensitive_attribute} | {config.target} "
            f"| {'; '.join(_models(config))} "
            f"| {config.suppression_limit} | {config.discretize.method} "
            f"| {config.seed} |"
        )
    params = {
        (row["dataset"], row["algorithm"]): _params(row["params"])
        for _, row in everything.iterrows()
    }
    lines += [
        "",
        "Algorithm parameters: "
        + "; ".join(
            f"{algorithm} on {dataset}: {text}"
            for (dataset, algorithm), text in params.items()
        )
        + ".",
        "",
        "## What is measured",
        "",
        "- **Targets**: people drawn uniformly without replacement among those "
        f"whose record is in the release (seed {args.seed}); the attacker knows "
        "their original (raw, not discretized) quasi-identifier values.",
        "- **Candidates** of a target: released records each of whose "
        "quasi-identifier cells covers the target's original value (an interval "
        "contains it, a value set or a hierarchy label includes it, `*` covers "
        "everything, an empty cell covers a missing value, other text the equal "
        "value). Ground truth: the input position of every released row, carried "
        "through the algorithm in an extra column.",
        "- **Re-identification rate**: mean over targets of the expected success "
        "of a uniform pick among the candidates, 1/|candidates| when the "
        "target's own record is a candidate, else 0; **max** is the largest "
        "single target's. Requirement: mean <= 1/k and max <= 1/k. "
        "'True record not a candidate' counts targets whose own released record "
        "does not cover their original values (0 means every released label was "
        "read as its rows' values).",
        "- **Homogeneity success**: share of targets whose candidates all hold "
        "one sensitive value, the target's own (the homogeneity attack of "
        "Machanavajjhala et al.). Requirement (issue #13): <= 1/l. Reported as "
        "well, without a requirement: the **confidence** (largest share of one "
        "sensitive value among a target's candidates; mean and max over "
        "targets) and the **majority guess** (mean expected success of guessing "
        "the candidates' most frequent sensitive value, ties split evenly).",
        "",
    ]
    failed = 0
    for frame in frames:
        sample = frame["sample"].iloc[0]
        title = "every released person" if sample == "all" else f"{sample:,} targets"
        lines += [f"## Results: {title}", ""]
        lines += table_markdown(frame)
        lines.append("")
        failed += int((~frame["passed"].astype(bool)).sum())
        ok = frame[frame["error"] == ""]
        if len(ok):
            at_bound = int((ok["rate_max"] * ok["k"] > 1 - 1e-9).sum())
            worst = ok.loc[(ok["rate_max"] * ok["k"]).idxmax()]
            top = ok.loc[ok["confidence_max"].idxmax()]
            lines += [
                f"- {int(frame['passed'].sum())} of {len(frame)} releases meet every "
                "requirement.",
                f"- Highest max rate relative to 1/k: {worst['dataset']} / "
                f"{worst['algorithm']} at k = {worst['k']}: "
                f"{_fmt(worst['rate_max'], 5)} = {worst['rate_max'] * worst['k']:.3f}"
                f" x 1/k; releases whose max reaches 1/k (some class of exactly k "
                f"records that no other class overlaps): {at_bound}.",
                f"- Highest confidence: {_fmt(top['confidence_max'], 3)} "
                f"({top['dataset']} / {top['algorithm']} at k = {top['k']}); "
                "releases where the homogeneity attack exposed anyone: "
                f"{int((ok['homogeneity'] > 0).sum())}. Distinct l-diversity bounds "
                "the number of sensitive values among the candidates, not their "
                "shares.",
                "",
            ]
    if control is not None:
        sample = control["sample"].iloc[0]
        title = "every released person" if sample == "all" else f"{sample:,} targets"
        lines += [
            f"## Control: k-anonymity alone (l = 1), {title}",
            "",
            "The same releases without l-diversity, attacked the same way on the "
            "configuration's sensitive attribute, to show what the homogeneity "
            "attack finds when nothing stops it (no requirement on it here).",
            "",
        ]
        lines += table_markdown(control)
        lines.append("")
        ok = control[control["error"] == ""]
        failed += int((~ok["passed"].astype(bool)).sum())
        if len(ok):
            top = ok.loc[ok["homogeneity"].idxmax()]
            lines += [
                f"- {int(ok['passed'].sum())} of {len(ok)} releases made meet k "
                f"(mean and max); {len(control) - len(ok)} could not be made with "
                "l = 1 (the reason is in the table; not counted as a failure).",
                f"- Largest homogeneity success without l-diversity: "
                f"{_fmt(top['homogeneity'], 3)} ({top['dataset']} / "
                f"{top['algorithm']} at k = {top['k']}).",
                "",
            ]
    lines += [
        f"- total wall time: {elapsed:.1f} s; load at end (`/proc/loadavg`): "
        + Path("/proc/loadavg").read_text().strip(),
        "",
    ]
    text = "\n".join(lines)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
