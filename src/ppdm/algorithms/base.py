"""The contract every anonymization algorithm follows.

A new algorithm is one module with one :class:`Anonymizer` subclass plus one
line in :data:`ppdm.algorithms.ALGORITHMS`.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.model import AnonymizationSpec, Release
from ppdm.params import validate_params

__all__ = ["Anonymizer", "validate_spec"]


class Anonymizer(ABC):
    """Base class of the algorithms.

    Subclasses take their parameters as keyword-only ``__init__`` arguments
    and store them unchanged (scikit-learn style); all checking happens in
    :meth:`anonymize`, driven by ``_parameter_constraints``.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    #: True for algorithms that generalize along ``spec.hierarchies``: they need
    #: the raw values the hierarchies list, so the pipeline does not bin them.
    uses_hierarchies: ClassVar[bool] = False
    _parameter_constraints: ClassVar[dict[str, Any]] = {}

    @classmethod
    def _param_names(cls) -> list[str]:
        signature = inspect.signature(cls.__init__)
        return [
            p.name
            for p in signature.parameters.values()
            if p.name != "self" and p.kind == p.KEYWORD_ONLY
        ]

    def get_params(self) -> dict[str, Any]:
        """The constructor parameters, as given."""
        return {name: getattr(self, name) for name in self._param_names()}

    def anonymize(
        self, table: pd.DataFrame, spec: AnonymizationSpec, rng: np.random.Generator
    ) -> Release:
        """Return a release of ``table`` meeting ``spec``; never mutate ``table``.

        Raises
        ------
        InvalidParameterError
            A parameter or the spec is out of range.
        InfeasibleConstraintError
            The requirement cannot be met on this table.
        """
        validate_params(self.name, self.get_params(), self._parameter_constraints)
        validate_spec(table, spec)
        if not isinstance(rng, np.random.Generator):
            raise InvalidParameterError(
                f"{self.name}: rng must be a numpy.random.Generator made from the "
                f"release seed; got {type(rng).__name__}"
            )
        return self._anonymize(table, spec, rng)

    @abstractmethod
    def _anonymize(
        self, table: pd.DataFrame, spec: AnonymizationSpec, rng: np.random.Generator
    ) -> Release:
        """Algorithm body; inputs are already validated."""

    def _release(
        self,
        released: pd.DataFrame,
        spec: AnonymizationSpec,
        table: pd.DataFrame,
        evidence: dict[str, Any],
    ) -> Release:
        """The one-table release of ``table`` made by this algorithm."""
        return Release(
            tables={"release": released},
            algorithm=self.name,
            params=self.get_params(),
            evidence=evidence,
            suppression_marker=spec.suppression_marker,
            records_in=len(table),
        )

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


def validate_spec(table: pd.DataFrame, spec: AnonymizationSpec) -> None:
    """Check a spec against a table before any work, naming what is wrong."""
    n_rows = len(table)
    missing = [c for c in spec.quasi_identifiers if c not in table.columns]
    if missing:
        raise InvalidParameterError(
            f"quasi_identifiers {missing} are not columns of the table "
            f"(columns: {list(table.columns)})"
        )
    if not spec.quasi_identifiers:
        raise InvalidParameterError("quasi_identifiers must name at least one column")
    for role in ("sensitive_attribute", "target"):
        column = getattr(spec, role)
        if column is not None and column not in table.columns:
            raise InvalidParameterError(
                f"{role} {column!r} is not a column of the table"
            )
    if spec.sensitive_attribute in spec.quasi_identifiers:
        raise InvalidParameterError(
            f"sensitive_attribute {spec.sensitive_attribute!r} is also a "
            "quasi-identifier; an attribute has one role"
        )
    if isinstance(spec.k, bool) or not isinstance(spec.k, (int, np.integer)):
        raise InvalidParameterError(f"k must be an integer; got {spec.k!r}")
    if not 1 <= spec.k <= max(n_rows, 1):
        raise InvalidParameterError(f"k must be in [1, n_rows={n_rows}]; got {spec.k}")
    if spec.l < 1:
        raise InvalidParameterError(f"l must be >= 1; got {spec.l}")
    if spec.l > 1 and spec.sensitive_attribute is None:
        raise InvalidParameterError(
            f"l={spec.l} needs a sensitive_attribute; none was given"
        )
    if not 0.0 <= spec.suppression_limit <= 1.0:
        raise InvalidParameterError(
            f"suppression_limit must be in [0, 1]; got {spec.suppression_limit}"
        )
