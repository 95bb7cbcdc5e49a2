"""What the results of the series checks share: counted leaks the owner may accept.

A series check (differencing, same rows, composition) counts the cases that
leak against earlier releases. Its result is a frozen dataclass of counts
whose JSON entry in the certificate holds every field as is, plus its verdict
(``passed``, ``accepted_risk``): this base writes and reads that entry once,
and states the figures, what is required (no leak) and the verdict for all.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

from ppdm.privacy.result import json_value

__all__ = ["ACCEPTED_NOTE", "SeriesResult"]

#: Said of a leak released under ``republication: {policy: off}``.
ACCEPTED_NOTE = " - accepted by the data owner (republication policy off)"


class SeriesResult:
    """Mixin of the series checks' result dataclasses.

    A subclass is a frozen dataclass with a field ``accepted`` and names, in
    :attr:`figure_names`, the counts it reports and, in :attr:`leak_counts`,
    those that must be 0.
    """

    kind: ClassVar[str] = "series"
    #: The counts shown as the check's figures.
    figure_names: ClassVar[tuple[str, ...]]
    #: The counts of cases at fault: the release leaks when one is above 0.
    leak_counts: ClassVar[tuple[str, ...]]

    accepted: bool

    @property
    def leaks(self) -> bool:
        return any(getattr(self, name) > 0 for name in self.leak_counts)

    @property
    def passed(self) -> bool:
        """No leak, or one the data owner accepted."""
        return not self.leaks or self.accepted

    @property
    def figures(self) -> dict[str, Any]:
        return {name: int(getattr(self, name)) for name in self.figure_names}

    @property
    def required(self) -> dict[str, Any]:
        """No case at fault."""
        return dict.fromkeys(self.leak_counts, 0)

    def describe(self) -> str:
        raise NotImplementedError

    def summary(self) -> str:
        return self.describe()

    def accepted_note(self) -> str:
        """What the description adds about a leak the data owner accepted."""
        return ACCEPTED_NOTE if self.leaks and self.accepted else ""

    def to_dict(self) -> dict[str, Any]:
        """Every field (tuples as lists), then the verdict; ``accepted`` is
        recorded as ``accepted_risk``: accepted, and a leak to accept."""
        content: dict[str, Any] = {}
        for item in dataclasses.fields(self):  # type: ignore[arg-type]
            if item.name == "accepted":
                continue
            value = getattr(self, item.name)
            if isinstance(value, tuple):
                value = [dict(v) if isinstance(v, Mapping) else v for v in value]
            else:  # a count computed by numpy is written as a plain int
                value = json_value(value)
            content[item.name] = value
        content["passed"] = bool(self.passed)
        content["accepted_risk"] = bool(self.accepted and self.leaks)
        return content

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Any:
        """Inverse of :meth:`to_dict` (a certificate read back); a count an
        older certificate lacks takes its default."""
        values: dict[str, Any] = {"accepted": bool(d["accepted_risk"])}
        for item in dataclasses.fields(cls):  # type: ignore[arg-type]
            has_default = (
                item.default is not dataclasses.MISSING
                or item.default_factory is not dataclasses.MISSING
            )
            if item.name == "accepted" or (item.name not in d and has_default):
                continue
            value = d[item.name]
            if str(item.type).startswith("tuple"):
                value = tuple(
                    dict(v) if isinstance(v, Mapping) else v for v in value or ()
                )
            elif str(item.type) == "int":
                value = int(value)
            values[item.name] = value
        return cls(**values)
