"""DMPD accuracy on Adult and German with the 5 x 2 CV harness (paper, Section 5.3).

Run from the repository root::

    uv run python benchmarks/bench_dmpd.py --dataset adult --ks 1,50,100,200,500
        [--generations 100] [--population 50] [--repeats 5] [--inducers decision_tree,naive_bayes]
    uv run python benchmarks/bench_dmpd.py --dataset german --ks 1,10,20,30,50
    ... [--workers 2]   # the cross-validation folds on a local Dask cluster of 2 processes

Setting (Matatov et al. 2010): every column but the class is a feature; the
quasi-identifier is the top N features (9 here, the paper's "top9"), ranked
as the paper ranks them (Section 5.4): the root attribute of a C4.5 tree on
the raw values (the project's C4.5, J48's defaults: gain ratio, categories
split multiway, numbers at thresholds of their values), removed, the next
tree's root, and so on (:func:`ppdm.trees.c45.root_ranking`), on the whole
data set as the paper does. ``--ranking binary-entropy`` ranks instead by the
root of a scikit-learn entropy tree (information gain, binary splits of the
integer codes, categories in alphabetical order), for comparison; numeric
quasi-identifiers are
discretized by MDL inside each fold (fitted on the training half); k=1 is the
data unchanged (the baseline). For each fold DMPD runs on the training half
with the wrapper inducer named by ``--inducers`` (one DMPD run per inducer),
and the models are trained on its projections, combined by the naive Bayes
rule, and tested on the untouched other half: the C4.5-like tree for the
``decision_tree`` wrapper, naive Bayes for the ``naive_bayes`` one (as the
paper pairs them). Appends a section to ``benchmarks/results/dmpd.md`` with
the exact command, machine and figures.
"""

# ruff: noqa: E501 - Markdown lines
from __future__ import annotations

import argparse
import logging
import os
import platform
import shlex
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

from ppdm import parallel
from ppdm.algorithms.dmpd import feature_codes
from ppdm.config import default_config
from ppdm.experiments import compare as C
from ppdm.prepare import datasets
from ppdm.trees.c45 import root_ranking

OUT = Path(__file__).parent / "results" / "dmpd.md"
#: Paper, Tables 1 and 3 (Adult) and 1 and 5 (German), top9, mean ± sd over
#: its 5 x 2 CV; the baseline is the inducer alone, k=1 DMPD without anonymity.
PAPER = {
    ("adult", "decision_tree"): "83.03 ± 0.10, 83.00 ± 0.10, 82.63 ± 1.15, "
    "82.99 ± 0.08 (Table 1; Table 3: 83.00 ± 0.13, 83.01 ± 0.08 at k = 200, 500); "
    "baseline 85.58 ± 0.51, k=1 86.59 ± 0.22",
    ("adult", "naive_bayes"): "81.81 ± 0.13, 81.41 ± 0.79, 81.47 ± 0.77, "
    "81.19 ± 1.11; baseline 82.68 ± 0.27, k=1 84.87 ± 0.20",
    ("german", "decision_tree"): "71.86 ± 2.35, 70.78 ± 2.22, 71.12 ± 2.51, "
    "63.01 ± 16.49; baseline 69.88 ± 2.12, k=1 73.23 ± 7.44",
    ("german", "naive_bayes"): "73.79 ± 2.37, 73.71 ± 2.30, 71.26 ± 2.59, "
    "69.84 ± 1.87; baseline 73.81 ± 1.13, k=1 75.03 ± 2.03",
}


def binary_entropy_ranking(table: pd.DataFrame, target: str, n: int) -> list[str]:
    """Roots of successive scikit-learn entropy trees on value codes.

    Not C4.5: information gain without the split information, and a category
    is split off by a threshold on its alphabetical code, not one branch per
    value. Kept to compare with the C4.5 ranking.
    """
    features = [c for c in table.columns if c != target]
    y = feature_codes(table[target], exact=True)[0]
    chosen: list[str] = []
    for _ in range(n):
        rest = [f for f in features if f not in chosen]
        x = np.column_stack([feature_codes(table[f], exact=False)[0] for f in rest])
        tree = DecisionTreeClassifier(
            criterion="entropy", min_samples_leaf=20, random_state=0
        ).fit(x, y)
        chosen.append(rest[int(tree.tree_.feature[0])])
    return chosen


