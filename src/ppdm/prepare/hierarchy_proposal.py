"""A generalization hierarchy proposed for every quasi-identifier of an owner's table.

The hierarchies are written in the formats of :mod:`ppdm.generalization.hierarchies`;
:func:`propose_hierarchy` chooses by the column's values:

- Integer values (also integral floats) spanning at most 100,000 integers: an
  interval rule (``.json``) whose first width is the "nice" number (1, 2 or 5
  times a power of ten) closest above a sixteenth of the range, each next
  width twice the previous, as long as it merges buckets and leaves at least
  two (:func:`interval_widths`). For ages 17..90 this is Adult's own ``[5,
  10, 20, 40, 80]``.
- Other numbers with at most 5,000 distinct values (non-integers, or integers
  spread over a wider range): a ``.csv`` over the observed values, in numeric
  order, grouped into nested runs of about equal frequency (the same cuts as
  for categories), labelled by their closed range (``[1.5, 3.25]``). A value
  not observed today is not covered: the run that meets it stops with an
  error naming it, and ``ppdm init --force`` (or an edit) extends the file.
- Categories: ``value -> *`` when there are at most 5; otherwise values in
  order of decreasing frequency are cut into at most 256, 64, 16 and 4
  groups of about equal frequency (a frequent value stays alone longest, rare
  ones merge first; a cut that merges nothing is left out), each coarser
  level merging whole groups of the finer one, labelled by the value set
  (``{a|b|c}``), then ``*``.
- More distinct values than that: no hierarchy. Algorithms that generalize
  along hierarchies then refuse the configuration at load; the others
  (Mondrian, ...) bin numeric quasi-identifiers themselves.

Dates kept as text are generalized by calendar (day, month, quarter, year, decade),
and codes are masked one character a level from the right.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.generalization.hierarchies import Hierarchy
from ppdm.generalization.ordered_text import text_kind
from ppdm.values import SUPPRESSED, format_number, format_range, format_set

_FEW_CATEGORIES = 5  # categories: value -> * at most this many values
_FANOUT = 4  # groups per coarser level in generated CSV hierarchies
_MAX_LEVELS = 4  # levels between value and * in generated CSV hierarchies
_MAX_LEVEL_LEAVES = 5_000  # largest generated CSV hierarchy
_MAX_INTERVAL_LEAVES = 100_000  # largest integer domain of an interval rule
_INTERVAL_BUCKETS = 16  # about this many buckets at an interval rule's first level


# =============================================================================
# Hierarchies
# =============================================================================
@dataclass(frozen=True)
class HierarchyPlan:
    """A generated hierarchy of one attribute, ready to be written.

    Attributes
    ----------
    attribute : str
    kind : {"intervals", "levels", "none"}
        An interval rule (``.json``), ARX-style rows (``.csv``), or no
        hierarchy (``summary`` says why).
    rule : dict or None
        The interval rule, ``{"type": "intervals", "min", "max", "origin",
        "widths"}``.
    rows : tuple of tuple of str, or None
        One row per observed value, one column per level, the last ``*``.
    summary : str
        One line: what the hierarchy is, or why there is none.
    """

    attribute: str
    kind: str
    rule: dict[str, Any] | None
    rows: tuple[tuple[str, ...], ...] | None
    summary: str

    @property
    def file_name(self) -> str | None:
        """``<attribute>.json`` or ``<attribute>.csv``; None without a hierarchy."""
        suffix = {"intervals": ".json", "levels": ".csv"}.get(self.kind)
        return None if suffix is None else self.attribute + suffix

    def text(self) -> str:
        """The file's content, in the formats :func:`load_hierarchy` reads."""
        if self.kind == "intervals":
            return json.dumps(self.rule, indent=1) + "\n"
        if self.kind == "levels":
            buffer = io.StringIO()
            writer = csv.writer(buffer, delimiter=";", lineterminator="\n")
            writer.writerows(self.rows)
            return buffer.getvalue()
        raise InvalidParameterError(
            f"attribute {self.attribute!r} has no hierarchy: {self.summary}"
        )

    def build(self) -> Hierarchy:
        """The :class:`~ppdm.generalization.hierarchies.Hierarchy` it describes."""
        source = self.file_name or self.attribute
        if self.kind == "intervals":
            rule = self.rule
            return Hierarchy.from_intervals(
                self.attribute,
                minimum=rule["min"],
                maximum=rule["max"],
                widths=rule["widths"],
                origin=rule["origin"],
                source=source,
            )
        if self.kind == "levels":
            return Hierarchy.from_rows(self.attribute, self.rows, source=source)
        raise InvalidParameterError(
            f"attribute {self.attribute!r} has no hierarchy: {self.summary}"
        )


