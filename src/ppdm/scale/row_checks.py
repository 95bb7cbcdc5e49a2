"""Great Expectations' row-wise conditions, run one column at a time on a partition.

A partition's validation needs, for each row-wise expectation, the rows it
marks and three counts (rows, missing, unexpected); the table-level verdict is
made later by the expectation's own GX validation on the combined counts
(:mod:`ppdm.scale.validate_parts`). Running GX's whole validation on every
partition to get them costs more than the checks themselves: on a
250,000-row Adult partition about 2.4 s of 2.7 s, because GX rebuilds its
metric graph for each expectation (a fixed second of configuration objects
per partition) and, for every metric, filters the whole frame, every column,
to the rows where the expectation's column is present.

Here the same GX condition function (the metric provider's registered pandas
implementation, e.g. ``ColumnValuesInSet._pandas``) is applied to the
expectation's column alone, after the same filter of missing values the
metric provider asks for. What comes out is what GX's map metrics compute
from it: the unexpected rows in row order and their count. The expectations
are taken in the order GX's validator takes them (grouped by column, columns
in the order first named, table-wide ones first), so failures and summaries
come in GX's order.

Only conditions that depend on the column's values alone are run this way
(:data:`COLUMN_CONDITIONS`); a suite with anything else -- a row condition,
a suite parameter, a column pair, a metric this module does not know, a
condition that raises or returns a nullable verdict -- is validated by GX's
own run on the partition instead, so messages and results stay GX's. A test
cross-checks both routes on random tables.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["COLUMN_CONDITIONS", "ColumnCondition", "gx_order", "run_conditions"]

#: Row-wise GX metrics whose pandas condition is a function of one column's values.
COLUMN_CONDITIONS = frozenset(
    {
        "column_values.nonnull",
        "column_values.null",
        "column_values.in_set",
        "column_values.not_in_set",
        "column_values.between",
        "column_values.match_regex",
        "column_values.not_match_regex",
        "column_values.match_regex_list",
        "column_values.not_match_regex_list",
        "column_values.value_length.equals",
        "column_values.value_length.between",
    }
)
_NO_COLUMN = "_nocolumn"  # GX's group for expectations that name no column


@dataclass(frozen=True)
class ColumnCondition:
    """One row-wise expectation, as a GX condition on one column.

    Attributes
    ----------
    index : int
        The expectation's position in the suite.
    metric : str
        Its GX map metric (``column_values.in_set``, ...).
    column : str
        The column it checks.
    value_kwargs : dict
        The metric's value arguments, as GX's dependency graph passes them.
    counts : tuple of str
        The count metrics the table-level validation needs.
    """

    index: int
    metric: str
    column: str
    value_kwargs: dict[str, Any]
    counts: tuple[str, ...]

    def unexpected(self, series: pd.Series, columns: list[str]) -> np.ndarray | None:
        """Row positions the condition marks (ascending); None: GX must run it."""
        from great_expectations.execution_engine import PandasExecutionEngine
        from great_expectations.expectations.registry import get_metric_provider

        provider, registered = get_metric_provider(
            f"{self.metric}.condition", PandasExecutionEngine()
        )
        condition = inspect.unwrap(registered)
        domain = series
        if getattr(provider, "filter_column_isnull", True):
            domain = series[series.notnull()]
        try:
            meets = condition(
                provider,
                domain,
                **self.value_kwargs,
                _metrics={"table.columns": columns},
            )
        except Exception:  # GX records it on the result: let GX's run say it
            return None
        verdict = np.asarray(meets)
        if verdict.dtype != np.bool_ or verdict.shape != (len(domain),):
            return None  # a nullable or odd verdict: GX's own handling decides
        return np.asarray(domain.index, dtype=np.int64)[~verdict]


def gx_order(entries: Sequence[Mapping[str, Any]]) -> list[int]:
    """Positions of ``entries`` in the order GX's validator runs them.

    ``Validator.process_expectations_for_validation`` groups expectations by
    their ``column`` argument (expectations without a text column in one group),
    groups in the order first met; results come back in that order.
    """
    groups: dict[str, list[int]] = {}
    for position, entry in enumerate(entries):
        column = entry.get("kwargs", {}).get("column")
        key = column if isinstance(column, str) else _NO_COLUMN
        groups.setdefault(key, []).append(position)
    return [position for group in groups.values() for position in group]


def run_conditions(
    typed: pd.DataFrame, conditions: Mapping[int, ColumnCondition]
) -> dict[int, tuple[np.ndarray, dict[str, int]]] | None:
    """Each condition's unexpected rows and counts on ``typed``; None: run GX instead."""
    columns = [str(c) for c in typed.columns]
    found = {}
    for index, condition in conditions.items():
        if condition.column not in typed.columns:
            return None  # GX reports the missing column
        series = typed[condition.column]
        rows = condition.unexpected(series, columns)
        if rows is None:
            return None
        counts = {}
        for name in condition.counts:
            if name == "table.row_count":
                counts[name] = len(typed)
            elif name == "column_values.nonnull.unexpected_count":
                counts[name] = int(series.isnull().sum())
            elif name == f"{condition.metric}.unexpected_count":
                counts[name] = len(rows)
            else:
                return None
        found[index] = (rows, counts)
    return found
