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

Models, all fed by :class:`ppdm.utility.features.CellFeaturizer`:

- ``"decision_tree"``: :class:`ppdm.utility.c45_learner.C45Learner`, C4.5 as
  Weka's J48 (the kACTUS paper's tree): gain ratio, multiway nominal splits,
  fractional instances for unknown values, error-based pruning at 0.25, ``-M 2``
  (with ``missing="zeros"``: ``DecisionTreeClassifier(criterion="entropy")``
  on mean-imputed features, the harness's first tree);
- ``"naive_bayes"``: :class:`MembershipNB`, a categorical naive Bayes whose
  counts are the (fractional) memberships of the released cells; numeric
  attributes are cut into 10 equal-width bins of their observed range, a
  released range counting in every bin it overlaps; unknown cells are ignored,
  as naive Bayes ignores missing values. ``GaussianNB`` was the first choice
  and was dropped: on kACTUS releases (a whole class of rows holding one
  imputed mean) its variances collapse and the accuracy fell to 60 +- 19 % at
  k=10 on an Adult sample (80 % on the original);
- ``"logistic_regression"``: ``StandardScaler`` + ``LogisticRegression(
  max_iter=1000)``.

Suppressed cells (``*``) and missing values are unknown values; how a model
treats them is the ``missing`` option (:data:`MISSING`):

- ``"weka"`` (default): as the Weka learners of the kACTUS paper did, which is
  what "suppressed cells as missing values" means there. The tree (C4.5) uses
  its own fractional instances, naive Bayes skips
  unknown attributes, logistic regression replaces an unknown value by the
  training mode (nominal) or mean (numeric) (:class:`BlockImputer`, Weka's
  ``ReplaceMissingValues`` inside ``Logistic``).
- ``"zeros"``: the harness's first treatment: an unknown nominal cell is an
  all-zero one-hot row, an unknown number the training mean, for the tree
  and logistic regression (naive Bayes as in "weka"). It is kept to show the
  artefact: kACTUS keeps a quasi-identifier only on the tree paths that test
  it, so "value known" is itself class-skewed (one Adult half at k = 5:
  marital-status suppressed in 1,017 rows of which 99 % are >50K); an all-zero
  row lets the tree and the regression learn "known => class", and every
  test row has its values known, which drove the tree below the 76 %
  majority (64.3 +- 15.2 % at k = 5).

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
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.dummy import DummyClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from ppdm.exceptions import AnonymizationError, InvalidParameterError
from ppdm.model import SUPPRESSED, Release
from ppdm.utility.c45_learner import C45Learner
from ppdm.utility.features import CellFeaturizer

__all__ = [
    "CV_PROTOCOL",
    "HOLDOUT_PROTOCOL",
    "MISSING",
    "MISSING_TEXT",
    "RANGES",
    "MODELS",
    "BlockImputer",
    "MembershipNB",
    "AnonymizeFn",
    "PrepareFn",
    "cross_validate",
    "holdout_utility",
    "make_model",
    "summarize_cv",
    "train_and_score",
]

logger = logging.getLogger(__name__)

#: Models evaluated by default, in report order.
MODELS = ("decision_tree", "naive_bayes", "logistic_regression")

#: Treatments of unknown (suppressed or missing) cells; the first is the default.
MISSING = ("weka", "zeros")

#: How the decision tree reads a released numeric range; the first is the
#: default. "midpoint": one number; "uniform": C4.5 spreads the range's weight
#: uniformly over its split thresholds (:class:`C45Learner`).
RANGES = ("midpoint", "uniform")

#: Bins of a numeric attribute for naive Bayes.
NB_BINS = 10

#: Anonymize a training table: returns the released training table (or a
#: single-table Release). It must run the caller's algorithm and parameters.
AnonymizeFn = Callable[[pd.DataFrame], "pd.DataFrame | Release"]

#: Fold preprocessing fitted on the training part only, applied to both parts
#: (e.g. discretization): ``(train, test) -> (train, test)``.
PrepareFn = Callable[[pd.DataFrame, pd.DataFrame], tuple[pd.DataFrame, pd.DataFrame]]

#: ``{attribute: {generalized label: original values it covers}}``.
Covers = Mapping[str, Mapping[str, Collection[str]]]

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
    "an unknown value, {missing_text}"
)

