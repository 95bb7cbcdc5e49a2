"""The release report's accuracy protocol: one stratified hold-out split.

The privacy-preserving data-mining literature measures a release by training
a classifier on the anonymized training data and testing it on untouched
original rows (Friedman, Wolff & Schuster 2008; Kisilevich, Rokach, Elovici &
Shapira 2010). :func:`holdout_utility` does it once for the release report:
the original table is split, the release pipeline (the fold preparation,
e.g. discretization, then the algorithm) is re-run on the training part
alone, and each model trained on its release is compared with the same model
trained on the original training part, on the same test part. Nothing is
fitted on a test row: the preparation's cut points, the featurizer's domains
and ranges, the imputation values and the models all come from training rows.

References
----------
.. [1] S. Kisilevich, L. Rokach, Y. Elovici and B. Shapira, "Efficient
   Multidimensional Suppression for K-Anonymity", IEEE Transactions on
   Knowledge and Data Engineering 22(3):334-347, 2010.
.. [2] A. Friedman, R. Wolff and A. Schuster, "Providing k-anonymity in data
   mining", The VLDB Journal 17(4):789-804, 2008.
.. [3] E. B. Wilson, "Probable inference, the law of succession, and
   statistical inference", JASA 22(158):209-212, 1927.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
from sklearn.model_selection import train_test_split

from ppdm import progress
from ppdm.exceptions import (
    AnonymizationError,
    InfeasibleConstraintError,
    InvalidParameterError,
)
from ppdm.model import SUPPRESSED
from ppdm.utility.intervals import CONFIDENCE, accuracy_interval
from ppdm.utility.learners import MISSING_TEXT, MODELS, check_missing, check_models
from ppdm.utility.metrics import zero_rule
from ppdm.utility.preprocessing import PrepareFn
from ppdm.utility.scoring import Covers, check_target, train_and_score
from ppdm.utility.views import as_training_views

__all__ = ["AnonymizeFn", "HOLDOUT_PROTOCOL", "holdout_protocol", "holdout_utility"]

logger = logging.getLogger(__name__)

#: Anonymize a training table: returns its release as training views: a
#: DataFrame (one view), a Release (its tables), or a list of DataFrames
#: (``algorithm.training_views(release)``). It must run the caller's
#: algorithm and parameters.
AnonymizeFn = Callable[[pd.DataFrame], Any]

HOLDOUT_PROTOCOL = (
    "Hold-out protocol: the original table is split once into a training part "
    "({train_pct:.0f}%, {n_train} rows) and a test part ({test_pct:.0f}%, {n_test} "
    "rows), stratified on the target '{target}' (each class keeps its share in "
    "both parts) with seed {seed}. {preprocessing}The "
    "anonymization algorithm, with the release's parameters, is run on the "
    "training part only ({n_released} rows released). Each model "
    "({models}) is trained twice, on the released training part and on the "
    "original training part, and both are tested on the same untouched test "
    "part; the accuracy difference is the cost of anonymization. {views}"
    "Everything the evaluation fits is fitted on training rows only: the "
    "feature encoding (attribute domains, numeric ranges, naive Bayes bins), "
    "the imputation values and the models; the test rows serve only to measure "
    "accuracy, given with its {confidence:.0f}% Wilson score interval over the "
    "{n_test} test rows. Released cells "
    "become features on the original schema: ranges and intervals their "
    "midpoint, value sets a fractional one-hot membership, suppressed cells "
    "an unknown value, {missing_text}"
)

_VIEWS_TEXT = (
    "The release has {w} training views ({names}): on the release, each model "
    "is trained once per view on that view's columns, and the views' class "
    "probabilities are combined by the naive Bayes rule of DMPD (Matatov, "
    "Rokach & Maimon 2010, equation 1), P(y | x) proportional to the product "
    "of P_k(y | x_k) over the views divided by P(y)^(w-1), with P(y) the class "
    "frequencies of the released training target (C4.5 leaf probabilities "
    "Laplace-corrected, as in DMPD). "
)


def holdout_protocol(
    *,
    n_train: int,
    n_test: int,
    test_size: float,
    target: str,
    seed: int,
    n_released: int | str,
    models: Sequence[str],
    missing: str,
    preprocessing: str = "",
    views: Sequence[str] = (),
) -> str:
    """The protocol paragraph of :func:`holdout_utility`, in words."""
    views_text = (
        _VIEWS_TEXT.format(w=len(views), names=", ".join(views))
        if len(views) > 1
        else ""
    )
    return HOLDOUT_PROTOCOL.format(
        missing_text=MISSING_TEXT[missing],
        train_pct=100 * (1 - test_size),
        test_pct=100 * test_size,
        n_train=n_train,
        n_test=n_test,
        target=target,
        seed=seed,
        n_released=n_released,
        models=", ".join(models),
        preprocessing=f"{preprocessing} " if preprocessing else "",
        views=views_text,
        confidence=100 * CONFIDENCE,
    )


def _no_better(entry: dict[str, Any], side: str, zero_r: dict[str, Any]) -> bool:
    """True when a model's accuracy or balanced accuracy is not above the
    majority-class rule's on the same test rows (it learnt nothing usable)."""
    accuracy = entry[side]
    balanced = entry.get(f"{side}_balanced_accuracy")
    if accuracy is None or math.isnan(accuracy):
        return False
    return bool(
        accuracy <= zero_r["accuracy"] + 1e-12
        or (
            balanced is not None
            and not math.isnan(balanced)
            and balanced <= zero_r["balanced_accuracy"] + 1e-12
        )
    )


