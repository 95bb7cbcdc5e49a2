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

Hierarchies are proposed by :mod:`ppdm.prepare.hierarchy_proposal`, the contract by
:mod:`ppdm.prepare.contract` and column types by :mod:`ppdm.prepare.column_types`.

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

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ppdm.config import ROLES
from ppdm.exceptions import InvalidParameterError
from ppdm.generalization.ordered_text import date_format
from ppdm.identifier_names import IDENTIFIER_STEMS, IDENTIFIER_WORDS
from ppdm.identifiers import identifier_pattern
from ppdm.prepare.column_types import (
    SetAside,
    TypedColumn,
    declared_bounds,
    type_column,
)
from ppdm.prepare.hierarchy_proposal import (
    HierarchyPlan,
    interval_widths,
    propose_hierarchy,
)

__all__ = [
    "ROLES",
    "ColumnProfile",
    "HierarchyPlan",
    "SetAside",
    "TableProfile",
    "TypedColumn",
    "columns_analysis",
    "declared_bounds",
    "interval_widths",
    "profile_table",
    "propose_hierarchy",
    "type_column",
]


# -- thresholds (module docstring) -------------------------------------------
_UNIQUE_SHARE = 0.95  # distinct values per non-missing row: "unique for ~every row"
_MOSTLY_DISTINCT_SHARE = 0.5  # free text
_FEW_VALUES = 10  # at most this many distinct values never identify by themselves
_NUMERIC_QI_MAX = 50  # near-unique numbers with at most this many values: a QI
_TARGET_MAX_CLASSES = 20

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
# Schema and suite
# =============================================================================
_CHECKED_ROLES = frozenset({"quasi_identifier", "sensitive", "insensitive", "target"})
