"""Profile a data owner's table: a proposed role for every column, and its contract.

``ppdm init`` (:mod:`ppdm.prepare.init_folder`) starts from a table nobody has
described yet. This module looks at each column's name and values once and
proposes

- a **role** (``identifying``, ``quasi_identifier``, ``sensitive``,
  ``insensitive``, ``target``, ``weight`` or ``drop``, the vocabulary of
  ``columns:`` in a release configuration) with a one-line reason
  (:func:`profile_table`);
- the pandera **schema** of a valid row (:func:`build_schema`) and the Great
  Expectations **suite** of a valid table (:func:`build_suite`), both
  describing the table as observed;
- a generalization **hierarchy** for every quasi-identifier
  (:func:`propose_hierarchy`), in the formats of
  :mod:`ppdm.generalization.hierarchies`.

Every proposal is a guess for the owner to read, never a decision: the
release configuration that ``ppdm init`` writes carries each reason as a
comment.

How a role is guessed
---------------------
The data owner's own choices (``target``, ``sensitive``,
``quasi_identifiers``) come first, and they are complete: a column that only
*looks* like a quasi-identifier (sensitive attribute, target) when the owner
named others is proposed ``drop``, so nothing is released as is by accident.
For every other column, the first rule that applies decides:

1. no value in any row: ``drop``;
2. named like an identifier (name, first/last name, e-mail, SSN, phone,
   address, passport, IBAN, URL, IP, record number, ``id`` / ``*_id`` /
   ``*ID``, ...), or values that look like one (e-mail addresses, phone,
   social security numbers, IP addresses, URLs, persons' names, free text:
   :func:`ppdm.identifiers.identifier_pattern`, on the whole column):
   ``identifying``, whatever the share of distinct values (HIPAA Safe
   Harbor's identifiers); a column named so with at most 10 values (a yes/no
   "telephone") is left to the rules below;
3. named like a survey weight (weight, wgt, fnlwgt, sample weight, ...) and
   numeric: ``weight``;
4. dates kept as text (ISO ``YYYY-MM-DD``, ``DD.MM.YYYY``, ``DD/MM/YYYY``,
   ``MM/DD/YYYY``: :func:`ppdm.generalization.ordered_text.date_format` on
   the whole column): ``quasi_identifier``, generalized by calendar; other
   dates and times: ``drop`` (derive a year or an age in the source);
5. one value in every row: ``insensitive`` (it cannot single anybody out);
6. a row number (the consecutive integers ``a .. a + n - 1``, or named
   ``index`` / ``Unnamed: 0``): ``drop``;
7. text distinct for ~every row (>= 95 %), or a name ending in ``id``
   distinct for ~every row: ``identifying``;
8. named like a class label (target, label, class, outcome, y) with 2 to 20
   values, when the owner named no target: ``target`` (the first such column);
9. named like a special category of data (diagnosis, disease, religion,
   salary, ...), when the owner named no sensitive attribute: ``sensitive``;
10. named like a demographic attribute (age, sex, gender, zip, postcode, race,
    marital, country, education, birth, ...): ``quasi_identifier``;
11. numeric and distinct for ~every row: ``drop`` when it has many values (a
    measurement that singles people out), ``quasi_identifier`` when it has at
    most 50 (it can be generalized into intervals);
12. text distinct for most rows (>= 50 %, more than 50 values), such as free
    text: ``drop``;
13. everything else: ``insensitive``, released as is. This is the risky guess:
    the verifier's pass-through check stops the run if such a column singles
    people out, and the reason says so.

Hierarchies
-----------
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

Examples
--------
>>> import pandas as pd
>>> table = pd.DataFrame({
...     "email": [f"p{i}@example.org" for i in range(40)],
...     "age": [20 + i % 30 for i in range(40)],
...     "diagnosis": ["flu", "cold", "ulcer", "flu"] * 10,
... })
>>> profile = profile_table(table, dataset="clinic")
>>> profile.roles
{'email': 'identifying', 'age': 'quasi_identifier', 'diagnosis': 'sensitive'}
>>> propose_hierarchy(table["age"]).rule
{'type': 'intervals', 'min': 20, 'max': 49, 'origin': 0, 'widths': [2, 4, 8, 16, 32]}
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.generalization.hierarchies import Hierarchy
from ppdm.generalization.ordered_text import date_format, date_pattern, text_kind
from ppdm.identifiers import IDENTIFIER_STEMS, IDENTIFIER_WORDS, identifier_pattern
from ppdm.values import SUPPRESSED, format_number, format_range, format_set

__all__ = [
    "ROLES",
    "ColumnProfile",
    "HierarchyPlan",
    "SetAside",
    "TableProfile",
    "TypedColumn",
    "build_schema",
    "build_suite",
    "columns_analysis",
    "declared_bounds",
    "interval_widths",
    "profile_table",
    "propose_hierarchy",
    "type_column",
    "typed_frame",
]

#: The roles a column can have (``columns:`` of a release configuration).
ROLES = (
    "identifying",
    "quasi_identifier",
    "sensitive",
    "insensitive",
    "target",
    "weight",
    "drop",
)

# -- thresholds (module docstring) -------------------------------------------
_UNIQUE_SHARE = 0.95  # distinct values per non-missing row: "unique for ~every row"
_MOSTLY_DISTINCT_SHARE = 0.5  # free text
_FEW_VALUES = 10  # at most this many distinct values never identify by themselves
_NUMERIC_QI_MAX = 50  # near-unique numbers with at most this many values: a QI
_TARGET_MAX_CLASSES = 20
_MAX_DOMAIN = 100  # schema `isin` for text columns with at most this many values
_FEW_CATEGORIES = 5  # categories: value -> * at most this many values
_FANOUT = 4  # groups per coarser level in generated CSV hierarchies
_MAX_LEVELS = 4  # levels between value and * in generated CSV hierarchies
_MAX_LEVEL_LEAVES = 5_000  # largest generated CSV hierarchy
_MAX_INTERVAL_LEAVES = 100_000  # largest integer domain of an interval rule
_INTERVAL_BUCKETS = 16  # about this many buckets at an interval rule's first level
_ROW_COUNT_FACTOR = 10  # suite: row count within [rows / 10, rows * 10]
_NOT_NULL_MARGIN = 0.05  # suite: `mostly` this far below the observed share

# -- vocabularies of column names (compared with the name's lower-case tokens) --
_IDENTIFIER_WORDS = IDENTIFIER_WORDS
_IDENTIFIER_STEMS = IDENTIFIER_STEMS
_ROW_NUMBER_WORDS = frozenset("index unnamed rownum rownumber rowid".split())
_WEIGHT_WORDS = frozenset(
    "weight weights wgt wt fnlwgt pweight perwt hhwt sampwt finalweight "
    "sampleweight surveyweight designweight".split()
)
# "weight" of a body, not of a sample
_BODY_WORDS = frozenset("body kg kgs lb lbs pounds grams birth height bmi".split())
_TARGET_WORDS = frozenset("target label labels class classlabel outcome y".split())
_SENSITIVE_WORDS = frozenset(
    "diagnosis diagnoses disease diseases illness condition medication medications "
    "drug drugs treatment religion religious hiv health disability pregnancy "
    "pregnant orientation salary income wage wages criminal conviction convictions "
    "symptom symptoms icd sensitive".split()
)
_DEMOGRAPHIC_WORDS = frozenset(
    "age sex gender zip zipcode postcode postal plz race ethnicity ethnic marital "
    "married country nationality citizenship education edu birth dob born "
    "birthdate birthday birthplace birthyear city county region occupation job "
    "workclass relationship native language children".split()
)


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


@dataclass(frozen=True)
class ColumnProfile:
    """What one column holds, and the role proposed for it.

    Attributes
    ----------
    name : str
    kind : {"integer", "float", "boolean", "text", "datetime"}
        ``integer`` also covers floats whose every value is a whole number
        (a CSV integer column with missing cells reads as float).
    dtype : str
        The dtype the schema declares: ``int64``, ``Int64`` (integers with
        missing values), ``float64``, ``bool``, ``str`` or ``datetime64[ns]``.
    rows, missing, distinct : int
        Rows, missing cells and distinct non-missing values.
    minimum, maximum : int or float or None
        Observed bounds of a numeric column.
    role : str
        One of :data:`ROLES`.
    reason : str
        One line: why this role.
    date_format : str or None
        The format (``strftime`` codes) of a text column of dates; the
        schema checks every value against it.
    code_pattern : str or None
        The regular expression every code of a text column of codes follows
        (``^\\d{5}$`` for zips); the schema checks every value against it.
    set_aside : SetAside or None
        Cells proposed as invalid (they break the column's type or pattern):
        the schema rejects them, so their rows go to quarantine. The
        statistics above are those of the other cells.
    bounds : tuple of two numbers, or None
        The range the schema accepts for a number: the observed one with
        headroom, so next month's oldest person is not rejected
        (:func:`declared_bounds`).
    """

    name: str
    kind: str
    dtype: str
    rows: int
    missing: int
    distinct: int
    minimum: int | float | None
    maximum: int | float | None
    role: str
    reason: str
    date_format: str | None = None
    code_pattern: str | None = None
    set_aside: SetAside | None = None
    bounds: tuple[int | float, int | float] | None = None

    @property
    def present(self) -> int:
        """Rows with a value."""
        return self.rows - self.missing

    @property
    def distinct_share(self) -> float:
        """Distinct values per row with a value (1.0: unique for every row)."""
        return self.distinct / self.present if self.present else 0.0

    @property
    def numeric(self) -> bool:
        """True for integer and float columns."""
        return self.kind in ("integer", "float")


@dataclass(frozen=True)
class TableProfile:
    """The profile of a whole table: one :class:`ColumnProfile` per column."""

    dataset: str
    rows: int
    columns: tuple[ColumnProfile, ...]

    def __getitem__(self, name: str) -> ColumnProfile:
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(name)

    @property
    def roles(self) -> dict[str, str]:
        """Column -> proposed role, in the table's order."""
        return {c.name: c.role for c in self.columns}

    @property
    def reasons(self) -> dict[str, str]:
        """Column -> one-line reason of its role."""
        return {c.name: c.reason for c in self.columns}

    def having(self, role: str) -> list[str]:
        """The columns of one role, in the table's order."""
        return [c.name for c in self.columns if c.role == role]

    @property
    def quasi_identifiers(self) -> list[str]:
        return self.having("quasi_identifier")

    @property
    def sensitive_attributes(self) -> list[str]:
        return self.having("sensitive")

    @property
    def target(self) -> str | None:
        """The target column, or None when no column has that role."""
        targets = self.having("target")
        return targets[0] if targets else None


def profile_table(
    frame: pd.DataFrame,
    *,
    dataset: str,
    target: str | None = None,
    sensitive: str | Sequence[str] | None = None,
    quasi_identifiers: Sequence[str] | None = None,
    overrides: Mapping[str, tuple[str, str]] | None = None,
    analysis: Mapping[str, tuple[Any, ...]] | None = None,
) -> TableProfile:
    """Propose a role, with its reason, for every column of ``frame``.

    Parameters
    ----------
    frame : pandas.DataFrame
        The source table as :func:`ppdm.prepare.ingest.load_source` returns it.
    dataset : str
        The dataset's name (carried along for the schema and the suite).
    target : str, optional
        The class an analyst predicts; given, no other column is guessed as
        one.
    sensitive : str or sequence of str, optional
        The sensitive attributes; given, they are the only ones.
    quasi_identifiers : sequence of str, optional
        The quasi-identifiers; given, they are the only ones.
    overrides : mapping of str to (role, reason), optional
        Roles decided elsewhere (a trial release found a column released as
        is would fail the pass-through check); they win over every guess.
    analysis : mapping, optional
        :func:`columns_analysis` of ``frame``, when the caller profiles one
        table several times (it reads every cell of every column).

    Returns
    -------
    TableProfile

    Raises
    ------
    InvalidParameterError
        A given column is not in the table (the message lists the table's
        columns), or one column is given two roles.
    """
    columns = [str(c) for c in frame.columns]
    if len(set(columns)) != len(columns):
        twice = sorted({c for c in columns if columns.count(c) > 1})
        raise InvalidParameterError(f"the table has duplicate column names: {twice}")
    sensitive_list = [sensitive] if isinstance(sensitive, str) else sensitive
    given = _given_roles(
        columns,
        target=target,
        sensitive=None if sensitive_list is None else list(sensitive_list),
        quasi_identifiers=None
        if quasi_identifiers is None
        else list(quasi_identifiers),
    )
    overrides = dict(overrides or {})
    state = {"target_taken": target is not None}
    profiles = []
    analysis = columns_analysis(frame) if analysis is None else analysis
    for name in columns:
        raw = frame[name]
        typed, stats, pattern, dates = analysis[name]
        stats = dict(stats)
        if name in overrides:
            role, reason = overrides[name]
        elif name in given:
            role, reason = given[name]
        else:
            role, reason = _guess(
                stats,
                pattern=pattern,
                dates=dates,
                owner_target=target is not None,
                owner_sensitive=sensitive_list is not None,
                owner_qis=quasi_identifiers is not None,
                state=state,
            )
        if role not in _CHECKED_ROLES:
            # Identifying and dropped columns never leave and are checked for
            # their presence only: their cells are neither typed nor judged.
            raw_stats = stats if typed.column is raw else _statistics(name, raw)
            profiles.append(
                ColumnProfile(**raw_stats, role=role, reason=reason, date_format=dates)
            )
            continue
        if typed.set_aside is not None:
            reason += (
                f"; {typed.set_aside.why}: proposed invalid (the schema rejects "
                "them, their rows go to quarantine)"
            )
        bounds = (
            declared_bounds(stats["minimum"], stats["maximum"], typed.set_aside)
            if stats["kind"] in ("integer", "float") and stats["minimum"] is not None
            else None
        )
        profiles.append(
            ColumnProfile(
                **stats,
                role=role,
                reason=reason,
                date_format=dates,
                code_pattern=typed.code_pattern,
                set_aside=typed.set_aside,
                bounds=bounds,
            )
        )
    return TableProfile(dataset=dataset, rows=len(frame), columns=tuple(profiles))


def columns_analysis(frame: pd.DataFrame) -> dict[str, tuple[Any, ...]]:
    """Per column: its :func:`type_column`, statistics, identifier pattern, date format.

    What :func:`profile_table` reads of the cells, whatever the roles.
    """
    out: dict[str, tuple[Any, ...]] = {}
    for name in frame.columns:
        raw = frame[name]
        typed = type_column(raw)
        stats = _statistics(str(name), typed.column)
        dates = date_format(raw) if stats["kind"] == "text" else None
        if typed.set_aside is not None:
            stats["missing"] = int(raw.isna().sum())  # set-aside cells are not missing
            if stats["dtype"] == "Int64" and not stats["missing"]:
                stats["dtype"] = "int64"
        out[str(name)] = (typed, stats, identifier_pattern(raw), dates)
    return out


def _given_roles(
    columns: list[str],
    *,
    target: str | None,
    sensitive: list[str] | None,
    quasi_identifiers: list[str] | None,
) -> dict[str, tuple[str, str]]:
    given: dict[str, tuple[str, str]] = {}
    for key, names, role in (
        ("target", [target] if target is not None else [], "target"),
        ("sensitive", sensitive or [], "sensitive"),
        ("quasi_identifiers", quasi_identifiers or [], "quasi_identifier"),
    ):
        for name in names:
            if not isinstance(name, str) or name not in columns:
                raise InvalidParameterError(
                    f"{key} names {name!r}, which is not a column of the table; "
                    f"columns: {', '.join(columns)}"
                )
            if name in given and given[name][0] != role:
                raise InvalidParameterError(
                    f"column {name!r} is given two roles: {given[name][0]} and {role}"
                )
            given[name] = (role, f"given as {key.replace('_', ' ')}")
    return given


def _statistics(name: str, column: pd.Series) -> dict[str, Any]:
    rows = len(column)
    missing = int(column.isna().sum())
    distinct = int(column.nunique(dropna=True))
    dtype = column.dtype
    minimum = maximum = None
    if pd.api.types.is_bool_dtype(dtype):
        kind, declared = "boolean", "bool"
    elif pd.api.types.is_datetime64_any_dtype(dtype):
        kind, declared = "datetime", "datetime64[ns]"
    elif pd.api.types.is_numeric_dtype(dtype):
        values = column.to_numpy(dtype=float, na_value=np.nan)
        present = values[~np.isnan(values)]
        integral = bool(np.all(present == np.round(present))) and bool(
            np.all(np.isfinite(present))
        )
        if pd.api.types.is_integer_dtype(dtype):
            kind, declared = "integer", "Int64" if missing else "int64"
        else:
            kind = "integer" if integral and len(present) else "float"
            declared = "float64"
        if len(present):
            low, high = float(present.min()), float(present.max())
            if pd.api.types.is_integer_dtype(dtype):  # exact beyond 2**53
                minimum, maximum = int(column.min()), int(column.max())
            elif kind == "integer":
                minimum, maximum = int(low), int(high)
            else:
                minimum, maximum = low, high
    else:
        kind, declared = "text", "str"
    return {
        "name": name,
        "kind": kind,
        "dtype": declared,
        "rows": rows,
        "missing": missing,
        "distinct": distinct,
        "minimum": minimum,
        "maximum": maximum,
    }


def _tokens(name: str) -> tuple[str, ...]:
    """Lower-case words of a column name: ``PatientID`` -> ``("patient", "id")``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    spaced = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", spaced)
    return tuple(t for t in re.split(r"[^a-z0-9]+", spaced.lower()) if t)


def _matched(tokens: tuple[str, ...], words: frozenset[str], stems=()) -> str | None:
    """The word of ``words`` the name holds (a token or the whole name), or None."""
    compact = "".join(tokens)
    for token in (*tokens, compact):
        if token in words:
            return token
    for stem in stems:
        if stem in compact:
            return stem
    return None


def _guess(
    stats: dict[str, Any],
    *,
    pattern: str | None = None,
    dates: str | None = None,
    owner_target: bool,
    owner_sensitive: bool,
    owner_qis: bool,
    state: dict[str, bool],
) -> tuple[str, str]:
    tokens = _tokens(stats["name"])
    kind, distinct, rows = stats["kind"], stats["distinct"], stats["rows"]
    present = rows - stats["missing"]
    share = distinct / present if present else 0.0
    numeric = kind in ("integer", "float")
    values = f"{distinct:,} distinct value{'s' if distinct != 1 else ''}"
    note = ""

    if present == 0:
        return "drop", "no value in any row"

    demographic = _matched(tokens, _DEMOGRAPHIC_WORDS)
    identifier = _matched(tokens, _IDENTIFIER_WORDS, _IDENTIFIER_STEMS)
    if identifier is not None and not (identifier == "name" and demographic):
        # A direct identifier is one whatever its share of distinct values
        # (560 names on 50,000 rows single people out too); only a column of
        # a few values (German credit's "telephone": yes/none) is not one.
        if distinct > _FEW_VALUES:
            return "identifying", (
                f'named like an identifier ("{identifier}"), {values} in '
                f"{present:,} rows"
            )
        note = f' (named like an identifier, "{identifier}", but only {values})'
    if pattern is not None:
        return "identifying", (
            f"its values look like a {pattern} (HIPAA Safe Harbor identifier), "
            f"{values} in {present:,} rows"
        )

    weight = _matched(tokens, _WEIGHT_WORDS)
    if weight is not None and numeric and not _matched(tokens, _BODY_WORDS):
        return "weight", (
            f'named like a survey weight ("{weight}"): dropped unless listed in '
            "keep_weights (if it is a body weight, make it a quasi_identifier)"
        )
    if dates is not None and distinct > 1:
        # A date of a person (birth, admission, death) is a HIPAA identifier
        # when exact: generalized by calendar, never released as is.
        if not owner_qis:
            return "quasi_identifier", (
                f"dates ({dates}), {values}: generalized by calendar (month, "
                "quarter, year, decade)" + note
            )
        return "drop", (
            f"dates ({dates}), but not among the given quasi-identifiers: dropped, "
            "never released as is by accident"
        )
    if kind == "datetime":
        return "drop", (
            "dates and times are not generalized by ppdm; derive a year or an age "
            "in the source to release it"
        )
    if distinct == 1:
        return "insensitive", "one value in every row: it singles nobody out" + note
    if _matched(tokens, _ROW_NUMBER_WORDS) is not None and share >= _UNIQUE_SHARE:
        return "drop", "named like a row number and distinct for every row"
    if (
        kind == "integer"
        and distinct == present == rows
        and distinct > _FEW_VALUES
        and stats["maximum"] - stats["minimum"] + 1 == distinct
    ):
        return "drop", (
            f"the consecutive integers {stats['minimum']}..{stats['maximum']}: a "
            "row number"
        )
    if share >= _UNIQUE_SHARE and distinct > _FEW_VALUES:
        if kind in ("text", "boolean"):
            return "identifying", (
                f"text distinct for {share:.0%} of the rows ({values}): it singles "
                "people out"
            )
        if "".join(tokens).endswith("id"):
            return "identifying", (
                f'name ends in "id" and distinct for {share:.0%} of the rows'
            )

    if not owner_target and not state["target_taken"]:
        label = _matched(tokens, _TARGET_WORDS)
        if label is not None and 2 <= distinct <= _TARGET_MAX_CLASSES:
            state["target_taken"] = True
            return "target", (
                f'named like a class label ("{label}"), {distinct} classes: the '
                "class an analyst predicts, released as is"
            )

    special = _matched(tokens, _SENSITIVE_WORDS)
    if special is not None:
        if not owner_sensitive:
            return "sensitive", (
                f'named like a special category ("{special}"): released as is, '
                "protected by l-diversity" + note
            )
        return "drop", (
            f'named like a special category ("{special}"), but not among the '
            "given sensitive attributes: dropped, never released as is by accident"
        )

    if demographic is not None:
        if not owner_qis:
            return "quasi_identifier", (
                f'named like a demographic attribute ("{demographic}"), {values}: '
                "generalized" + note
            )
        return "drop", (
            f'named like a demographic attribute ("{demographic}"), but not among '
            "the given quasi-identifiers: dropped, never released as is by accident"
        )

    if numeric and share >= _UNIQUE_SHARE and distinct > _FEW_VALUES:
        if distinct > _NUMERIC_QI_MAX:
            return "drop", (
                f"numeric and distinct for {share:.0%} of the rows ({values}): it "
                "singles people out (make it a quasi_identifier to release it "
                "generalized)"
            )
        return "quasi_identifier", (
            f"numeric and distinct for {share:.0%} of the rows, but only {values}: "
            "generalized into intervals"
        )
    if (
        kind == "text"
        and share >= _MOSTLY_DISTINCT_SHARE
        and distinct > _NUMERIC_QI_MAX
    ):
        return "drop", (
            f"text distinct for {share:.0%} of the rows ({values}), such as free "
            "text: it may single people out"
        )
    return "insensitive", (
        f"not demographic by its name ({values}): released as is; the pass-through "
        "check stops the run if it singles people out (then make it a "
        "quasi_identifier or drop it)" + note
    )


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


def typed_frame(
    frame: pd.DataFrame,
    profile: TableProfile,
    analysis: Mapping[str, tuple[Any, ...]] | None = None,
) -> pd.DataFrame:
    """``frame`` with every checked column read as :func:`type_column` reads it.

    ``analysis``: :func:`columns_analysis` of ``frame``, when at hand.
    """
    typed = frame.copy(deep=False)
    for column in profile.columns:
        if column.role in _CHECKED_ROLES and column.name in typed.columns:
            typed[column.name] = (
                analysis[column.name][0].column
                if analysis is not None
                else type_column(frame[column.name]).column
            )
    return typed


# =============================================================================
# Schema and suite
# =============================================================================
_CHECKED_ROLES = frozenset({"quasi_identifier", "sensitive", "insensitive", "target"})


def _text_domain(column: pd.Series) -> list[str]:
    return sorted(str(v) for v in pd.unique(column.dropna()))


def _declares_domain(profile: ColumnProfile) -> bool:
    """Whether the schema lists the column's observed values (``isin``).

    Text columns released as they are or generalized: up to 100 values, and
    any number for a quasi-identifier whose hierarchy lists them all anyway.
    Never for identifying or dropped columns: their values stay out of the
    dataset folder.
    """
    if profile.kind != "text" or profile.role not in _CHECKED_ROLES:
        return False
    if profile.date_format is not None:  # checked by format: next month's dates too
        return False
    if profile.distinct <= _MAX_DOMAIN:
        return True
    return profile.role == "quasi_identifier" and profile.distinct <= _MAX_LEVEL_LEAVES


def _declares_range(profile: ColumnProfile) -> bool:
    return (
        profile.numeric
        and profile.minimum is not None
        and profile.role not in ("identifying", "drop")
    )


def _range_of(profile: ColumnProfile) -> tuple[int | float, int | float]:
    """The declared range: with headroom (:func:`declared_bounds`) when profiled so."""
    if profile.bounds is not None:
        return profile.bounds
    return profile.minimum, profile.maximum  # type: ignore[return-value]


def _profile_of(
    frame: pd.DataFrame, profile: TableProfile | None, roles: dict[str, Any]
) -> TableProfile:
    """``profile``, or the table profiled with the given ``dataset`` and roles."""
    if profile is not None:
        given = sorted(key for key, value in roles.items() if value is not None)
        if given:
            raise InvalidParameterError(
                f"give either a profile or {', '.join(given)}, not both"
            )
        return profile
    if roles.get("dataset") is None:
        raise InvalidParameterError("give a profile, or dataset=<name> to profile")
    return profile_table(frame, **roles)


def build_schema(
    frame: pd.DataFrame,
    profile: TableProfile | None = None,
    *,
    dataset: str | None = None,
    target: str | None = None,
    sensitive: str | Sequence[str] | None = None,
    quasi_identifiers: Sequence[str] | None = None,
) -> Any:
    """The pandera schema of a valid row, as the table was observed.

    One column per column of the table: its dtype (``int64``, ``Int64`` when
    integers are missing, ``float64``, ``bool``, ``str``), nullable iff a
    value is missing today, the observed ``in_range`` of numbers and the
    observed ``isin`` domain of text (:func:`_declares_domain`); identifying
    and dropped columns get their dtype only. The schema is ``strict`` (a new
    column is refused until the owner gives it a role), ``coerce``s values to
    the declared types and is named after the dataset.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.
    profile : TableProfile, optional
        Its profile (:func:`profile_table`); without one, the table is
        profiled here with ``dataset`` and the given roles.
    dataset, target, sensitive, quasi_identifiers : optional
        As for :func:`profile_table`; only without ``profile``.

    Returns
    -------
    pandera.pandas.DataFrameSchema
        Serialise it with ``to_yaml()``; ``DataFrameSchema.from_yaml`` reads
        it back equal.
    """
    import pandera.pandas as pa

    profile = _profile_of(frame, profile, {
        "dataset": dataset, "target": target, "sensitive": sensitive,
        "quasi_identifiers": quasi_identifiers,
    })  # fmt: skip

    frame = typed_frame(frame, profile)
    columns = {}
    for column in profile.columns:
        checks = []
        if _declares_range(column):
            checks.append(pa.Check.in_range(*map(_plain, _range_of(column))))
        if _declares_domain(column):
            checks.append(pa.Check.isin(_text_domain(frame[column.name])))
        if column.date_format is not None and column.role in _CHECKED_ROLES:
            checks.append(pa.Check.str_matches(date_pattern(column.date_format)))
        elif column.code_pattern is not None:
            checks.append(pa.Check.str_matches(column.code_pattern))
        columns[column.name] = pa.Column(
            _PANDERA_DTYPES[column.dtype],
            checks=checks or None,
            nullable=column.missing > 0,
            title=column.role,
            description=column.reason,
        )
    return pa.DataFrameSchema(
        columns,
        strict=True,
        coerce=True,
        name=profile.dataset,
        description=(
            f"{profile.dataset}: {profile.rows:,} rows as profiled by ppdm init; "
            "ranges and value sets are the observed ones"
        ),
    )


_PANDERA_DTYPES = {
    "int64": "int64",
    "Int64": "Int64",
    "float64": "float64",
    "bool": "bool",
    "str": str,
    "datetime64[ns]": "datetime64[ns]",
}


def _plain(value: Any) -> Any:
    """A numpy scalar as a Python number (YAML writes those as plain numbers)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def build_suite(
    frame: pd.DataFrame,
    profile: TableProfile | None = None,
    *,
    dataset: str | None = None,
    target: str | None = None,
    sensitive: str | Sequence[str] | None = None,
    quasi_identifiers: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The Great Expectations suite of a valid table, in the project's simple form.

    ``{"name": dataset, "meta": {"notes": ...}, "expectations": [...]}`` with

    - the row count within a tenth and ten times the profiled one (a much
      smaller or larger table is more likely a broken extract than next
      month's data);
    - exactly the profiled column set;
    - per column without missing values: not null; with missing values:
      not null for ``mostly`` 5 points below the observed share (rounded
      down to a percent), so a column that suddenly loses its values stops
      the run;
    - the schema's ranges and value sets again (so both validators name a bad
      row), and every target class present.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.
    profile : TableProfile, optional
        Its profile; without one, the table is profiled here with ``dataset``
        and the given roles (as :func:`build_schema`).
    dataset, target, sensitive, quasi_identifiers : optional
        As for :func:`profile_table`; only without ``profile``.

    Returns
    -------
    dict
        Ready for :func:`ppdm.prepare.validation.validate_table` and for
        ``json.dump``.
    """
    profile = _profile_of(frame, profile, {
        "dataset": dataset, "target": target, "sensitive": sensitive,
        "quasi_identifiers": quasi_identifiers,
    })  # fmt: skip
    frame = typed_frame(frame, profile)
    rows = profile.rows
    expectations: list[dict[str, Any]] = [
        {
            "type": "expect_table_row_count_to_be_between",
            "kwargs": {
                "min_value": max(1, rows // _ROW_COUNT_FACTOR),
                "max_value": rows * _ROW_COUNT_FACTOR,
            },
        },
        {
            "type": "expect_table_columns_to_match_set",
            "kwargs": {
                "column_set": [c.name for c in profile.columns],
                "exact_match": True,
            },
        },
    ]
    for column in profile.columns:
        name = column.name
        if column.missing == 0:
            expectations.append(
                {
                    "type": "expect_column_values_to_not_be_null",
                    "kwargs": {"column": name},
                }
            )
        else:
            mostly = math.floor((column.present / rows - _NOT_NULL_MARGIN) * 100) / 100
            if mostly > 0:
                expectations.append(
                    {
                        "type": "expect_column_values_to_not_be_null",
                        "kwargs": {"column": name, "mostly": mostly},
                    }
                )
        if _declares_range(column):
            expectations.append(
                {
                    "type": "expect_column_values_to_be_between",
                    "kwargs": {
                        "column": name,
                        "min_value": _plain(_range_of(column)[0]),
                        "max_value": _plain(_range_of(column)[1]),
                    },
                }
            )
        if _declares_domain(column):
            domain = _text_domain(frame[name])
            expectations.append(
                {
                    "type": "expect_column_values_to_be_in_set",
                    "kwargs": {"column": name, "value_set": domain},
                }
            )
            if column.role == "target" and column.distinct <= _TARGET_MAX_CLASSES:
                expectations.append(
                    {
                        "type": "expect_column_distinct_values_to_contain_set",
                        "kwargs": {"column": name, "value_set": domain},
                    }
                )
    return {
        "name": profile.dataset,
        "meta": {
            "notes": (
                f"Written by ppdm init from a table of {rows:,} rows: the row count "
                f"within [rows / {_ROW_COUNT_FACTOR}, rows * {_ROW_COUNT_FACTOR}], "
                "the exact column set, not-null (with a mostly threshold "
                f"{_NOT_NULL_MARGIN:.0%} below the observed share where values are "
                "missing), the schema's observed ranges and value sets, and every "
                "target class present. Edit freely."
            )
        },
        "expectations": expectations,
    }


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
        columns.append(labels[_dense(groups)])
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
        dense = _dense(groups)
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


def _dense(groups: np.ndarray) -> np.ndarray:
    """Group ids renumbered 0, 1, ... in order (ids are non-decreasing)."""
    return np.unique(groups, return_inverse=True)[1]


def _starts(groups: np.ndarray) -> np.ndarray:
    """First position of each run of equal (non-decreasing) group ids."""
    return np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])


def _rows(columns: list[np.ndarray], n: int) -> tuple[tuple[str, ...], ...]:
    table = np.column_stack([*columns, np.full(n, SUPPRESSED, dtype=object)])
    return tuple(tuple(str(cell) for cell in row) for row in table.tolist())
