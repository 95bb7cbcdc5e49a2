"""CBA: classification based on class association rules (Liu, Hsu and Ma 1998).

The associative classifier of the approximation-algorithm paper
(:mod:`ppdm.algorithms.approx_ac`), as the project's notes decide
(``shared/algorithms/approx-associative.md``):

- a *literal* is ``(attribute, value)``; a row satisfies it when its cell is
  exactly the value (a suppressed or missing cell satisfies no literal);
- *class association rules* ``l_1 and ... and l_j -> c`` (at most one literal
  per attribute, ``j >= 1``) are mined as frequent itemsets over the literals
  and the class items with mlxtend's ``apriori`` (or ``fpgrowth``): a rule is
  kept when its support (rows satisfying the left-hand side with class ``c``,
  over all rows) is at least ``minsup`` and its confidence (support over the
  left-hand side's support) at least ``minconf``;
- rules are ordered by confidence (descending), support (descending), then
  generation order: Apriori level (fewer literals first), then the
  lexicographic order of the literals as ``(attribute index, value)`` pairs,
  values in sorted text order, then the class (sorted order);
- a row is classified by the first rule whose left-hand side it satisfies; if
  none, by the *default class*: the majority class of the training rows no
  rule matches, or the overall majority when every row is matched (ties: the
  first class in sorted order).

``predict_proba`` gives the class distribution, on the training rows, of the
left-hand side of the rule that fires (the default's: of the unmatched
training rows, or of all). Its most probable class is the predicted class:
with the same left-hand side, a rule for a more frequent class has a higher
confidence and support, so it is ordered first.

Input: a :class:`pandas.DataFrame` (each column an attribute, cells compared
as text) or, for the accuracy harness, the feature matrix of
:class:`ppdm.utility.features.CellFeaturizer` with its ``blocks``: a one-hot
or bins block is one attribute whose value is the column holding a full
membership (a fractional membership, e.g. a value set or a range spread over
bins, is unknown), a numeric block one attribute whose value is the number,
an interval block one whose value is its low end when both ends agree.

References
----------
.. [1] B. Liu, W. Hsu, Y. Ma, "Integrating Classification and Association
   Rule Mining", KDD 1998.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ppdm.exceptions import InvalidParameterError
from ppdm.model import SUPPRESSED
from ppdm.utility._sparse import as_matrix, split_blocks
from ppdm.utility.cfcm import cell_text

__all__ = ["CBAClassifier", "ClassRule", "MINERS"]

#: Frequent-itemset miners of mlxtend; the first is the default.
MINERS = ("apriori", "fpgrowth")
#: Matching cells (rows x rules x literals) evaluated at once.
_CHUNK = 1 << 22
_FULL = 1.0 - 1e-9


@dataclass(frozen=True)
class ClassRule:
    """One class association rule.

    Attributes
    ----------
    lhs : tuple of (str, str)
        ``(attribute, value)`` literals, in attribute order.
    target_class : object
    support : float
        Rows satisfying ``lhs`` with ``target_class``, over all rows.
    confidence : float
    count : int
        Rows satisfying ``lhs`` with ``target_class``.
    lhs_count : int
        Rows satisfying ``lhs``.
    """

    lhs: tuple[tuple[str, str], ...]
    target_class: Any
    support: float
    confidence: float
    count: int
    lhs_count: int


def _scalar(value: Any) -> Any:
    """A numpy scalar as the Python value it holds."""
    return value.item() if isinstance(value, np.generic) else value


@dataclass(eq=False, repr=False, kw_only=True)
class CBAClassifier(ClassifierMixin, BaseEstimator):
    """CBA-CB without pruning: ordered class association rules + default class.

    Parameters
    ----------
    minsup : float, default=0.3
        Minimum rule support, in (0, 1].
    minconf : float, default=0.5
        Minimum rule confidence, in [0, 1].
    max_length : int or None, default=None
        Most literals in a left-hand side (None: no limit).
    miner : {"apriori", "fpgrowth"}, default="apriori"
    blocks : sequence of (str, int, int), optional
        Feature blocks of a :class:`CellFeaturizer` matrix (see the module
        docstring); ignored for a DataFrame.
    suppression_marker : str, default="*"
        A DataFrame cell holding it satisfies no literal.

    Attributes
    ----------
    classes_ : numpy.ndarray
    attributes_ : list of str
    values_ : list of numpy.ndarray
        Sorted value labels (text) of every attribute.
    rules_ : list of ClassRule
        In firing order.
    default_class_ : object
    rule_proba_ : numpy.ndarray, shape (n_rules, n_classes)
    default_proba_ : numpy.ndarray, shape (n_classes,)

    Examples
    --------
    >>> import pandas as pd
    >>> x = pd.DataFrame({"a": ["u", "u", "u", "v", "v", "w"]})
    >>> y = ["p", "p", "n", "n", "n", "p"]
    >>> cba = CBAClassifier(minsup=0.3, minconf=0.6).fit(x, y)
    >>> [(r.lhs, r.target_class) for r in cba.rules_]
    [((('a', 'v'),), 'n'), ((('a', 'u'),), 'p')]
    >>> cba.default_class_, cba.predict(x).tolist()
    ('p', ['p', 'p', 'p', 'n', 'n', 'p'])
    """

    minsup: float = 0.3
    minconf: float = 0.5
    max_length: int | None = None
    miner: str = "apriori"
    blocks: Sequence[tuple] | None = None
    suppression_marker: str = SUPPRESSED

    # -- parameters and encoding ---------------------------------------
    def _check_params(self) -> None:
        def number(value: Any) -> bool:
            return isinstance(value, (int, float)) and not isinstance(value, bool)

        if not number(self.minsup) or not 0.0 < self.minsup <= 1.0:
            raise InvalidParameterError(
                f"minsup must be a number in (0, 1]; got {self.minsup!r}"
            )
        if not number(self.minconf) or not 0.0 <= self.minconf <= 1.0:
            raise InvalidParameterError(
                f"minconf must be a number in [0, 1]; got {self.minconf!r}"
            )
        if self.max_length is not None and (
            not isinstance(self.max_length, int)
            or isinstance(self.max_length, bool)
            or self.max_length < 1
        ):
            raise InvalidParameterError(
                f"max_length must be None or an integer >= 1; got {self.max_length!r}"
            )
        if self.miner not in MINERS:
            raise InvalidParameterError(
                f"miner must be one of {list(MINERS)}; got {self.miner!r}"
            )

    def _attribute_texts(self, x: Any) -> tuple[list[str], list[np.ndarray]]:
        """Names and per-row value text (None: no literal) of each attribute."""
        if isinstance(x, pd.DataFrame):
            names = [str(c) for c in x.columns]
            texts = []
            for column in x.columns:
                text = cell_text(x[column])
                texts.append(
                    np.where(text == self.suppression_marker, None, text).astype(object)
                )
            return names, texts
        x = as_matrix(x)
        n = x.shape[0]
        blocks = (
            list(self.blocks)
            if self.blocks is not None
            else [("numeric", j, j + 1) for j in range(x.shape[1])]
        )
        names, texts = [], []
        parts = split_blocks(x, blocks, numeric=("numeric", "interval"))
        for i, ((kind, _, _), part) in enumerate(zip(blocks, parts)):
            if kind in ("numeric", "interval"):
                value = part[:, 0]
                known = ~np.isnan(value)
                if kind == "interval":
                    known &= part[:, 0] == part[:, -1]
                text = np.full(n, None, dtype=object)
                text[known] = [repr(float(v)) for v in value[known]]
            else:
                full = part >= _FULL  # sparse stays sparse (_FULL > 0)
                known = np.asarray(full.sum(axis=1)).ravel() == 1
                column = np.asarray(full.argmax(axis=1)).ravel()
                text = np.full(n, None, dtype=object)
                text[known] = [f"{c:06d}" for c in column[known]]
            names.append(f"block{i}")
            texts.append(text)
        return names, texts

    def _codes(self, texts: list[np.ndarray]) -> np.ndarray:
        """Value codes (index into ``values_``; -1 unknown), shape (n, q)."""
        n = len(texts[0]) if texts else 0
        out = np.full((n, len(texts)), -1, dtype=np.int64)
        for j, (text, values) in enumerate(zip(texts, self.values_, strict=True)):
            known = pd.notna(text)
            if not known.any() or len(values) == 0:
                continue
            at = np.searchsorted(values, text[known].astype(str))
            at = np.minimum(at, len(values) - 1)
            hit = values[at] == text[known].astype(str)
            column = np.full(known.sum(), -1, dtype=np.int64)
            column[hit] = at[hit]
            out[known, j] = column
        return out

    # -- fitting ---------------------------------------------------------
    def fit(self, x: Any, y: Any) -> CBAClassifier:
        """Mine, order and keep the rules; choose the default class."""
        from mlxtend.frequent_patterns import apriori, fpgrowth

        self._check_params()
        y = np.asarray(y)
        names, texts = self._attribute_texts(x)
        if len(y) != (len(texts[0]) if texts else len(y)):
            raise InvalidParameterError("x and y have different numbers of rows")
        if len(y) == 0:
            raise InvalidParameterError("CBA needs at least one training row")
        self.attributes_ = names
        self.values_ = [
            np.array(sorted({str(v) for v in t if v is not None}), dtype=object)
            for t in texts
        ]
        codes = self._codes(texts)
        self.classes_, y_codes = np.unique(y, return_inverse=True)
        n, n_classes = len(y), len(self.classes_)

        # Items: literals in (attribute, value) order, then the classes.
        literal_attr = np.concatenate(
            [np.full(len(v), j, dtype=np.int64) for j, v in enumerate(self.values_)]
            + [np.zeros(0, dtype=np.int64)]
        )
        literal_value = np.concatenate(
            [np.arange(len(v), dtype=np.int64) for v in self.values_]
            + [np.zeros(0, dtype=np.int64)]
        )
        n_literals = len(literal_attr)
        items = np.zeros((n, n_literals + n_classes), dtype=bool)
        if n_literals:
            items[:, :n_literals] = codes[:, literal_attr] == literal_value[None, :]
        items[np.arange(n), n_literals + y_codes] = True
        frame = pd.DataFrame(items, columns=[str(i) for i in range(items.shape[1])])
        mine = apriori if self.miner == "apriori" else fpgrowth
        max_len = None if self.max_length is None else self.max_length + 1
        frequent = mine(frame, min_support=self.minsup, max_len=max_len)
        support = {
            frozenset(int(i) for i in s): int(round(v * n))
            for s, v in zip(frequent["itemsets"], frequent["support"], strict=True)
        }
        candidates = []
        for itemset, count in support.items():
            labels = [i for i in itemset if i >= n_literals]
            lhs = sorted(i for i in itemset if i < n_literals)
            if len(labels) != 1 or not lhs:
                continue
            lhs_count = support[frozenset(lhs)]
            confidence = count / lhs_count
            if confidence < self.minconf:
                continue
            c = labels[0] - n_literals
            literals = tuple((int(literal_attr[i]), int(literal_value[i])) for i in lhs)
            generation = (len(literals), literals, c)
            candidates.append((-confidence, -count, generation, count, lhs_count))
        candidates.sort()
        self._lhs = [g[1] for _, _, g, _, _ in candidates]
        self._rule_class = np.array([g[2] for _, _, g, _, _ in candidates], np.int64)
        self.rules_ = [
            ClassRule(
                lhs=tuple((names[a], str(self.values_[a][v])) for a, v in g[1]),
                target_class=_scalar(self.classes_[g[2]]),
                support=count / n,
                confidence=count / lhs_count,
                count=count,
                lhs_count=lhs_count,
            )
            for _, _, g, count, lhs_count in candidates
        ]
        first = self._first_rule(codes)
        y_onehot = np.eye(n_classes)[y_codes]
        matched = self._matches_any(codes)
        per_rule = np.zeros((len(self.rules_), n_classes))
        for lo, block in self._rule_blocks(codes):
            per_rule += block.T.astype(float) @ y_onehot[lo : lo + len(block)]
        totals = per_rule.sum(axis=1, keepdims=True)
        self.rule_proba_ = np.divide(
            per_rule, totals, out=np.zeros_like(per_rule), where=totals > 0
        )
        pool = y_onehot[first < 0] if (first < 0).any() else y_onehot
        counts = pool.sum(axis=0)
        self.default_proba_ = counts / counts.sum()
        self.default_class_ = _scalar(self.classes_[int(np.argmax(counts))])
        self.n_matched_ = int(matched.sum())
        return self

    # -- matching --------------------------------------------------------
    def _rule_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        width = max((len(lhs) for lhs in self._lhs), default=1)
        attrs = np.full((len(self._lhs), width), -1, dtype=np.int64)
        vals = np.zeros((len(self._lhs), width), dtype=np.int64)
        for r, lhs in enumerate(self._lhs):
            for j, (a, v) in enumerate(lhs):
                attrs[r, j], vals[r, j] = a, v
        return attrs, vals

    def _rule_blocks(self, codes: np.ndarray):
        """``(first row, match matrix)`` over row chunks; match (rows, rules)."""
        attrs, vals = self._rule_arrays()
        n, q = codes.shape
        n_rules, width = attrs.shape
        ext = np.concatenate([codes, np.zeros((n, 1), dtype=np.int64)], axis=1)
        attrs = np.where(attrs < 0, q, attrs)
        step = max(1, _CHUNK // max(n_rules * width, 1))
        for lo in range(0, n, step):
            part = ext[lo : lo + step]
            yield lo, (part[:, attrs] == vals[None, :, :]).all(axis=2)

    def _first_rule(self, codes: np.ndarray) -> np.ndarray:
        """Index of the first rule each row satisfies, -1 for none."""
        out = np.full(len(codes), -1, dtype=np.int64)
        if not self._lhs:
            return out
        for lo, match in self._rule_blocks(codes):
            hit = match.any(axis=1)
            out[lo : lo + len(match)] = np.where(hit, np.argmax(match, axis=1), -1)
        return out

    def _matches_any(self, codes: np.ndarray) -> np.ndarray:
        return self._first_rule(codes) >= 0

    # -- prediction ------------------------------------------------------
    def _test_codes(self, x: Any) -> np.ndarray:
        names, texts = self._attribute_texts(x)
        if names != self.attributes_:
            raise InvalidParameterError(
                f"CBA was fitted on attributes {self.attributes_}; got {names}"
            )
        return self._codes(texts)

    def decision_rules(self, x: Any) -> np.ndarray:
        """Index into :attr:`rules_` of the rule firing on each row, -1: default."""
        check_is_fitted(self, "rules_")
        return self._first_rule(self._test_codes(x))

    def predict(self, x: Any) -> np.ndarray:
        """Class of the first matching rule, else the default class."""
        fired = self.decision_rules(x)
        out = np.full(len(fired), self.default_class_, dtype=self.classes_.dtype)
        hit = fired >= 0
        out[hit] = self.classes_[self._rule_class[fired[hit]]]
        return out

    def predict_proba(self, x: Any) -> np.ndarray:
        """Training class distribution of the firing rule's left-hand side."""
        fired = self.decision_rules(x)
        out = np.tile(self.default_proba_, (len(fired), 1))
        hit = fired >= 0
        out[hit] = self.rule_proba_[fired[hit]]
        return out
