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
- the raw training split (``age`` a number) and its lattice-optimal
  release (full-domain generalization over ``hierarchies/adult``, the same
  k, l and suppression): ranges such as ``[0, 80)``, hierarchy labels read
  as the value sets of the values they cover (``America``: 17 countries), a
  quasi-identifier suppressed whole, as the out-of-core run releases Adult
  x100; featurized as the report featurizes them (the raw split's
  featurizer, with the hierarchies' covers);
- every training split repeated ``--copies`` times (4 by default: 136,756
  rows, the size of the out-of-core utility report's sample), featurized by
  the featurizer fitted on its original split;
- ``fit`` and ``predict_proba`` on the test split, median of ``--repeats``.

With ``--before FILE`` (an earlier version of the learner's module, e.g.
``git show 47de709:src/ppdm/utility/c45_learner.py > /tmp/c45_before.py``)
the two versions are timed alternately, run by run, so that a shared
machine's load falls on both alike; CPU seconds are reported beside wall
seconds for the same reason.

Each tree's digest (every node's block, threshold, branch fractions and
class weights, and the predicted probabilities, to the last bit) is printed
and written, so two versions of the learner can be shown to learn the same
trees.

Run from the repository root::

    uv run python benchmarks/bench_c45_learner.py  # -> benchmarks/results/c45_learner.md
    uv run python benchmarks/bench_c45_learner.py --copies 1 --repeats 1 --no-write
    uv run python benchmarks/bench_c45_learner.py --before /tmp/c45_before.py
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
from bench_utility import (
    ADULT_QI,  # ppdm run's default release; this folder is first on the path
)
from sklearn.model_selection import train_test_split

from ppdm.algorithms import get_algorithm
from ppdm.generalization.hierarchies import load_hierarchies
from ppdm.model import AnonymizationSpec
from ppdm.prepare import datasets
from ppdm.prepare.discretize import apply_cut_points, discretize
from ppdm.utility.c45_learner import C45Learner
from ppdm.utility.features import CellFeaturizer
from ppdm.utility.learners import feature_view
from ppdm.utility.loss import covers_from_hierarchies

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "c45_learner.md"
TARGET = "income"


def _cases(
    copies: int, ranges: str
) -> list[tuple[str, pd.DataFrame, CellFeaturizer, pd.DataFrame]]:
    """``(training split, its table, the featurizer, the test split)`` of
    each fit."""
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
    mondrian = get_algorithm("mondrian").anonymize(
        train_cut, spec, np.random.default_rng(0)
    )
    hierarchies = load_hierarchies(ROOT / "hierarchies" / "adult")
    lattice = get_algorithm("lattice-optimal").anonymize(
        train,
        AnonymizationSpec.of(
            ADULT_QI,
            "occupation",
            TARGET,
            k=10,
            l=2,
            suppression_limit=0.01,
            hierarchies=hierarchies,
        ),
        np.random.default_rng(0),
    )
    bins, reading = feature_view("decision_tree", "weka", ranges)

    def featurizer(frame: pd.DataFrame, **options) -> CellFeaturizer:
        return CellFeaturizer(
            exclude=[TARGET], numeric_bins=bins, numeric_ranges=reading, **options
        ).fit(frame)

    def repeat(frame: pd.DataFrame) -> pd.DataFrame:
        return pd.concat([frame] * copies, ignore_index=True)

    binned_features = featurizer(train_cut)
    raw_features = featurizer(train, covers=covers_from_hierarchies(hierarchies))
    return [
        ("original", repeat(train_cut), binned_features, test_cut),
        ("released", repeat(mondrian.table.astype(str)), binned_features, test_cut),
        ("original (raw)", repeat(train), raw_features, test),
        (
            "released (lattice-optimal)",
            repeat(lattice.table.astype(str)),
            raw_features,
            test,
        ),
    ]


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


def _learner_from(path: Path) -> type:
    """``C45Learner`` of the module in ``path`` (an earlier version)."""
    spec = importlib.util.spec_from_file_location("c45_learner_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module.C45Learner


def _timed(call):
    wall, cpu = time.perf_counter(), time.process_time()
    value = call()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ranges", choices=("midpoint", "uniform"), default="midpoint")
    parser.add_argument("--before", type=Path, help="an earlier c45_learner.py")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    learners = {"after": C45Learner}
    if args.before is not None:
        learners = {"before": _learner_from(args.before), "after": C45Learner}
    lines = []
    for side, table, featurizer, test in _cases(args.copies, args.ranges):
        x_test = featurizer.transform(test)
        x = featurizer.transform(table)
        y = table[TARGET].astype(str).to_numpy()
        times = {name: [] for name in learners}
        digests = {}
        for _ in range(args.repeats):
            for name, learner_class in learners.items():
                learner = learner_class(blocks=featurizer.blocks_)
                _, fit_wall, fit_cpu = _timed(lambda: learner.fit(x, y))
                proba, predict_wall, _ = _timed(lambda: learner.predict_proba(x_test))
                times[name].append((fit_wall, fit_cpu, predict_wall))
                digests[name] = (learner.n_leaves_, _digest(learner, proba))
        for name in learners:
            fit_wall, fit_cpu, predict_wall = (
                statistics.median(column) for column in zip(*times[name])
            )
            leaves, digest = digests[name]
            line = (
                f"| {side} | {name} | {x.shape[0]:,} | {leaves} | {fit_wall:.2f} "
                f"| {fit_cpu:.2f} | {predict_wall:.3f} | `{digest}` |"
            )
            print(line, flush=True)
            lines.append(line)
    if args.no_write:
        return
    before = f" --before {args.before}" if args.before is not None else ""
    header = (
        f"\n## {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, commit {_commit()}\n\n"
        f"`uv run python benchmarks/bench_c45_learner.py --copies {args.copies} "
        f"--repeats {args.repeats} --ranges {args.ranges}{before}`; "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores "
        f"(shared), Python {platform.python_version()}; medians of "
        f"{args.repeats}. Test split: {x_test.shape[0]:,} rows.\n\n"
        "| training split | learner | rows | leaves | fit (s) | fit (CPU s) "
        "| predict_proba (s) | digest |\n"
        "|---|---|---:|---:|---:|---:|---:|---|\n"
    )
    if not RESULTS.exists():
        RESULTS.write_text(
            "# C4.5 learner: fit and predict on Adult and its Mondrian release\n"
        )
    with RESULTS.open("a") as out:
        out.write(header + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