MISSING_TEXT = {
    "weka": (
        "treated as the Weka learners of the kACTUS paper treat missing values: "
        "the tree distributes an instance with an unknown value over the known "
        "values in proportion to their frequency (C4.5's fractional instances), "
        "naive Bayes skips unknown "
        "attributes, logistic regression replaces them by the training mode "
        "(nominal) or mean (numeric)."
    ),
    "zeros": (
        "encoded as an all-zero one-hot row (nominal) or the training mean "
        "(numeric) for the tree and logistic regression; naive Bayes skips "
        "unknown attributes."
    ),
}

CV_PROTOCOL = (
    "{repeats} x {folds}-fold cross-validation (Dietterich's 5 x 2 design, as "
    "in the kACTUS paper, Kisilevich et al. 2010): {repeats} repetitions, each "
    "a stratified "
    "{folds}-fold split of the original table (seeded); for each fold, the "
    "training part alone is anonymized, the models are trained on the release "
    "and tested on the untouched held-out part. Unknown (suppressed or "
    "missing) cells are {missing_text}"
)


class MembershipNB(ClassifierMixin, BaseEstimator):
    """Naive Bayes over attribute blocks of (fractional) one-hot memberships.

    Every attribute is categorical: a nominal attribute is its block of
    one-hot columns from :class:`CellFeaturizer`; a numeric attribute is cut
    into ``n_bins`` equal-width bins of its observed range in the original
    data (the schema-level range NCP also uses; bins fitted on the released
    values would follow the release's artefacts, e.g. kACTUS's leaf means,
    which no real value matches). Per class and attribute, ``P(v | c) =
    (W[c, v] + alpha) / (W[c] + alpha * |values|)`` where ``W`` sums the
    *membership weights* of the class's training rows, so a released
    ``{a|b}`` adds 1/2 to each of ``a`` and ``b`` (CategoricalNB's counts,
    generalized to fractional memberships). An unknown cell (suppressed or
    missing: all-zero block, NaN number) contributes nothing, which is how
    naive Bayes ignores missing values.

    Why hand-written: ``CategoricalNB`` takes integer codes only (no
    fractional membership); ``MultinomialNB`` normalizes over all features at
    once, so a class whose rows are suppressed more often would be biased;
    ``GaussianNB`` collapses on released columns where a whole class holds
    one imputed value (near-zero variance).

    Parameters
    ----------
    blocks : sequence of (str, int, int)
        ``(kind, start, stop)`` per attribute (:attr:`CellFeaturizer.blocks_`);
        kind "numeric" (one column) or "onehot".
    ranges : sequence of (float, float) or None, optional
        Range of each numeric block (:attr:`CellFeaturizer.ranges_`); a
        numeric block without one is cut at the quantiles of its training
        values.
    n_bins : int, default=10
    alpha : float, default=1.0
        Laplace smoothing.

    Attributes
    ----------
    classes_ : numpy.ndarray
    edges_ : list of numpy.ndarray or None
        Inner bin edges of each numeric block.
    log_prior_ : numpy.ndarray
    log_likelihood_ : list of numpy.ndarray
        ``log P(v | c)`` per block, shape (n_classes, n_values).
    """

    def __init__(
        self, *, blocks=(), ranges=None, n_bins: int = 10, alpha: float = 1.0
    ) -> None:
        self.blocks = blocks
        self.ranges = ranges
        self.n_bins = n_bins
        self.alpha = alpha

    def _memberships(self, x: np.ndarray) -> list[np.ndarray]:
        parts = []
        for (kind, start, stop), edges in zip(self.blocks, self.edges_):
            if kind != "numeric":
                parts.append(np.nan_to_num(x[:, start:stop], nan=0.0))
                continue
            values = x[:, start]
            bins = np.searchsorted(edges, values, side="right")
            one_hot = np.zeros((len(values), len(edges) + 1))
            known = ~np.isnan(values)
            one_hot[np.flatnonzero(known), bins[known]] = 1.0
            parts.append(one_hot)
        return parts

    def _edges(self, values: np.ndarray, value_range: tuple | None) -> np.ndarray:
        inner = np.linspace(0, 1, self.n_bins + 1)[1:-1]
        if value_range is not None and value_range[1] > value_range[0]:
            low, high = value_range
            return low + inner * (high - low)
        known = values[~np.isnan(values)]
        return np.unique(np.quantile(known, inner)) if len(known) else np.empty(0)

    def fit(self, x: np.ndarray, y: np.ndarray) -> MembershipNB:
        x = np.asarray(x, dtype=float)
        self.classes_, codes = np.unique(np.asarray(y), return_inverse=True)
        ranges = (
            list(self.ranges) if self.ranges is not None else [None] * len(self.blocks)
        )
        self.edges_ = [
            self._edges(x[:, start], ranges[i]) if kind == "numeric" else None
            for i, (kind, start, _) in enumerate(self.blocks)
        ]
        class_rows = np.eye(len(self.classes_))[codes]  # (n, n_classes)
        self.log_prior_ = np.log(class_rows.mean(axis=0))
        self.log_likelihood_ = []
        for block in self._memberships(x):
            smoothed = class_rows.T @ block + self.alpha  # (n_classes, n_values)
            totals = smoothed.sum(axis=1, keepdims=True)
            self.log_likelihood_.append(np.log(smoothed / totals))
        return self

    def predict_log_joint(self, x: np.ndarray) -> np.ndarray:
        """Unnormalized log P(c) + sum of log P(v | c), shape (n, n_classes)."""
        joint = np.tile(self.log_prior_, (len(x), 1))
        for block, log_p in zip(
            self._memberships(np.asarray(x, dtype=float)), self.log_likelihood_
        ):
            joint += block @ log_p.T
        return joint

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.classes_[np.argmax(self.predict_log_joint(x), axis=1)]


