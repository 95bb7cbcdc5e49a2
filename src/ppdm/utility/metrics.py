"""Class-balanced figures of a classifier, and the majority-class rule to beat.

Accuracy alone misleads on a skewed target: on Adult, 76 % of the rows are
``<=50K``, so a model that always says ``<=50K`` scores 0.76 and a release
whose model scores 0.70 is worse than no model at all. The report therefore
gives, next to each accuracy,

- the **balanced accuracy**: the mean over the classes of the test rows of
  the share of that class predicted right (scikit-learn's
  ``balanced_accuracy_score``), 1 / (number of classes) for any constant
  prediction;
- the **ROC AUC** of the class probabilities: for two classes, the
  probability that a random row of the second class (in sorted order) gets a
  higher score for it than a random row of the first; for more, the mean of
  the one-vs-rest AUCs over the classes of the test rows (scikit-learn's
  ``roc_auc_score(..., multi_class="ovr", average="macro")``); 0.5 for any
  constant score;
- the **majority-class rule** (ZeroR): always predict the most frequent
  class of the training rows, measured on the same test rows.

Intervals (95 %): balanced accuracy by the normal approximation of a mean
of independent per-class recalls, ``sqrt(sum_c r_c (1 - r_c) / n_c) / C``;
a two-class AUC by Hanley & McNeil's standard error, a macro AUC by the same
errors of its one-vs-rest terms combined as if independent. Both are
approximations that say how much the figure would move on another test
sample of the same size, not exact coverage.

References
----------
.. [1] K. H. Brodersen, C. S. Ong, K. E. Stephan and J. M. Buhmann, "The
   balanced accuracy and its posterior distribution", ICPR 2010, 3121-3124.
.. [2] J. A. Hanley and B. J. McNeil, "The meaning and use of the area under
   a receiver operating characteristic (ROC) curve", Radiology 143(1):29-36,
   1982.
.. [3] D. J. Hand and R. J. Till, "A simple generalisation of the area under
   the ROC curve for multiple class classification problems", Machine
   Learning 45:171-186, 2001.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats
from sklearn.metrics import roc_auc_score

from ppdm.utility.intervals import CONFIDENCE, wilson_interval

__all__ = [
    "balanced_accuracy",
    "balanced_accuracy_interval",
    "class_scores",
    "macro_roc_auc",
    "roc_auc_interval",
    "zero_rule",
]


def _z(confidence: float) -> float:
    return float(stats.norm.ppf(1.0 - (1.0 - confidence) / 2.0))


def _recalls(y_true: np.ndarray, y_pred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per class of ``y_true`` (sorted): its share predicted right, its rows."""
    classes, counts = np.unique(y_true, return_counts=True)
    right = np.array([np.sum((y_true == c) & (y_pred == c)) for c in classes])
    return right / counts, counts


def balanced_accuracy(y_true: Sequence[Any], y_pred: Sequence[Any]) -> float:
    """Mean over the classes of ``y_true`` of the share of its rows predicted right.

    NaN without rows. Equal to ``sklearn.metrics.balanced_accuracy_score``.

    Examples
    --------
    >>> balanced_accuracy(["a", "a", "a", "b"], ["a", "a", "a", "a"])
    0.5
    """
    y_true, y_pred = np.asarray(y_true, dtype=str), np.asarray(y_pred, dtype=str)
    if not len(y_true):
        return math.nan
    recalls, _ = _recalls(y_true, y_pred)
    return float(recalls.mean())


def balanced_accuracy_interval(
    y_true: Sequence[Any], y_pred: Sequence[Any], *, confidence: float = CONFIDENCE
) -> tuple[float, float] | None:
    """Normal-approximation interval of :func:`balanced_accuracy`, in [0, 1]."""
    y_true, y_pred = np.asarray(y_true, dtype=str), np.asarray(y_pred, dtype=str)
    if not len(y_true):
        return None
    recalls, counts = _recalls(y_true, y_pred)
    centre = float(recalls.mean())
    half = (
        _z(confidence)
        * math.sqrt(float(np.sum(recalls * (1 - recalls) / counts)))
        / len(counts)
    )
    return max(0.0, centre - half), min(1.0, centre + half)


def _class_score(proba: np.ndarray, classes: Sequence[Any], label: str) -> np.ndarray:
    """The probability column of ``label`` (zeros for a class never trained on)."""
    names = [str(c) for c in classes]
    if label in names:
        return np.asarray(proba, dtype=float)[:, names.index(label)]
    return np.zeros(len(proba))


def _one_vs_rest(
    y_true: np.ndarray, proba: np.ndarray, classes: Sequence[Any]
) -> list[tuple[float, int, int]]:
    """``(AUC, positives, negatives)`` of each class the AUC is taken over.

    Two classes in ``y_true``: one term, the second class (sorted) as the
    positive one, as scikit-learn takes it. More: one term per class.
    """
    present = np.unique(y_true)
    if len(present) < 2:
        return []
    terms = present[1:] if len(present) == 2 else present
    out = []
    for label in terms:
        positive = y_true == label
        auc = float(roc_auc_score(positive, _class_score(proba, classes, label)))
        out.append((auc, int(positive.sum()), int((~positive).sum())))
    return out