RANKINGS = {"c45": root_ranking, "binary-entropy": binary_entropy_ranking}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=["adult", "german"], default="adult")
    parser.add_argument("--ks", default="1,50,100,200,500")
    parser.add_argument("--top", type=int, default=9)
    parser.add_argument("--ranking", choices=sorted(RANKINGS), default="c45")
    parser.add_argument("--generations", type=int, default=100)
    parser.add_argument("--population", type=int, default=50)
    parser.add_argument("--n-folds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--inducers", default="decision_tree,naive_bayes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="spread the folds over a local Dask cluster of this many processes",
    )
    args = parser.parse_args(argv)
    # one line per fold on stderr: a run of an hour shows how far it is
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(message)s",
        datefmt="%H:%M:%S",
    )
    logging.getLogger("ppdm").setLevel(logging.INFO)
    if args.workers > 1:
        from distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        )
        client = Client(cluster)

        def on_dask(fn, items):
            return client.gather(client.map(fn, items, pure=False))

        try:
            with parallel.mapped_by(on_dask):
                return _main(args, argv)
        finally:
            client.close()
            cluster.close()
    return _main(args, argv)


def _main(args: argparse.Namespace, argv: list[str] | None) -> int:
    table = datasets.load(args.dataset)
    target = default_config(args.dataset).target
    table = table[table[target].notna()].reset_index(drop=True)
    qis = RANKINGS[args.ranking](table, target, args.top)
    config = C.sweep_config(
        default_config(args.dataset),
        list(table.columns),
        quasi_identifiers=qis,
        target=target,
        discretize="mdl",
        seed=args.seed,
    )
    ks = [int(k) for k in args.ks.split(",")]
    load = Path("/proc/loadavg").read_text().strip()
    sections = [
        f"## {args.dataset}, top{args.top}, {args.repeats} x 2 CV, "
        f"{args.generations} generations x {args.population}",
        "",
        f"- command: `uv run python benchmarks/bench_dmpd.py {shlex.join(sys.argv[1:] if argv is None else argv)}`",
        f"- date: {datetime.now(UTC).isoformat(timespec='seconds')}; machine: "
        f"{platform.machine()}, {os.cpu_count()} cores (shared), Python {platform.python_version()}; "
        f"load at start: {load}",
        f"- quasi-identifier ({args.ranking} ranking): {', '.join(qis)}; wrapper: {args.n_folds}-fold CV; folds run "
        + (
            f"on a local Dask cluster of {args.workers} processes"
            if args.workers > 1
            else "one after the other"
        ),
        "",
        "| wrapper inducer / model | "
        + " | ".join(f"k={k}" for k in ks)
        + " | paper | DMPD s per fold |",
        "|---|" + "---|" * (len(ks) + 2),
    ]
    for inducer in args.inducers.split(","):
        start = time.perf_counter()
        # The comparison's harness: k = 1 is its baseline (no anonymization).
        plan = C.plan_comparison(
            config,
            [k for k in ks if k > 1],
            algorithms=["dmpd"],
            table=table,
            params={
                "dmpd": {
                    "generations": args.generations,
                    "population": args.population,
                    "inducer": inducer,
                    "n_folds": args.n_folds,
                }
            },
            models=[inducer],
            repeats=args.repeats,
            folds=2,
        )
        result = C.run_comparison(
            plan, map_fn=parallel.map_in_order, measure_memory=False
        )
        summary = result.summary
        cells = []
        for k in ks:
            row = summary[(summary["k"] == k) & (summary["folds"] > 0)]
            if len(row):
                mean = 100 * float(row[f"acc_{inducer}"].iloc[0])
                sd = 100 * float(row[f"sd_{inducer}"].iloc[0])
                cells.append(f"{mean:.2f} ± {sd:.2f}")
            else:
                cells.append("infeasible")
        timing = summary[summary["algorithm"] == "dmpd"]["seconds"].mean()
        sections.append(
            f"| {inducer} | "
            + " | ".join(cells)
            + f" | {PAPER[(args.dataset, inducer)]} | {timing:.1f} |"
        )
        for row in summary[summary["reason"] != ""].itertuples():
            sections.append(f"| error | k={row.k}: {row.reason} |")
        print(sections[-1], f"({time.perf_counter() - start:.0f} s)", flush=True)
    text = (
        args.out.read_text()
        if args.out.exists()
        else "# DMPD accuracy (5 x 2 CV harness)\n\n"
    )
    args.out.write_text(text + "\n".join(sections) + "\n\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
