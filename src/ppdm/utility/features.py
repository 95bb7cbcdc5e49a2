"""Turn released cells into model features, on the original table's schema.

A released table mixes the original values with the generalized cells of
:mod:`ppdm.values` (``*``, ``[17, 25]``, ``(-inf, 21.5)``, ``{a|b}``). To train
a model on it and test that model on *original* rows, both must become the
same numeric matrix. :class:`CellFeaturizer` is fitted on the original
(training) table, whose schema fixes the features:

- numeric attribute, or an ordered categorical whose categories are intervals
  (the output of :mod:`ppdm.discretize`): one float column holding the value,
  or the midpoint of a released range/interval (infinite ends clipped to the
  observed range), or the mean of a numeric value set; ``*`` and missing cells
  become NaN, to be imputed by the model pipeline;
- nominal attribute (and ordinal categories that are not intervals): one
  column per value of the original domain; a value sets 1 on its column, a
  value set ``{a|b}`` sets 1/|set| on each of its members (the fractional
  membership is the expected one-hot row if the true value is uniform over the
  set), ``*``, missing and unknown values give all zeros.

A column absent from the released table (e.g. removed by feature selection)
is treated as entirely suppressed.

Why not ``OneHotEncoder``: it has no notion of a cell standing for several
categories, and the set -> fractional membership is the point here. The
parsing is vectorised by working on the distinct released values of a column
(a few hundred at most) and broadcasting back with their integer codes.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.model import SUPPRESSED, AttributeKind, attribute_kind
from ppdm.values import parse_cell

__all__ = ["CellFeaturizer", "FeatureSpec", "interval_bounds"]


@dataclass(frozen=True)
class FeatureSpec:
    """How one original attribute becomes features (learned by ``fit``).

    ``kind`` is "numeric" (one column; ``low``/``high`` clip infinite ends)
    or "onehot" (one column per member of ``domain``).
    """

    name: str
    kind: str
    low: float = math.nan
    high: float = math.nan
    domain: tuple[str, ...] = ()

    @property
    def feature_names(self) -> list[str]:
        if self.kind == "numeric":
            return [self.name]
        return [f"{self.name}={value}" for value in self.domain]


def interval_bounds(categories: Sequence[object]) -> np.ndarray | None:
    """(n, 2) bounds of interval labels, or None when one is not an interval."""
    bounds = []
    for label in categories:
        cell = parse_cell(label)
        if cell.kind != "interval":
            return None
        bounds.append((cell.low, cell.high))
    return np.asarray(bounds, dtype=float).reshape(-1, 2)


def _clip_ends(low: np.ndarray, high: np.ndarray, lo: float, hi: float) -> tuple:
    return np.where(np.isneginf(low), lo, low), np.where(np.isposinf(high), hi, high)


class CellFeaturizer:
    """Feature matrix of released or original rows, on the original schema.

    Parameters
    ----------
    exclude : sequence of str, default=()
        Columns that are not features (the target).
    suppression_marker : str, default="*"
    suppressed : {"zeros", "uniform"}, default="zeros"
        Features of a suppressed nominal cell: all zeros (unknown), or
        1/|domain| on every value (the value set of the whole domain).
    covers : mapping, optional
        ``{attribute: {generalized label: original values}}`` (e.g. from
        :func:`ppdm.utility.loss.covers_from_hierarchies`): a released
        hierarchy label is read as the value set of the values it covers.

    Attributes
    ----------
    specs_ : list of FeatureSpec
        One per feature attribute, in table order.
    feature_names_ : list of str
    blocks_ : list of (str, int, int)
        ``(kind, start, stop)``: the feature columns of each attribute.
    ranges_ : list of (float, float) or None
        Observed range of each numeric attribute (None for the others).

    Examples
    --------
    >>> import pandas as pd
    >>> original = pd.DataFrame({"age": [20, 40, 30], "sex": ["F", "M", "F"]})
    >>> released = pd.DataFrame({"age": ["[20, 30]", "*", "40"],
    ...                          "sex": ["{F|M}", "M", "*"]})
    >>> featurizer = CellFeaturizer().fit(original)
    >>> featurizer.transform(released).tolist()
    [[25.0, 0.5, 0.5], [nan, 0.0, 1.0], [40.0, 0.0, 0.0]]
    """

    def __init__(
        self,
        *,
        exclude: Sequence[str] = (),
        suppression_marker: str = SUPPRESSED,
        suppressed: str = "zeros",
        covers: Mapping[str, Mapping[str, Collection[str]]] | None = None,
    ) -> None:
        self.exclude = exclude
        self.suppression_marker = suppression_marker
        self.suppressed = suppressed
        self.covers = covers

    def fit(self, original: pd.DataFrame) -> CellFeaturizer:
        """Learn kinds, observed ranges and domains from the original table."""
        if self.suppressed not in ("zeros", "uniform"):
            raise InvalidParameterError(
                f"suppressed must be 'zeros' or 'uniform'; got {self.suppressed!r}"
            )
        specs = []
        for name in original.columns:
            if name in self.exclude:
                continue
            column = original[name]
            kind = attribute_kind(column)
            if kind is AttributeKind.NUMERIC:
                values = column.to_numpy(dtype=float, na_value=np.nan)
                finite = values[np.isfinite(values)]
                low, high = (
                    (float(finite.min()), float(finite.max()))
                    if len(finite)
                    else (0.0, 0.0)
                )
                specs.append(FeatureSpec(str(name), "numeric", low, high))
                continue
            if kind is AttributeKind.ORDINAL:
                bounds = interval_bounds(column.cat.categories)
                if bounds is not None:
                    specs.append(
                        FeatureSpec(str(name), "numeric", *_interval_range(bounds))
                    )
                    continue
                domain = tuple(str(c) for c in column.cat.categories)
            else:
                present = column.dropna().astype(str).unique()
                domain = tuple(sorted(present))
            specs.append(FeatureSpec(str(name), "onehot", domain=domain))
        self.specs_ = specs
        self.feature_names_ = [f for spec in specs for f in spec.feature_names]
        self.blocks_ = []
        start = 0
        for spec in specs:
            stop = start + len(spec.feature_names)
            self.blocks_.append((spec.kind, start, stop))
            start = stop
        self.ranges_ = [
            (spec.low, spec.high) if spec.kind == "numeric" else None for spec in specs
        ]
        return self

    def transform(self, table: pd.DataFrame) -> np.ndarray:
        """Float matrix (n_rows, n_features); NaN marks unknown numeric cells."""
        if not hasattr(self, "specs_"):
            raise InvalidParameterError("CellFeaturizer is not fitted; call fit first")
        blocks = []
        for spec in self.specs_:
            if spec.name in table.columns:
                column = table[spec.name]
            else:
                column = pd.Series(self.suppression_marker, index=table.index)
            if spec.kind == "numeric":
                blocks.append(self._numeric(column, spec)[:, None])
            else:
                blocks.append(self._onehot(column, spec))
        if not blocks:
            return np.zeros((len(table), 0))
        return np.hstack(blocks)

    def _numeric(self, column: pd.Series, spec: FeatureSpec) -> np.ndarray:
        if attribute_kind(column) is AttributeKind.NUMERIC:
            return column.to_numpy(dtype=float, na_value=np.nan)
        codes, uniques = pd.factorize(column, use_na_sentinel=True)
        table = np.array([self._numeric_cell(v, spec) for v in uniques], dtype=float)
        out = np.full(len(column), np.nan)
        known = codes >= 0
        out[known] = table[codes[known]]
        return out

    def _numeric_cell(self, value: object, spec: FeatureSpec) -> float:
        cell = parse_cell(value, self.suppression_marker)
        if cell.kind == "interval":
            low, high = _clip_ends(
                np.array([cell.low]), np.array([cell.high]), spec.low, spec.high
            )
            return float((low[0] + high[0]) / 2.0)
        if cell.kind == "set":
            numbers = [_to_float(m) for m in cell.members]
            if any(math.isnan(x) for x in numbers):
                # members may themselves be intervals: average their midpoints
                numbers = [self._numeric_cell(m, spec) for m in cell.members]
            return float(np.mean(numbers)) if numbers else math.nan
        if cell.kind == "value":
            return _to_float(cell.text)
        return math.nan

    def _onehot(self, column: pd.Series, spec: FeatureSpec) -> np.ndarray:
        position = {value: i for i, value in enumerate(spec.domain)}
        covers = (self.covers or {}).get(spec.name, {})
        codes, uniques = pd.factorize(column, use_na_sentinel=True)
        rows = np.zeros((len(uniques) + 1, len(spec.domain)))  # last row: missing
        for u, value in enumerate(uniques):
            text = str(value)
            if text in position:  # an original value, whatever it looks like
                rows[u, position[text]] = 1.0
                continue
            cell = parse_cell(text, self.suppression_marker)
            if cell.kind == "suppressed" and self.suppressed == "uniform":
                rows[u, :] = 1.0 / max(len(spec.domain), 1)
                continue
            members: Sequence[str] = ()
            if cell.kind == "set":
                members = cell.members
            elif text in covers:
                members = tuple(covers[text])
            for member in members:
                if member in position:
                    rows[u, position[member]] = 1.0 / len(members)
        return rows[np.where(codes >= 0, codes, len(uniques))]


def _interval_range(bounds: np.ndarray) -> tuple[float, float]:
    """Range used to clip the open ends of discretized intervals.

    The original values are gone, so an infinite end is placed one finite
    span beyond the finite cut points (one unit when there is a single cut),
    which keeps the outer bins' midpoints distinct and in order.
    """
    finite = bounds[np.isfinite(bounds)]
    if len(finite) == 0:
        return 0.0, 0.0
    lo, hi = float(finite.min()), float(finite.max())
    span = hi - lo if hi > lo else 1.0
    return lo - span, hi + span


def _to_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan
