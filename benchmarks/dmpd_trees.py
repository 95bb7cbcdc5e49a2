"""The C4.5 trees trained on DMPD's projections, fold by fold (why German gives 70.0%).

Run from the repository root::

    uv run python benchmarks/dmpd_trees.py --dataset german --ks 1,10,20,30,50
        [--repeats 1] [--generations 100] [--population 50] [--ranking c45]

The folds, seeds, quasi-identifier (top9, ranked as ``--ranking`` says),
in-fold MDL discretization and DMPD settings are those of
``benchmarks/bench_dmpd.py`` with the ``decision_tree`` wrapper, so the
releases are the benchmark's. For every fold and k it prints, per released
projection, its features and the C4.5-like tree the accuracy harness trains
on it (J48's defaults, Laplace-corrected leaves, as the harness): its leaves
and depth, pruned and unpruned (J48 also collapses a split that does not
lower the training errors), the wrapper's own cross-validated accuracy of
the chosen partitioning, and the share of test rows the combined
classifier assigns to the majority class. A projection whose pruned tree is
one leaf says nothing but the class frequencies; when every projection's is,
the combination predicts the majority class for every test row.
"""

# ruff: noqa: E501 - Markdown lines
from __future__ import annotations

import argparse

import numpy as np
from bench_dmpd import RANKINGS  # this folder is first on the path
from sklearn.model_selection import StratifiedKFold

from ppdm.algorithms import get_algorithm
from ppdm.config import default_config
from ppdm.model import AnonymizationSpec
from ppdm.prepare import datasets
from ppdm.utility.c45_learner import C45Learner
from ppdm.utility.features import CellFeaturizer
from ppdm.utility.preprocessing import Binning
from ppdm.utility.views import align_probabilities, class_prior, naive_bayes_combination


def _depth(node) -> int:
    return 0 if not node.children else 1 + max(_depth(c) for c in node.children)


def _tree(featurizer, view, target, confidence):
    x = featurizer.transform(view)
    y = view[target].astype(str).to_numpy()
    return C45Learner(
        blocks=list(featurizer.blocks_), laplace=True, confidence=confidence
    ).fit(x, y)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=["adult", "german"], default="german")
    parser.add_argument("--ks", default="1,10,20,30,50")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--generations", type=int, default=100)
    parser.add_argument("--population", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ranking", choices=sorted(RANKINGS), default="c45")
    args = parser.parse_args(argv)
    table = datasets.load(args.dataset)
    target = default_config(args.dataset).target
    table = table[table[target].notna()].reset_index(drop=True)
    qis = RANKINGS[args.ranking](table, target, 9)
    prepare = Binning.of({"method": "mdl", "n_bins": 5}).prepare_for(table, qis, target)
    labels = table[target].astype(str).to_numpy()
    # the harness's splits (ppdm.utility.cross_validation.cross_validate)
    split_seeds = np.random.SeedSequence(args.seed).generate_state(
        args.repeats, dtype=np.uint32
    )
    print(f"quasi-identifier: {', '.join(qis)}\n")
    print(
        "| repeat, fold | k | projection: features | wrapper accuracy (DMPD search) | "
        "leaves / depth pruned | leaves unpruned | majority share of predictions | accuracy |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for repeat, split_seed in enumerate(split_seeds):
        folds = StratifiedKFold(n_splits=2, shuffle=True, random_state=int(split_seed))
        for fold, (train_idx, test_idx) in enumerate(
            folds.split(np.zeros(len(labels)), labels)
        ):
            train, test = prepare(table.iloc[train_idx], table.iloc[test_idx])
            majority = train[target].astype(str).value_counts().index[0]
            y_test = test[target].astype(str).to_numpy()
            for k in [int(k) for k in args.ks.split(",")]:
                if k == 1:
                    views = [train]
                    wrapper = "-"
                else:
                    spec = AnonymizationSpec.of(tuple(qis), None, target, k=k)
                    dmpd = get_algorithm(
                        "dmpd",
                        generations=args.generations,
                        population=args.population,
                        inducer="decision_tree",
                        n_folds=3,
                    )
                    release = dmpd.anonymize(
                        train.copy(), spec, np.random.default_rng(args.seed)
                    )
                    views = dmpd.training_views(release)
                    wrapper = f"{release.evidence['wrapper_accuracy']:.3f}"
                classes = np.unique(train[target].astype(str))
                prior = class_prior(train[target].astype(str).to_numpy(), classes)
                probas = []
                cells = []
                for number, view in enumerate(views, start=1):
                    columns = [c for c in view.columns if c != target]
                    featurizer = CellFeaturizer(exclude=[target]).fit(
                        train[columns + [target]]
                    )
                    pruned = _tree(featurizer, view, target, 0.25)
                    unpruned = _tree(featurizer, view, target, None)
                    probas.append(
                        align_probabilities(
                            pruned.predict_proba(featurizer.transform(test)),
                            pruned.classes_,
                            classes,
                        )
                    )
                    name = "all" if k == 1 else f"{number}: {', '.join(columns)}"
                    cells.append(
                        (
                            name,
                            f"{pruned.n_leaves_} / {_depth(pruned.tree_)}",
                            f"{unpruned.n_leaves_}",
                        )
                    )
                combined = naive_bayes_combination(probas, prior)
                predicted = classes[np.argmax(combined, axis=1)]
                share = float(np.mean(predicted == majority))
                accuracy = float(np.mean(predicted == y_test))
                for name, pruned_size, unpruned_size in cells:
                    print(
                        f"| {repeat}, {fold} | {k} | {name} | {wrapper} | "
                        f"{pruned_size} | {unpruned_size} | {share:.3f} | {accuracy:.3f} |",
                        flush=True,
                    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
