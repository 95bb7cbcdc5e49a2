"""Turn released cells into model features, on the original table's schema.

A released table mixes the original values with the generalized cells of
:mod:`ppdm.values` (``*``, ``[17, 25]``, ``< 21.5``, ``{a|b}``). To train
a model on it and test that model on *original* rows, both must become the
same numeric matrix. :class:`CellFeaturizer` is fitted on the original
(training) table, whose schema fixes the features:

- numeric attribute, or an ordered categorical whose categories are intervals
  (the output of :mod:`ppdm.prepare.discretize`): one float column holding the value,
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

With ``numeric_bins=n`` (the naive Bayes view) a numeric attribute becomes a
block of ``n`` equal-width bins of its observed range instead: a value sets 1
on its bin, a released range or interval spreads its unit mass over the bins
it overlaps (in proportion to the overlap: the expected bin if the true value
is uniform in the range), a value set 1/|set| on each member's bin, and
unknown cells give all zeros. Reducing a range to its midpoint first, as the
one-column view does, is wrong for counting: Mondrian's ``[1, 4]`` on an
attribute taking the values 1..4 has midpoint 2.5, a bin no real value falls
in, so every test value lands in bins the release left empty and Laplace
smoothing then favours the minority class (German credit, Mondrian k = 30:
naive Bayes fell to 41.8 % on one fold, below the 70 % majority).

Why not ``OneHotEncoder``: it has no notion of a cell standing for several
categories, and the set -> fractional membership is the point here. The
parsing is vectorised by working on the distinct released values of a column
and broadcasting back with their integer codes.

The matrix is a ``scipy.sparse`` CSR matrix: a nominal attribute has one
column per value of its training domain, and a date or a code has tens of
thousands (35,000 training rows of a hospital export held 19,682 birth
dates: 5.13 GiB as dense float64, per matrix). Stored sparsely its memory is
what the rows hold: one entry per row and numeric column (NaN stored, to
stay unknown), one per member a membership row sets. What stays
proportional to a domain is a row that spreads over it: a suppressed cell
with ``suppressed="uniform"``, or a hierarchy label covering many values
through ``covers``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.exceptions import InvalidParameterError, OutOfMemoryError
from ppdm.model import SUPPRESSED, AttributeKind, attribute_kind
from ppdm.values import parse_cell

__all__ = ["CellFeaturizer", "FeatureSpec", "interval_bounds"]


@dataclass(frozen=True)
class FeatureSpec:
    """How one original attribute becomes features (learned by ``fit``).

    ``kind`` is "numeric" (one column; ``low``/``high`` clip infinite ends),
    "interval" (two columns, the ends of a released range),
    "bins" (one column per equal-width bin of [``low``, ``high``], inner
    edges ``edges``) or "onehot" (one column per member of ``domain``).
    """

    name: str
    kind: str
    low: float = math.nan
    high: float = math.nan
    domain: tuple[str, ...] = ()
    edges: tuple[float, ...] = ()

    @property
    def feature_names(self) -> list[str]:
        if self.kind == "numeric":
            return [self.name]
        if self.kind == "bins":
            return [f"{self.name}#bin{i}" for i in range(len(self.edges) + 1)]
        if self.kind == "interval":
            return [f"{self.name}#low", f"{self.name}#high"]
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


@dataclass(eq=False, repr=False, kw_only=True)
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
    numeric_bins : int, optional
        Cut every numeric attribute into this many equal-width bins of its
        observed range and release (fractional) bin memberships instead of
        one number (see the module docstring).
    numeric_ranges : {"midpoint", "bounds"}, default="midpoint"
        A numeric attribute as one column (a released range as its
        midpoint), or as two, the low and high end (a value is both; the
        view of :class:`ppdm.utility.c45_learner.C45Learner`, which spreads a
        range over its split thresholds). Ignored with ``numeric_bins``.

    Attributes
    ----------
    specs_ : list of FeatureSpec
        One per feature attribute, in table order.
    feature_names_ : list of str
    blocks_ : list of (str, int, int)
        ``(kind, start, stop)``: the feature columns of each attribute; kind
        "numeric" (one column, NaN when unknown), "interval" (low and high
        end, NaN when unknown) or "onehot" / "bins" (a block of memberships,
        all zero when unknown).
    ranges_ : list of (float, float) or None
        Observed range of each numeric attribute (None for the others).

    Examples
    --------
    >>> import pandas as pd
    >>> original = pd.DataFrame({"age": [20, 40, 30], "sex": ["F", "M", "F"]})
    >>> released = pd.DataFrame({"age": ["[20, 30]", "*", "40"],
    ...                          "sex": ["{F|M}", "M", "*"]})
    >>> featurizer = CellFeaturizer().fit(original)
    >>> featurizer.transform(released).toarray().tolist()
    [[25.0, 0.5, 0.5], [nan, 0.0, 1.0], [40.0, 0.0, 0.0]]
    """

    exclude: Sequence[str] = ()
    suppression_marker: str = SUPPRESSED
    suppressed: str = "zeros"
    covers: Mapping[str, Mapping[str, Collection[str]]] | None = None
    numeric_bins: int | None = None
    numeric_ranges: str = "midpoint"

    def fit(self, original: pd.DataFrame) -> CellFeaturizer:
        """Learn kinds, observed ranges and domains from the original table."""
        if self.suppressed not in ("zeros", "uniform"):
            raise InvalidParameterError(
                f"suppressed must be 'zeros' or 'uniform'; got {self.suppressed!r}"
            )
        if self.numeric_ranges not in ("midpoint", "bounds"):
            raise InvalidParameterError(
                "numeric_ranges must be 'midpoint' or 'bounds'; "
                f"got {self.numeric_ranges!r}"
            )
        bins = self.numeric_bins
        if bins is not None and (
            isinstance(bins, bool)
            or not isinstance(bins, (int, np.integer))
            or bins < 1
        ):
            raise InvalidParameterError(
                f"numeric_bins must be None or an integer >= 1; got {bins!r}"
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
                specs.append(self._numeric_spec(str(name), low, high))
                continue
            if kind is AttributeKind.ORDINAL:
                bounds = interval_bounds(column.cat.categories)
                if bounds is not None:
                    # discretized: train and test hold the same intervals, so
                    # an interval is a value here (its midpoint), never a range
                    specs.append(
                        self._numeric_spec(
                            str(name), *_interval_range(bounds), as_bounds=False
                        )
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
            (spec.low, spec.high)
            if spec.kind in ("numeric", "interval", "bins")
            else None
            for spec in specs
        ]
        return self

    def _numeric_spec(
        self, name: str, low: float, high: float, *, as_bounds: bool = True
    ) -> FeatureSpec:
        if self.numeric_bins is None and self.numeric_ranges == "bounds" and as_bounds:
            return FeatureSpec(name, "interval", low, high)
        if self.numeric_bins is None:
            return FeatureSpec(name, "numeric", low, high)
        inner = np.linspace(low, high, self.numeric_bins + 1)[1:-1]
        return FeatureSpec(name, "bins", low, high, edges=tuple(inner.tolist()))

    def transform(self, table: pd.DataFrame) -> sp.csr_matrix:
        """CSR float matrix (n_rows, n_features); NaN marks unknown numeric cells.

        Zeros are not stored; a NaN is (an unknown number is not a zero).

        Raises
        ------
        OutOfMemoryError
            The matrix of one column does not fit in memory; names the column.
        """
        if not hasattr(self, "specs_"):
            raise InvalidParameterError("CellFeaturizer is not fitted; call fit first")
        blocks = []
        for spec in self.specs_:
            if spec.name in table.columns:
                column = table[spec.name]
            else:
                column = pd.Series(self.suppression_marker, index=table.index)
            try:
                blocks.append(self._block(column, spec))
            except MemoryError as err:
                width = len(spec.feature_names)
                raise OutOfMemoryError(
                    f"column {spec.name!r} ({width:,} feature{'s' * (width != 1)}, "
                    f"{len(table):,} rows) does not fit in memory as model "
                    f"features: {err or 'no detail given'}"
                ) from err
        if not blocks:
            return sp.csr_matrix((len(table), 0))
        return sp.hstack(blocks, format="csr", dtype=np.float64)

    def _block(self, column: pd.Series, spec: FeatureSpec) -> sp.csr_matrix:
        if spec.kind == "numeric":
            return _csr(self._numeric(column, spec)[:, None])
        if spec.kind == "interval":
            return _csr(self._bounds(column, spec))
        if spec.kind == "bins":
            return _csr(self._bins(column, spec))
        return self._onehot(column, spec)

    def _numeric(self, column: pd.Series, spec: FeatureSpec) -> np.ndarray:
        if attribute_kind(column) is AttributeKind.NUMERIC:
            return column.to_numpy(dtype=float, na_value=np.nan)
        codes, uniques = pd.factorize(column, use_na_sentinel=True)
        table = np.array([self._numeric_cell(v, spec) for v in uniques], dtype=float)
        out = np.full(len(column), np.nan)
        known = codes >= 0
        out[known] = table[codes[known]]
        return out

    def _bounds(self, column: pd.Series, spec: FeatureSpec) -> np.ndarray:
        if attribute_kind(column) is AttributeKind.NUMERIC:
            return np.repeat(
                column.to_numpy(dtype=float, na_value=np.nan)[:, None], 2, 1
            )
        codes, uniques = pd.factorize(column, use_na_sentinel=True)
        table = np.array(
            [self._bounds_cell(v, spec) for v in uniques], dtype=float
        ).reshape(-1, 2)
        out = np.full((len(column), 2), np.nan)
        known = codes >= 0
        out[known] = table[codes[known]]
        return out

    def _bounds_cell(self, value: object, spec: FeatureSpec) -> tuple[float, float]:
        """(low, high) of one cell: a value is both ends; a value set spans
        its members; unknown cells are (NaN, NaN)."""
        cell = parse_cell(value, self.suppression_marker)
        if cell.kind == "interval":
            low, high = _clip_ends(
                np.array([cell.low]), np.array([cell.high]), spec.low, spec.high
            )
            return float(low[0]), float(high[0])
        if cell.kind == "set":
            ends = [self._bounds_cell(m, spec) for m in cell.members]
            ends = [e for e in ends if not math.isnan(e[0])]
            if not ends:
                return math.nan, math.nan
            return min(e[0] for e in ends), max(e[1] for e in ends)
        if cell.kind == "value":
            number = _to_float(cell.text)
            return number, number
        return math.nan, math.nan

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

    def _bins(self, column: pd.Series, spec: FeatureSpec) -> np.ndarray:
        edges = np.asarray(spec.edges, dtype=float)
        if attribute_kind(column) is AttributeKind.NUMERIC:
            values = column.to_numpy(dtype=float, na_value=np.nan)
            out = np.zeros((len(values), len(edges) + 1))
            known = np.flatnonzero(~np.isnan(values))
            out[known, np.searchsorted(edges, values[known], side="right")] = 1.0
            return out
        codes, uniques = pd.factorize(column, use_na_sentinel=True)
        rows = np.zeros((len(uniques) + 1, len(edges) + 1))  # last row: missing
        for u, value in enumerate(uniques):
            rows[u] = self._bin_memberships(value, spec, edges)
        return rows[np.where(codes >= 0, codes, len(uniques))]

    def _bin_memberships(
        self, value: object, spec: FeatureSpec, edges: np.ndarray
    ) -> np.ndarray:
        """Bin memberships (summing to 1, or all 0 when unknown) of one cell."""
        out = np.zeros(len(edges) + 1)
        cell = parse_cell(value, self.suppression_marker)
        if cell.kind == "value":
            number = _to_float(cell.text)
            if not math.isnan(number):
                out[np.searchsorted(edges, number, side="right")] = 1.0
            return out
        if cell.kind == "set":
            for member in cell.members:
                part = self._bin_memberships(member, spec, edges)
                if part.sum() > 0:
                    out += part / len(cell.members)
            total = out.sum()
            return out / total if total > 0 else out
        if cell.kind != "interval":
            return out
        low, high = _clip_ends(
            np.array([cell.low]), np.array([cell.high]), spec.low, spec.high
        )
        low_, high_ = float(low[0]), float(high[0])
        if not high_ > low_:  # a point (or a range clipped to one)
            out[np.searchsorted(edges, low_, side="right")] = 1.0
            return out
        lefts = np.concatenate(([-np.inf], edges))
        rights = np.concatenate((edges, [np.inf]))
        overlap = np.clip(np.minimum(rights, high_) - np.maximum(lefts, low_), 0, None)
        return overlap / overlap.sum()

    def _onehot(self, column: pd.Series, spec: FeatureSpec) -> sp.csr_matrix:
        """Memberships of each row over the domain, built on the distinct
        released values (one sparse row each) and gathered by row code."""
        position = {value: i for i, value in enumerate(spec.domain)}
        width = len(spec.domain)
        covers = (self.covers or {}).get(spec.name, {})
        codes, uniques = pd.factorize(column, use_na_sentinel=True)
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        for u, value in enumerate(uniques):
            text = str(value)
            if text in position:  # an original value, whatever it looks like
                rows.append(u)
                cols.append(position[text])
                vals.append(1.0)
                continue
            cell = parse_cell(text, self.suppression_marker)
            if cell.kind == "suppressed" and self.suppressed == "uniform":
                rows.extend([u] * width)
                cols.extend(range(width))
                vals.extend([1.0 / max(width, 1)] * width)
                continue
            members: Sequence[str] = ()
            if cell.kind == "set":
                members = cell.members
            elif text in covers:
                members = tuple(covers[text])
            # a member listed twice is set once, at 1/len(members)
            at = {position[m]: 1.0 / len(members) for m in members if m in position}
            rows.extend([u] * len(at))
            cols.extend(at)
            vals.extend(at.values())
        # one more (empty) row for missing cells
        distinct = sp.csr_matrix(
            (
                np.asarray(vals, dtype=float),
                (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)),
            ),
            shape=(len(uniques) + 1, width),
        )
        return distinct[np.where(codes >= 0, codes, len(uniques))]


def _csr(dense: np.ndarray) -> sp.csr_matrix:
    """A dense block as CSR: its zeros dropped, its NaN kept."""
    return sp.csr_matrix(dense, dtype=np.float64)


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