def _unknown_masks(x: np.ndarray, blocks: Sequence[tuple]) -> list[np.ndarray]:
    """Per attribute block, which rows hold an unknown cell.

    A numeric column is unknown where it is NaN; a membership block (one-hot,
    value set, bins) where its memberships sum to zero (suppressed, missing, or
    a value outside the training domain).
    """
    masks = []
    for kind, start, stop in blocks:
        if kind == "numeric":
            masks.append(np.isnan(x[:, start]))
        else:
            masks.append(~(np.nan_to_num(x[:, start:stop]).sum(axis=1) > 0))
    return masks


class BlockImputer(TransformerMixin, BaseEstimator):
    """Replace unknown cells by the training mode (nominal) or mean (numeric).

    Weka's ``ReplaceMissingValues`` filter, which Weka's ``Logistic`` (the
    kACTUS paper's logistic regression) applies before ``NominalToBinary``:
    on one-hot features, the mode is the whole block set to the one-hot row
    of the most frequent value. ``SimpleImputer(strategy="most_frequent")``
    cannot do this: it would impute each one-hot column on its own (all to 0,
    the most frequent entry), which is the "zeros" treatment.

    Parameters
    ----------
    blocks : sequence of (str, int, int)
        :attr:`ppdm.utility.features.CellFeaturizer.blocks_`.

    Attributes
    ----------
    fill_ : list of numpy.ndarray
        The replacement of each block (the mean, or the mode's one-hot row;
        zeros / 0.0 when the attribute is never known in training).
    """

    def __init__(self, *, blocks=()) -> None:
        self.blocks = blocks

    def fit(self, x: np.ndarray, y: object = None) -> BlockImputer:
        x = np.asarray(x, dtype=float)
        self.fill_ = []
        for (kind, start, stop), unknown in zip(
            self.blocks, _unknown_masks(x, self.blocks)
        ):
            known = x[~unknown, start:stop]
            fill = np.zeros(stop - start)
            if len(known) and kind == "numeric":
                fill[0] = known[:, 0].mean()
            elif len(known):
                fill[np.argmax(known.sum(axis=0))] = 1.0
            self.fill_.append(fill)
        return self

    def transform(self, x: np.ndarray) -> np.ndarray:
        out = np.array(x, dtype=float, copy=True)
        for (_, start, stop), unknown, fill in zip(
            self.blocks, _unknown_masks(out, self.blocks), self.fill_
        ):
            out[np.ix_(np.flatnonzero(unknown), np.arange(start, stop))] = fill
        return out


