"""C4.5 learner benchmark (:class:`ppdm.utility.c45_learner.C45Learner`).

The utility report trains the C4.5 tree twice: on the original training
split and on the released one. This times those two fits, and the
predictions on the test split, the way the report builds its features
(:class:`ppdm.utility.scoring` fits one :class:`CellFeaturizer` on the
original training split, with the tree's view of numeric columns):

- Adult split 70/30 (stratified, seed 0), ``age`` binned by MDL on the
  training split, the training split anonymized by Mondrian (k = 10,
  distinct l = 2 on occupation, 1 % suppression; ranges, value sets and
  suppressed cells), as ``ppdm run``'s default release;
- both training splits repeated ``--copies`` times (4 by default: 136,756
  rows, the size of the out-of-core utility report's sample), featurized by
  the featurizer fitted on the original split;
- ``fit`` and ``predict_proba`` on the test split, median of ``--repeats``.

Each tree's digest (every node's block, threshold, branch fractions and
class weights, and the predicted probabilities, to the last bit) is printed
and written, so two versions of the learner can be shown to learn the same
trees.

Run from the repository root::

    uv run python benchmarks/bench_c45_learner.py  # -> benchmarks/results/c45_learner.md
    uv run python benchmarks/bench_c45_learner.py --copies 1 --repeats 1 --no-write
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import statistics
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from ppdm.algorithms import get_algorithm
from ppdm.model import AnonymizationSpec
from ppdm.prepare import datasets
from ppdm.prepare.discretize import apply_cut_points, discretize
from ppdm.utility.c45_learner import C45Learner
from ppdm.utility.features import CellFeaturizer
from ppdm.utility.learners import feature_view

RESULTS = Path(__file__).parent / "results" / "c45_learner.md"
ADULT_QI = (
    "age",
    "workclass",
    "education",
    "marital-status",
    "race",
    "sex",
    "native-country",
)
TARGET = "income"


def _tables(copies: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(original training split, released training split, test split)."""
    adult = datasets.load("adult")
    train, test = train_test_split(
        adult, test_size=0.3, stratify=adult[TARGET].astype(str), random_state=0
    )
    binned = discretize(train, ["age"], TARGET)
    train_cut = apply_cut_points(train, binned.cut_points)
    test_cut = apply_cut_points(test, binned.cut_points)
    spec = AnonymizationSpec.of(
        ADULT_QI, "occupation", TARGET, k=10, l=2, suppression_limit=0.01
    )
    release = get_algorithm("mondrian").anonymize(
        train_cut, spec, np.random.default_rng(0)
    )
    released = release.table.astype(str)

    def repeat(frame: pd.DataFrame) -> pd.DataFrame:
        return pd.concat([frame] * copies, ignore_index=True)

    return repeat(train_cut), repeat(released), test_cut


def _digest(learner: C45Learner, proba: np.ndarray) -> str:
    """Every node's split and weights, and the probabilities, bit for bit."""
    h = hashlib.sha256()
    stack = [learner.tree_]
    while stack:
        node = stack.pop()
        h.update(np.int64(node.block).tobytes())
        h.update(np.float64(node.threshold).tobytes())
        h.update(np.asarray(node.fractions, dtype=np.float64).tobytes())
        h.update(np.asarray(node.distribution, dtype=np.float64).tobytes())
        stack.extend(node.children)
    h.update(np.ascontiguousarray(proba, dtype=np.float64).tobytes())
    return h.hexdigest()[:16]


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ranges", choices=("midpoint", "uniform"), default="midpoint")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    original, released, test = _tables(args.copies)
    bins, reading = feature_view("decision_tree", "weka", args.ranges)
    featurizer = CellFeaturizer(
        exclude=[TARGET], numeric_bins=bins, numeric_ranges=reading
    ).fit(original)
    x_test = featurizer.transform(test)
    lines = []
    for side, table in (("original", original), ("released", released)):
        x = featurizer.transform(table)
        y = table[TARGET].astype(str).to_numpy()
        fits, predicts = [], []
        for _ in range(args.repeats):
            started = time.perf_counter()
            learner = C45Learner(blocks=featurizer.blocks_).fit(x, y)
            fits.append(time.perf_counter() - started)
            started = time.perf_counter()
            proba = learner.predict_proba(x_test)
            predicts.append(time.perf_counter() - started)
        line = (
            f"| {side} | {x.shape[0]:,} | {learner.n_leaves_} "
            f"| {statistics.median(fits):.2f} | {statistics.median(predicts):.3f} "
            f"| `{_digest(learner, proba)}` |"
        )
        print(line, flush=True)
        lines.append(line)
    if args.no_write:
        return
    header = (
        f"\n## {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, commit {_commit()}\n\n"
        f"`uv run python benchmarks/bench_c45_learner.py --copies {args.copies} "
        f"--repeats {args.repeats} --ranges {args.ranges}`; "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores "
        f"(shared), Python {platform.python_version()}; medians of "
        f"{args.repeats}. Test split: {x_test.shape[0]:,} rows.\n\n"
        "| training split | rows | leaves | fit (s) | predict_proba (s) | digest |\n"
        "|---|---:|---:|---:|---:|---|\n"
    )
    if not RESULTS.exists():
        RESULTS.write_text(
            "# C4.5 learner: fit and predict on Adult and its Mondrian release\n"
        )
    with RESULTS.open("a") as out:
        out.write(header + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
