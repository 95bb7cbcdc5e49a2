"""The contract proposed for an owner's table: its pandera schema and its suite.

:func:`build_schema` describes a valid row (types, domains of the columns
with few values, ranges with headroom) and :func:`build_suite` a valid table
(Great Expectations: row count, missing shares, class labels), both from the
table as observed and its profile (:mod:`ppdm.prepare.profile`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ppdm.generalization.ordered_text import date_pattern
from ppdm.prepare.column_types import type_column
from ppdm.prepare.hierarchy_proposal import _MAX_LEVEL_LEAVES
from ppdm.prepare.profile import (
    _CHECKED_ROLES,
    _TARGET_MAX_CLASSES,
    ColumnProfile,
    TableProfile,
)

_MAX_DOMAIN = 100  # schema `isin` for text columns with at most this many values
_ROW_COUNT_FACTOR = 10  # suite: row count within [rows / 10, rows * 10]
_NOT_NULL_MARGIN = 0.05  # suite: `mostly` this far below the observed share


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


def build_schema(frame: pd.DataFrame, profile: TableProfile) -> Any:
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
    profile : TableProfile
        Its profile (:func:`~ppdm.prepare.profile.profile_table`), with the
        owner's roles.

    Returns
    -------
    pandera.pandas.DataFrameSchema
        Serialise it with ``to_yaml()``; ``DataFrameSchema.from_yaml`` reads
        it back equal.
    """
    import pandera.pandas as pa

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


def build_suite(frame: pd.DataFrame, profile: TableProfile) -> dict[str, Any]:
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
    profile : TableProfile
        Its profile, as for :func:`build_schema`.

    Returns
    -------
    dict
        Ready for :func:`ppdm.prepare.validation.validate_table` and for
        ``json.dump``.
    """
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