def make_model(
    name: str,
    seed: int,
    blocks: Sequence[tuple] = (),
    ranges: Sequence[tuple | None] | None = None,
    *,
    missing: str = "weka",
) -> Any:
    """A fresh, seeded model (its treatment of unknown cells included) by name.

    ``blocks`` and ``ranges`` (:attr:`CellFeaturizer.blocks_` and
    ``ranges_``) tell the models which feature columns form one attribute and
    the range of each numeric one. ``missing`` is one of :data:`MISSING` (see
    the module docstring); naive Bayes skips unknown cells in both.
    """
    _check_missing(missing)
    if name == "naive_bayes":
        return MembershipNB(blocks=list(blocks), ranges=ranges)
    if missing == "weka":
        if name == "decision_tree":
            return C45Learner(blocks=list(blocks))
        if name == "logistic_regression":
            model = LogisticRegression(max_iter=1000, random_state=seed)
            return Pipeline(
                [
                    ("impute", BlockImputer(blocks=list(blocks))),
                    ("scale", StandardScaler()),
                    ("model", model),
                ]
            )
    impute = ("impute", SimpleImputer(strategy="mean", keep_empty_features=True))
    if name == "decision_tree":
        model = DecisionTreeClassifier(
            criterion="entropy", min_samples_leaf=2, random_state=seed
        )
        return Pipeline([impute, ("model", model)])
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


def _check_missing(missing: str) -> str:
    if missing not in MISSING:
        raise InvalidParameterError(
            f"missing must be one of {list(MISSING)}; got {missing!r}"
        )
    return missing


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
    covers: Covers | None = None,
    missing: str = "weka",
    ranges: str = "midpoint",
) -> dict[str, dict[str, float]]:
    """Accuracy of each model trained on the original and on the released part.

    The featurizer is fitted on ``original_train`` (its schema and domains);
    both training tables and ``test`` go through it (naive Bayes through its
    binned view, ``numeric_bins=NB_BINS``). ``missing`` (:data:`MISSING`)
    chooses the treatment of unknown cells, ``ranges`` (:data:`RANGES`) how
    the C4.5 tree reads a released numeric range.

    Returns
    -------
    dict
        ``{model: {"original": acc, "anonymized": acc, "difference": anon - orig}}``;
        ``"anonymized"`` is NaN when the release kept no row; ``"original"``
        (and the difference) is NaN when ``with_original`` is False.
    """
    _check_missing(missing)
    if ranges not in RANGES:
        raise InvalidParameterError(
            f"ranges must be one of {list(RANGES)}; got {ranges!r}"
        )
    if target not in released_train.columns:
        raise InvalidParameterError(
            f"the released table has no target column {target!r}; the target "
            "must be released unchanged"
        )
    y_test = test[target].astype(str).to_numpy()
    y_orig = original_train[target].astype(str).to_numpy()
    y_rel = released_train[target].astype(str).to_numpy()
    views: dict[tuple, tuple] = {}
    scores = {}
    for name in models:
        view = _feature_view(name, missing, ranges)
        if view not in views:
            featurizer = CellFeaturizer(
                exclude=[target],
                suppression_marker=marker,
                covers=covers,
                numeric_bins=view[0],
                numeric_ranges=view[1],
            ).fit(original_train)
            views[view] = (
                featurizer,
                featurizer.transform(test),
                featurizer.transform(original_train) if with_original else None,
                featurizer.transform(released_train),
            )
        featurizer, x_test, x_orig, x_rel = views[view]
        fit = dict(
            name=name,
            seed=seed,
            featurizer=featurizer,
            x_test=x_test,
            y_test=y_test,
            missing=missing,
        )
        original_acc = (
            _fit_score(x_train=x_orig, y_train=y_orig, **fit)
            if with_original
            else float("nan")
        )
        anonymized_acc = _fit_score(x_train=x_rel, y_train=y_rel, **fit)
        scores[name] = {
            "original": original_acc,
            "anonymized": anonymized_acc,
            "difference": anonymized_acc - original_acc,
        }
    return scores


