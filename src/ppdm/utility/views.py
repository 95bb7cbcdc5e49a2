"""Training views of a release, and the naive Bayes rule that combines them.

An analyst trains on what a release gives them. A one-table release is one
training view; a release of several projections (DMPD: each projection holds
some features and the target) is several, and a classifier is trained per
view. Their class probabilities are then combined by the naive Bayes rule of
Matatov, Rokach & Maimon (2010, equation 1)::

    P(y | x)  proportional to  prod_k P_k(y | x_k) / P(y) ** (w - 1)

with ``w`` the number of views, ``x_k`` the row's values on view ``k``'s
columns, ``P_k`` the classifier trained on view ``k`` and ``P(y)`` the class
frequencies of the training target. (With one view the rule is that view's
classifier itself.)

:func:`as_training_views` turns whatever an anonymization callable returns (a
table, a :class:`~ppdm.model.Release`, a list of views such as
:meth:`ppdm.algorithms.base.Anonymizer.training_views`) into named views;
:func:`naive_bayes_combination` is the rule.

References
----------
.. [1] N. Matatov, L. Rokach and O. Maimon, "Privacy-preserving data mining:
   A feature set partitioning approach", Information Sciences
   180(14):2696-2720, 2010 (DMPD; the naive Bayes combination, equation 1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.model import Release

__all__ = [
    "align_probabilities",
    "as_training_views",
    "class_prior",
    "naive_bayes_combination",
]

#: Floor of a probability before its logarithm: a class that one view gives
#: probability 0 keeps a finite (hugely negative) score, so a row on which
#: every class has a zero somewhere is still decided by the other factors.
_TINY = np.finfo(float).tiny


def as_training_views(
    result: Any, *, algorithm: Any = None
) -> list[tuple[str, pd.DataFrame]]:
    """``[(name, table)]``: the training views of an anonymization's result.

    Parameters
    ----------
    result : DataFrame, Release, mapping of str to DataFrame, or sequence of DataFrame
        A table is one view named ``"release"``; a :class:`Release` gives
        ``algorithm.training_views(result)`` when ``algorithm`` is given,
        else its tables in name order (the default training views); a
        mapping gives its tables in name order; a sequence gives its tables
        in order, named ``"view 1"``, ``"view 2"``, ... (or as given, for a
        sequence of ``(name, table)`` pairs).
    algorithm : Anonymizer, optional
        The algorithm that made a :class:`Release` result.

    Returns
    -------
    list of (str, pandas.DataFrame)
        At least one view. A view that is one of the release's tables keeps
        that table's name.

    Raises
    ------
    InvalidParameterError
        ``result`` is of another type, or holds no table.
    """
    names: dict[int, str] = {}
    if isinstance(result, pd.DataFrame):
        return [("release", result)]
    if isinstance(result, Release):
        names = {id(frame): str(name) for name, frame in result.tables.items()}
        if algorithm is not None:
            result = list(algorithm.training_views(result))
        else:
            result = dict(result.tables)
    if isinstance(result, Mapping):
        views = [(str(name), result[name]) for name in sorted(result)]
    elif isinstance(result, Sequence) and not isinstance(result, (str, bytes)):
        views = [
            (str(item[0]), item[1])
            if isinstance(item, tuple) and len(item) == 2
            else (names.get(id(item), f"view {i + 1}"), item)
            for i, item in enumerate(result)
        ]
    else:
        raise InvalidParameterError(
            "an anonymization must return a DataFrame, a Release, or a list of "
            f"training views (DataFrames); got {type(result).__name__}"
        )
    if not views:
        raise InvalidParameterError("the anonymization returned no training view")
    bad = [name for name, frame in views if not isinstance(frame, pd.DataFrame)]
    if bad:
        raise InvalidParameterError(f"training views {bad} are not DataFrames")
    return views


def class_prior(labels: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Relative frequency of each of ``classes`` among ``labels``."""
    labels = np.asarray(labels)
    if len(labels) == 0:
        return np.full(len(classes), np.nan)
    return np.array([np.mean(labels == c) for c in classes], dtype=float)


def align_probabilities(
    proba: np.ndarray, model_classes: np.ndarray, classes: np.ndarray
) -> np.ndarray:
    """Columns of ``proba`` (in ``model_classes`` order) moved to ``classes``
    order; a class the model never saw gets probability 0."""
    out = np.zeros((len(proba), len(classes)))
    position = {c: i for i, c in enumerate(classes)}
    for j, c in enumerate(model_classes):
        if c not in position:
            raise InvalidParameterError(
                f"class {c!r} of a view's model is not among the classes "
                f"{list(classes)}"
            )
        out[:, position[c]] = proba[:, j]
    return out


def naive_bayes_combination(
    probabilities: Sequence[np.ndarray], prior: np.ndarray
) -> np.ndarray:
    """Combine per-view class probabilities by the naive Bayes rule (DMPD eq. 1).

    Parameters
    ----------
    probabilities : sequence of numpy.ndarray
        ``P_k(y | x_k)`` of each view, each of shape (n_rows, n_classes),
        columns in one class order.
    prior : numpy.ndarray
        ``P(y)``, shape (n_classes,), every entry > 0.

    Returns
    -------
    numpy.ndarray
        ``prod_k P_k(y | x_k) / P(y) ** (w - 1)`` normalized over the classes
        of each row (computed in logarithms; a zero probability is floored at
        the smallest positive float).

    Examples
    --------
    >>> import numpy as np
    >>> p1 = np.array([[0.8, 0.2]])
    >>> p2 = np.array([[0.3, 0.7]])
    >>> combined = naive_bayes_combination([p1, p2], np.array([0.5, 0.5]))
    >>> np.round(combined, 4).tolist()  # 0.24 / 0.5 : 0.14 / 0.5
    [[0.6316, 0.3684]]
    """
    if not len(probabilities):
        raise InvalidParameterError("naive_bayes_combination needs at least one view")
    prior = np.asarray(prior, dtype=float)
    if prior.ndim != 1 or not (prior > 0).all():
        raise InvalidParameterError(
            f"prior must be a vector of positive class frequencies; got {prior}"
        )
    shapes = {np.shape(p) for p in probabilities}
    if len(shapes) != 1 or next(iter(shapes))[1:] != prior.shape:
        raise InvalidParameterError(
            f"every view needs probabilities of shape (n_rows, {len(prior)}); "
            f"got {sorted(shapes)}"
        )
    scores = sum(np.log(np.maximum(p, _TINY)) for p in probabilities)
    scores = scores - (len(probabilities) - 1) * np.log(prior)
    scores -= scores.max(axis=1, keepdims=True)
    combined = np.exp(scores)
    return combined / combined.sum(axis=1, keepdims=True)
