"""The data model shared by algorithms, the verifier and the pipeline.

Attribute kinds are read from pandas dtypes, so no separate type map travels
with a table:

- numeric dtype (int/float): a *numeric* attribute, ordered and continuous;
- ordered ``pandas.Categorical`` (e.g. the intervals produced by
  :mod:`ppdm.prepare.discretize`): an *ordinal* attribute, ordered categories;
- anything else (strings, unordered categoricals): a *nominal* attribute.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import pandas as pd

from ppdm.values import SUPPRESSED

if TYPE_CHECKING:  # the privacy package reads SUPPRESSED from here
    from ppdm.privacy.base import PrivacyModel
    from ppdm.privacy.requirement import Requirement

__all__ = [
    "AttributeKind",
    "attribute_kind",
    "AnonymizationSpec",
    "Release",
    "SUPPRESSED",
]


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
    requirement : Requirement
        Quasi-identifiers and privacy models (:mod:`ppdm.privacy.requirement`);
        algorithms ask its models whether a group may be released.
    target : str or None
        Class attribute the analysts will predict; never altered.
    suppression_limit : float, default=0.0
        Fraction of rows an algorithm may drop or fully suppress.
    hierarchies : mapping of str to Hierarchy, optional
        Generalization hierarchies of the dataset, by attribute, for the
        algorithms that generalize along them.

    Examples
    --------
    >>> spec = AnonymizationSpec.of(("age", "zip"), "dx", "income", k=5, l=2)
    >>> spec.k, spec.l, spec.sensitive_attribute, spec.requirement.model_names
    (5, 2, 'dx', ('k-anonymity', 'distinct-l-diversity'))
    """

    requirement: Requirement
    target: str | None
    suppression_limit: float = 0.0
    hierarchies: Mapping[str, Any] | None = field(default=None, compare=False)

    @classmethod
    def of(
        cls,
        quasi_identifiers: Sequence[str],
        sensitive_attribute: str | None,
        target: str | None,
        k: int = 1,
        l: float = 1,  # noqa: E741 - the literature's name
        suppression_limit: float = 0.0,
        suppression_marker: str = SUPPRESSED,
        hierarchies: Mapping[str, Any] | None = None,
        *,
        l_variant: str = "distinct",
        c: float | None = None,
        t: float | None = None,
    ) -> AnonymizationSpec:
        """A spec from the shorthand parameters (k, l-diversity, t-closeness)."""
        from ppdm.privacy.requirement import Requirement

        requirement = Requirement.of(
            quasi_identifiers,
            sensitive_attribute,
            k=k,
            l=l,
            l_variant=l_variant,
            c=c,
            t=t,
            suppression_marker=suppression_marker,
        )
        return cls(requirement, target, suppression_limit, hierarchies)

    @property
    def quasi_identifiers(self) -> tuple[str, ...]:
        return self.requirement.quasi_identifiers

    @property
    def models(self) -> tuple[PrivacyModel, ...]:
        return self.requirement.models

    @property
    def sensitive_attribute(self) -> str | None:
        return self.requirement.sensitive_attribute

    @property
    def k(self) -> int:
        """The k-anonymity model's k (1 without one)."""
        return self.requirement.k

    @property
    def l(self) -> int:  # noqa: E743 - the literature's name
        """Fewest distinct sensitive values a class needs (a bound of the models)."""
        return self.requirement.minimal_distinct_values

    @property
    def suppression_marker(self) -> str:
        return self.requirement.suppression_marker


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
