"""Turn a fitted scikit-learn ``DecisionTreeClassifier`` into a PredicateTree.

scikit-learn trees are binary and numeric, so categorical attributes must be
encoded first. Both encodings are understood:

- one-hot: one 0/1 column per (attribute, value); ``x <= 0.5`` means "not
  this value". A chain of such splits leaves a set of admissible values.
- ordinal: one integer code column per attribute; ``code <= t`` keeps the
  values whose codes are at most ``t`` (an order-dependent subset).

Each edge of the resulting tree carries the *accumulated* constraint of its
path on the attribute split at the parent: a categorical attribute constrained
to one value gets :class:`~ppdm.trees.base.Equals` (it counts as pinned), to
several values a :class:`~ppdm.trees.base.ValueSet`; a numeric attribute gets
the :class:`~ppdm.trees.base.Between` left by all thresholds on the path.

Missing categorical values are a category of their own in both encodings
(``pandas.factorize(..., use_na_sentinel=False)``; scikit-learn's encoders
would need a fill value that then leaks into the predicates). Missing numeric
values are left as NaN, which scikit-learn 1.9 routes natively; the adapter
records the learned ``missing_go_to_left`` as the node's ``missing_child``.

The node rows come from ``clf.decision_path``, so leaf membership is exactly
``clf.apply`` on the encoded matrix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

from ppdm.model import AttributeKind, attribute_kind
from ppdm.trees.base import Between, Equals, PredicateTree, TreeNode, ValueSet

__all__ = [
    "EncodedFeature",
    "SklearnInducer",
    "encode",
    "tree_from_sklearn",
]


@dataclass(frozen=True)
class EncodedFeature:
    """What one column of the encoded matrix means.

    ``kind`` is "numeric" (the attribute itself), "onehot" (indicator of
    ``value``) or "ordinal" (codes indexing ``categories``).
    """

    attribute: str
    kind: str
    value: Any = None
    categories: tuple = ()


def _none_if_missing(value: Any) -> Any:
    return None if pd.isna(value) else value


def encode(
    X: pd.DataFrame, encoding: str = "onehot"
) -> tuple[np.ndarray, list[EncodedFeature]]:
    """Encode ``X`` for scikit-learn; returns the float matrix and its feature map.

    Parameters
    ----------
    X : pandas.DataFrame
    encoding : {"onehot", "ordinal"}, default="onehot"
    """
    if encoding not in ("onehot", "ordinal"):
        raise ValueError(f"encoding must be 'onehot' or 'ordinal'; got {encoding!r}")
    blocks: list[np.ndarray] = []
    features: list[EncodedFeature] = []
    for name in X.columns:
        column = X[name]
        if attribute_kind(column) is AttributeKind.NUMERIC:
            blocks.append(column.to_numpy(dtype=float, na_value=np.nan)[:, None])
            features.append(EncodedFeature(name, "numeric"))
            continue
        codes, uniques = pd.factorize(column, use_na_sentinel=False, sort=False)
        values = tuple(_none_if_missing(v) for v in uniques)
        if encoding == "ordinal":
            blocks.append(codes.astype(float)[:, None])
            features.append(EncodedFeature(name, "ordinal", categories=values))
        else:
            blocks.append(
                (codes[:, None] == np.arange(len(values))[None, :]).astype(float)
            )
            features.extend(EncodedFeature(name, "onehot", value=v) for v in values)
    matrix = np.hstack(blocks) if blocks else np.zeros((len(X), 0))
    return matrix, features


def _data_threshold(values: np.ndarray, threshold: float) -> float:
    """The largest training value a threshold sends left, in place of the threshold.

    scikit-learn compares float32 copies of the values and places a threshold
    midway between two of them, so it carries a binary tail
    (``0.7100000083446503``) into every interval label kACTUS releases. The
    largest value whose float32 copy is at most the threshold splits the
    training rows exactly as the threshold does (rounding to float32 keeps the
    order), and has the data's own decimals, as C4.5's thresholds do.
    """
    left = values[values.astype(np.float32) <= threshold]
    return float(left[-1]) if len(left) else threshold


def tree_from_sklearn(
    clf: DecisionTreeClassifier,
    X_encoded: np.ndarray,
    features: list[EncodedFeature],
) -> PredicateTree:
    """Build the predicate tree of a fitted classifier.

    Parameters
    ----------
    clf : DecisionTreeClassifier
        Fitted on ``X_encoded``.
    X_encoded : numpy.ndarray
        The encoded training matrix; gives every node its rows.
    features : list of EncodedFeature
        Meaning of each column of ``X_encoded`` (from :func:`encode`).
    """
    t = clf.tree_
    if t.n_features != len(features):
        raise ValueError(
            f"the classifier has {t.n_features} features; the map has {len(features)}"
        )
    domains: dict[str, frozenset] = {}
    for f in features:
        if f.kind == "onehot":
            domains[f.attribute] = domains.get(f.attribute, frozenset()) | {f.value}
        elif f.kind == "ordinal":
            domains[f.attribute] = frozenset(f.categories)
    paths = clf.decision_path(X_encoded).tocsc()
    rows_of = [
        paths.indices[paths.indptr[i] : paths.indptr[i + 1]].astype(np.int64)
        for i in range(t.node_count)
    ]
    counts = t.value[:, 0, :] * t.weighted_n_node_samples[:, None]
    sorted_values: dict[int, np.ndarray] = {}

    def values_of(column: int) -> np.ndarray:
        if column not in sorted_values:
            values = X_encoded[:, column]
            sorted_values[column] = np.unique(values[~np.isnan(values)])
        return sorted_values[column]

    def make(index: int, predicate: Any) -> TreeNode:
        return TreeNode(
            predicate,
            rows=np.sort(rows_of[index]),
            label=clf.classes_[int(np.argmax(counts[index]))],
            source_id=index,
        )

    root = make(0, None)
    # constraints per attribute along the path: a frozenset of values
    # (categorical) or a (low, high) pair (numeric)
    stack: list[tuple[TreeNode, int, dict[str, Any]]] = [(root, 0, {})]
    while stack:
        node, index, constraints = stack.pop()
        left, right = int(t.children_left[index]), int(t.children_right[index])
        if left == -1:
            continue
        f = features[int(t.feature[index])]
        threshold = float(t.threshold[index])
        name = f.attribute
        if f.kind == "numeric":
            threshold = _data_threshold(values_of(int(t.feature[index])), threshold)
            low, high = constraints.get(name, (-math.inf, math.inf))
            sides = [(low, min(high, threshold)), (max(low, threshold), high)]
            predicates = [Between(name, lo, hi) for lo, hi in sides]
            new = sides
        else:
            allowed = constraints.get(name, domains[name])
            if f.kind == "onehot":
                goes_left = frozenset(v for v in allowed if v != f.value)
            else:
                goes_left = (
                    frozenset(v for i, v in enumerate(f.categories) if i <= threshold)
                    & allowed
                )
            new = [goes_left, allowed - goes_left]
            predicates = [
                Equals(name, next(iter(s))) if len(s) == 1 else ValueSet(name, s)
                for s in new
            ]
        for child_index, predicate, constraint in zip(
            (left, right), predicates, new, strict=True
        ):
            child = make(child_index, predicate)
            node.children.append(child)
            stack.append((child, child_index, {**constraints, name: constraint}))
        node.missing_child = 0 if t.missing_go_to_left[index] else 1
    return PredicateTree(root, len(X_encoded))


class SklearnInducer:
    """Tree inducer backed by scikit-learn's CART, adapted to a PredicateTree.

    Parameters
    ----------
    encoding : {"onehot", "ordinal"}, default="onehot"
    min_samples_leaf : int, default=1
        kACTUS passes k (the analogue of J48's MinObj for binary trees).
    criterion : str, default="entropy"
    random_state : int, default=0
        scikit-learn breaks ties between equally good features at random.

    Attributes
    ----------
    tree_ : PredicateTree
    estimator_ : DecisionTreeClassifier
    features_ : list of EncodedFeature
    """

    def __init__(
        self,
        *,
        encoding: str = "onehot",
        min_samples_leaf: int = 1,
        criterion: str = "entropy",
        random_state: int = 0,
    ) -> None:
        self.encoding = encoding
        self.min_samples_leaf = min_samples_leaf
        self.criterion = criterion
        self.random_state = random_state

    def fit(self, X: pd.DataFrame, y: pd.Series | np.ndarray) -> SklearnInducer:
        matrix, self.features_ = encode(X, self.encoding)
        labels = np.asarray(pd.Series(y).astype(str))
        self.estimator_ = DecisionTreeClassifier(
            criterion=self.criterion,
            min_samples_leaf=self.min_samples_leaf,
            random_state=self.random_state,
        ).fit(matrix, labels)
        self.tree_ = tree_from_sklearn(self.estimator_, matrix, self.features_)
        return self
