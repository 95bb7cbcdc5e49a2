"""How generalized values are written in released tables, and read back.

One grammar, shared by every algorithm, the verifier and the utility report:

============================  =========================================
released text                 meaning
============================  =========================================
``*``                         suppressed cell (no information)
empty                         the input value was missing
``[17, 25]``                  numeric range, both ends included
``[21.5, 30.5)``              interval (discretized), half-open
``< 21.5``, ``<= 21.5``       interval with an open lower end
``>= 39.5``, ``> 39.5``       interval with an open upper end
``(-inf, inf)``               the whole line (a column without a cut)
``{Divorced|Separated}``      value set: the true value is one of these
anything else                 the value itself
============================  =========================================

Value-set members are sorted, so the same set is always written the same way.

An interval with one infinite end is written as a comparison, as people write
it (``< 21.5`` rather than ``(-inf, 21.5)``). Releases made before this form
wrote ``(-inf, 21.5)`` and ``[39.5, inf)``; :func:`parse_cell` still reads
them, as the same intervals, so an earlier release of a series is read
alike. A comparison is read only in the exact form written here (the
operator, one space, a finite decimal number): a raw category such as
``<=50K`` or ``<5`` stays a value. Both ends infinite keep the bracket form,
since no number is left to compare with and a word (``any``) could be a
category of the data.
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
    "format_interval_span",
    "format_set",
    "Cell",
    "canonical_label",
    "parse_cell",
]

SET_SEPARATOR = "|"
_INTERVAL = re.compile(
    r"^(?P<lb>[\[(])\s*(?P<lo>[^,\s]+)\s*,\s*(?P<hi>[^,\s]+)\s*(?P<rb>[\])])$"
)
#: ``< 21.5``: an operator, one space, a finite decimal number (no ``inf``,
#: ``nan`` or ``1_000``, which ``float`` would accept).
_COMPARISON = re.compile(
    r"^(?P<op><=|<|>=|>) (?P<x>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)$"
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

    An infinite end is always open; one infinite end makes a comparison.

    >>> format_interval(20, 30), format_interval(-math.inf, 23.5)
    ('[20, 30)', '< 23.5')
    >>> format_interval(39.5, math.inf), format_interval(-math.inf, 28, closed="right")
    ('>= 39.5', '<= 28')
    >>> format_interval(30, math.inf, closed="right")
    '> 30'
    """
    left_closed = closed in ("left", "both") and not math.isinf(low)
    right_closed = closed in ("right", "both") and not math.isinf(high)
    if math.isinf(low) and not math.isinf(high):
        return f"{'<=' if right_closed else '<'} {format_number(high)}"
    if math.isinf(high) and not math.isinf(low):
        return f"{'>=' if left_closed else '>'} {format_number(low)}"
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
    compared = _COMPARISON.match(raw)
    if compared:
        op, number = compared["op"], float(compared["x"])
        if math.isfinite(number):
            below = op.startswith("<")
            return Cell(
                "interval",
                raw,
                low=-math.inf if below else number,
                high=number if below else math.inf,
                low_closed=op == ">=",
                high_closed=op == "<=",
            )
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


def canonical_label(text: object, marker: str = SUPPRESSED) -> object:
    """A released cell in the form this version writes; others unchanged.

    Only intervals with one infinite end are rewritten (``(-inf, 23.5)`` ->
    ``< 23.5``, ``[39.5, inf)`` -> ``>= 39.5``), inside value sets too, so the
    cells of a release written before the comparison form compare equal, as
    text, to this version's. Any other cell, and a value that is not text (a
    number, a missing value), is returned as it is.

    >>> canonical_label("(-inf, 23.5)"), canonical_label("{[20, inf)|(-inf, 5)}")
    ('< 23.5', '{< 5|>= 20}')
    >>> canonical_label("Married"), canonical_label("[17, 25]")
    ('Married', '[17, 25]')
    """
    if not isinstance(text, str):
        return text
    cell = parse_cell(text, marker)
    if cell.kind == "interval" and math.isinf(cell.low) != math.isinf(cell.high):
        return format_interval_span(cell, cell)
    if cell.kind == "set":
        members = [canonical_label(m, marker) for m in cell.members]
        return format_set(members) if members != list(cell.members) else text
    return text


def format_interval_span(first: Cell, last: Cell) -> str:
    """The interval from ``first``'s lower end to ``last``'s upper end, each
    end closed as it is in its cell (both cells are intervals).

    >>> a, b = parse_cell("[20, 30)"), parse_cell("[30, 40]")
    >>> format_interval_span(a, b), format_interval_span(b, b)
    ('[20, 40]', '[30, 40]')
    """
    closed = {
        (True, True): "both",
        (True, False): "left",
        (False, True): "right",
        (False, False): "neither",
    }[(first.low_closed, last.high_closed)]
    return format_interval(first.low, last.high, closed=closed)
