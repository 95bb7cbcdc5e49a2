"""Hold-out accuracy of the release report with and without the missing-value indicator.

    uv run python benchmarks/bench_missing_indicator.py [--adult-rows N]

The release report (`utility_report`, via `holdout_utility`) trains naive Bayes and logistic
regression on the anonymized training split and tests them on original test rows. Suppressed
cells are unknown values; this compares the two treatments on the same split, seed and
release:

- `weka` (the kACTUS paper's, the default): naive Bayes skips an unknown cell, logistic
  regression replaces it by the training mode (nominal) or mean (numeric);
- `indicator` (`missing="indicator"`): logistic regression reads an all-zero one-hot block
  or the training mean plus a `<attribute> suppressed` 0/1 feature, naive Bayes multiplies in
  P(unknown | class) for an unknown cell.

The decision tree is C4.5 under both (identical figures, shown as a check). Cases: German
credit (kACTUS and Mondrian, k = 5), Adult (kACTUS, k = 10; `--adult-rows` samples it, 0 for
all 48,842 rows), the titanic-like table of tests/own_tables.py (kACTUS, k = 5), and the
synthetic release of tests/unit/utility/test_utility_missing.py in which two attributes are
known only in the minority class (the artefact a class-skewed suppression creates). Each
configuration's discretization is MDL fitted on the training split; seed 7, test share 0.3.
One process, one case at a time.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
TREATMENTS = ("weka", "indicator")


def _german_or_adult(dataset: str, algorithm_name: str, k: int, rows: int):
    from ppdm.config import default_config
    from ppdm.model import AnonymizationSpec
    from ppdm.prepare import datasets

    config = default_config(dataset).with_overrides(k=k, l=1, algorithm=algorithm_name)
    original = datasets.load(dataset)
    if rows:
        original = original.sample(rows, random_state=0).reset_index(drop=True)
    qis = list(config.quasi_identifiers)
    spec = AnonymizationSpec.of(tuple(qis), None, config.target, k=k)
    return original, qis, config.target, spec, config.build_algorithm()


def _titanic(k: int):
    from own_tables import titanic_like

    from ppdm.algorithms import get_algorithm
    from ppdm.model import AnonymizationSpec

    columns = ["survived", "pclass", "sex", "age", "sibsp", "parch", "fare"]
    original = titanic_like()[[*columns, "embarked", "who", "deck"]]
    original = original.assign(survived=original["survived"].map({0: "no", 1: "yes"}))
    qis = ["pclass", "sex", "age", "sibsp", "parch", "embarked", "who"]
    spec = AnonymizationSpec.of(tuple(qis), None, "survived", k=k)
    return original, qis, "survived", spec, get_algorithm("kactus")


def _holdout(original, qis, target, spec, algorithm, missing: str) -> dict:
    from ppdm.utility.holdout import holdout_utility
    from ppdm.utility.preprocessing import Binning
    from ppdm.utility.views import as_training_views

    prepare = Binning(method="mdl").prepare_for(original, qis, target)

    def anonymize(train: pd.DataFrame):
        release = algorithm.anonymize(train, spec, np.random.default_rng(7))
        return as_training_views(release, algorithm=algorithm)

    return holdout_utility(
        original,
        anonymize,
        target=target,
        test_size=0.3,
        seed=7,
        missing=missing,
        prepare=prepare,
        prepare_original=prepare,
    )


def _skewed(missing: str) -> dict:
    from test_utility_missing import _skewed_release

    from ppdm.utility import train_and_score

    original, released = _skewed_release(3000, seed=1)
    test, _ = _skewed_release(3000, seed=2)
    scores = train_and_score(
        original,
        released,
        test,
        target="income",
        seed=0,
        models=["decision_tree", "naive_bayes", "logistic_regression"],
        missing=missing,
    )
    majority = float((test["income"] == "<=50K").mean())
    return {"accuracy": scores, "zero_r": {"accuracy": majority}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adult-rows", type=int, default=0, help="0: all rows")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    sys.path.insert(0, str(ROOT / "tests" / "unit" / "utility"))
    started = datetime.now(UTC)
    load = os.getloadavg()
    adult = f"adult ({args.adult_rows or 48842:,} rows)"
    cases = {
        "german, kactus k=5": lambda: _german_or_adult("german", "kactus", 5, 0),
        "german, mondrian k=5": lambda: _german_or_adult("german", "mondrian", 5, 0),
        f"{adult}, kactus k=10": lambda: _german_or_adult(
            "adult", "kactus", 10, args.adult_rows
        ),
        "titanic-like, kactus k=5": lambda: _titanic(5),
        "synthetic class-skewed suppression": None,
    }
    rows = []
    for name, make in cases.items():
        setup = make() if make is not None else None
        for missing in TREATMENTS:
            t0 = time.perf_counter()
            result = _skewed(missing) if setup is None else _holdout(*setup, missing)
            seconds = time.perf_counter() - t0
            zero = result["zero_r"]
            zero = zero["accuracy"] if isinstance(zero, dict) else zero
            for model, entry in result["accuracy"].items():
                rows.append(
                    (name, missing, model, entry["original"], entry["anonymized"], zero)
                )
            print(f"{name} / {missing}: {seconds:.1f} s", file=sys.stderr, flush=True)
    command = "uv run python benchmarks/bench_missing_indicator.py" + (
        f" --adult-rows {args.adult_rows}" if args.adult_rows else ""
    )
    print(f"Command: `{command}`")
    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; load average at start: "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print(f"Date: {started:%Y-%m-%d %H:%M} UTC")
    print()
    print(
        "| case | model | ZeroR | original, weka | release, weka | original, indicator "
        "| release, indicator | release: indicator - weka |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    by = {(r[0], r[1], r[2]): r for r in rows}
    for name in cases:
        for model in ("decision_tree", "naive_bayes", "logistic_regression"):
            weka, indicator = by[(name, "weka", model)], by[(name, "indicator", model)]
            print(
                f"| {name} | {model} | {100 * weka[5]:.2f} | {100 * weka[3]:.2f} | "
                f"{100 * weka[4]:.2f} | {100 * indicator[3]:.2f} | "
                f"{100 * indicator[4]:.2f} | {100 * (indicator[4] - weka[4]):+.2f} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
