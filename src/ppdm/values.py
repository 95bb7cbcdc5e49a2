"""How generalized values are written in released tables, and read back.

One grammar, shared by every algorithm, the verifier and the utility report:

============================  =========================================
released text                 meaning
============================  =========================================
``*``                         suppressed cell (no information)
empty                         the input value was missing
``[17, 25]``                  numeric range, both ends included
``[21.5, 30.5)``              interval (discretized), half-open
``(-inf, 21.5)``              interval with an open lower end
``{Divorced|Separated}``      value set: the true value is one of these
anything else                 the value itself
============================  =========================================

Value-set members are sorted, so the same set is always written the same way.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

#: The value a suppressed cell takes in every released table.
SUPPRESSED = "*"

__all__ = [
    "SUPPRESSED",
    "SET_SEPARATOR",
    "format_number",
    "format_range",
    "format_interval",
    "format_set",
    "Cell",
    "parse_cell",
]

SET_SEPARATOR = "|"
_INTERVAL = re.compile(
    r"^(?P<lb>[\[(])\s*(?P<lo>[^,\s]+)\s*,\s*(?P<hi>[^,\s]+)\s*(?P<rb>[\])])$"
)


def format_number(value: float) -> str:
    """Shortest faithful text of a number (``17`` not ``17.0``)."""
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    as_float = float(value)
    if as_float.is_integer():
        return str(int(as_float))
    return repr(as_float)


def format_range(low: float, high: float) -> str:
    """Closed numeric range; a single value when ``low == high``."""
    if low == high:
        return format_number(low)
    return f"[{format_number(low)}, {format_number(high)}]"


def format_interval(low: float, high: float, *, closed: str = "left") -> str:
    """Interval text; ``closed`` is "left" ([a, b)), "right", "both" or "neither".

    An infinite end is always written open.
    """
    left_closed = closed in ("left", "both") and not math.isinf(low)
    right_closed = closed in ("right", "both") and not math.isinf(high)
    return (
        ("[" if left_closed else "(")
        + f"{format_number(low)}, {format_number(high)}"
        + ("]" if right_closed else ")")
    )


def format_set(values: Iterable[object]) -> str:
    """Value set text; a single value is written as itself."""
    members = sorted({str(v) for v in values})
    if len(members) == 1:
        return members[0]
    return "{" + SET_SEPARATOR.join(members) + "}"


@dataclass(frozen=True)
class Cell:
    """A released cell, parsed.

    ``kind`` is "suppressed", "missing", "interval" (``low``, ``high``,
    ``low_closed``, ``high_closed``), "set" (``members``) or "value" (``text``).
    """

    kind: str
    text: str = ""
    low: float = math.nan
    high: float = math.nan
    low_closed: bool = True
    high_closed: bool = True
    members: tuple[str, ...] = ()


def parse_cell(text: object, marker: str = SUPPRESSED) -> Cell:
    """Parse one released cell (see the module table)."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return Cell("missing")
    raw = str(text)
    if raw == marker:
        return Cell("suppressed", raw)
    if raw == "":
        return Cell("missing")
    if raw.startswith("{") and raw.endswith("}"):
        return Cell("set", raw, members=tuple(raw[1:-1].split(SET_SEPARATOR)))
    match = _INTERVAL.match(raw)
    if match:
        try:
            low, high = float(match["lo"]), float(match["hi"])
        except ValueError:
            return Cell("value", raw)
        return Cell(
            "interval",
            raw,
            low=low,
            high=high,
            low_closed=match["lb"] == "[",
            high_closed=match["rb"] == "]",
        )
    return Cell("value", raw)
