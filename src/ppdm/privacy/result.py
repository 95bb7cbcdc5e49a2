"""What a privacy model's check returns, and the JSON form of its figures.

:class:`PrivacyResult` is the :class:`~ppdm.privacy.base.CheckResult` of the
class and release models; the certificate writes it with :meth:`to_dict` and
reads it back with :meth:`from_dict`. Its cells and measures may be numpy or
pandas scalars, so this module, unlike the models' own descriptions
(:mod:`ppdm.privacy.base`), imports both: it is imported when a check runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["PrivacyResult", "json_value"]


@dataclass(frozen=True)
class PrivacyResult:
    """What a table achieves against one privacy model.

    Attributes
    ----------
    model : str
        The model as text, e.g. ``"5-anonymity"``.
    requirement : dict
        The model's :meth:`PrivacyModel.describe`.
    measure : str
        Name of the achieved value (``"k"``, ``"l"``, ``"t"``).
    achieved : float or int
        Value the table achieves (smallest k or l, largest t).
    passed : bool
    n_classes : int
    n_violating_classes : int
    n_violating_rows : int
    examples : tuple of dict
        Up to ten violating classes, worst first: their quasi-identifier
        values (as released), ``size`` and the class's own measure.
    kind : str
        The model's kind (``"class"`` or ``"release"``); not part of
        :meth:`to_dict`, where the requirement names the model.
    """

    model: str
    requirement: dict[str, Any]
    measure: str
    achieved: float | int
    passed: bool
    n_classes: int
    n_violating_classes: int
    n_violating_rows: int
    examples: tuple[dict[str, Any], ...] = ()
    kind: str = "class"

    @property
    def name(self) -> str:
        """The model's registry name."""
        return str(self.requirement.get("model", self.model))

    @property
    def figures(self) -> dict[str, Any]:
        return {self.measure: json_value(self.achieved)}

    @property
    def required(self) -> dict[str, Any]:
        """The model's thresholds and attribute (its description, unnamed)."""
        return {
            key: json_value(value)
            for key, value in self.requirement.items()
            if key != "model"
        }

    def summary(self, where: str = "") -> str:
        """One line: the model and what was achieved; when it fails, the
        violating classes (or, for a release model, the first case at fault).

        ``where`` follows the model's name on a failure (``" in t.csv"``).
        """
        figure = f"{self.measure}={_fmt(self.achieved)}"
        if self.passed:
            return f"{self.model} ({figure})"
        text = f"{self.model} not met{where}: achieved {figure}"
        if self.kind == "class":
            if self.n_violating_classes:
                n = self.n_violating_classes
                text += f"; {n} violating {'class' if n == 1 else 'classes'}"
                if self.examples:
                    text += ", e.g. " + _describe_class(self.examples[0], self.measure)
        elif self.examples:
            text += ", e.g. " + _describe_example(self.examples[0])
        return text

    @classmethod
    def from_dict(cls, d: dict[str, Any], kind: str = "class") -> PrivacyResult:
        """Inverse of :meth:`to_dict` (a certificate read back)."""
        return cls(
            model=d["model"],
            requirement=dict(d["requirement"]),
            measure=d["measure"],
            achieved=d["achieved"],
            passed=bool(d["passed"]),
            n_classes=int(d["n_classes"]),
            n_violating_classes=int(d["n_violating_classes"]),
            n_violating_rows=int(d["n_violating_rows"]),
            examples=tuple(dict(e) for e in d.get("examples") or ()),
            kind=kind,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form, in a fixed key order."""
        return {
            "model": self.model,
            "requirement": dict(self.requirement),
            "measure": self.measure,
            "achieved": json_value(self.achieved),
            "passed": bool(self.passed),
            "n_classes": int(self.n_classes),
            "n_violating_classes": int(self.n_violating_classes),
            "n_violating_rows": int(self.n_violating_rows),
            "examples": [dict(e) for e in self.examples],
        }


def json_value(value: Any) -> Any:
    """A JSON-safe, deterministic form of a scalar cell or measure."""
    if value is None:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        number = float(value)
        if number != number or number in (float("inf"), float("-inf")):
            return None
        return round(number, 12)
    if value is pd.NA or (not isinstance(value, str) and pd.isna(value)):
        return None
    return str(value)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _describe_class(example: dict[str, Any], measure: str) -> str:
    cells = {k: v for k, v in example.items() if k not in ("size", measure)}
    inside = ", ".join(f"{k}: {'' if v is None else v}" for k, v in cells.items())
    size = example["size"]
    return f"{{{inside}}} ({size} row{'s' if size != 1 else ''})"


def _describe_example(example: dict[str, Any]) -> str:
    """A case at fault in words: ``{key: value, ...}``."""
    inside = ", ".join(f"{k}: {'' if v is None else v}" for k, v in example.items())
    return f"{{{inside}}}"
