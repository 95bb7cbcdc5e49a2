"""The experiments' accuracy protocol: the kACTUS paper's 5 x 2 cross-validation.

:func:`cross_validate` runs Dietterich's 5 x 2 design (Kisilevich et al.
2010): in each repetition a stratified 2-fold split; each half in turn is
prepared (e.g. discretized, fitted on that half only), anonymized and trained
on, the other half tests. The anonymizer sees the training half only and the
test rows are never altered; a multi-table release is scored through its
training views (:mod:`ppdm.utility.views`). :func:`summarize_cv` gives the
mean, the standard deviation and a t-based 95 % interval over the folds.

References
----------
.. [1] S. Kisilevich, L. Rokach, Y. Elovici and B. Shapira, "Efficient
   Multidimensional Suppression for K-Anonymity", IEEE Transactions on
   Knowledge and Data Engineering 22(3):334-347, 2010 (kACTUS; 5 x 2 CV
   protocol).
.. [2] T. G. Dietterich, "Approximate Statistical Tests for Comparing
   Supervised Classification Learning Algorithms", Neural Computation
   10(7):1895-1923, 1998.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold

from ppdm import parallel
from ppdm.exceptions import InvalidParameterError
from ppdm.model import SUPPRESSED
from ppdm.utility.holdout import AnonymizeFn
from ppdm.utility.intervals import t_interval
from ppdm.utility.learners import MODELS, check_missing, check_models
from ppdm.utility.preprocessing import PrepareFn
from ppdm.utility.scoring import Covers, check_target, train_and_score
from ppdm.utility.views import as_training_views

__all__ = ["CV_PROTOCOL", "cross_validate", "summarize_cv"]

logger = logging.getLogger(__name__)

CV_PROTOCOL = (
    "{repeats} x {folds}-fold cross-validation (Dietterich's 5 x 2 design, as "
    "in the kACTUS paper, Kisilevich et al. 2010): {repeats} repetitions, each "
    "a stratified "
    "{folds}-fold split of the original table (seeded); for each fold, the "
    "training part alone is anonymized, the models are trained on the release "
    "and tested on the untouched held-out part. Unknown (suppressed or "
    "missing) cells are {missing_text}"
)


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
    covers: Covers | None = None,
    missing: str = "weka",
    ranges: str = "midpoint",
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
        ``anonymize_fn(train) -> release``: the training views of the
        release of ``train`` (a DataFrame, a Release, or
        ``algorithm.training_views(release)``; several views are combined by
        the naive Bayes rule, :mod:`ppdm.utility.views`). It must be
        deterministic for the result to be.
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
    covers : mapping, optional
        As in :func:`ppdm.utility.holdout.holdout_utility`.
    missing : {"weka", "zeros", "indicator"}, default="weka"
        As in :func:`ppdm.utility.holdout.holdout_utility`.
    ranges : {"midpoint", "uniform"}, default="midpoint"
        How the C4.5 tree reads a released numeric range
        (:data:`ppdm.utility.learners.RANGES`).

    Returns
    -------
    pandas.DataFrame
        One row per (repeat, fold, model): ``repeat``, ``fold``, ``model``,
        ``accuracy`` (trained on the release), ``accuracy_original`` (trained
        on the original training part), ``n_train``, ``n_released`` (rows of
        the smallest training view), ``n_test``, ``seconds_anonymize``.

    References
    ----------
    .. [1] S. Kisilevich, L. Rokach, Y. Elovici and B. Shapira, "Efficient
       Multidimensional Suppression for K-Anonymity", IEEE TKDE 22(3):334-347,
       2010.
    .. [2] T. G. Dietterich, "Approximate Statistical Tests for Comparing
       Supervised Classification Learning Algorithms", Neural Computation
       10(7):1895-1923, 1998.
    """
    models = check_models(models)
    check_target(original, target)
    check_missing(missing)
    for name, value, low in (("repeats", repeats, 1), ("folds", folds, 2)):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, np.integer))
            or value < low
        ):
            raise InvalidParameterError(
                f"{name} must be an integer >= {low}; got {value!r}"
            )
    labels = original[target].astype(str).to_numpy()
    split_seeds = np.random.SeedSequence(seed).generate_state(repeats, dtype=np.uint32)
    jobs = [
        (repeat, fold, train_idx, test_idx)
        for repeat, split_seed in enumerate(split_seeds)
        for fold, (train_idx, test_idx) in enumerate(
            StratifiedKFold(
                n_splits=folds, shuffle=True, random_state=int(split_seed)
            ).split(np.zeros(len(labels)), labels)
        )
    ]

    def run_fold(job: tuple[int, int, np.ndarray, np.ndarray]) -> list[dict]:
        repeat, fold, train_idx, test_idx = job
        train = original.iloc[train_idx]
        test = original.iloc[test_idx]
        if prepare is not None:
            train, test = prepare(train, test)
        started = time.perf_counter()
        views = as_training_views(anonymize_fn(train.copy()))
        seconds = time.perf_counter() - started
        n_released = min(len(view) for _, view in views)
        scores = train_and_score(
            train,
            views,
            test,
            target=target,
            seed=seed,
            models=models,
            marker=marker,
            with_original=with_original,
            covers=covers,
            missing=missing,
            ranges=ranges,
        )
        logger.info(
            "repeat %d fold %d: %d -> %d rows released, %s",
            repeat,
            fold,
            len(train),
            n_released,
            {m: round(s["anonymized"], 4) for m, s in scores.items()},
        )
        return [
            {
                "repeat": repeat,
                "fold": fold,
                "model": name,
                "accuracy": scores[name]["anonymized"],
                "accuracy_original": scores[name]["original"],
                "n_train": len(train),
                "n_released": n_released,
                "n_test": len(test),
                "seconds_anonymize": seconds,
            }
            for name in models
        ]

    # Folds are independent: a parallel runner installed by the caller
    # (ppdm.parallel) spreads them; the rows come back in fold order.
    rows = [
        row for fold_rows in parallel.map_in_order(run_fold, jobs) for row in fold_rows
    ]
    return pd.DataFrame(rows)


def summarize_cv(results: pd.DataFrame, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """Mean, standard deviation and 95 % t interval of the accuracies per group.

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
        anonymized accuracy, ``ci_low`` / ``ci_high`` (``mean +- t * sd /
        sqrt(n)``, :func:`ppdm.utility.intervals.t_interval`, clipped to
        [0, 1]; NaN with fewer than two folds), and ``mean_original`` / ``sd_original`` /
        ``ci_low_original`` / ``ci_high_original`` of the accuracy trained on
        the original part.
    """
    grouped = results.groupby(list(by), sort=False, dropna=False)
    summary = grouped.agg(
        mean=("accuracy", "mean"),
        sd=("accuracy", "std"),
        n=("accuracy", "size"),
        mean_original=("accuracy_original", "mean"),
        sd_original=("accuracy_original", "std"),
    )
    for column, suffix in (("accuracy", ""), ("accuracy_original", "_original")):
        intervals = [
            t_interval(values.to_numpy()) or (np.nan, np.nan)
            for _, values in grouped[column]
        ]
        # an accuracy lies in [0, 1], so does the interval of its mean
        summary[f"ci_low{suffix}"] = np.clip([i[0] for i in intervals], 0.0, 1.0)
        summary[f"ci_high{suffix}"] = np.clip([i[1] for i in intervals], 0.0, 1.0)
    order = ["mean", "sd", "n", "ci_low", "ci_high", "mean_original", "sd_original"]
    summary = summary[order + ["ci_low_original", "ci_high_original"]]
    return summary.reset_index()
