"""Aggregate metrics of a partitioned table: one summary per partition, combined exactly.

A table-level expectation (a row count, a column's minimum, maximum, sum,
mean or distinct values) is judged by its own GX validation on the whole
table's metric values; :func:`partition_summary` gives what each partition
contributes (a count, an exact integer sum, a set of values) and
:func:`combine_metric` the whole table's value from them, as GX's pandas
implementation would compute it on the concatenated table. ``e`` in the
messages is the suite entry being combined (its ``index`` and ``entry``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError

__all__ = ["SUMMED", "combine_metric", "partition_summary"]

#: Count metrics that add up over partitions.
SUMMED = ("unexpected_count", "filtered_row_count")
_EXACT_FLOAT = 2**53  # integers up to this add exactly in float64


def partition_summary(name: str, typed: pd.DataFrame, column: Any) -> Any:
    """One partition's summary for an aggregate metric (see :func:`combine_metric`)."""
    if name == "table.row_count":
        return len(typed)
    if name == "table.columns":
        return [str(c) for c in typed.columns]
    if name == "table.column_count":
        return typed.shape[1]
    present = typed[column].dropna()
    if name in ("column.min", "column.max"):
        if not len(present):
            return None
        return present.min() if name == "column.min" else present.max()
    if name in ("column.sum", "column.mean"):
        return _exact_sum(present)
    return set(present.unique())  # the distinct values, for every distinct metric


def _exact_sum(present: pd.Series) -> dict[str, Any]:
    """Count, exact integer sum and sum of magnitudes; None sums if not integers."""
    values = present.to_numpy()
    if not len(values):
        return {"count": 0, "sum": 0, "magnitude": 0}
    if not (
        pd.api.types.is_integer_dtype(present.dtype)
        or (
            pd.api.types.is_float_dtype(present.dtype)
            and np.isfinite(values).all()
            and (np.floor(values) == values).all()
            and np.abs(values).max() < 2**63
        )
    ):
        return {"count": len(values), "sum": None, "magnitude": None}
    integers = values.astype(np.int64)
    if np.abs(integers).max() <= (2**62) // len(integers):
        total, magnitude = int(integers.sum()), int(np.abs(integers).sum())
    else:  # Python integers: no overflow
        total = int(sum(int(x) for x in integers))
        magnitude = int(sum(abs(int(x)) for x in integers))
    return {"count": len(values), "sum": total, "magnitude": magnitude}


def combine_metric(
    name: str, values: list, config: Any, dtype: str | None, e: Any
) -> Any:
    """The whole table's value of a metric from the partitions' values or summaries."""
    if name == "table.row_count" or name.endswith(SUMMED):
        return int(sum(int(x) for x in values))
    if name in ("table.columns", "table.column_count"):
        return values[0]
    if name in ("column.min", "column.max"):
        present = [x for x in values if x is not None]
        if not present:
            return np.nan
        found = min(present) if name == "column.min" else max(present)
        return _like(found, dtype)
    if name in ("column.sum", "column.mean"):
        return _sum_or_mean(name, values, dtype, e)
    distinct = {_like(x, dtype) for part in values for x in part}
    return _distinct_metric(name, distinct, config)


def _like(value: Any, dtype: str | None) -> Any:
    """A value as the whole table's typed column holds it (float if any part was)."""
    if dtype == "float64" and isinstance(value, (int, np.integer)):
        return np.float64(value)
    return value


def _sum_or_mean(name: str, values: list, dtype: str | None, e: Any) -> Any:
    count = sum(x["count"] for x in values)
    if any(x["sum"] is None for x in values):
        raise InvalidParameterError(
            f"expectation {e.index} ({e.entry['type']}) on column "
            f"{e.entry['kwargs'].get('column')!r}: the column holds non-integer "
            "numbers, whose sum and mean depend on the order of the additions; "
            "partitions cannot give the whole table's figure bit for bit"
        )
    total = sum(x["sum"] for x in values)
    magnitude = sum(x["magnitude"] for x in values)
    if magnitude > _EXACT_FLOAT and (name == "column.mean" or dtype == "float64"):
        raise InvalidParameterError(
            f"expectation {e.index} ({e.entry['type']}) on column "
            f"{e.entry['kwargs'].get('column')!r}: the magnitudes add up to more "
            "than 2**53, beyond which a float sum is rounded"
        )
    if name == "column.mean":
        return np.float64(total) / np.float64(count) if count else np.float64(np.nan)
    if dtype == "float64":
        return np.float64(total)
    if not -(2**63) <= total < 2**63:
        raise InvalidParameterError(
            f"expectation {e.index} ({e.entry['type']}): the sum of column "
            f"{e.entry['kwargs'].get('column')!r} overflows 64-bit integers"
        )
    return np.int64(total)


def _distinct_metric(name: str, distinct: set, config: Any) -> Any:
    """GX's distinct-value metrics (pandas implementations) from the whole column's set."""
    from great_expectations.constants import MAX_DISTINCT_VALUES
    from great_expectations.expectations.metrics.column_aggregate_metrics.column_distinct_values import (  # noqa: E501
        _coerce_value_set_to_column_type,
    )

    if name == "column.distinct_values":
        return distinct
    if name == "column.distinct_values.count":
        return len(distinct)
    kwargs = config.metric_value_kwargs or {}
    value_set = kwargs.get("value_set") or []
    limit = kwargs.get("limit", MAX_DISTINCT_VALUES)
    expected = _coerce_value_set_to_column_type(distinct, value_set)
    if name.startswith("column.distinct_values.not_in_set"):
        outside = distinct - expected
        if name.endswith(".count"):
            return len(outside)
        listed = list(outside)
        try:
            listed = sorted(listed)
        except TypeError:
            pass
        return listed[:limit]
    missing = expected - distinct
    if name.endswith(".count"):
        return len(missing)
    return list(missing)[:limit]