def macro_roc_auc(
    y_true: Sequence[Any], proba: np.ndarray, classes: Sequence[Any]
) -> float:
    """ROC AUC of class probabilities: binary, or macro one-vs-rest.

    Parameters
    ----------
    y_true : sequence
        True classes of the test rows.
    proba : numpy.ndarray
        ``P(class | row)``, shape (n_rows, len(classes)).
    classes : sequence
        The class of each column of ``proba`` (a class of ``y_true`` missing
        here scores 0 everywhere).

    Returns
    -------
    float
        NaN when ``y_true`` holds fewer than two classes.

    Examples
    --------
    >>> import numpy as np
    >>> macro_roc_auc(["a", "a", "b", "b"],
    ...               np.array([[.9, .1], [.4, .6], [.6, .4], [.2, .8]]), ["a", "b"])
    0.75
    """
    terms = _one_vs_rest(np.asarray(y_true, dtype=str), proba, classes)
    if not terms:
        return math.nan
    return float(np.mean([auc for auc, _, _ in terms]))


def _hanley_mcneil_variance(auc: float, n_pos: int, n_neg: int) -> float:
    q1 = auc / (2 - auc)
    q2 = 2 * auc * auc / (1 + auc)
    return (
        auc * (1 - auc) + (n_pos - 1) * (q1 - auc**2) + (n_neg - 1) * (q2 - auc**2)
    ) / (n_pos * n_neg)


def roc_auc_interval(
    y_true: Sequence[Any],
    proba: np.ndarray,
    classes: Sequence[Any],
    *,
    confidence: float = CONFIDENCE,
) -> tuple[float, float] | None:
    """Hanley & McNeil interval of :func:`macro_roc_auc`, in [0, 1]."""
    terms = _one_vs_rest(np.asarray(y_true, dtype=str), proba, classes)
    if not terms:
        return None
    centre = float(np.mean([auc for auc, _, _ in terms]))
    variance = sum(_hanley_mcneil_variance(*term) for term in terms) / len(terms) ** 2
    half = _z(confidence) * math.sqrt(max(variance, 0.0))
    return max(0.0, centre - half), min(1.0, centre + half)


def class_scores(
    y_true: Sequence[Any],
    y_pred: Sequence[Any],
    proba: np.ndarray,
    classes: Sequence[Any],
) -> dict[str, Any]:
    """Accuracy, balanced accuracy and ROC AUC of one model on the test rows.

    Returns
    -------
    dict
        ``accuracy``, ``balanced_accuracy``, ``balanced_accuracy_ci95``
        (``[low, high]`` or None), ``roc_auc`` and ``roc_auc_ci95``.
    """
    y_true, y_pred = np.asarray(y_true, dtype=str), np.asarray(y_pred, dtype=str)
    ba = balanced_accuracy_interval(y_true, y_pred)
    auc = roc_auc_interval(y_true, proba, classes)
    return {
        "accuracy": float(np.mean(y_true == y_pred)) if len(y_true) else math.nan,
        "balanced_accuracy": balanced_accuracy(y_true, y_pred),
        "balanced_accuracy_ci95": list(ba) if ba is not None else None,
        "roc_auc": macro_roc_auc(y_true, proba, classes),
        "roc_auc_ci95": list(auc) if auc is not None else None,
    }


def zero_rule(y_train: Sequence[Any], y_test: Sequence[Any]) -> dict[str, Any]:
    """The majority-class rule (ZeroR) trained on ``y_train``, scored on ``y_test``.

    The class is the most frequent training class (the first in sorted order
    on a tie, as ``DummyClassifier(strategy="most_frequent")`` picks it).

    Returns
    -------
    dict
        ``class``, ``accuracy`` with ``accuracy_ci95`` (Wilson),
        ``balanced_accuracy`` and ``roc_auc`` (0.5: a constant score ranks
        nothing), the figures a model must beat to have learnt anything.

    Examples
    --------
    >>> rule = zero_rule(["a", "a", "b"], ["a", "b", "b", "a"])
    >>> rule["class"], rule["accuracy"], rule["balanced_accuracy"]
    ('a', 0.5, 0.5)
    """
    y_train, y_test = np.asarray(y_train, dtype=str), np.asarray(y_test, dtype=str)
    classes, counts = np.unique(y_train, return_counts=True)
    majority = str(classes[np.argmax(counts)])
    prediction = np.full(len(y_test), majority)
    right = int(np.sum(y_test == majority))
    interval = wilson_interval(right, len(y_test))
    scores = class_scores(y_test, prediction, np.ones((len(y_test), 1)), [majority])
    return {
        "class": majority,
        "accuracy": scores["accuracy"],
        "accuracy_ci95": list(interval) if interval is not None else None,
        "balanced_accuracy": scores["balanced_accuracy"],
        "roc_auc": scores["roc_auc"],
    }
