"""The learners of the accuracy harness, and how they read unknown cells.

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

Every model gives class probabilities (``predict_proba``), which the
naive Bayes combination of several training views needs
(:mod:`ppdm.utility.views`).

Suppressed cells (``*``) and missing values are unknown values; how a model
treats them is the ``missing`` option (:data:`MISSING`):

- ``"weka"`` (default): as the Weka learners of the kACTUS paper did, which is
  what "suppressed cells as missing values" means there. The tree (C4.5) uses
  its own fractional instances, naive Bayes skips
  unknown attributes, logistic regression replaces an unknown value by the
  training mode (nominal) or mean (numeric) (:class:`BlockImputer`, Weka's
  ``ReplaceMissingValues`` inside ``Logistic``).
- ``"indicator"``: a missing-value indicator, in the
  spirit of scikit-learn's ``add_indicator``. Logistic regression keeps an
  unknown nominal cell's one-hot block all zero, replaces an unknown number
  by the training mean, and reads one more 0/1 feature per attribute,
  ``<attribute> suppressed``, set where the cell is unknown
  (:class:`UnknownIndicator`); naive Bayes multiplies in ``P(unknown | c)``
  for an unknown cell (where "weka" skips it) and ``P(v | c)`` of the known
  cells for a known one. Indicators exist for the attributes with an unknown
  cell among the training rows only (scikit-learn's
  ``features="missing-only"``); everything is fitted on the training rows. A
  missing input value sets the indicator as a suppressed cell does: both are
  unknown. The tree is C4.5 as in "weka". Not the default: the test rows are
  original rows, never suppressed, so every indicator is 0 at test time, and
  logistic regression then predicts as for the rows the release kept known,
  a class-skewed subset under kACTUS (Adult, k = 10: 84.5 % with "weka",
  77.2 % with "indicator", ZeroR 76.1 %); naive Bayes, which reads a known
  cell as "weka" does, gains 0.2 points there (it is informative where the
  original has missing values) and is unchanged on German credit
  (benchmarks/results/missing-indicator.md).
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
   Knowledge and Data Engineering 22(3):334-347, 2010.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from ppdm.exceptions import InvalidParameterError
from ppdm.utility._sparse import (
    MAX_DENSE_CELLS,
    Matrix,
    as_matrix,
    dense_column,
    is_sparse,
    row_blocks,
    row_sums,
    split_blocks,
)
from ppdm.utility.c45_learner import C45Learner

__all__ = [
    "MISSING",
    "MISSING_TEXT",
    "MODELS",
    "NB_BINS",
    "OPTIONAL_MODELS",
    "RANGES",
    "BlockImputer",
    "MembershipNB",
    "SklearnModel",
    "UnknownIndicator",
    "check_missing",
    "check_models",
    "feature_view",
    "make_model",
]

#: Models evaluated by default, in report order.
MODELS = ("decision_tree", "naive_bayes", "logistic_regression")
#: Models evaluated only when asked for: ``"cba"``, the associative classifier
#: of :mod:`ppdm.utility.cba` (rules at minsup 30 %, minconf 50 %).
OPTIONAL_MODELS = ("cba",)

#: Treatments of unknown (suppressed or missing) cells; the first is the default.
MISSING = ("weka", "zeros", "indicator")

#: How the decision tree reads a released numeric range; the first is the
#: default. "midpoint": one number; "uniform": C4.5 spreads the range's weight
#: uniformly over its split thresholds (:class:`C45Learner`).
RANGES = ("midpoint", "uniform")

#: Bins of a numeric attribute for naive Bayes.
NB_BINS = 10

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
    "indicator": (
        "given a missing-value indicator: logistic regression reads an "
        "unknown cell as an all-zero one-hot row (nominal) or the training "
        "mean (numeric) plus a 0/1 feature '<attribute> suppressed', and naive "
        "Bayes weighs an unknown cell by P(unknown | class) instead of skipping "
        "it (indicators for the attributes with an unknown cell among the "
        "training rows); "
        "the tree distributes an instance with an unknown value over the known "
        "values in proportion to their frequency (C4.5's fractional instances)."
    ),
}


@dataclass(eq=False, repr=False, kw_only=True)
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
    indicator : bool, default=False
        A missing-value indicator (``missing="indicator"``) for every
        attribute with an unknown cell among the training rows: an unknown
        cell adds ``log P(unknown | c)`` (smoothed as a two-valued attribute)
        where naive Bayes would skip it. A known cell still adds ``log P(v |
        c)`` over the known cells only, not ``log P(known | c)``: test rows are
        original rows, never suppressed, and the factor "known" would
        multiply over every attribute in favour of the class whose rows the
        release suppressed least (German credit, kACTUS k = 5: 72.7 % ->
        31.7 %, below the 70 % majority, when "unknown" was counted as one
        more value).

    Attributes
    ----------
    classes_ : numpy.ndarray
    edges_ : list of numpy.ndarray or None
        Inner bin edges of each numeric block.
    log_unknown_ : list of numpy.ndarray or None
        Per block, ``log P(unknown | c)`` (None: no indicator).
    indicated_ : list of bool
        Per block, whether it has an indicator.
    log_prior_ : numpy.ndarray
    log_likelihood_ : list of numpy.ndarray
        ``log P(v | c)`` per block, shape (n_classes, n_values).
    """

    blocks: Sequence[tuple] = ()
    ranges: Sequence[tuple[float, float]] | None = None
    n_bins: int = 10
    alpha: float = 1.0
    indicator: bool = False

    def _memberships(self, x: Matrix) -> list[Matrix]:
        """Per block, the (fractional) memberships: the block itself (sparse
        when ``x`` is), or a numeric column's one-hot bins."""
        parts: list[Matrix] = []
        columns = split_blocks(x, self.blocks)
        for (kind, _, _), edges, part in zip(self.blocks, self.edges_, columns):
            if kind != "numeric":
                parts.append(part)
                continue
            values = part[:, 0]
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

    def fit(self, x: Matrix, y: np.ndarray) -> MembershipNB:
        x = as_matrix(x)
        self.classes_, codes = np.unique(np.asarray(y), return_inverse=True)
        ranges = (
            list(self.ranges) if self.ranges is not None else [None] * len(self.blocks)
        )
        self.edges_ = [
            self._edges(dense_column(x, start), ranges[i])
            if kind == "numeric"
            else None
            for i, (kind, start, _) in enumerate(self.blocks)
        ]
        class_rows = np.eye(len(self.classes_))[codes]  # (n, n_classes)
        self.log_unknown_ = [None] * len(self.blocks)
        if self.indicator:
            # P(unknown | c), Laplace-smoothed as a two-valued attribute
            n_class = class_rows.sum(axis=0)
            for i, unknown in enumerate(_unknown_masks(x, self.blocks)):
                if unknown.any():
                    hits = unknown.astype(float) @ class_rows
                    self.log_unknown_[i] = np.log(
                        (hits + self.alpha) / (n_class + 2 * self.alpha)
                    )
        self.indicated_ = [p is not None for p in self.log_unknown_]
        self.log_prior_ = np.log(class_rows.mean(axis=0))
        self.log_likelihood_ = []
        for block in self._memberships(x):
            # (n_classes, n_values); block.T @ class_rows keeps a sparse block
            # sparse until the (small) dense product
            counts = np.asarray((block.T @ class_rows).T)
            smoothed = counts + self.alpha
            totals = smoothed.sum(axis=1, keepdims=True)
            self.log_likelihood_.append(np.log(smoothed / totals))
        return self

    def predict_log_joint(self, x: Matrix) -> np.ndarray:
        """Unnormalized log P(c) + sum of log P(v | c), shape (n, n_classes)."""
        x = as_matrix(x)
        joint = np.tile(self.log_prior_, (x.shape[0], 1))
        for block, log_p in zip(self._memberships(x), self.log_likelihood_):
            joint += np.asarray(block @ log_p.T)
        if any(self.indicated_):
            masks = _unknown_masks(x, self.blocks)
            for unknown, log_u in zip(masks, self.log_unknown_):
                if log_u is not None:
                    joint[unknown] += log_u
        return joint

    def predict_log_proba(self, x: np.ndarray) -> np.ndarray:
        """log P(c | x): the joint normalized over the classes (log-sum-exp)."""
        joint = self.predict_log_joint(x)
        top = joint.max(axis=1, keepdims=True)
        return joint - (top + np.log(np.exp(joint - top).sum(axis=1, keepdims=True)))

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        """P(c | x), shape (n, n_classes), columns in :attr:`classes_` order."""
        return np.exp(self.predict_log_proba(x))

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.classes_[np.argmax(self.predict_log_joint(x), axis=1)]