def _feature_view(model: str, missing: str, ranges: str) -> tuple[int | None, str]:
    """``(numeric_bins, numeric_ranges)`` of the featurizer a model reads.

    Naive Bayes counts bins (a range spread over those it overlaps); the C4.5
    tree reads a range as its midpoint or, with ``ranges="uniform"``, by its
    two ends; logistic regression reads the midpoint.
    """
    if model == "naive_bayes":
        return NB_BINS, "midpoint"
    if model == "decision_tree" and missing == "weka" and ranges == "uniform":
        return None, "bounds"
    return None, "midpoint"


def _fit_score(
    *,
    name: str,
    seed: int,
    featurizer: CellFeaturizer,
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    missing: str,
) -> float:
    if len(y_train) == 0:
        return float("nan")
    if x_train.shape[1] == 0 or bool(
        (pd.DataFrame(x_train).nunique(dropna=True) <= 1).all()
    ):
        # No feature varies (e.g. every quasi-identifier suppressed and no
        # other attribute): every inducer reduces to the training majority
        # class; say so directly rather than rely on each model's corner case.
        model = DummyClassifier(strategy="most_frequent").fit(x_train, y_train)
        return float(np.mean(model.predict(x_test) == y_test))
    model = make_model(
        name, seed, featurizer.blocks_, featurizer.ranges_, missing=missing
    )
    model.fit(x_train, y_train)
    return float(np.mean(model.predict(x_test) == y_test))


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
    covers : mapping, optional
        Coverage of generalized labels (see
        :func:`ppdm.utility.loss.covers_from_hierarchies`), so that a released
        hierarchy label is read as the set of values it covers.
    missing : {"weka", "zeros"}, default="weka"
        Treatment of unknown (suppressed or missing) cells, see
        :data:`MISSING` and the module docstring.

    Returns
    -------
    dict
        ``protocol`` (one paragraph), ``split`` (row counts), ``seed``,
        ``test_size``, ``models`` (names, in order) and ``accuracy``:
        ``{model: {"original", "anonymized", "difference"}}`` accuracies in
        [0, 1]; ``error`` is None, or the algorithm's error on the training
        split (then every "anonymized" accuracy is NaN). JSON-serialisable
        once NaN is mapped to null (as :func:`ppdm.utility.report.build_utility`
        does).

    References
    ----------
    .. [1] S. Kisilevich, L. Rokach, Y. Elovici and B. Shapira, "Efficient
       Multidimensional Suppression for K-Anonymity", IEEE TKDE 22(3):334-347,
       2010.
    """
    models = _check_models(models)
    _check_target(original, target)
    _check_missing(missing)
    if not 0.0 < test_size < 1.0:
        raise InvalidParameterError(f"test_size must be in (0, 1); got {test_size}")
    train, test = train_test_split(
        original,
        test_size=test_size,
        stratify=original[target].astype(str),
        random_state=seed,
    )
    error = None
    try:
        released = _released_table(anonymize_fn(train.copy()))
    except AnonymizationError as failure:
        # The report is always produced (ARCHITECTURE.md): a training split the
        # algorithm cannot anonymize gives no "after" accuracy, and says why.
        logger.warning("anonymizing the training split failed: %s", failure)
        error = f"{type(failure).__name__}: {failure}"
        released = train.iloc[:0]
    scores = train_and_score(
        train,
        released,
        test,
        target=target,
        seed=seed,
        models=models,
        marker=marker,
        covers=covers,
        missing=missing,
    )
    protocol = HOLDOUT_PROTOCOL.format(
        missing_text=MISSING_TEXT[missing],
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
            "lost_records": len(train) - len(released) if error is None else None,
        },
        "error": error,
        "missing": missing,
        "models": list(models),
        "accuracy": scores,
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
    covers : mapping, optional
        As in :func:`holdout_utility`.
    missing : {"weka", "zeros"}, default="weka"
        As in :func:`holdout_utility`.
    ranges : {"midpoint", "uniform"}, default="midpoint"
        How the C4.5 tree reads a released numeric range (:data:`RANGES`).

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
    _check_missing(missing)
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
    rows = []
    for repeat, split_seed in enumerate(split_seeds):
        splitter = StratifiedKFold(
            n_splits=folds, shuffle=True, random_state=int(split_seed)
        )
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
                train,
                released,
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
                len(released),
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
