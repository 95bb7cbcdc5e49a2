"""Train every model on the original and on the released training part; score.

The one step both protocols share (:mod:`ppdm.utility.holdout`,
:mod:`ppdm.utility.cross_validation`): given the original training part,
the release of it (one or several training views) and an untouched test
part, the accuracy of each model trained on either.

- One view: the featurizer is fitted on the original training part (its
  schema and domains; a column the view lacks is read as suppressed
  throughout), the model is trained on the view and predicts the test rows.
- Several views: per view, a featurizer on that view's columns (fitted on the
  original training part's same columns), a model trained on the view, and
  its class probabilities on the test rows; the views' probabilities are
  combined by the naive Bayes rule of DMPD (:mod:`ppdm.utility.views`), the
  C4.5 tree's leaves Laplace-corrected as DMPD estimates them.

The model trained on the original training part sees every column either
way: it is the "before" of the same split.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from sklearn.dummy import DummyClassifier

from ppdm import parallel
from ppdm.exceptions import InvalidParameterError, OutOfMemoryError
from ppdm.model import SUPPRESSED
from ppdm.utility._sparse import Matrix, n_features_varying
from ppdm.utility.features import CellFeaturizer
from ppdm.utility.learners import (
    MODELS,
    RANGES,
    check_missing,
    check_models,
    feature_view,
    make_model,
)
from ppdm.utility.metrics import class_scores
from ppdm.utility.views import (
    align_probabilities,
    as_training_views,
    class_prior,
    naive_bayes_combination,
)

__all__ = [
    "Covers",
    "ViewPrediction",
    "check_target",
    "predict_views",
    "train_and_score",
]

#: ``{attribute: {generalized label: original values it covers}}``.
Covers = Mapping[str, Mapping[str, Collection[str]]]


def check_target(original: pd.DataFrame, target: str) -> None:
    """Raise unless ``target`` is a column of ``original`` without missing values."""
    if target not in original.columns:
        raise InvalidParameterError(f"target {target!r} is not a column of the table")
    if original[target].isna().any():
        raise InvalidParameterError(
            f"target {target!r} has missing values; drop those rows first"
        )


def train_and_score(
    original_train: pd.DataFrame,
    released_train: Any,
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
) -> dict[str, dict[str, Any]]:
    """Accuracy of each model trained on the original and on the released part.

    Parameters
    ----------
    original_train : pandas.DataFrame
        The training part before anonymization.
    released_train : DataFrame, Release, or list of DataFrame
        Its release: one table, or several training views (a list of
        tables or of ``(name, table)`` pairs,
        :func:`ppdm.utility.views.as_training_views`), each with the target.
    test : pandas.DataFrame
        Untouched test rows, on the original schema.
    target : str
    seed : int
        Seeds the models.
    models : sequence of str, default=MODELS
    marker : str, default="*"
    with_original : bool, default=True
        Also train on ``original_train`` (else its accuracy is NaN).
    covers : mapping, optional
        Coverage of generalized labels.
    missing : {"weka", "zeros", "indicator"}, default="weka"
        Treatment of unknown cells (:data:`ppdm.utility.learners.MISSING`).
    ranges : {"midpoint", "uniform"}, default="midpoint"
        How the C4.5 tree reads a released numeric range
        (:data:`ppdm.utility.learners.RANGES`).

    Returns
    -------
    dict
        ``{model: {"original": acc, "anonymized": acc, "difference": anon -
        orig}}`` plus, per side (``original_``/``anonymized_``), the
        ``balanced_accuracy`` and ``roc_auc`` (binary, or macro one-vs-rest)
        with their ``_ci95`` intervals (:mod:`ppdm.utility.metrics`);
        ``"anonymized"`` is NaN when the release kept no row;
        ``"original"`` (and the difference) is NaN when ``with_original`` is
        False. With several views, each model's entry also has ``"per_view"``:
        ``{view: accuracy of that view's model alone}``.
    """
    check_missing(missing)
    if ranges not in RANGES:
        raise InvalidParameterError(
            f"ranges must be one of {list(RANGES)}; got {ranges!r}"
        )
    views = as_training_views(released_train)
    for name, view in views:
        if target not in view.columns:
            raise InvalidParameterError(
                f"the released table {name!r} has no target column {target!r}; "
                "the target must be released unchanged"
            )
    y_test = test[target].astype(str).to_numpy()
    y_orig = original_train[target].astype(str).to_numpy()
    features = _Features(
        original_train, test, target=target, marker=marker, covers=covers
    )
    # Every (model, training table) fit is independent: the single-view fits
    # go through ppdm.parallel, so a parallel runner spreads them.
    fits: dict[tuple[str, str], tuple[_ModelFit, np.ndarray]] = {}
    per_view: dict[str, Any] = {}
    combined: dict[str, dict[str, Any]] = {}
    for name in models:
        view_kind = feature_view(name, missing, ranges)
        featurizer, x_test = features.fitted(view_kind)
        # the same model and test rows, trained on either table
        model = partial(_ModelFit, name, seed, featurizer, x_test, missing)
        if with_original:
            x_original = features.transform(featurizer, original_train, "original")
            fits[name, "original"] = (model(x_original, y_orig), y_test)
        if len(views) == 1:
            released = views[0][1]
            x_released = features.transform(featurizer, released, "released")
            y_released = released[target].astype(str).to_numpy()
            fits[name, "anonymized"] = (model(x_released, y_released), y_test)
        elif any(len(view) == 0 for _, view in views):
            combined[name] = _NOT_MEASURED
            per_view[name] = {view_name: float("nan") for view_name, _ in views}
        else:
            prediction = _predict_views(
                views,
                features,
                view_kind,
                target=target,
                name=name,
                seed=seed,
                missing=missing,
            )
            combined[name], per_view[name] = prediction.scores(y_test)
    measured = dict(
        zip(
            fits,
            parallel.map_in_order(_fit_score_job, list(fits.values())),
            strict=True,
        )
    )
    scores = {}
    for name in models:
        original = measured.get((name, "original"), _NOT_MEASURED)
        anonymized = combined.get(name, measured.get((name, "anonymized")))
        scores[name] = {
            "original": original["accuracy"],
            "anonymized": anonymized["accuracy"],
            "difference": anonymized["accuracy"] - original["accuracy"],
        }
        for side, figures in (("original", original), ("anonymized", anonymized)):
            for metric in ("balanced_accuracy", "roc_auc"):
                scores[name][f"{side}_{metric}"] = figures[metric]
                scores[name][f"{side}_{metric}_ci95"] = figures[f"{metric}_ci95"]
        if per_view.get(name) is not None:
            scores[name]["per_view"] = per_view[name]
    return scores


#: The figures of a model that was not trained (no row, or not asked for).
_NOT_MEASURED: dict[str, Any] = {
    "accuracy": float("nan"),
    "balanced_accuracy": float("nan"),
    "balanced_accuracy_ci95": None,
    "roc_auc": float("nan"),
    "roc_auc_ci95": None,
}


@dataclass(eq=False)
class _Features:
    """Featurizers fitted on the original training part (all its columns, or a
    view's), each with the test rows' features; transforms computed once."""

    original_train: pd.DataFrame
    test: pd.DataFrame
    _: KW_ONLY
    target: str
    marker: str
    covers: Covers | None
    _fitted: dict[tuple, tuple[CellFeaturizer, Matrix]] = field(
        default_factory=dict, init=False
    )
    _transformed: dict[tuple, Matrix] = field(default_factory=dict, init=False)

    def fitted(
        self, view_kind: tuple, columns: tuple[str, ...] | None = None
    ) -> tuple[CellFeaturizer, Matrix]:
        """The featurizer of ``view_kind`` (numeric bins, range reading) on
        ``columns`` (None: all), and the test rows' features."""
        key = (view_kind, columns)
        if key not in self._fitted:
            if columns is None:
                fitted_on = self.original_train
            else:
                absent = [c for c in columns if c not in self.original_train.columns]
                if absent:
                    raise InvalidParameterError(
                        f"training view columns {absent} are not columns of the "
                        "original table"
                    )
                fitted_on = self.original_train[list(columns)]
            featurizer = CellFeaturizer(
                exclude=[self.target],
                suppression_marker=self.marker,
                covers=self.covers,
                numeric_bins=view_kind[0],
                numeric_ranges=view_kind[1],
            ).fit(fitted_on)
            self._fitted[key] = (featurizer, featurizer.transform(self.test))
        return self._fitted[key]

    def transform(
        self, featurizer: CellFeaturizer, table: pd.DataFrame, role: str
    ) -> Matrix:
        """``featurizer.transform(table)``, computed once per featurizer and role."""
        key = (id(featurizer), role)
        if key not in self._transformed:
            self._transformed[key] = featurizer.transform(table)
        return self._transformed[key]


@dataclass(frozen=True)
class ViewPrediction:
    """Class probabilities of the test rows from several training views.

    Attributes
    ----------
    classes : numpy.ndarray
        Class labels (str), the column order of every array below.
    prior : numpy.ndarray
        ``P(y)``: class frequencies of the views' training targets pooled.
    per_view : dict of str to numpy.ndarray
        ``P_k(y | x_k)`` of each view's model, shape (n_test, n_classes).
    combined : numpy.ndarray
        Their naive Bayes combination (DMPD equation 1).
    """

    classes: np.ndarray
    prior: np.ndarray
    per_view: dict[str, np.ndarray]
    combined: np.ndarray

    def predict(self) -> np.ndarray:
        """The most probable class of each test row (first class on ties)."""
        return self.classes[np.argmax(self.combined, axis=1)]

    def scores(self, y_test: np.ndarray) -> tuple[dict[str, Any], dict[str, float]]:
        """Figures of the combination against the true classes ``y_test``
        (:func:`ppdm.utility.metrics.class_scores`), and each view's model's
        accuracy alone."""
        per_view = {
            view_name: float(np.mean(self.classes[np.argmax(proba, axis=1)] == y_test))
            for view_name, proba in self.per_view.items()
        }
        figures = class_scores(y_test, self.predict(), self.combined, self.classes)
        return figures, per_view


def predict_views(
    original_train: pd.DataFrame,
    released_train: Any,
    test: pd.DataFrame,
    *,
    target: str,
    model: str,
    seed: int,
    marker: str = SUPPRESSED,
    covers: Covers | None = None,
    missing: str = "weka",
    ranges: str = "midpoint",
) -> ViewPrediction:
    """One ``model`` per training view, combined by the naive Bayes rule.

    Each view's model is trained on the view, with a featurizer fitted on the
    original training part's columns of that view, and gives class
    probabilities for the test rows; the C4.5 tree's leaves are
    Laplace-corrected (J48's ``-A``), as DMPD estimates them. The views'
    probabilities are combined by :func:`ppdm.utility.views.naive_bayes_combination`
    with the pooled class frequencies of the views' targets as ``P(y)``.
    With one view, ``combined`` is that view's probabilities.

    Parameters
    ----------
    original_train, released_train, test, target, seed, marker, covers, missing, ranges
        As in :func:`train_and_score`; every view must keep at least one row.
    model : str
        One of :data:`ppdm.utility.learners.MODELS`.

    Returns
    -------
    ViewPrediction
    """
    check_models([model])
    check_missing(missing)
    views = as_training_views(released_train)
    features = _Features(
        original_train, test, target=target, marker=marker, covers=covers
    )
    return _predict_views(
        views,
        features,
        feature_view(model, missing, ranges),
        target=target,
        name=model,
        seed=seed,
        missing=missing,
    )


def _predict_views(
    views: list[tuple[str, pd.DataFrame]],
    features: _Features,
    view_kind: tuple,
    *,
    target: str,
    name: str,
    seed: int,
    missing: str,
) -> ViewPrediction:
    labels = [view[target].astype(str).to_numpy() for _, view in views]
    empty = [view_name for (view_name, _), y in zip(views, labels) if len(y) == 0]
    if empty:
        raise InvalidParameterError(f"training views {empty} have no row")
    classes = np.unique(np.concatenate(labels))
    prior = class_prior(np.concatenate(labels), classes)
    per_view = {}
    for index, ((view_name, view), y_view) in enumerate(zip(views, labels)):
        columns = tuple(str(c) for c in view.columns if c != target)
        featurizer, x_test = features.fitted(view_kind, columns)
        x_train = features.transform(featurizer, view, f"view {index}")
        model_classes, proba = _fit_proba(
            _ModelFit(name, seed, featurizer, x_test, missing, x_train, y_view)
        )
        per_view[view_name] = align_probabilities(proba, model_classes, classes)
    combined = naive_bayes_combination(list(per_view.values()), prior)
    return ViewPrediction(classes, prior, per_view, combined)


def _constant_features(x_train: Matrix) -> bool:
    """True when no feature varies (every inducer reduces to the class prior)."""
    return n_features_varying(x_train) == 0


def _fit_score_job(job: tuple[_ModelFit, np.ndarray]) -> dict[str, Any]:
    return _fit_score(*job)


@dataclass(frozen=True)
class _ModelFit:
    """One model of the report: the inducer ``name`` trained on ``x_train``
    (features of ``featurizer``) and labels ``y_train``, applied to ``x_test``."""

    name: str
    seed: int
    featurizer: CellFeaturizer
    x_test: Matrix
    missing: str
    x_train: Matrix
    y_train: np.ndarray

    def fitted(self, **options: Any) -> Any:
        """The inducer trained (``options`` go to :func:`make_model`)."""
        model = make_model(
            self.name,
            self.seed,
            self.featurizer.blocks_,
            self.featurizer.ranges_,
            missing=self.missing,
            **options,
        )
        return model.fit(self.x_train, self.y_train)

    def out_of_memory(self, err: MemoryError) -> OutOfMemoryError:
        """A fit or prediction that did not fit in memory, naming the model."""
        if isinstance(err, OutOfMemoryError):
            return err
        rows, columns = self.x_train.shape
        return OutOfMemoryError(
            f"out of memory training the {self.name} model of the utility report on "
            f"{rows:,} rows x {columns:,} features: {err or 'no detail given'}"
        )


def _fit_score(fit: _ModelFit, y_test: np.ndarray) -> dict[str, Any]:
    """:func:`ppdm.utility.metrics.class_scores` of one model on the test rows."""
    if len(fit.y_train) == 0:
        return _NOT_MEASURED
    try:
        if _constant_features(fit.x_train) or len(np.unique(fit.y_train)) < 2:
            # No feature varies (e.g. every quasi-identifier suppressed and no
            # other attribute), or one class is left (a sampled and suppressed
            # release can keep one): every inducer reduces to the training
            # majority class; say so directly rather than rely on each model's
            # corner case.
            model = DummyClassifier(strategy="most_frequent")
            model.fit(fit.x_train, fit.y_train)
        else:
            model = fit.fitted()
        x_test = fit.x_test
        return class_scores(
            y_test, model.predict(x_test), model.predict_proba(x_test), model.classes_
        )
    except MemoryError as err:
        raise fit.out_of_memory(err) from err


def _fit_proba(fit: _ModelFit) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, P(class | test row))`` of one view's model.

    A view whose features do not vary says nothing about the class: its
    probabilities are the view's class frequencies (then its factor in the
    naive Bayes rule cancels one power of the prior).
    """
    try:
        if _constant_features(fit.x_train):
            model = DummyClassifier(strategy="prior").fit(fit.x_train, fit.y_train)
        else:
            model = fit.fitted(laplace=True)
        return np.asarray(model.classes_), model.predict_proba(fit.x_test)
    except MemoryError as err:
        raise fit.out_of_memory(err) from err