def _check_splittable(classes: pd.Series, target: str, test_size: float) -> None:
    """Refuse a table too small for a stratified hold-out split, saying why.

    The split needs at least two rows of every class (one for each part),
    and each part at least one row per class: with ``n`` rows the test part
    has ``ceil(test_size * n)`` rows and the training part the rest.

    Raises
    ------
    InfeasibleConstraintError
        Names the target, its class counts, the rows of each part and what
        was needed.
    """
    counts = classes.value_counts(sort=True, ascending=True)
    n, n_classes = len(classes), len(counts)
    n_test = math.ceil(test_size * n)
    n_train = n - n_test
    problems = []
    few = counts[counts < 2]
    if len(few):
        shown = ", ".join(f"{name!r}: {count}" for name, count in few.head(5).items())
        more = f" and {len(few) - 5} more" if len(few) > 5 else ""
        problems.append(
            f"{len(few)} class{'es' * (len(few) != 1)} of the target {target!r} "
            f"{'have' if len(few) != 1 else 'has'} fewer than 2 rows ({shown}{more})"
        )
    if min(n_train, n_test) < n_classes:
        problems.append(
            f"its {n} rows split into {n_train} training and {n_test} test rows "
            f"(test_size {test_size:g}), fewer than the {n_classes} classes of "
            f"{target!r} in one part"
        )
    if problems:
        raise InfeasibleConstraintError(
            "the utility report's stratified hold-out split cannot be made: "
            + "; ".join(problems)
            + f"; it needs at least 2 rows of every class and at least {n_classes} "
            "rows in each part (more rows, or fewer target classes)"
        )


