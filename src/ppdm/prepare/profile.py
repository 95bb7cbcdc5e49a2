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
from collections.abc import Sequence
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
    "TableProfile",
    "build_schema",
    "build_suite",
    "interval_widths",
    "profile_table",
    "propose_hierarchy",
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
    state = {"target_taken": target is not None}
    profiles = []
    for name in columns:
        stats = _statistics(name, frame[name])
        pattern = stats.pop("pattern")
        dates = date_format(frame[name]) if stats["kind"] == "text" else None
        if name in given:
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
        profiles.append(
            ColumnProfile(**stats, role=role, reason=reason, date_format=dates)
        )
    return TableProfile(dataset=dataset, rows=len(frame), columns=tuple(profiles))


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
        "pattern": identifier_pattern(column),
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
    elif _matched(tokens, _TARGET_WORDS) is not None:
        return "drop", (
            "named like a class label, but another column is the target: dropped, "
            "never released as is by accident"
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

    columns = {}
    for column in profile.columns:
        checks = []
        if _declares_range(column):
            checks.append(
                pa.Check.in_range(_plain(column.minimum), _plain(column.maximum))
            )
        if _declares_domain(column):
            checks.append(pa.Check.isin(_text_domain(frame[column.name])))
        if column.date_format is not None and column.role in _CHECKED_ROLES:
            checks.append(pa.Check.str_matches(date_pattern(column.date_format)))
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
                        "min_value": _plain(column.minimum),
                        "max_value": _plain(column.maximum),
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
    column: pd.Series, *, attribute: str | None = None
) -> HierarchyPlan:
    """A generalization hierarchy covering every observed value of ``column``.

    See the module docstring for the rules.

    Parameters
    ----------
    column : pandas.Series
    attribute : str, optional
        The attribute's name; default ``column.name``.

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
        return _numeric_hierarchy(attribute, present.to_numpy(dtype=float))
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


def _numeric_hierarchy(attribute: str, values: np.ndarray) -> HierarchyPlan:
    if not np.all(np.isfinite(values)):
        return _no_hierarchy(attribute, "infinite values")
    integral = bool(np.all(values == np.round(values)))
    if integral:
        low, high = int(values.min()), int(values.max())
        if high - low + 1 <= _MAX_INTERVAL_LEAVES:
            widths = interval_widths(low, high)
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
