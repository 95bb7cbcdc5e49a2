"""How a failed validation check reads in the quarantine table.

A row's reason names the value and the rule it broke. The same rule stated by
a pandera check or by a Great Expectations expectation reads the same, so a
data steward does not have to know which library found the row.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa

__all__ = ["gx_reason", "pandera_reason", "shown_value", "value_domain"]

_SHOWN_VALUES = 8  # values of a domain spelled out in a reason


def pandera_reason(check: pa.Check | None, check_id: str, value: Any) -> str:
    """The reason ``value`` fails the pandera check ``check_id`` (``check``, when known)."""
    name = check.name if check is not None else check_id
    stats = (check.statistics or {}) if check is not None else {}
    shown = shown_value(value)
    if check_id == "not_nullable":
        return "missing value (column is not nullable)"
    if check_id.startswith(("coerce_dtype(", "dtype(")):
        return f"{shown} cannot be read as {check_id.split('(', 1)[1][:-1]}"
    if check_id == "field_uniqueness":
        return f"{shown} is a duplicate"
    if name == "in_range":
        lo = "[" if stats.get("include_min", True) else "("
        hi = "]" if stats.get("include_max", True) else ")"
        bounds = f"{shown_value(stats['min_value'])}, {shown_value(stats['max_value'])}"
        return f"{shown} is not in {lo}{bounds}{hi}"
    comparisons = {
        "greater_than_or_equal_to": (">=", "min_value"),
        "greater_than": (">", "min_value"),
        "less_than_or_equal_to": ("<=", "max_value"),
        "less_than": ("<", "max_value"),
        "equal_to": ("==", "value"),
        "not_equal_to": ("!=", "value"),
    }
    if name in comparisons:
        op, key = comparisons[name]
        return f"{shown} is not {op} {shown_value(stats.get(key))}"
    if name in _SHARED_RULE:
        return _shared_rule_reason(name, shown, stats)
    return f"{shown} fails {check_id}"


# The rules both libraries state, so that a value failing one reads the same
# whichever checked it: rule -> {pandera check or GX expectation: its argument}.
_SHARED_RULES = {
    "one of": {
        "isin": "allowed_values",
        "expect_column_values_to_be_in_set": "value_set",
    },
    "forbidden": {"notin": "", "expect_column_values_to_not_be_in_set": ""},
    "pattern": {
        "str_matches": "pattern",
        "expect_column_values_to_match_regex": "regex",
    },
}
_SHARED_RULE = {
    name: (rule, key)
    for rule, names in _SHARED_RULES.items()
    for name, key in names.items()
}


def _shared_rule_reason(name: str, shown: str, arguments: Mapping[str, Any]) -> str:
    rule, key = _SHARED_RULE[name]
    if rule == "forbidden":
        return f"{shown} is a forbidden value"
    if rule == "one of":
        return f"{shown} is not one of {value_domain(arguments.get(key, []))}"
    return f"{shown} does not match {arguments.get(key)!r}"


def gx_reason(kind: str, kwargs: dict, value: Any) -> str:
    """The reason ``value`` fails the expectation of type ``kind`` with ``kwargs``."""
    shown = shown_value(value)
    if kind == "expect_column_values_to_be_between":
        lo, hi = kwargs.get("min_value"), kwargs.get("max_value")
        if lo is None:
            return f"{shown} is not <= {shown_value(hi)}"
        if hi is None:
            return f"{shown} is not >= {shown_value(lo)}"
        return f"{shown} is not in [{shown_value(lo)}, {shown_value(hi)}]"
    if kind in _SHARED_RULE:
        return _shared_rule_reason(kind, shown, kwargs)
    if kind == "expect_column_values_to_not_be_null":
        return "missing value"
    if kind == "expect_column_value_lengths_to_be_between":
        return f"{shown} has a length outside [{kwargs.get('min_value')}, " \
               f"{kwargs.get('max_value')}]"  # fmt: skip
    return f"{shown} fails {kind}"


def shown_value(value: Any) -> str:
    """A cell value as a reason shows it: text quoted, whole floats as ints."""
    if value is None or value is pd.NA:
        return "<missing>"
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return "<missing>"
        if float(value).is_integer():
            return str(int(value))
        return repr(float(value))
    if isinstance(value, (str, np.str_)):
        return repr(str(value))
    if isinstance(value, np.generic):
        return repr(value.item())
    return repr(value)


def value_domain(values: Any) -> str:
    """A set of values as a reason shows it: sorted, the first few spelled out."""
    values = sorted(map(str, values))
    if len(values) <= _SHOWN_VALUES:
        return "{" + ", ".join(values) + "}"
    head = ", ".join(values[:_SHOWN_VALUES])
    return "{" + head + f", ... ({len(values)} values)" + "}"
