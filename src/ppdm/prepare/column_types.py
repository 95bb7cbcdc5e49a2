"""Read an owner's column as its dominant type, and set aside the cells that break it.

A text column of numbers is read as numbers, dates kept as text are
recognised by their format (:func:`ppdm.generalization.ordered_text.date_format`),
a column of codes gets the pattern nearly every value shares, and the few
cells that fit none of that (``three`` among numbers, ``n/a``, a rare
negative count) are proposed as invalid (:class:`SetAside`) instead of
being learned as values. :mod:`ppdm.prepare.profile` proposes roles from
the typed columns.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdm.generalization.ordered_text import date_format


# =============================================================================
# Roles
# =============================================================================
@dataclass(frozen=True)
class SetAside:
    """Cells of a column proposed as invalid, and why.

    Attributes
    ----------
    values : tuple of str
        The distinct texts set aside (for a number column: those that are not
        numbers); ``below`` covers numbers under a bound.
    below : int or float or None
        Numbers under this bound are set aside too (a negative stay).
    rows : int
        Rows holding such a cell.
    why : str
        One line: what the cells break.
    """

    values: tuple[str, ...]
    below: int | float | None
    rows: int
    why: str


# =============================================================================
# Types and dirty cells
# =============================================================================
_DIRT_SHARE = 0.02  # at most this share of a column's cells can be set aside
_RARE_NEGATIVE = 0.001  # negatives this rare in a column of counts are errors
_SHOWN_SET_ASIDE = 3  # set-aside texts spelled out in a reason
# Texts that stand for "no value" in exports; rare ones in a category column
# are set aside rather than learned as a category.
_PLACEHOLDERS = frozenset("unknown unk n/a na none null missing nan - -- ? .".split())


@dataclass(frozen=True)
class TypedColumn:
    """A column read as its dominant type, and what did not fit.

    Attributes
    ----------
    column : pandas.Series
        The column with every set-aside cell missing; a text column of
        numbers as numbers (``Int64`` when they are whole).
    set_aside : SetAside or None
    code_pattern : str or None
        The regular expression of a text column of codes (digits, maybe
        with letters), from the shape nearly every value shares.
    """

    column: pd.Series
    set_aside: SetAside | None = None
    code_pattern: str | None = None


def type_column(column: pd.Series) -> TypedColumn:
    """Read ``column`` as its dominant type; propose the cells that break it as invalid.

    A data owner's export has a few broken cells: ``three`` or ``n/a`` among
    the numbers of a stay, ``ABCDE`` among five-digit zips, ``1961-13-45``
    among dates, a stay of ``-4``, ``unknown`` among the sexes. Learned as
    they are, they would make the stay a text column (released as sets of
    numbers) and become allowed values of the schema. Here, on the whole
    column (never a sample), the cells that break what nearly every other
    cell is (at most 2 % of the cells, :data:`_DIRT_SHARE`) are set aside:

    - a text column whose cells are numbers but for a few (no code with a
      leading zero): numbers, the others set aside;
    - dates in one format (:func:`~ppdm.generalization.ordered_text.date_format`):
      the cells that are no date in it;
    - codes (the shape of a value: digits as ``9``, letters as ``A``; the
      most common shape has a digit): the cells of another shape, and the
      shape becomes the schema's pattern;
    - a number column of counts (at most 0.1 % negative): the negatives;
    - a category column: rare placeholders of a missing value (``unknown``,
      ``n/a``, ``-``, ...).

    >>> stay = pd.Series(["3", "14", "three", "5", "-4"] + ["2"] * 1995)
    >>> typed = type_column(stay)
    >>> typed.column.dtype, typed.set_aside.values, typed.set_aside.below
    (Int64Dtype(), ('three',), 0)
    >>> typed.set_aside.why
    "2 cells break the column's type: 1 not a number ('three'), 1 below 0"
    >>> zips = type_column(pd.Series(["01001", "01002", "ABCDE"] + ["02134"] * 97))
    >>> zips.code_pattern, zips.set_aside.values
    ('^\\\\d{5}$', ('ABCDE',))
    """
    dtype = column.dtype
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_datetime64_any_dtype(dtype):
        return TypedColumn(column)
    if pd.api.types.is_numeric_dtype(dtype):
        return _without_negatives(column, (), 0, [])
    text = column.astype("string").str.strip()
    counts = text.value_counts(dropna=True)
    present = int(counts.sum())
    if present == 0:
        return TypedColumn(column)
    values = pd.Series(counts.index.astype(str), dtype=object)
    weights = counts.to_numpy()
    allowed = math.floor(_DIRT_SHARE * present)

    numbers = pd.to_numeric(values, errors="coerce")
    is_number = numbers.notna().to_numpy() & np.isfinite(numbers.to_numpy(dtype=float))
    bad_rows = int(weights[~is_number].sum())
    codes = values[is_number].str.match(r"^[+-]?0\d").any()
    if is_number.any() and not codes and 0 < bad_rows <= allowed:
        bad = tuple(sorted(values[~is_number]))
        parsed = pd.to_numeric(text.where(~text.isin(bad)), errors="coerce")
        present_numbers = parsed.dropna()
        if (
            len(present_numbers)
            and (present_numbers == np.round(present_numbers)).all()
        ):
            parsed = parsed.astype("Int64")
        why = [f"{bad_rows:,} not a number ({_shown(bad)})"]
        return _without_negatives(parsed, bad, bad_rows, why)

    fmt = date_format(column)
    if fmt is not None:
        parsed_dates = pd.to_datetime(values, format=fmt, errors="coerce").notna()
        bad = tuple(sorted(values[~parsed_dates.to_numpy()]))
        if not bad:
            return TypedColumn(column)
        rows = int(weights[~parsed_dates.to_numpy()].sum())
        return TypedColumn(
            _masked(column, text, bad),
            SetAside(bad, None, rows, f"{rows:,} no date in {fmt} ({_shown(bad)})"),
        )

    shapes = values.str.replace(r"\d", "9", regex=True).str.replace(
        r"[A-Za-z]", "A", regex=True
    )
    by_shape = pd.Series(weights).groupby(shapes.to_numpy()).sum()
    top = str(by_shape.idxmax())
    if "9" in top and int(by_shape.max()) >= present - allowed:
        pattern = _shape_pattern(top)
        bad = tuple(sorted(values[(shapes != top).to_numpy()]))
        if not bad:
            return TypedColumn(column, code_pattern=pattern)
        rows = int(weights[(shapes != top).to_numpy()].sum())
        why = f"{rows:,} not a code like the others, {pattern} ({_shown(bad)})"
        return TypedColumn(
            _masked(column, text, bad), SetAside(bad, None, rows, why), pattern
        )

    placeholder = values.str.lower().isin(_PLACEHOLDERS).to_numpy()
    rows = int(weights[placeholder].sum())
    if placeholder.any() and not placeholder.all() and rows <= allowed:
        bad = tuple(sorted(values[placeholder]))
        why = f"{rows:,} a placeholder of a missing value ({_shown(bad)})"
        return TypedColumn(_masked(column, text, bad), SetAside(bad, None, rows, why))
    return TypedColumn(column)


def _without_negatives(
    numbers: pd.Series, bad: tuple[str, ...], bad_rows: int, why: list[str]
) -> TypedColumn:
    """``numbers`` with rare negatives set aside (a count has none)."""
    negative = (numbers < 0).fillna(False).to_numpy(dtype=bool)
    present = int(numbers.notna().sum())
    below = None
    if (
        negative.any()
        and negative.sum() <= max(_RARE_NEGATIVE * present, 0)
        and (negative.sum() < present)
    ):
        below = 0
        numbers = numbers.mask(negative)
        bad_rows += int(negative.sum())
        why.append(f"{int(negative.sum()):,} below 0")
    if not bad_rows:
        return TypedColumn(numbers)
    cells = "cell breaks" if bad_rows == 1 else "cells break"
    return TypedColumn(
        numbers,
        SetAside(bad, below, bad_rows, f"{bad_rows:,} {cells} the column's type: "
                 + ", ".join(why)),
    )  # fmt: skip


def _masked(column: pd.Series, text: pd.Series, bad: tuple[str, ...]) -> pd.Series:
    return column.mask(text.isin(bad).fillna(False).to_numpy(dtype=bool))


def _shown(values: tuple[str, ...]) -> str:
    shown = ", ".join(repr(v[:20]) for v in values[:_SHOWN_SET_ASIDE])
    more = len(values) - _SHOWN_SET_ASIDE
    return shown + (f" and {more:,} more" if more > 0 else "")


def _shape_pattern(shape: str) -> str:
    """``99999`` -> ``^\\d{5}$``; ``A99.9`` -> ``^[A-Za-z]\\d{2}\\.\\d$``."""
    parts = []
    for char, run in (
        (m.group(0)[0], len(m.group(0))) for m in re.finditer(r"(.)\1*", shape)
    ):
        atom = {"9": r"\d", "A": "[A-Za-z]"}.get(char, re.escape(char))
        parts.append(atom if run == 1 else f"{atom}{{{run}}}")
    return "^" + "".join(parts) + "$"


def declared_bounds(
    minimum: int | float, maximum: int | float, set_aside: SetAside | None = None
) -> tuple[int | float, int | float]:
    """The range a schema accepts for a number: the observed one with headroom.

    Next month's table holds people this month's does not (an older
    patient, a longer stay): a range learned from this month's extremes
    would reject them. A column with no negative number starts at 0 (the
    type's domain: counts, ages, amounts); the top is raised by half the
    observed span, rounded up to the span's order of magnitude.

    >>> declared_bounds(17, 90)
    (0, 130)
    >>> declared_bounds(1, 29)
    (0, 50)
    >>> declared_bounds(-12.5, 40.25)
    (-40.0, 70.0)
    """
    span = maximum - minimum
    step = 10.0 ** math.floor(math.log10(span)) if span > 0 else 1.0
    low = (
        0
        if minimum >= 0 or (set_aside and set_aside.below == 0)
        else (math.floor((minimum - span / 2) / step) * step)
    )
    high = math.ceil((maximum + span / 2) / step) * step
    if isinstance(minimum, float) or isinstance(maximum, float) or step < 1:
        return float(low), float(high)
    return int(low), int(high)
