"""The contract every anonymization algorithm follows.

A new algorithm is one module with one :class:`Anonymizer` subclass plus one
entry in :data:`ppdm.algorithm_registry.DECLARED`, which states its summary,
parameters and capabilities once: the class reads them from there.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from ppdm.algorithm_registry import (
    CAPABILITIES,
    DECLARED,
    AlgorithmEntry,
    capabilities_of,
    requirement_refusal,
)
from ppdm.exceptions import (
    InfeasibleConstraintError,
    InvalidParameterError,
    UnsupportedRequirementError,
)
from ppdm.model import AnonymizationSpec, Release
from ppdm.params import validate_params
from ppdm.scale.recoding import Recoding

if TYPE_CHECKING:
    from ppdm.privacy.differential import PrivacyCost
    from ppdm.scale.frequency import FrequencyTable

__all__ = ["Anonymizer", "RELEASE_KINDS", "NUMERIC_INPUTS", "validate_spec"]

#: What an algorithm releases: one table, several projections (each with the
#: target), or one table on a subset of the columns.
RELEASE_KINDS = ("table", "projections", "columns")
#: How an algorithm wants numeric quasi-identifiers: binned by the pipeline's
#: discretize step, raw (it generalizes them along hierarchies or splits them
#: itself), or either.
NUMERIC_INPUTS = ("binned", "raw", "either")


class Anonymizer(ABC):
    """Base class of the algorithms.

    Subclasses take their parameters as keyword-only ``__init__`` arguments
    and store them unchanged (scikit-learn style; a keyword-only dataclass
    writes that ``__init__``); all checking happens in :meth:`anonymize`,
    driven by ``_parameter_constraints``.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    #: Registry names (:data:`ppdm.privacy.PRIVACY_MODELS`) of the privacy
    #: models the algorithm enforces; any other model is refused before a run.
    supported_models: ClassVar[frozenset[str]] = frozenset({"k-anonymity"})
    #: True when the algorithm needs a target (class) attribute.
    needs_target: ClassVar[bool] = False
    #: True for algorithms that generalize along ``spec.hierarchies``: they need
    #: the raw values the hierarchies list, so the pipeline does not bin them.
    uses_hierarchies: ClassVar[bool] = False
    #: One of :data:`NUMERIC_INPUTS`.
    numeric_input: ClassVar[str] = "either"
    #: One of :data:`RELEASE_KINDS`.
    releases: ClassVar[str] = "table"
    #: True when the release is a function of the frequency table of
    #: (quasi-identifiers, sensitive attributes, target) alone, so the
    #: algorithm runs out of core: :meth:`recode` on the combined frequency
    #: table of the partitions, then the recoding applied to each partition.
    #: Algorithms that need the rows (a tree on records, a wrapper's
    #: classifier) leave it False and the Dask engine refuses them.
    frequency_table: ClassVar[bool] = False
    _parameter_constraints: ClassVar[dict[str, Any]] = {}
    #: The registry entry of a shipped algorithm (None for one registered at
    #: run time, which states the attributes above itself).
    _entry: ClassVar[AlgorithmEntry | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        entry = DECLARED.get(cls.__dict__.get("name", ""))
        if entry is None or entry.location != f"{cls.__module__}:{cls.__qualname__}":
            return
        # The registry states each fact once; the class reads it.
        cls._entry = entry
        cls.summary = entry.summary
        for name in CAPABILITIES:
            setattr(cls, name, getattr(entry, name))
        cls._parameter_constraints = dict(entry.constraints)

    def privacy_cost(self, n_rows: int) -> PrivacyCost | None:
        """The (epsilon, delta) a run on ``n_rows`` rows spends, or None.

        None for the syntactic algorithms: they spend no differential privacy
        budget and carry no differential privacy guarantee. A differentially
        private algorithm returns the cost of one release, from its parameters
        (delta's default may depend on the number of rows).
        """
        return None

    @classmethod
    def capabilities(cls) -> dict[str, Any]:
        """What the algorithm supports, needs and releases (JSON-safe)."""
        return capabilities_of(cls, cls._param_names())

    def check_params(self) -> None:
        """Raise :class:`InvalidParameterError` for a parameter out of range."""
        params = self.get_params()
        validate_params(self.name, params, self._parameter_constraints)
        if self._entry is not None and self._entry.parameter_check is not None:
            self._entry.parameter_check(self.name, params)

    def adapt_requirement(self, requirement: Any, *, target: str | None) -> Any:
        """The requirement this algorithm's releases are checked against.

        The configuration calls it once, at load, on the configured algorithm
        (its parameters may decide, as fs-anonymity's ``criterion``), before
        :meth:`check_requirement`; the manifest, certificate and verifier then
        use what it returns. The default is ``requirement`` unchanged. An
        algorithm whose release shape needs more (projections that can be
        joined on the target) adds the release models that check it; one
        whose guarantee is a different notion of k (k-anonymity by
        containment) states it here instead of claiming plain k-anonymity.
        A shipped algorithm states it in its registry entry.
        """
        if self._entry is None:
            return requirement
        return self._entry.adapt_requirement(
            requirement, target=target, params=self.get_params()
        )

    @classmethod
    def check_requirement(
        cls,
        requirement: Any,
        *,
        target: str | None,
        hierarchy_attributes: Any = None,
    ) -> None:
        """Refuse a requirement or set-up the algorithm does not support.

        Cheap and data-free: the configuration calls it before any step runs.

        Parameters
        ----------
        requirement : Requirement
        target : str or None
        hierarchy_attributes : collection of str, optional
            Attributes with a generalization hierarchy; checked when the
            algorithm generalizes along hierarchies and it is given.

        Raises
        ------
        UnsupportedRequirementError
            Naming the algorithm, what is unsupported and what is supported.
        """
        refusal = requirement_refusal if cls._entry is None else cls._entry.refusal
        refusal(
            cls,
            requirement,
            target=target,
            hierarchy_attributes=hierarchy_attributes,
        )

    def training_views(self, release: Release) -> list[pd.DataFrame]:
        """The released tables an analyst trains on, each with the target.

        The utility report trains one classifier per view and, with several
        views, combines their class probabilities by the naive Bayes rule
        (the DMPD combiner). One-table algorithms have one view.
        """
        return [release.tables[name] for name in sorted(release.tables)]

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
        self._check_inputs(table, spec, rng)
        return self._anonymize(table, spec, rng)

    def recode(
        self,
        frequencies: FrequencyTable,
        spec: AnonymizationSpec,
        rng: np.random.Generator,
    ) -> Recoding:
        """The recoding of the table ``frequencies`` describes (out-of-core path).

        ``recode(FrequencyTable.of(table, ...), spec, rng).apply(table)`` holds
        the same rows as ``anonymize(table, spec, rng).table``, in the input
        order; the frequency table's columns must include the
        quasi-identifiers, the sensitive attributes and the target.
        """
        if not self.frequency_table:
            raise UnsupportedRequirementError(
                f"{self.name} needs the table's rows (it does not run on a frequency "
                "table); use the pandas engine"
            )
        self._check_inputs(frequencies.keys, spec, rng, n_rows=frequencies.n_rows)
        return self._recode(frequencies, spec, rng)

    def _check_inputs(
        self,
        table: pd.DataFrame,
        spec: AnonymizationSpec,
        rng: np.random.Generator,
        *,
        n_rows: int | None = None,
    ) -> None:
        """The checks :meth:`anonymize` and :meth:`recode` run before any work.

        ``table`` and ``n_rows`` are as in :func:`validate_spec`.
        """
        self.check_params()
        type(self).check_requirement(spec.requirement, target=spec.target)
        validate_spec(table, spec, n_rows=n_rows)
        if not isinstance(rng, np.random.Generator):
            raise InvalidParameterError(
                f"{self.name}: rng must be a numpy.random.Generator made from the "
                f"release seed; got {type(rng).__name__}"
            )

    def _recode(
        self,
        frequencies: FrequencyTable,
        spec: AnonymizationSpec,
        rng: np.random.Generator,
    ) -> Recoding:
        """Algorithm body of :meth:`recode`; inputs are already validated."""
        raise NotImplementedError(
            f"{self.name} declares frequency_table but no _recode"
        )

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
        return self._release_tables({"release": released}, spec, table, evidence)

    def _release_tables(
        self,
        tables: dict[str, pd.DataFrame],
        spec: AnonymizationSpec,
        table: pd.DataFrame,
        evidence: dict[str, Any],
    ) -> Release:
        """The release of ``table`` made by this algorithm, as ``tables``."""
        return Release(
            tables=tables,
            algorithm=self.name,
            params=self.get_params(),
            evidence=evidence,
            suppression_marker=spec.suppression_marker,
            records_in=len(table),
        )

    def _recoding(
        self,
        frequencies: FrequencyTable,
        spec: AnonymizationSpec,
        released: tuple[pd.DataFrame, pd.DataFrame, np.ndarray],
        evidence: dict[str, Any],
    ) -> Recoding:
        """The recoding made by this algorithm of the table ``frequencies`` describes.

        ``released`` is ``(original, released, kept)``: each distinct
        quasi-identifier combination, what it becomes, and whether its rows stay.
        """
        original, values, kept = released
        return Recoding(
            quasi_identifiers=tuple(spec.quasi_identifiers),
            original=original,
            released=values,
            kept=kept,
            algorithm=self.name,
            records_in=frequencies.n_rows,
            evidence=evidence,
            params=self.get_params(),
        )

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


def validate_spec(
    table: pd.DataFrame, spec: AnonymizationSpec, *, n_rows: int | None = None
) -> None:
    """Check a spec against a table before any work, naming what is wrong.

    ``n_rows`` is the number of rows ``table`` stands for when it is the key
    columns of a frequency table (default: its length).
    """
    n_rows = len(table) if n_rows is None else n_rows
    requirement = spec.requirement
    missing = [c for c in spec.quasi_identifiers if c not in table.columns]
    if missing:
        raise InvalidParameterError(
            f"quasi_identifiers {missing} are not columns of the table "
            f"(columns: {list(table.columns)})"
        )
    for attribute in requirement.sensitive_attributes:
        if attribute not in table.columns:
            raise InvalidParameterError(
                f"sensitive attribute {attribute!r} is not a column of the table"
            )
    if spec.target is not None and spec.target not in table.columns:
        raise InvalidParameterError(
            f"target {spec.target!r} is not a column of the table"
        )
    if spec.target is not None and spec.target in spec.quasi_identifiers:
        raise InvalidParameterError(
            f"target {spec.target!r} is also a quasi-identifier; an attribute has "
            "one role"
        )
    if not 0.0 <= spec.suppression_limit <= 1.0:
        raise InvalidParameterError(
            f"suppression_limit must be in [0, 1]; got {spec.suppression_limit}"
        )
    needed = requirement.minimal_class_size
    if needed > n_rows:
        raise InfeasibleConstraintError(
            f"{requirement} needs classes of at least {needed} rows; the table has "
            f"{n_rows}"
        )
    for attribute in requirement.sensitive_attributes:
        present = table[attribute].nunique(dropna=False)
        needed = requirement.minimal_distinct_values_of(attribute)
        if needed > present:
            raise InfeasibleConstraintError(
                f"{requirement} needs {needed} distinct values of {attribute!r} per "
                f"class; the table has {present}"
            )