def propose_hierarchy(
    column: pd.Series,
    *,
    attribute: str | None = None,
    bounds: tuple[int | float, int | float] | None = None,
) -> HierarchyPlan:
    """A generalization hierarchy covering every observed value of ``column``.

    See the module docstring for the rules.

    Parameters
    ----------
    column : pandas.Series
    attribute : str, optional
        The attribute's name; default ``column.name``.
    bounds : tuple of two numbers, optional
        The range the schema accepts (:func:`declared_bounds`): an interval
        rule covers it whole, so next month's values outside today's
        extremes generalize too.

    Returns
    -------
    HierarchyPlan
    """
    attribute = str(column.name if attribute is None else attribute)
    if "/" in attribute or "\\" in attribute or attribute in ("", ".", ".."):
        return _no_hierarchy(attribute, "its name cannot be a file name")
    present = column.dropna()
    if len(present) == 0:
        return _no_hierarchy(attribute, "no value in any row")
    dtype = column.dtype
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
        return _numeric_hierarchy(attribute, present.to_numpy(dtype=float), bounds)
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return _no_hierarchy(attribute, "dates and times have no generated hierarchy")
    as_text = text_kind(present)
    if as_text is not None and as_text.kind == "date":
        return _date_hierarchy(attribute, present, as_text.format)
    if as_text is not None:
        return _code_hierarchy(attribute, present)
    return _category_hierarchy(attribute, present)


def _date_hierarchy(attribute: str, present: pd.Series, fmt: str) -> HierarchyPlan:
    """Day -> month -> quarter -> year -> decade -> ``*``, by calendar.

    A value that is no date in ``fmt`` (a malformed cell) keeps its own text
    up to the root: it says nothing of a date.
    """
    values = pd.unique(present.astype(str))
    when = pd.to_datetime(pd.Series(values), format=fmt, errors="coerce")
    rows = []
    for value, day in zip(values, when):
        if pd.isna(day):
            rows.append((value, value, value, value, value, SUPPRESSED))
            continue
        decade = day.year // 10 * 10
        rows.append(
            (
                value,
                f"{day:%Y-%m}",
                f"{day.year}-Q{day.quarter}",
                f"{day.year}",
                f"{decade}-{decade + 9}",
                SUPPRESSED,
            )
        )
    rows.sort(key=lambda row: row[0])
    return HierarchyPlan(
        attribute,
        "levels",
        None,
        tuple(rows),
        f"dates ({fmt}) by calendar: day, month, quarter, year, decade, * over "
        f"{len(rows):,} values",
    )


def _code_hierarchy(attribute: str, present: pd.Series) -> HierarchyPlan:
    """Codes masked from the right, one character a level: ``01001 -> 0100* -> *``."""
    values = sorted(pd.unique(present.astype(str)))
    if "" in values:
        return _no_hierarchy(attribute, "it holds empty text, reserved for missing")
    width = max(len(v) for v in values)
    rows = []
    for value in values:
        masks = [
            value[: max(len(value) - i, 0)] + "*" * min(i, len(value))
            for i in range(width)
        ]
        rows.append((*masks, SUPPRESSED))
    return HierarchyPlan(
        attribute,
        "levels",
        None,
        tuple(rows),
        f"codes masked one character a level from the right ({width} levels) over "
        f"{len(rows):,} values",
    )


def _no_hierarchy(attribute: str, why: str) -> HierarchyPlan:
    return HierarchyPlan(attribute, "none", None, None, f"no hierarchy: {why}")


def interval_widths(minimum: int, maximum: int) -> list[int]:
    """Widths of a generated interval rule over ``minimum .. maximum`` (origin 0).

    The first candidate is the nice number (1, 2 or 5 times a power of ten, at
    least 2) at or above a sixteenth of the range; each next one doubles it,
    as long as the range still spans more than one bucket of that width. A
    candidate that merges nothing (as many buckets as the level below) is
    left out.

    Examples
    --------
    >>> interval_widths(17, 90)
    [5, 10, 20, 40, 80]
    >>> interval_widths(0, 1)
    []
    """
    width = max(2, _nice_ceil((maximum - minimum + 1) / _INTERVAL_BUCKETS))
    widths: list[int] = []
    previous = maximum - minimum + 1  # the leaves
    # Doubling a width merges pairs of buckets, so the count never grows; once
    # it is 2 only the root's single bucket is left. (With origin 0 a range
    # across 0 keeps 2 buckets, [-w, 0) and [0, w), for every width.)
    while previous > 2:
        buckets = maximum // width - minimum // width + 1
        if buckets <= 1:
            break
        if buckets < previous:
            widths.append(width)
            previous = buckets
        width *= 2
    return widths


def _nice_ceil(value: float) -> int:
    if value <= 1:
        return 1
    exponent = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        if step * exponent >= value:
            return int(step * exponent)
    return int(10 * exponent)  # pragma: no cover - the loop always returns


