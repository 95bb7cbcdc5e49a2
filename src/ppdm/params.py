"""Declarative parameter constraints, in the scikit-learn style.

An algorithm lists ``_parameter_constraints = {"name": Interval(...), ...}``
and :func:`validate_params` checks them all before any work starts, with
messages that name the parameter, the value received and the allowed range.
"""

from __future__ import annotations

import difflib
import numbers
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ppdm.exceptions import InvalidParameterError

__all__ = [
    "Interval",
    "Options",
    "Boolean",
    "PositiveNumbers",
    "did_you_mean",
    "validate_params",
]


def did_you_mean(word: Any, choices: Iterable[Any]) -> str:
    """``"did you mean 'seed'?"`` for a near miss of ``choices``, else ``""``.

    A mistyped key, algorithm or column name is usually one or two letters
    away from the intended one; naming it saves reading the whole list.

    >>> did_you_mean("mondrain", ["kactus", "mondrian"])
    "did you mean 'mondrian'?"
    >>> did_you_mean("zzz", ["kactus", "mondrian"])
    ''
    """
    if not isinstance(word, str):
        return ""
    names = [str(c) for c in choices]
    close = difflib.get_close_matches(word, names, n=3, cutoff=0.6)
    if not close:
        # Case and separators only ("Age", "marital-status"): ratio misses some.
        folded = {re.sub(r"[\W_]+", "", n).lower(): n for n in names}
        same = folded.get(re.sub(r"[\W_]+", "", word).lower())
        close = [same] if same is not None and same != word else []
    if not close:
        return ""
    return f"did you mean {' or '.join(map(repr, close))}?"


@dataclass(frozen=True)
class Interval:
    """A number in [left, right] (either bound may be None = unbounded)."""

    kind: type
    left: float | None
    right: float | None
    closed: str = "both"  # "both", "left", "right", "neither"

    def describe(self) -> str:
        lo = "-inf" if self.left is None else repr(self.left)
        hi = "inf" if self.right is None else repr(self.right)
        lb = "[" if self.closed in ("both", "left") and self.left is not None else "("
        rb = "]" if self.closed in ("both", "right") and self.right is not None else ")"
        name = "an integer" if self.kind is numbers.Integral else "a number"
        return f"{name} in {lb}{lo}, {hi}{rb}"

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, self.kind):
            return False
        if self.left is not None:
            if value < self.left or (
                value == self.left and self.closed in ("right", "neither")
            ):
                return False
        if self.right is not None:
            if value > self.right or (
                value == self.right and self.closed in ("left", "neither")
            ):
                return False
        return True


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values."""

    values: frozenset

    def __init__(self, values: Iterable[Any]) -> None:
        object.__setattr__(self, "values", frozenset(values))

    def describe(self) -> str:
        return "one of " + ", ".join(sorted(map(repr, self.values)))

    def accepts(self, value: Any) -> bool:
        try:
            return value in self.values
        except TypeError:
            return False


@dataclass(frozen=True)
class Boolean:
    """True or False."""

    def describe(self) -> str:
        return "a boolean"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, bool)


@dataclass(frozen=True)
class PositiveNumbers:
    """A positive finite number, or a non-empty list of them (one per objective)."""

    def describe(self) -> str:
        return "a positive number or a list of positive numbers"

    def accepts(self, value: Any) -> bool:
        values = list(value) if isinstance(value, list | tuple) else [value]
        return bool(values) and all(
            isinstance(v, numbers.Real)
            and not isinstance(v, bool)
            and v > 0
            and v != float("inf")
            for v in values
        )


def validate_params(
    owner: str, params: Mapping[str, Any], constraints: Mapping[str, Any]
) -> None:
    """Raise :class:`InvalidParameterError` for the first parameter out of range.

    ``None`` is accepted where the constraint is a tuple containing ``None``.
    """
    for name, constraint in constraints.items():
        value = params.get(name)
        options = constraint if isinstance(constraint, tuple) else (constraint,)
        if any(c is None and value is None for c in options):
            continue
        if not any(c is not None and c.accepts(value) for c in options):
            allowed = " or ".join(
                "None" if c is None else c.describe() for c in options
            )
            hint = next(
                (
                    did_you_mean(value, c.values)
                    for c in options
                    if isinstance(c, Options)
                ),
                "",
            )
            raise InvalidParameterError(
                f"{owner}: parameter {name!r} must be {allowed}; got {value!r}"
                + (f" ({hint})" if hint else "")
            )