def _unknown_masks(x: Matrix, blocks: Sequence[tuple]) -> list[np.ndarray]:
    """Per attribute block, which rows hold an unknown cell.

    A numeric column is unknown where it is NaN; a membership block (one-hot,
    value set, bins) where its memberships sum to zero (suppressed, missing, or
    a value outside the training domain).
    """
    masks = []
    for (kind, _, _), part in zip(blocks, split_blocks(x, blocks)):
        if kind == "numeric":
            masks.append(np.isnan(part[:, 0]))
        else:
            masks.append(~(row_sums(part) > 0))
    return masks


class BlockImputer(TransformerMixin, BaseEstimator):
    """Replace unknown cells by the training mode (nominal) or mean (numeric).

    Weka's ``ReplaceMissingValues`` filter, which Weka's ``Logistic`` (the
    kACTUS paper's logistic regression) applies before ``NominalToBinary``:
    on one-hot features, the mode is the whole block set to the one-hot row
    of the most frequent value. ``SimpleImputer(strategy="most_frequent")``
    cannot do this: it would impute each one-hot column on its own (all to 0,
    the most frequent entry), which is the "zeros" treatment.

    A CSR matrix stays CSR: an unknown nominal row was all zeros and gets the
    mode's one entry; a NaN number (stored) becomes the mean.

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

    def fit(self, x: Matrix, y: object = None) -> BlockImputer:
        x = as_matrix(x)
        self.fill_ = []
        for (kind, start, stop), unknown, part in zip(
            self.blocks, _unknown_masks(x, self.blocks), split_blocks(x, self.blocks)
        ):
            known = part[~unknown]
            fill = np.zeros(stop - start)
            if known.shape[0] and kind == "numeric":
                fill[0] = known[:, 0].mean()
            elif known.shape[0]:
                fill[np.argmax(np.asarray(known.sum(axis=0)).ravel())] = 1.0
            self.fill_.append(fill)
        return self

    def transform(self, x: Matrix) -> Matrix:
        x = as_matrix(x)
        masks = _unknown_masks(x, self.blocks)
        if not is_sparse(x):
            out = np.array(x, dtype=float, copy=True)
            for (_, start, stop), unknown, fill in zip(self.blocks, masks, self.fill_):
                out[np.ix_(np.flatnonzero(unknown), np.arange(start, stop))] = fill
            return out
        out = x.copy()
        rows, cols, vals = [], [], []
        for (kind, start, _), unknown, fill in zip(self.blocks, masks, self.fill_):
            if kind == "numeric":
                # the NaN of the column are stored entries: overwrite them
                in_column = out.indices == start
                nan = in_column & np.isnan(out.data)
                out.data[nan] = fill[0]
                continue
            # an unknown membership row is empty: add the mode's entries
            unknown_rows = np.flatnonzero(unknown)
            for offset in np.flatnonzero(fill):
                rows.append(unknown_rows)
                cols.append(np.full(len(unknown_rows), start + offset))
                vals.append(np.full(len(unknown_rows), fill[offset]))
        if rows:
            patch = sp.csr_matrix(
                (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                shape=out.shape,
            )
            out = (out + patch).tocsr()
        return out


class UnknownIndicator(TransformerMixin, BaseEstimator):
    """Unknown cells as a missing-value indicator per attribute.

    scikit-learn's ``SimpleImputer(add_indicator=True)`` per attribute block
    rather than per column: an unknown number becomes the training mean, an
    unknown nominal cell keeps its all-zero one-hot block, and one 0/1 column
    per attribute, ``<attribute> suppressed``, is appended, 1 where the cell is
    unknown (suppressed, missing, or a value the training domain lacks). As
    with ``features="missing-only"``, only attributes with an unknown cell
    among the training rows get one. A CSR matrix stays CSR (the indicators
    store only their ones).

    Parameters
    ----------
    blocks : sequence of (str, int, int)
        :attr:`ppdm.utility.features.CellFeaturizer.blocks_`.
    attributes : sequence of str, optional
        The attribute of each block, for :meth:`get_feature_names_out`.

    Attributes
    ----------
    indicated_ : numpy.ndarray of int
        The blocks that get an indicator, in block order.
    means_ : list of float
        The training mean of each numeric block (0.0 when never known; NaN
        for the other blocks).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0, 0.0, 20.0], [0.0, 0.0, np.nan], [0.0, 1.0, 40.0]])
    >>> blocks = [("onehot", 0, 2), ("numeric", 2, 3)]
    >>> step = UnknownIndicator(blocks=blocks, attributes=["sex", "age"]).fit(x)
    >>> step.transform(x).tolist()
    [[1.0, 0.0, 20.0, 0.0, 0.0], [0.0, 0.0, 30.0, 1.0, 1.0], [0.0, 1.0, 40.0, 0.0, 0.0]]
    >>> step.get_feature_names_out(["sex=F", "sex=M", "age"]).tolist()[3:]
    ['sex suppressed', 'age suppressed']
    """

    def __init__(self, *, blocks=(), attributes=None) -> None:
        self.blocks = blocks
        self.attributes = attributes

    def fit(self, x: Matrix, y: object = None) -> UnknownIndicator:
        x = as_matrix(x)
        masks = _unknown_masks(x, self.blocks)
        self.indicated_ = np.flatnonzero([m.any() for m in masks])
        self.means_ = []
        for (kind, _, _), unknown, part in zip(
            self.blocks, masks, split_blocks(x, self.blocks)
        ):
            known = part[~unknown]
            if kind != "numeric":
                self.means_.append(math.nan)
            else:
                self.means_.append(float(known[:, 0].mean()) if len(known) else 0.0)
        self.n_features_in_ = x.shape[1]
        return self

    def transform(self, x: Matrix) -> Matrix:
        x = as_matrix(x)
        masks = _unknown_masks(x, self.blocks)
        flags = np.zeros((x.shape[0], len(self.indicated_)))
        for j, block in enumerate(self.indicated_):
            flags[:, j] = masks[block]
        if not is_sparse(x):
            out = np.array(x, dtype=float, copy=True)
            for (kind, start, _), mean in zip(self.blocks, self.means_):
                if kind == "numeric":
                    column = out[:, start]
                    column[np.isnan(column)] = mean
            return np.hstack([out, flags])
        out = x.copy()
        for (kind, start, _), mean in zip(self.blocks, self.means_):
            if kind == "numeric":
                # the NaN of the column are stored entries: overwrite them
                nan = (out.indices == start) & np.isnan(out.data)
                out.data[nan] = mean
        out.eliminate_zeros()
        return sp.hstack([out, sp.csr_matrix(flags)], format="csr")

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """The input names, then ``<attribute> suppressed`` per indicator."""
        names = (
            list(input_features)
            if input_features is not None
            else [f"x{i}" for i in range(self.n_features_in_)]
        )
        attributes = (
            list(self.attributes)
            if self.attributes is not None
            else [names[start] for _, start, _ in self.blocks]
        )
        extra = [f"{attributes[b]} suppressed" for b in self.indicated_]
        return np.asarray(names + extra, dtype=object)


@dataclass(eq=False, repr=False, kw_only=True)
class SklearnModel(ClassifierMixin, BaseEstimator):
    """A scikit-learn pipeline on the featurizer's matrix, dense when small.

    ``estimator`` is ``"logistic_regression"`` (imputation, ``StandardScaler``,
    ``LogisticRegression(max_iter=1000)``) or ``"decision_tree"``
    (mean imputation, ``DecisionTreeClassifier(criterion="entropy",
    min_samples_leaf=2)``, the ``missing="zeros"`` tree); ``missing`` picks
    the imputation (:class:`BlockImputer` for "weka", :class:`UnknownIndicator`
    for "indicator", the column mean for "zeros").

    The rule for dense input: a training matrix of at most ``max_dense_cells``
    cells is densified and fitted exactly as a dense matrix always was (the
    scaler centres every column), and the matrices it predicts are densified
    in row blocks of at most that many cells. A larger one is fitted sparse:
    the scaler divides by the standard deviation without centring (centring
    would densify it). With an unpenalized intercept the centred and the
    uncentred problems have the same optimum (the intercept absorbs the
    means); the solver reaches it along another path, so the last digits of
    the coefficients may differ. scikit-learn's tree reads CSR as is.

    Parameters
    ----------
    estimator : {"logistic_regression", "decision_tree"}
    blocks : sequence of (str, int, int)
    missing : {"weka", "zeros", "indicator"}, default="weka"
    random_state : int, default=0
    max_dense_cells : int, default=MAX_DENSE_CELLS

    Attributes
    ----------
    pipeline_ : sklearn.pipeline.Pipeline
    dense_ : bool
        Whether the pipeline was fitted on a dense matrix.
    classes_ : numpy.ndarray
    """

    estimator: str = "logistic_regression"
    blocks: Sequence[tuple] = ()
    missing: str = "weka"
    random_state: int = 0
    max_dense_cells: int = MAX_DENSE_CELLS

    def _pipeline(self, dense: bool) -> Pipeline:
        if self.missing == "weka" and self.estimator == "logistic_regression":
            impute = ("impute", BlockImputer(blocks=list(self.blocks)))
        elif self.missing == "indicator" and self.estimator == "logistic_regression":
            impute = ("impute", UnknownIndicator(blocks=list(self.blocks)))
        else:
            impute = (
                "impute",
                SimpleImputer(strategy="mean", keep_empty_features=True),
            )
        if self.estimator == "decision_tree":
            model = DecisionTreeClassifier(
                criterion="entropy", min_samples_leaf=2, random_state=self.random_state
            )
            return Pipeline([impute, ("model", model)])
        if self.estimator == "logistic_regression":
            model = LogisticRegression(max_iter=1000, random_state=self.random_state)
            scale = StandardScaler(with_mean=dense)
            return Pipeline([impute, ("scale", scale), ("model", model)])
        raise InvalidParameterError(
            "estimator must be 'logistic_regression' or 'decision_tree'; "
            f"got {self.estimator!r}"
        )

    def fit(self, x: Matrix, y: np.ndarray) -> SklearnModel:
        x = as_matrix(x)
        self.dense_ = not is_sparse(x) or (
            x.shape[0] * x.shape[1] <= self.max_dense_cells
        )
        if self.dense_ and is_sparse(x):
            x = x.toarray()
        self.pipeline_ = self._pipeline(self.dense_).fit(x, y)
        self.classes_ = self.pipeline_.classes_
        return self

    def _by_blocks(self, method: str, x: Matrix) -> np.ndarray:
        x = as_matrix(x)
        call = getattr(self.pipeline_, method)
        if not (self.dense_ and is_sparse(x)):
            return call(x)
        parts = [
            call(x[rows].toarray())
            for rows in row_blocks(x.shape[0], x.shape[1], self.max_dense_cells)
        ]
        if not parts:
            return call(np.zeros((0, x.shape[1])))
        return np.concatenate(parts)

    def predict_proba(self, x: Matrix) -> np.ndarray:
        return self._by_blocks("predict_proba", x)

    def predict(self, x: Matrix) -> np.ndarray:
        return self._by_blocks("predict", x)


def make_model(
    name: str,
    seed: int,
    blocks: Sequence[tuple] = (),
    ranges: Sequence[tuple | None] | None = None,
    *,
    missing: str = "weka",
    laplace: bool = False,
) -> Any:
    """A fresh, seeded model (its treatment of unknown cells included) by name.

    ``blocks`` and ``ranges`` (:attr:`CellFeaturizer.blocks_` and
    ``ranges_``) tell the models which feature columns form one attribute and
    the range of each numeric one. ``missing`` is one of :data:`MISSING` (see
    the module docstring); naive Bayes skips unknown cells but with
    "indicator".
    ``laplace`` makes the C4.5 tree's leaf probabilities Laplace-corrected
    (J48's ``-A``), as the DMPD combiner estimates them; it changes no
    other model.
    """
    check_missing(missing)
    if name == "naive_bayes":
        return MembershipNB(
            blocks=list(blocks), ranges=ranges, indicator=missing == "indicator"
        )
    if name == "cba":
        from ppdm.utility.cba import CBAClassifier

        return CBAClassifier(blocks=list(blocks))
    if name == "decision_tree" and missing in ("weka", "indicator"):
        return C45Learner(blocks=list(blocks), laplace=laplace)
    if name in ("decision_tree", "logistic_regression"):
        return SklearnModel(
            estimator=name, blocks=list(blocks), missing=missing, random_state=seed
        )
    raise InvalidParameterError(
        f"unknown model {name!r}; available: {', '.join(MODELS + OPTIONAL_MODELS)}"
    )


def check_models(models: Sequence[str]) -> tuple[str, ...]:
    """The model names as a tuple; raise unless a non-empty subset of MODELS
    and OPTIONAL_MODELS."""
    unknown = [m for m in models if m not in MODELS + OPTIONAL_MODELS]
    if unknown or not models:
        raise InvalidParameterError(
            f"models must be a non-empty subset of {list(MODELS + OPTIONAL_MODELS)}; "
            f"got {list(models)}"
        )
    return tuple(models)


def check_missing(missing: str) -> str:
    """``missing`` itself; raise unless one of :data:`MISSING`."""
    if missing not in MISSING:
        raise InvalidParameterError(
            f"missing must be one of {list(MISSING)}; got {missing!r}"
        )
    return missing


def feature_view(model: str, missing: str, ranges: str) -> tuple[int | None, str]:
    """``(numeric_bins, numeric_ranges)`` of the featurizer a model reads.

    Naive Bayes counts bins (a range spread over those it overlaps); the C4.5
    tree reads a range as its midpoint or, with ``ranges="uniform"``, by its
    two ends; logistic regression reads the midpoint.
    """
    if model in ("naive_bayes", "cba"):
        return NB_BINS, "midpoint"
    if (
        model == "decision_tree"
        and missing in ("weka", "indicator")
        and ranges == "uniform"
    ):
        return None, "bounds"
    return None, "midpoint"