def _numeric_hierarchy(
    attribute: str,
    values: np.ndarray,
    bounds: tuple[int | float, int | float] | None = None,
) -> HierarchyPlan:
    if not np.all(np.isfinite(values)):
        return _no_hierarchy(attribute, "infinite values")
    integral = bool(np.all(values == np.round(values)))
    if integral:
        low, high = int(values.min()), int(values.max())
        if high - low + 1 <= _MAX_INTERVAL_LEAVES:
            widths = interval_widths(low, high)  # fitted to the observed values
            if (
                bounds is not None
                and float(bounds[0]).is_integer()
                and float(bounds[1]).is_integer()
                and bounds[0] <= low
                and high <= bounds[1]
                and bounds[1] - bounds[0] + 1 <= _MAX_INTERVAL_LEAVES
            ):
                low, high = int(bounds[0]), int(bounds[1])
            rule = {"type": "intervals", "min": low, "max": high, "origin": 0,
                    "widths": widths}  # fmt: skip
            summary = (
                f"intervals of width {', '.join(map(str, widths))} over {low}..{high}"
                if widths
                else f"{low}..{high} -> *"
            )
            return HierarchyPlan(attribute, "intervals", rule, None, summary)
    uniques, counts = np.unique(values, return_counts=True)
    if len(uniques) > _MAX_LEVEL_LEAVES:
        why = (
            f"{len(uniques):,} distinct values spread over more than "
            f"{_MAX_INTERVAL_LEAVES:,} integers"
            if integral
            else f"{len(uniques):,} distinct non-integer values"
        )
        return _no_hierarchy(
            attribute,
            f"{why} (more than {_MAX_LEVEL_LEAVES:,}); algorithms that bin numbers "
            "(mondrian, ...) still can generalize it",
        )
    leaves = np.array([format_number(v) for v in uniques.tolist()], dtype=object)
    levels = _nested_groups(counts)
    columns = [leaves]
    for groups in levels:
        low = np.minimum.reduceat(uniques, _starts(groups))
        high = np.maximum.reduceat(uniques, _starts(groups))
        labels = np.array([format_range(a, b) for a, b in zip(low, high)], dtype=object)
        columns.append(labels[np.unique(groups, return_inverse=True)[1]])
    rows = _rows(columns, len(uniques))
    return HierarchyPlan(
        attribute,
        "levels",
        None,
        rows,
        f"{len(levels) + 2} levels over the {len(uniques):,} observed values, "
        "ranges of about equal frequency",
    )


def _category_hierarchy(attribute: str, present: pd.Series) -> HierarchyPlan:
    texts = present.astype(str)
    counts = texts.value_counts(sort=False)
    values = counts.index.to_numpy(dtype=object)
    frequency = counts.to_numpy(dtype=np.int64)
    if (values == "").any():
        return _no_hierarchy(attribute, "it holds empty text, reserved for missing")
    if len(values) > _MAX_LEVEL_LEAVES:
        return _no_hierarchy(
            attribute,
            f"{len(values):,} distinct values (more than {_MAX_LEVEL_LEAVES:,})",
        )
    # most frequent first, ties in text order: deterministic and frequency-based
    order = np.lexsort((values.astype(str), -frequency))
    values, frequency = values[order], frequency[order]
    levels = _nested_groups(frequency) if len(values) > _FEW_CATEGORIES else []
    columns = [values]
    for groups in levels:
        dense = np.unique(groups, return_inverse=True)[1]
        members = pd.Series(values).groupby(dense, sort=True).agg(list)
        labels = np.array([format_set(m) for m in members], dtype=object)
        columns.append(labels[dense])
    rows = _rows(columns, len(values))
    summary = (
        f"{len(values)} values -> *"
        if not levels
        else f"{len(levels) + 2} levels over {len(values):,} values, groups of about "
        "equal frequency"
    )
    return HierarchyPlan(attribute, "levels", None, rows, summary)


def _nested_groups(counts: np.ndarray) -> list[np.ndarray]:
    """Group ids per level (finest first) of items in order, by frequency.

    Item ``i`` (count ``c_i``, ``n`` in all) sits at the middle of its share,
    ``m_i = (c_1 + ... + c_i - c_i / 2) / n``; with ``g`` groups it goes to
    group ``floor(m_i * g)``. Since ``floor(floor(x * g) / 4) == floor(x * g /
    4)``, the groups for ``g / 4`` are unions of those for ``g``: the levels
    nest. ``g`` runs over 256, 64, 16 and 4; a level that merges nothing (as
    many groups as the finer level, or as items) or holds a single group is
    left out. A frequent item keeps a group of its own longer than rare ones,
    which merge first: with Adult's native-country (90 % United-States) the
    finest level still separates the larger countries.
    """
    counts = np.asarray(counts, dtype=np.float64)
    middle = (np.cumsum(counts) - counts / 2) / counts.sum()
    groups = _FANOUT**_MAX_LEVELS
    levels: list[np.ndarray] = []
    previous = len(counts)
    while groups > 1:
        ids = np.minimum(np.floor(middle * groups), groups - 1).astype(np.int64)
        distinct = len(np.unique(ids))
        if 1 < distinct < previous:
            levels.append(ids)
            previous = distinct
        groups //= _FANOUT
    return levels


def _starts(groups: np.ndarray) -> np.ndarray:
    """First position of each run of equal (non-decreasing) group ids."""
    return np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])


def _rows(columns: list[np.ndarray], n: int) -> tuple[tuple[str, ...], ...]:
    table = np.column_stack([*columns, np.full(n, SUPPRESSED, dtype=object)])
    return tuple(tuple(str(cell) for cell in row) for row in table.tolist())
