"""How much classification accuracy a release costs: the evaluation protocol.

The privacy-preserving data-mining literature measures a release by training
a classifier on the anonymized training data and testing it on untouched
original rows (Friedman, Wolff & Schuster 2008; Kisilevich, Rokach, Elovici &
Shapira 2010). Two protocols are offered:

- :func:`holdout_utility`: one stratified train/test split, for the release
  report;
- :func:`cross_validate`: the kACTUS paper's 5 x 2-fold cross-validation
  (Dietterich 1998), for experiments: in each repetition a stratified 2-fold
  split; each half in turn is anonymized and trained on, the other half tests.

In both, the anonymizer sees the training part only (the caller's
``anonymize_fn`` runs the same algorithm and parameters on it) and the test
rows are never altered. Every model is also trained on the original training
part, which gives the "before" accuracy of the same split.

Models (scikit-learn), all fed by :class:`ppdm.utility.features.CellFeaturizer`
followed by mean imputation of unknown numeric cells:

- ``"decision_tree"``: ``DecisionTreeClassifier(criterion="entropy",
  min_samples_leaf=2)``, the closest scikit-learn has to C4.5 (no gain ratio,
  no error-based pruning; ``min_samples_leaf=2`` is C4.5's ``-M 2``);
- ``"naive_bayes"``: ``GaussianNB``. The features mix continuous values,
  interval midpoints and *fractional* one-hot memberships of value sets;
  ``CategoricalNB`` needs integer codes and cannot take fractional
  memberships, ``BernoulliNB`` would binarize them, so one Gaussian model
  over all features is the choice that reads every released cell;
- ``"logistic_regression"``: ``StandardScaler`` + ``LogisticRegression(
  max_iter=1000)``.

References
----------
.. [1] S. Kisilevich, L. Rokach, Y. Elovici and B. Shapira, "Efficient
   Multidimensional Suppression for K-Anonymity", IEEE Transactions on
   Knowledge and Data Engineering 22(3):334-347, 2010 (kACTUS; 5 x 2 CV
   protocol).
.. [2] T. G. Dietterich, "Approximate Statistical Tests for Comparing
   Supervised Classification Learning Algorithms", Neural Computation
   10(7):1895-1923, 1998.
.. [3] A. Friedman, R. Wolff and A. Schuster, "Providing k-anonymity in data
   mining", The VLDB Journal 17(4):789-804, 2008.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from ppdm.exceptions import InvalidParameterError
from ppdm.model import SUPPRESSED, Release
from ppdm.utility.features import CellFeaturizer

__all__ = [
    "MODELS",
    "AnonymizeFn",
    "PrepareFn",
    "make_model",
    "train_and_score",
    "holdout_utility",
    "cross_validate",
    "summarize_cv",
    "HOLDOUT_PROTOCOL",
    "CV_PROTOCOL",
]

logger = logging.getLogger(__name__)

#: Models evaluated by default, in report order.
MODELS = ("decision_tree", "naive_bayes", "logistic_regression")

#: Anonymize a training table: returns the released training table (or a
#: single-table Release). It must run the caller's algorithm and parameters.
AnonymizeFn = Callable[[pd.DataFrame], "pd.DataFrame | Release"]

#: Fold preprocessing fitted on the training part only, applied to both parts
#: (e.g. discretization): ``(train, test) -> (train, test)``.
PrepareFn = Callable[[pd.DataFrame, pd.DataFrame], tuple[pd.DataFrame, pd.DataFrame]]

HOLDOUT_PROTOCOL = (
    "Hold-out protocol: the original table is split once into a training part "
    "({train_pct:.0f}%, {n_train} rows) and a test part ({test_pct:.0f}%, {n_test} "
    "rows), stratified on the target '{target}' with seed {seed}. The "
    "anonymization algorithm, with the release's parameters, is run on the "
    "training part only ({n_released} rows released). Each model "
    "({models}) is trained twice, on the released training part and on the "
    "original training part, and both are tested on the same untouched test "
    "part; the accuracy difference is the cost of anonymization. Released cells "
    "become features on the original schema: ranges and intervals their "
    "midpoint, value sets a fractional one-hot membership, suppressed cells "
    "an unknown value (mean-imputed for numbers, all-zero for categories)."
)

CV_PROTOCOL = (
    "5 x 2-fold cross-validation (Dietterich 1998), as in the kACTUS paper "
    "(Kisilevich et al. 2010): {repeats} repetitions, each a stratified "
    "{folds}-fold split of the original table (seeded); for each fold, the "
    "training part alone is anonymized, the models are trained on the release "
    "and tested on the untouched held-out part."
)


def make_model(name: str, seed: int) -> Pipeline:
    """A fresh, seeded model pipeline (imputation included) by name."""
    impute = ("impute", SimpleImputer(strategy="mean", keep_empty_features=True))
    if name == "decision_tree":
        model = DecisionTreeClassifier(
            criterion="entropy", min_samples_leaf=2, random_state=seed
        )
        return Pipeline([impute, ("model", model)])
    if name == "naive_bayes":
        return Pipeline([impute, ("model", GaussianNB())])
    if name == "logistic_regression":
        model = LogisticRegression(max_iter=1000, random_state=seed)
        return Pipeline([impute, ("scale", StandardScaler()), ("model", model)])
    raise InvalidParameterError(
        f"unknown model {name!r}; available: {', '.join(MODELS)}"
    )


def _released_table(result: pd.DataFrame | Release) -> pd.DataFrame:
    if isinstance(result, Release):
        return result.table  # raises, naming the tables, for multi-table releases
    if not isinstance(result, pd.DataFrame):
        raise InvalidParameterError(
            "anonymize_fn must return a DataFrame or a single-table Release; "
            f"got {type(result).__name__}"
        )
    return result


def _check_models(models: Sequence[str]) -> tuple[str, ...]:
    unknown = [m for m in models if m not in MODELS]
    if unknown or not models:
        raise InvalidParameterError(
            f"models must be a non-empty subset of {list(MODELS)}; got {list(models)}"
        )
    return tuple(models)


def _check_target(original: pd.DataFrame, target: str) -> None:
    if target not in original.columns:
        raise InvalidParameterError(f"target {target!r} is not a column of the table")
    if original[target].isna().any():
        raise InvalidParameterError(
            f"target {target!r} has missing values; drop those rows first"
        )


def train_and_score(
    original_train: pd.DataFrame,
    released_train: pd.DataFrame,
    test: pd.DataFrame,
    *,
    target: str,
    seed: int,
    models: Sequence[str] = MODELS,
    marker: str = SUPPRESSED,
    with_original: bool = True,
) -> dict[str, dict[str, float]]:
    """Accuracy of each model trained on the original and on the released part.

    The featurizer is fitted on ``original_train`` (its schema and domains);
    both training tables and ``test`` go through it.

    Returns
    -------
    dict
        ``{model: {"original": acc, "anonymized": acc, "difference": anon - orig}}``;
        ``"anonymized"`` is NaN when the release kept no row; ``"original"``
        (and the difference) is NaN when ``with_original`` is False.
    """
    featurizer = CellFeaturizer(exclude=[target], suppression_marker=marker)
    featurizer.fit(original_train)
    x_test = featurizer.transform(test)
    y_test = test[target].astype(str).to_numpy()
    x_orig = featurizer.transform(original_train)
    y_orig = original_train[target].astype(str).to_numpy()
    scores = {}
    for name in models:
        original_acc = (
            _fit_score(name, seed, x_orig, y_orig, x_test, y_test)
            if with_original
            else float("nan")
        )
        anonymized_acc = _score_released(
            name, seed, featurizer, released_train, target, x_test, y_test
        )
        scores[name] = {
            "original": original_acc,
            "anonymized": anonymized_acc,
            "difference": anonymized_acc - original_acc,
        }
    return scores


def _fit_score(
    name: str,
    seed: int,
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
) -> float:
    if len(y_train) == 0:
        return float("nan")
    model = make_model(name, seed).fit(x_train, y_train)
    return float(np.mean(model.predict(x_test) == y_test))


def _score_released(
    name: str,
    seed: int,
    featurizer: CellFeaturizer,
    released: pd.DataFrame,
    target: str,
    x_test: np.ndarray,
    y_test: np.ndarray,
) -> float:
    if target not in released.columns:
        raise InvalidParameterError(
            f"the released table has no target column {target!r}; the target "
            "must be released unchanged"
        )
    x_rel = featurizer.transform(released)
    y_rel = released[target].astype(str).to_numpy()
    return _fit_score(name, seed, x_rel, y_rel, x_test, y_test)


def holdout_utility(
    original: pd.DataFrame,
    anonymize_fn: AnonymizeFn,
    *,
    target: str,
    test_size: float = 0.3,
    seed: int,
    models: Sequence[str] = MODELS,
    marker: str = SUPPRESSED,
) -> dict[str, Any]:
    """Accuracy before and after anonymization on one stratified hold-out split.

    Parameters
    ----------
    original : pandas.DataFrame
        The table before anonymization (never modified).
    anonymize_fn : callable
        ``anonymize_fn(train) -> released_train``: runs the release's algorithm
        and parameters on the training part only.
    target : str
        Class column; must have no missing value.
    test_size : float, default=0.3
    seed : int
        Seeds the split and the models.
    models : sequence of str, default=MODELS
    marker : str, default="*"
        Suppression marker of the release.

    Returns
    -------
    dict
        ``protocol`` (one paragraph), ``split`` (row counts), ``seed``,
        ``test_size`` and ``models``: ``{model: {"original", "anonymized",
        "difference"}}`` accuracies in [0, 1]. JSON-serialisable.

    References
    ----------
    .. [1] S. Kisilevich, L. Rokach, Y. Elovici and B. Shapira, "Efficient
       Multidimensional Suppression for K-Anonymity", IEEE TKDE 22(3):334-347,
       2010.
    """
    models = _check_models(models)
    _check_target(original, target)
    if not 0.0 < test_size < 1.0:
        raise InvalidParameterError(f"test_size must be in (0, 1); got {test_size}")
    train, test = train_test_split(
        original,
        test_size=test_size,
        stratify=original[target].astype(str),
        random_state=seed,
    )
    released = _released_table(anonymize_fn(train.copy()))
    scores = train_and_score(
        train, released, test, target=target, seed=seed, models=models, marker=marker
    )
    protocol = HOLDOUT_PROTOCOL.format(
        train_pct=100 * (1 - test_size),
        test_pct=100 * test_size,
        n_train=len(train),
        n_test=len(test),
        target=target,
        seed=seed,
        n_released=len(released),
        models=", ".join(models),
    )
    return {
        "protocol": protocol,
        "seed": int(seed),
        "test_size": float(test_size),
        "split": {
            "train": len(train),
            "test": len(test),
            "released_train": len(released),
            "lost_records": len(train) - len(released),
        },
        "models": scores,
    }


def cross_validate(
    original: pd.DataFrame,
    anonymize_fn: AnonymizeFn,
    *,
    target: str,
    seed: int,
    repeats: int = 5,
    folds: int = 2,
    models: Sequence[str] = MODELS,
    prepare: PrepareFn | None = None,
    marker: str = SUPPRESSED,
    with_original: bool = True,
) -> pd.DataFrame:
    """The kACTUS paper's 5 x 2-fold cross-validation of a release's utility.

    For each repetition r (seeded from ``seed``), a stratified ``folds``-fold
    split; for each fold, the training part is anonymized with
    ``anonymize_fn``, every model is trained on the release (and, for
    reference, on the original training part) and tested on the untouched
    held-out part.

    Parameters
    ----------
    original : pandas.DataFrame
        Never modified.
    anonymize_fn : callable
        ``anonymize_fn(train) -> released_train`` (DataFrame or single-table
        Release). It must be deterministic for the result to be.
    target : str
    seed : int
    repeats : int, default=5
    folds : int, default=2
    models : sequence of str, default=MODELS
    prepare : callable, optional
        ``prepare(train, test) -> (train, test)`` run on each fold before
        anonymization, fitted on the training part only (e.g. discretization
        of numeric quasi-identifiers).
    marker : str, default="*"
    with_original : bool, default=True
        Also train every model on the original training part (the
        ``accuracy_original`` column; NaN when False, which halves the cost of
        a sweep that already has a k=1 baseline).

    Returns
    -------
    pandas.DataFrame
        One row per (repeat, fold, model): ``repeat``, ``fold``, ``model``,
        ``accuracy`` (trained on the release), ``accuracy_original`` (trained
        on the original training part), ``n_train``, ``n_released``,
        ``n_test``, ``seconds_anonymize``.

    References
    ----------
    .. [1] S. Kisilevich, L. Rokach, Y. Elovici and B. Shapira, "Efficient
       Multidimensional Suppression for K-Anonymity", IEEE TKDE 22(3):334-347,
       2010.
    .. [2] T. G. Dietterich, "Approximate Statistical Tests for Comparing
       Supervised Classification Learning Algorithms", Neural Computation
       10(7):1895-1923, 1998.
    """
    models = _check_models(models)
    _check_target(original, target)
    for name, value, low in (("repeats", repeats, 1), ("folds", folds, 2)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise InvalidParameterError(f"{name} must be an integer >= {low}; got {value!r}")
    labels = original[target].astype(str).to_numpy()
    split_seeds = np.random.SeedSequence(seed).generate_state(repeats, dtype=np.uint32)
    rows = []
    for repeat, split_seed in enumerate(split_seeds):
        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=int(split_seed))
        for fold, (train_idx, test_idx) in enumerate(
            splitter.split(np.zeros(len(labels)), labels)
        ):
            train = original.iloc[train_idx]
            test = original.iloc[test_idx]
            if prepare is not None:
                train, test = prepare(train, test)
            started = time.perf_counter()
            released = _released_table(anonymize_fn(train.copy()))
            seconds = time.perf_counter() - started
            scores = train_and_score(
                train, released, test, target=target, seed=seed, models=models,
                marker=marker, with_original=with_original,
            )
            logger.info(
                "repeat %d fold %d: %d -> %d rows released, %s", repeat, fold,
                len(train), len(released),
                {m: round(s["anonymized"], 4) for m, s in scores.items()},
            )
            for name in models:
                rows.append(
                    {
                        "repeat": repeat,
                        "fold": fold,
                        "model": name,
                        "accuracy": scores[name]["anonymized"],
                        "accuracy_original": scores[name]["original"],
                        "n_train": len(train),
                        "n_released": len(released),
                        "n_test": len(test),
                        "seconds_anonymize": seconds,
                    }
                )
    return pd.DataFrame(rows)


def summarize_cv(results: pd.DataFrame, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """Mean and standard deviation of the accuracies per group.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :func:`cross_validate` (possibly concatenated with extra key
        columns such as ``algorithm`` and ``k``).
    by : sequence of str, default=("model",)

    Returns
    -------
    pandas.DataFrame
        ``by`` columns, then ``mean``, ``sd`` (sample sd, ddof=1), ``n`` of the
        anonymized accuracy, and ``mean_original`` / ``sd_original``.
    """
    grouped = results.groupby(list(by), sort=False, dropna=False)
    summary = grouped.agg(
        mean=("accuracy", "mean"),
        sd=("accuracy", "std"),
        n=("accuracy", "size"),
        mean_original=("accuracy_original", "mean"),
        sd_original=("accuracy_original", "std"),
    )
    return summary.reset_index()