def holdout_utility(
    original: pd.DataFrame,
    anonymize_fn: AnonymizeFn,
    *,
    target: str,
    test_size: float = 0.3,
    seed: int,
    models: Sequence[str] = MODELS,
    marker: str = SUPPRESSED,
    covers: Covers | None = None,
    missing: str = "weka",
    prepare: PrepareFn | None = None,
    ranges: str = "midpoint",
    prepare_original: PrepareFn | None | str = "same",
) -> dict[str, Any]:
    """Accuracy before and after anonymization on one stratified hold-out split.

    Parameters
    ----------
    original : pandas.DataFrame
        The table before anonymization (never modified).
    anonymize_fn : callable
        ``anonymize_fn(train) -> release``: runs the release's algorithm and
        parameters on the (prepared) training part only, and returns its
        training views: a DataFrame, a Release, or
        ``algorithm.training_views(release)``.
    target : str
        Class column; must have no missing value.
    test_size : float, default=0.3
    seed : int
        Seeds the split and the models.
    models : sequence of str, default=MODELS
    marker : str, default="*"
        Suppression marker of the release.
    covers : mapping, optional
        Coverage of generalized labels (see
        :func:`ppdm.utility.loss.covers_from_hierarchies`), so that a released
        hierarchy label is read as the set of values it covers.
    missing : {"weka", "zeros", "indicator"}, default="weka"
        Treatment of unknown (suppressed or missing) cells
        (:data:`ppdm.utility.learners.MISSING`).
    prepare : callable, optional
        ``prepare(train, test) -> (train, test)``, fitted on the training part
        only and applied to both before anonymization (e.g.
        :class:`ppdm.utility.preprocessing.FoldDiscretizer`, the release's
        discretization); the models trained on the original part see the
        prepared tables too. Its ``describe()`` and ``fitted_``, when it has
        them, go into the protocol and the result.
    ranges : {"midpoint", "uniform"}, default="midpoint"
        How the C4.5 tree reads a released numeric range.
    prepare_original : callable, None or "same", default="same"
        The preparation of the split for the models trained on the original
        training part (the baseline); "same" is ``prepare``. A release whose
        algorithm takes raw values gets ``prepare=None`` but keeps the
        release's discretization here, so the baseline of one (table, split,
        seed) never depends on the algorithm.

    Returns
    -------
    dict
        ``protocol`` (one paragraph), ``split`` (row counts; with several
        views also ``released_train_per_view``), ``seed``, ``test_size``,
        ``models`` (names, in order), ``views`` (training view names),
        ``preprocessing`` (what ``prepare`` fitted, or None), ``confidence``,
        ``zero_r`` (the majority-class rule of the training part on the same
        test rows, :func:`ppdm.utility.metrics.zero_rule`)
        and ``accuracy``: ``{model: {"original", "anonymized", "difference",
        "original_ci95", "anonymized_ci95"}}``, accuracies in [0, 1] with
        their Wilson score intervals ``[low, high]`` (None where the accuracy
        is NaN), the balanced accuracy and ROC AUC of each side with their
        intervals (:func:`ppdm.utility.scoring.train_and_score`),
        ``no_better_than_zero_r`` (``{side: bool}``: accuracy or balanced
        accuracy not above the rule's) and, with several views,
        ``per_view``; ``error`` is None, or
        the algorithm's error on the training split (then every "anonymized"
        accuracy is NaN). JSON-serialisable once NaN is mapped to null (as
        :func:`ppdm.utility.report.build_utility` does).

    References
    ----------
    .. [1] S. Kisilevich, L. Rokach, Y. Elovici and B. Shapira, "Efficient
       Multidimensional Suppression for K-Anonymity", IEEE TKDE 22(3):334-347,
       2010.
    """
    models = check_models(models)
    check_target(original, target)
    check_missing(missing)
    if not 0.0 < test_size < 1.0:
        raise InvalidParameterError(f"test_size must be in (0, 1); got {test_size}")
    _check_splittable(original[target].astype(str), target, test_size)
    train, test = train_test_split(
        original,
        test_size=test_size,
        stratify=original[target].astype(str),
        random_state=seed,
    )
    base_train, base_test = train, test
    if prepare_original == "same":
        prepare_original = prepare
    if prepare_original is not None:
        base_train, base_test = prepare_original(train, test)
    if prepare is prepare_original:
        train, test = base_train, base_test
    elif prepare is not None:
        train, test = prepare(train, test)
    error = None
    progress.report(0.0, "anonymizing the training split")
    try:
        with progress.within(0.0, 0.6):
            result = anonymize_fn(train.copy())
    except AnonymizationError as failure:
        # The report is always produced (ARCHITECTURE.md): a training split the
        # algorithm cannot anonymize gives no "after" accuracy, and says why.
        logger.warning("anonymizing the training split failed: %s", failure)
        error = f"{type(failure).__name__}: {failure}"
        result = train.iloc[:0]
    views = as_training_views(result)
    progress.report(0.6, "training the models on both tables")
    common = dict(
        target=target,
        seed=seed,
        models=models,
        marker=marker,
        missing=missing,
        ranges=ranges,
        with_original=False,
    )
    scores = train_and_score(train, views, test, covers=covers, **common)
    # The baseline is the original training part scored as a release of
    # itself, as `ppdm compare` scores it: the same figures whatever the
    # algorithm, which only decides the other side.
    baseline = train_and_score(base_train, base_train, base_test, **common)
    zero_r = zero_rule(base_train[target].astype(str), base_test[target].astype(str))
    for name, entry in scores.items():
        for key, value in baseline[name].items():
            if key.startswith("anonymized"):
                entry["original" + key.removeprefix("anonymized")] = value
        entry["difference"] = entry["anonymized"] - entry["original"]
        for side in ("original", "anonymized"):
            interval = accuracy_interval(entry[side], len(test))
            entry[f"{side}_ci95"] = list(interval) if interval is not None else None
        entry["no_better_than_zero_r"] = {
            side: _no_better(entry, side, zero_r) for side in ("original", "anonymized")
        }
    rows = {name: len(view) for name, view in views}
    released = min(rows.values())
    split: dict[str, Any] = {
        "train": len(train),
        "test": len(test),
        "released_train": released,
        "lost_records": len(train) - released if error is None else None,
    }
    if len(views) > 1:
        split["released_train_per_view"] = rows
    describe = getattr(prepare_original, "describe", None)
    preprocessing = describe() if callable(describe) else ""
    if prepare is None and prepare_original is not None:
        preprocessing += (
            " This algorithm generalizes raw values itself, so it is given the "
            "training part unbinned; the baseline stays the binned original "
            "training part, the same for every algorithm on this table, split "
            "and seed."
        )
    protocol = holdout_protocol(
        n_train=len(train),
        n_test=len(test),
        test_size=test_size,
        target=target,
        seed=seed,
        n_released=(
            released
            if len(views) == 1
            else ", ".join(f"{n} in {name}" for name, n in rows.items())
        ),
        models=models,
        missing=missing,
        preprocessing=preprocessing,
        views=[name for name, _ in views],
    )
    fitted = getattr(prepare_original, "fitted_", None)
    return {
        "zero_r": zero_r,
        "protocol": protocol,
        "seed": int(seed),
        "test_size": float(test_size),
        "split": split,
        "error": error,
        "missing": missing,
        "models": list(models),
        "views": [name for name, _ in views],
        "preprocessing": dict(fitted) if isinstance(fitted, dict) else None,
        "confidence": CONFIDENCE,
        "accuracy": scores,
    }
