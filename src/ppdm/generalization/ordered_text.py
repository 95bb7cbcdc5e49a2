"""Dates and codes kept as text: how they are recognised, ordered and released.

A data owner's export holds dates as text (``1961-03-04``, ``04.03.1961``)
and codes with leading zeros as text (zip ``01001``). As plain categories an
algorithm that releases value sets would publish a class's dates as the set
of its members' exact dates, and its zips as a set of full codes. This module
gives such columns an order and a coarse, truthful released form:

- a **date** column (every present value but a few malformed ones parses in
  one format, tried on the whole column with :func:`pandas.to_datetime`) is
  ordered by calendar, and a group of its values is released as the closed
  range of the whole months its dates fall in, in ISO form,
  ``[1945-06-01, 1960-06-30]``: no released cell is a day, and no member's
  day shows even as the end of a range;
- a **code** column (digit strings, as zip or record codes) is ordered as
  text (equal-length digit strings sort as numbers) and a group of codes is
  released with the digits after their common prefix masked: ``010**``.

Values that do not parse (malformed cells) are ordered after the others and
released beside the range, ``{[1945-06-13, 1960-06-21]|not a date}``.

>>> import pandas as pd
>>> column = pd.Series(["04.03.1961", "31.12.1970", "15.07.2001"] * 5)
>>> kind = text_kind(column)
>>> kind.kind, kind.format
('date', '%d.%m.%Y')
>>> kind.summary(["04.03.1961", "31.12.1970"])
'[1961-03-01, 1970-12-31]'
>>> kind.summary(["04.03.1961", "04.03.1961"])
'[1961-03-01, 1961-03-31]'
>>> codes = text_kind(pd.Series(["01001", "01002", "01017", "02134"] * 5))
>>> codes.kind, codes.summary(["01001", "01017"]), codes.summary(["01001"])
('code', '010**', '01001')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdm.values import format_set

__all__ = [
    "DATE_FORMATS",
    "TextKind",
    "date_format",
    "date_kinds",
    "date_pattern",
    "months_not_days",
    "text_kind",
]

#: Date formats recognised, in order of preference: ISO, then the common
#: national forms (day first before month first when both read every value).
DATE_FORMATS = ("%Y-%m-%d", "%d.%m.%Y", "%d/%m/%Y", "%m/%d/%Y", "%Y/%m/%d")
#: Share of present values that must parse (the rest are malformed cells).
_PARSED_SHARE = 0.95
_DIGITS = r"\d+"


def _present_text(column: pd.Series) -> pd.Series:
    present = column.dropna().astype(str).str.strip()
    return present[present != ""]


_FIELDS = {
    "%Y": r"\d{4}",
    "%m": r"(0?[1-9]|1[0-2])",
    "%d": r"(0?[1-9]|[12]\d|3[01])",
}


def date_pattern(fmt: str) -> str:
    r"""A regular expression of the texts of ``fmt`` (the schema's check).

    >>> print(date_pattern("%d.%m.%Y"))
    ^(0?[1-9]|[12]\d|3[01])\.(0?[1-9]|1[0-2])\.\d{4}$
    """
    out = re.escape(fmt)
    for field, pattern in _FIELDS.items():
        out = out.replace(re.escape(field), pattern)
    return f"^{out}$"


def date_format(column: pd.Series) -> str | None:
    """The format in which (nearly) every value of a text column is a date.

    Every present value is parsed in each format of :data:`DATE_FORMATS`
    (``pandas.to_datetime(format=..., errors="coerce")`` on the whole column,
    never a sample); the first format that reads at least 95 % of them and
    reads more of them than any other wins. ``DD/MM/YYYY`` and
    ``MM/DD/YYYY`` are told apart by the values that only one reads (a day
    above 12); when both read every value, day first is taken.
    """
    if pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(
        column.dtype
    ):
        return None
    counts = _present_text(column).value_counts(sort=False)
    if len(counts) == 0:
        return None
    # Each distinct value is parsed once, weighted by its rows: every row counts.
    values = pd.Series(counts.index, dtype=object)
    weights = counts.to_numpy()
    # Every format reads digits only: a column of words (names, e-mail
    # addresses) is answered without parsing it five times.
    shaped = values.str.fullmatch(r"[\d./-]{6,10}").to_numpy(dtype=bool)
    if weights[shaped].sum() < _PARSED_SHARE * weights.sum():
        return None
    best, best_share = None, 0.0
    for fmt in DATE_FORMATS:
        parsed = pd.to_datetime(values, format=fmt, errors="coerce").notna()
        share = float(weights[parsed.to_numpy()].sum() / weights.sum())
        if share > best_share:
            best, best_share = fmt, share
    return best if best_share >= _PARSED_SHARE else None


@dataclass(frozen=True)
class TextKind:
    """How a text column of dates or codes is ordered and released.

    Attributes
    ----------
    kind : {"date", "code"}
    format : str or None
        The date format (``strftime`` codes) of a date column.
    """

    kind: str
    format: str | None = None

    def sort_keys(self, labels: Sequence[object]) -> np.ndarray:
        """An order of ``labels``: by date (malformed last), or by text."""
        text = pd.Series([str(v) for v in labels], dtype=object)
        if self.kind == "date":
            when = pd.to_datetime(text, format=self.format, errors="coerce")
            malformed = when.isna().to_numpy()
            days = when.to_numpy(dtype="datetime64[D]").astype(np.int64)
            return np.lexsort((text.to_numpy(), days, malformed))
        return np.argsort(text.to_numpy(), kind="stable")

    def summarised_by_ends(self, labels: Sequence[object]) -> bool:
        """Whether a group's :meth:`summary` is that of its first and last label.

        True when ``labels`` are in :meth:`sort_keys` order and every one is a
        date in the format (no malformed value released beside the range), or
        every code has one length (the mask's width is the codes' length). A
        partition algorithm then formats each distinct (first, last) pair
        once instead of once per group of members.
        """
        text = pd.Series([str(v) for v in labels], dtype=object)
        if self.kind == "date":
            when = pd.to_datetime(text, format=self.format, errors="coerce")
            return bool(when.notna().all())
        return text.str.len().nunique() <= 1

    def summaries_of_ends(
        self, labels: Sequence[object], first: np.ndarray, last: np.ndarray
    ) -> list[str]:
        """:meth:`summary` of groups given by their first and last label.

        For labels where :meth:`summarised_by_ends` holds; vectorised for
        dates (a partition algorithm releases thousands of groups).

        >>> kind = TextKind("date", "%d.%m.%Y")
        >>> labels = ["04.03.1961", "31.12.1970", "15.07.2001"]
        >>> kind.summaries_of_ends(labels, np.array([0, 1]), np.array([1, 1]))
        ['[1961-03-01, 1970-12-31]', '[1970-12-01, 1970-12-31]']
        """
        text = [str(v) for v in labels]
        if self.kind != "date":
            return [self.summary([text[a], text[b]]) for a, b in zip(first, last)]
        when = pd.to_datetime(pd.Series(text), format=self.format)
        starts = when.dt.to_period("M").dt.to_timestamp().dt.strftime("%Y-%m-%d")
        ends = (when + pd.offsets.MonthEnd(0)).dt.strftime("%Y-%m-%d")
        starts, ends = starts.to_numpy(dtype=object), ends.to_numpy(dtype=object)
        return [f"[{a}, {b}]" for a, b in zip(starts[first], ends[last])]

    def summary(self, values: Sequence[object]) -> str:
        """The released cell of a group of present values (never a member's date)."""
        text = sorted({str(v) for v in values})
        if self.kind == "date":
            when = pd.to_datetime(pd.Series(text), format=self.format, errors="coerce")
            dates = when.dropna()
            others = [t for t, w in zip(text, when) if pd.isna(w)]
            if len(dates) == 0:
                return format_set(others)
            # Whole months: no member's day shows, not even as a range's end.
            low = dates.min().replace(day=1)
            high = dates.max() + pd.offsets.MonthEnd(0)
            cell = f"[{low:%Y-%m-%d}, {high:%Y-%m-%d}]"
            return format_set([cell, *others]) if others else cell
        if len(text) == 1:
            return text[0]
        low, high = text[0], text[-1]
        common = 0
        while common < min(len(low), len(high)) and low[common] == high[common]:
            common += 1
        width = max(len(t) for t in text)
        return low[:common] + "*" * (width - common)


def text_kind(column: pd.Series) -> TextKind | None:
    """Whether a text column holds dates or codes (see the module docstring).

    A code column: at least 95 % of present values are digit strings, some
    with a leading zero or all of one length (a number stored as text keeps
    its own order otherwise), and more than one value.
    """
    fmt = date_format(column)
    if fmt is not None:
        return TextKind("date", fmt)
    if pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(
        column.dtype
    ):
        return None
    present = _present_text(column)
    if present.nunique() < 2:
        return None
    digits = present[present.str.fullmatch(_DIGITS)]
    if len(digits) < _PARSED_SHARE * len(present):
        return None
    lengths = digits.str.len()
    if lengths.nunique() == 1 or bool(digits.str.match(r"0\d").any()):
        return TextKind("code")
    return None


def date_kinds(table: pd.DataFrame, columns: Sequence[str]) -> dict[str, TextKind]:
    """The date columns among ``columns`` of ``table``, with their :class:`TextKind`."""
    kinds = {}
    for column in columns:
        if column in table.columns:
            kind = text_kind(table[column])
            if kind is not None and kind.kind == "date":
                kinds[column] = kind
    return kinds


def months_not_days(frame: pd.DataFrame, kinds: dict[str, TextKind]) -> pd.DataFrame:
    """``frame`` with every exact date of the ``kinds`` columns released as its month.

    A quasi-identifier's exact date is never published: an algorithm that
    may release a value as it is (a hierarchy's bottom level, a projection,
    a 0/1 feature ``birth_date=1961-03-04``) has each such cell replaced by
    the range of its whole month, as :meth:`TextKind.summary` writes it, and
    features of one month merged (a row has the month's feature when it had
    one of its days'). The cell's new text is a function of its old text, so
    rows that shared a class still share one: classes only merge, and every
    requirement that holds on a union of classes still holds (the verifier
    checks the result again).

    >>> kind = TextKind("date", "%d.%m.%Y")
    >>> frame = pd.DataFrame({"birth": ["04.03.1961", "*", "[1961-01-01, 1961-12-31]"]})
    >>> months_not_days(frame, {"birth": kind})["birth"].tolist()
    ['[1961-03-01, 1961-03-31]', '*', '[1961-01-01, 1961-12-31]']
    >>> features = pd.DataFrame({"birth=04.03.1961": [1, 0, 0], "birth=09.03.1961": [0, 1, 0],
    ...                          "y": ["a", "b", "a"]})
    >>> months_not_days(features, {"birth": kind}).to_dict("list")
    {'birth=[1961-03-01, 1961-03-31]': [1, 1, 0], 'y': ['a', 'b', 'a']}
    """
    out = frame.copy()
    for column, kind in kinds.items():
        if column in out.columns:
            out[column] = _months(out[column], kind)
        prefix = f"{column}="
        features = [c for c in out.columns if str(c).startswith(prefix)]
        if not features:
            continue
        months = _month_texts([str(c)[len(prefix) :] for c in features], kind)
        renamed = {c: prefix + m for c, m in zip(features, months)}
        if all(old == new for old, new in renamed.items()):
            continue
        merged: dict[str, pd.Series] = {}
        for old in features:
            new = renamed[old]
            merged[new] = (
                out[old] if new not in merged else merged[new].combine(out[old], max)
            )
        position = out.columns.get_loc(features[0])
        out = out.drop(columns=features)
        for offset, (name, values) in enumerate(merged.items()):
            out.insert(position + offset, name, values)
    return out


def _month_texts(values: Sequence[str], kind: TextKind) -> list[str]:
    """Each value's whole-month range when it is a date in ``kind``'s format, else itself."""
    days = pd.to_datetime(pd.Series(list(values), dtype=object), format=kind.format,
                          errors="coerce")  # fmt: skip
    starts = days.dt.to_period("M").dt.to_timestamp().dt.strftime("%Y-%m-%d")
    ends = (days + pd.offsets.MonthEnd(0)).dt.strftime("%Y-%m-%d")
    return [
        value if pd.isna(day) else f"[{a}, {b}]"
        for value, day, a, b in zip(values, days, starts, ends)
    ]


def _months(cells: pd.Series, kind: TextKind) -> pd.Series:
    present = cells.dropna()
    if present.empty:
        return cells
    uniques = [str(v) for v in pd.unique(present.astype(str))]
    mapping = dict(zip(uniques, _month_texts(uniques, kind)))
    if all(k == v for k, v in mapping.items()):
        return cells
    mapped = cells.astype(object).where(cells.isna(), cells.astype(str).map(mapping))
    return (
        mapped.astype(cells.dtype)
        if isinstance(cells.dtype, pd.StringDtype)
        else mapped
    )
