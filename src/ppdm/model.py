"""The data model shared by algorithms, the verifier and the pipeline.

Attribute kinds are read from pandas dtypes, so no separate type map travels
with a table:

- numeric dtype (int/float): a *numeric* attribute, ordered and continuous;
- ordered ``pandas.Categorical`` (e.g. the intervals produced by
  :mod:`ppdm.discretize`): an *ordinal* attribute, ordered categories;
- anything else (strings, unordered categoricals): a *nominal* attribute.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import pandas as pd

__all__ = [
    "AttributeKind",
    "attribute_kind",
    "AnonymizationSpec",
    "Release",
    "SUPPRESSED",
]

#: The value a suppressed cell takes in every released table.
SUPPRESSED = "*"


class AttributeKind(StrEnum):
    """How an attribute's values may be compared and generalized."""

    NUMERIC = "numeric"
    ORDINAL = "ordinal"
    NOMINAL = "nominal"


def attribute_kind(column: pd.Series) -> AttributeKind:
    """Return the kind of a column from its dtype (see module docstring)."""
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return AttributeKind.ORDINAL if dtype.ordered else AttributeKind.NOMINAL
    if pd.api.types.is_bool_dtype(dtype):
        return AttributeKind.NOMINAL
    if pd.api.types.is_numeric_dtype(dtype):
        return AttributeKind.NUMERIC
    return AttributeKind.NOMINAL


@dataclass(frozen=True)
class AnonymizationSpec:
    """What a release must satisfy, in the project's one vocabulary.

    Parameters
    ----------
    quasi_identifiers : tuple of str
        Attributes an adversary may link on.
    sensitive_attribute : str or None
        Attribute whose values must be diverse within each class (l-diversity).
    target : str or None
        Class attribute the analysts will predict; never altered.
    k : int
        Minimum size of every equivalence class over ``quasi_identifiers``.
    l : int, default=1
        Minimum number of distinct ``sensitive_attribute`` values per class.
    suppression_limit : float, default=0.0
        Fraction of rows an algorithm may drop or fully suppress.
    suppression_marker : str, default="*"
        Value written in place of a suppressed cell.
    hierarchies : mapping of str to Hierarchy, optional
        Generalization hierarchies of the dataset, by attribute, for the
        algorithms that generalize along them.
    """

    quasi_identifiers: tuple[str, ...]
    sensitive_attribute: str | None
    target: str | None
    k: int
    l: int = 1  # noqa: E741 - the literature's name
    suppression_limit: float = 0.0
    suppression_marker: str = SUPPRESSED
    hierarchies: Mapping[str, Any] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "quasi_identifiers", tuple(self.quasi_identifiers))


@dataclass(frozen=True)
class Release:
    """A release candidate: the tables to publish and the algorithm's evidence.

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        Name -> released table. One table (``"release"``) for most algorithms;
        several projections for feature-set partitioning. Suppressed cells
        hold ``suppression_marker``.
    algorithm : str
        Registry name of the algorithm that made it.
    params : mapping
        The algorithm's parameters as given.
    evidence : mapping
        JSON-serialisable record of how the release was made (tree,
        partitioning, Pareto front, ...). Never read by the verifier.
    suppression_marker : str, default="*"
    records_in : int, default=0
        Rows of the input table.
    """

    tables: Mapping[str, pd.DataFrame]
    algorithm: str
    params: Mapping[str, Any] = field(default_factory=dict)
    evidence: Mapping[str, Any] = field(default_factory=dict)
    suppression_marker: str = SUPPRESSED
    records_in: int = 0

    @property
    def table(self) -> pd.DataFrame:
        """The single released table; raises when the release has several."""
        if len(self.tables) != 1:
            raise ValueError(
                f"release has {len(self.tables)} tables ({sorted(self.tables)}); "
                "use .tables"
            )
        return next(iter(self.tables.values()))
