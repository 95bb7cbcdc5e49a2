"""A C4.5-style tree inducer: gain ratio, multiway categorical splits, numpy.

Written here because scikit-learn 1.9.1 has no categorical splits (checked:
``DecisionTreeClassifier`` has no ``categorical_features``, rejects strings and
only makes binary threshold splits; only the HistGradientBoosting estimators
know categories), and kACTUS needs one child per value of a categorical
attribute: a leaf pins a categorical quasi-identifier only through an equality
test. The small PyPI C4.5 packages are unmaintained and per-row Python.

What is C4.5 here (Quinlan 1993, and Weka's J48 which the kACTUS paper wraps):

- split selection by gain ratio, among the candidate splits whose information
  gain is at least the average gain of the candidates (C4.5's guard against
  tiny split-info denominators);
- categorical attributes split multiway, one child per value present at the
  node, and are not tested again below; numeric attributes split binary,
  ``x <= t`` / ``x > t`` with ``t`` a data value, and may be tested again;
  the gain of a threshold is reduced by ``log2(#candidate thresholds) / n``
  (C4.5 Release 8);
- ``min_obj`` (J48's MinObj): a node with fewer than ``2 * min_obj`` instances
  is a leaf, a categorical split needs at least two branches with
  ``min_obj`` instances, a threshold needs ``min_obj`` on each side.

What differs, on purpose:

- Missing values. A missing categorical value is a value of its own (an
  ``Equals(attribute, None)`` branch), so a leaf's instances really share the
  value the path pins. A missing numeric value goes with the larger side of
  the threshold (the most frequent branch); it counts in the gain as C4.5 does
  (gain scaled by the known fraction, split info with an "unknown" part).
  Rows met later with a category never seen at a node follow the most
  frequent branch (``missing_child``).
- No fractional instances; error-based pruning (``confidence``, J48's 0.25)
  by subtree replacement only, no subtree raising.

References
----------
J. R. Quinlan, "C4.5: Programs for Machine Learning", Morgan Kaufmann, 1993.
J. R. Quinlan, "Improved use of continuous attributes in C4.5", Journal of
Artificial Intelligence Research 4:77-90, 1996.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy.stats import norm

from ppdm.model import AttributeKind, attribute_kind
from ppdm.trees.base import Between, Equals, PredicateTree, TreeNode

__all__ = ["C45", "SplitScore", "added_errors", "entropy", "root_ranking"]

_EPS = 1e-12


def entropy(counts: np.ndarray, axis: int = -1) -> np.ndarray:
    """Entropy in bits of count vectors along ``axis`` (0 for an empty vector)."""
    counts = np.asarray(counts, dtype=float)
    total = counts.sum(axis=axis, keepdims=True)
    # no errstate context: it costs more than the arithmetic on small nodes
    p = counts / np.where(total > 0, total, 1.0)
    return -(p * np.log2(np.where(p > 0, p, 1.0))).sum(axis=axis)


@lru_cache(maxsize=16)
def _normal_quantile(q: float) -> float:
    return float(norm.ppf(q))


def added_errors(n: float, errors: float, confidence: float) -> float:
    """C4.5's pessimistic extra errors for a leaf of ``n`` instances, ``errors`` wrong.

    The upper limit of the binomial confidence interval at ``confidence``
    (normal approximation with continuity correction), minus ``errors``; the
    exact base case for 0 errors and linear interpolation below 1 error, as
    in C4.5 and Weka's ``Stats.addErrs``.
    """
    if n <= 0:
        return 0.0
    if errors < 1:
        base = n * (1 - confidence ** (1 / n))
        if errors == 0:
            return base
        return base + errors * (added_errors(n, 1.0, confidence) - base)
    if errors + 0.5 >= n:
        return max(n - errors, 0.0)
    z = _normal_quantile(1 - confidence)
    f = (errors + 0.5) / n
    r = (f + z * z / (2 * n) + z * np.sqrt(f / n - f * f / n + z * z / (4 * n * n))) / (
        1 + z * z / n
    )
    return float(r * n - errors)


@dataclass(frozen=True)
class SplitScore:
    """The score of the best split on one attribute at one node."""

    attribute: str
    gain: float
    split_info: float
    threshold: float | None = None  # numeric splits only

    @property
    def gain_ratio(self) -> float:
        return self.gain / self.split_info if self.split_info > _EPS else 0.0


class C45:
    """C4.5-style classification tree inducer returning a :class:`PredicateTree`.

    Parameters
    ----------
    min_obj : int, default=2
        J48's MinObj (see the module docstring). kACTUS sets it to k.
    confidence : float or None, default=0.25
        Confidence factor of C4.5's error-based pruning (J48's default 0.25);
        ``None`` keeps the unpruned tree.
    max_depth : int or None, default=None
        Optional depth limit (not in C4.5; for experiments).

    Attributes
    ----------
    tree_ : PredicateTree
        The fitted tree; its nodes hold the training rows that reach them.
    classes_ : numpy.ndarray
        Class labels, in the order of the class counts.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"outlook": ["sun", "sun", "rain", "rain", "sun", "rain"]})
    >>> y = pd.Series(["no", "no", "yes", "yes", "no", "yes"])
    >>> tree = C45(min_obj=1).fit(X, y).tree_
    >>> [leaf.predicate.describe() for leaf in tree.leaves]
    ['outlook = sun', 'outlook = rain']
    """

    def __init__(
        self,
        *,
        min_obj: int = 2,
        confidence: float | None = 0.25,
        max_depth: int | None = None,
    ) -> None:
        self.min_obj = min_obj
        self.confidence = confidence
        self.max_depth = max_depth

    # -- encoding --------------------------------------------------------
    def _encode(self, X: pd.DataFrame) -> None:
        self._numeric: dict[str, np.ndarray] = {}
        self._codes: dict[str, np.ndarray] = {}
        self._values: dict[str, np.ndarray] = {}
        for name in X.columns:
            column = X[name]
            if attribute_kind(column) is AttributeKind.NUMERIC:
                self._numeric[name] = column.to_numpy(dtype=float, na_value=np.nan)
            else:
                # Missing is a category of its own (module docstring).
                codes, uniques = pd.factorize(column, use_na_sentinel=False)
                self._codes[name] = codes.astype(np.int64)
                self._values[name] = np.asarray(uniques, dtype=object)

    # -- scores ----------------------------------------------------------
    def _score_categorical(
        self, name: str, rows: np.ndarray, y: np.ndarray, base: float
    ) -> SplitScore | None:
        codes = self._codes[name][rows]
        k = len(self._values[name])
        table = np.bincount(
            codes * self._n_classes + y, minlength=k * self._n_classes
        ).reshape(k, self._n_classes)
        sizes = table.sum(axis=1)
        if np.count_nonzero(sizes >= self.min_obj) < 2:
            return None
        n = len(rows)
        gain = base - float((sizes * entropy(table)).sum()) / n
        return SplitScore(name, gain, float(entropy(sizes)))

    def _score_numeric(
        self, name: str, rows: np.ndarray, y: np.ndarray
    ) -> SplitScore | None:
        values = self._numeric[name][rows]
        known = ~np.isnan(values)
        n, n_known = len(rows), int(known.sum())
        if n_known < 2 * self.min_obj:
            return None
        v, yk = values[known], y[known]
        order = np.argsort(v, kind="stable")
        v, yk = v[order], yk[order]
        # cumulative class counts of the left part after each position
        left = np.cumsum(np.eye(self._n_classes, dtype=np.int64)[yk], axis=0)
        total = left[-1]
        cut = np.flatnonzero(v[:-1] < v[1:])  # last position before a new value
        n_left = cut + 1
        ok = (n_left >= self.min_obj) & (n_known - n_left >= self.min_obj)
        cut, n_left = cut[ok], n_left[ok]
        if len(cut) == 0:
            return None
        lcounts = left[cut]
        rcounts = total - lcounts
        known_base = float(entropy(total))
        info = (
            n_left * entropy(lcounts) + (n_known - n_left) * entropy(rcounts)
        ) / n_known
        best = int(np.argmax(known_base - info))  # C4.5 picks the threshold by gain
        fraction = n_known / n
        gain = fraction * (known_base - float(info[best])) - np.log2(len(cut)) / n_known
        parts = [int(n_left[best]), n_known - int(n_left[best]), n - n_known]
        return SplitScore(
            name, float(gain), float(entropy(np.array(parts))), float(v[cut[best]])
        )

    def split_scores(
        self, X: pd.DataFrame, y: pd.Series | np.ndarray
    ) -> dict[str, SplitScore]:
        """Best split of every attribute at the root (no ``min_obj`` filtering of
        the attribute set; attributes with no admissible split are left out)."""
        self._encode(X)
        classes, yc = np.unique(np.asarray(y), return_inverse=True)
        self._n_classes = len(classes)
        rows = np.arange(len(X))
        base = float(entropy(np.bincount(yc, minlength=self._n_classes)))
        out = {}
        for name in X.columns:
            score = (
                self._score_numeric(name, rows, yc)
                if name in self._numeric
                else self._score_categorical(name, rows, yc, base)
            )
            if score is not None:
                out[name] = score
        return out

    # -- fitting ---------------------------------------------------------
    def fit(self, X: pd.DataFrame, y: pd.Series | np.ndarray) -> C45:
        """Grow the tree on ``X`` (attributes) and ``y`` (class labels)."""
        if self.min_obj < 1:
            raise ValueError(f"min_obj must be >= 1; got {self.min_obj}")
        y = np.asarray(y, dtype=object) if not isinstance(y, np.ndarray) else y
        if len(y) != len(X):
            raise ValueError(f"X has {len(X)} rows but y has {len(y)}")
        self._encode(X)
        labels = pd.Series(y)
        codes, classes = pd.factorize(labels, sort=True, use_na_sentinel=False)
        self.classes_ = np.asarray(classes, dtype=object)
        self._n_classes = max(len(classes), 1)
        yc = codes.astype(np.int64)

        root = TreeNode(rows=np.arange(len(X), dtype=np.int64))
        stack: list[tuple[TreeNode, int, frozenset[str]]] = [(root, 0, frozenset())]
        while stack:
            node, depth, used = stack.pop()
            rows = node.rows
            counts = np.bincount(yc[rows], minlength=self._n_classes)
            if len(rows):
                node.label = self.classes_[int(np.argmax(counts))]
            if (
                len(rows) < 2 * self.min_obj
                or np.count_nonzero(counts) <= 1
                or (self.max_depth is not None and depth >= self.max_depth)
            ):
                continue
            best = self._best_split(rows, yc[rows], float(entropy(counts)), used)
            if best is None:
                continue
            if best.threshold is None:
                self._split_categorical(node, best.attribute)
                child_used = used | {best.attribute}
            else:
                self._split_numeric(node, best.attribute, best.threshold)
                child_used = used
            for child in reversed(node.children):
                stack.append((child, depth + 1, child_used))
        if self.confidence is not None:
            self._prune(root, yc)
        self.tree_ = PredicateTree(root, len(X))
        return self

    def _prune(self, root: TreeNode, y: np.ndarray) -> None:
        """C4.5's error-based pruning by subtree replacement, bottom-up.

        A subtree becomes a leaf when the leaf's estimated errors (training
        errors plus :func:`added_errors` at ``confidence``) are at most the
        subtree's estimate + 0.1 (J48's rule). Subtree raising is not done: it
        moves instances between branches, and kACTUS needs every instance to
        stay on the path its values lead to.
        """
        estimate: dict[int, float] = {}
        order, stack = [], [root]
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(node.children)
        for node in reversed(order):  # children before parents
            counts = np.bincount(y[node.rows], minlength=self._n_classes)
            n = float(len(node.rows))
            errors = n - float(counts.max()) if n else 0.0
            as_leaf = errors + added_errors(n, errors, self.confidence)
            if node.children:
                as_tree = sum(estimate[id(child)] for child in node.children)
                if as_leaf <= as_tree + 0.1:
                    node.children = []
                    node.missing_child = 0
                else:
                    estimate[id(node)] = as_tree
                    continue
            estimate[id(node)] = as_leaf

    def _best_split(
        self, rows: np.ndarray, y: np.ndarray, base: float, used: frozenset[str]
    ) -> SplitScore | None:
        scores = []
        for name in self._numeric:
            score = self._score_numeric(name, rows, y)
            if score is not None:
                scores.append(score)
        for name in self._codes:
            if name not in used:
                score = self._score_categorical(name, rows, y, base)
                if score is not None:
                    scores.append(score)
        return _choose(scores, self._order)

    @property
    def _order(self) -> list[str]:
        return list(self._numeric) + list(self._codes)

    def root_attribute(self, X: pd.DataFrame, y: pd.Series | np.ndarray) -> str | None:
        """The attribute the tree grown on ``X`` and ``y`` tests at its root.

        ``None`` when no attribute has an admissible split (the root is a
        leaf). The choice is :meth:`fit`'s, without growing the rest.
        """
        scores = self.split_scores(X, y)
        best = _choose(list(scores.values()), self._order)
        return None if best is None else best.attribute

    def _split_categorical(self, node: TreeNode, name: str) -> None:
        rows = node.rows
        codes = self._codes[name][rows]
        order = np.argsort(codes, kind="stable")
        present, starts, sizes = np.unique(
            codes[order], return_index=True, return_counts=True
        )
        values = self._values[name]
        for code, start, size in zip(present, starts, sizes, strict=True):
            value = values[code]
            value = None if pd.isna(value) else value
            node.children.append(
                TreeNode(Equals(name, value), rows=rows[order[start : start + size]])
            )
        node.missing_child = int(np.argmax(sizes))

    def _split_numeric(self, node: TreeNode, name: str, threshold: float) -> None:
        rows = node.rows
        values = self._numeric[name][rows]
        missing = np.isnan(values)
        left = values <= threshold
        right = ~left & ~missing
        bigger_left = left.sum() >= right.sum()
        if bigger_left:
            left |= missing
        else:
            right |= missing
        node.children = [
            TreeNode(Between(name, high=threshold), rows=rows[left]),
            TreeNode(Between(name, low=threshold), rows=rows[right]),
        ]
        node.missing_child = 0 if bigger_left else 1


def _choose(scores: list[SplitScore], order: list[str]) -> SplitScore | None:
    """C4.5's split: the best gain ratio among gains at least the average."""
    scores = [s for s in scores if s.gain > _EPS]
    if not scores:
        return None
    average = sum(s.gain for s in scores) / len(scores)
    eligible = [s for s in scores if s.gain >= average - _EPS]
    # max() keeps the first of equal ratios: ties go to the attribute order
    rank = {name: i for i, name in enumerate(order)}
    eligible.sort(key=lambda s: rank[s.attribute])
    return max(eligible, key=lambda s: s.gain_ratio)


def root_ranking(
    table: pd.DataFrame, target: str, n: int, *, min_obj: int = 2
) -> list[str]:
    """The ``n`` attributes C4.5 puts at the root of successive trees.

    Matatov et al. (2010, Section 5.4) form the quasi-identifier of their
    experiments this way: the root attribute of a C4.5 tree on the data as
    it is (numbers as numbers, categories as categories), then the root of
    the tree grown without it, and so on (J48's defaults: ``min_obj=2``).
    Rows without a class are left out. Fewer than ``n`` come back when no
    remaining attribute can split the root.
    """
    labelled = table[table[target].notna()]
    y = labelled[target].astype(str).to_numpy(dtype=object)
    rest = [c for c in labelled.columns if c != target]
    chosen: list[str] = []
    while rest and len(chosen) < n:
        root = C45(min_obj=min_obj).root_attribute(labelled[rest], y)
        if root is None:
            break
        chosen.append(root)
        rest.remove(root)
    return chosen
