"""The privacy requirement of a release: quasi-identifiers plus privacy models.

The requirement is built once (from the release configuration, through
:data:`ppdm.privacy.PRIVACY_MODELS`) and is the one currency every reader
shares: the algorithms ask it whether candidate groups are acceptable
(:meth:`Requirement.accepts_groups`), the verifier checks the released files
with the same model objects, and the manifest, certificate, utility report and
audit entry all serialise :meth:`Requirement.to_dict`, i.e. the models'
``describe()``.

Building and serialising a requirement needs neither numpy nor pandas (a
configuration builds one); asking it about values (:meth:`Requirement.encode`,
:meth:`Requirement.accepts_groups`, :meth:`Requirement.check`) runs
:mod:`ppdm.privacy.evaluation`, imported then.

>>> req = Requirement.of(("age", "zip"), "dx", k=5, l=2)
>>> str(req)
'5-anonymity, distinct 2-diversity of dx over age, zip'
>>> Requirement.from_dict(req.to_dict()) == req
True
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ppdm.exceptions import InvalidParameterError
from ppdm.privacy.base import PrivacyModel

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from ppdm.privacy.evaluation import EncodedSensitive
    from ppdm.privacy.measures import ClassPartition
    from ppdm.privacy.result import PrivacyResult

__all__ = [
    "L_VARIANTS",
    "Requirement",
    "model_from_description",
    "requirement_models",
]

#: ``l_variant`` of a configuration -> registry name of the model.
L_VARIANTS: dict[str, str] = {
    "distinct": "distinct-l-diversity",
    "entropy": "entropy-l-diversity",
    "recursive": "recursive-cl-diversity",
}

DEFAULT_SUPPRESSION_MARKER = "*"


def _registry() -> Mapping[str, type[PrivacyModel]]:
    # The registry imports every model module; importing it here, not at the
    # top, lets model modules use this one without a cycle.
    from ppdm.privacy import PRIVACY_MODELS

    return PRIVACY_MODELS


def _model_params(cls: type[PrivacyModel]) -> list[str]:
    return [
        p.name
        for p in inspect.signature(cls).parameters.values()
        if p.name not in ("self",)
    ]


def model_from_description(description: Mapping[str, Any]) -> PrivacyModel:
    """Build a registered model from ``{"model": name, **parameters}``.

    Raises
    ------
    InvalidParameterError
        Unknown model name or parameters, or a parameter out of range; the
        message names the model and what it accepts.
    """
    if not isinstance(description, Mapping) or "model" not in description:
        raise InvalidParameterError(
            "a privacy model is a mapping with a 'model' key naming it; "
            f"got {description!r}"
        )
    registry = _registry()
    name = description["model"]
    if name not in registry:
        raise InvalidParameterError(
            f"unknown privacy model {name!r}; registered: {', '.join(registry)}"
        )
    cls = registry[name]
    allowed = _model_params(cls)
    unknown = sorted(set(description) - {"model", *allowed})
    if unknown:
        raise InvalidParameterError(
            f"privacy model {name!r}: unknown parameter(s) {unknown}; "
            f"allowed: {allowed}"
        )
    try:
        return cls.from_description(dict(description))
    except TypeError as err:
        raise InvalidParameterError(
            f"privacy model {name!r}: {err}; parameters: {allowed}"
        ) from None


def requirement_models(
    *,
    k: int,
    sensitive_attribute: str | None = None,
    l: float = 1,  # noqa: E741 - the literature's name
    l_variant: str = "distinct",
    c: float | None = None,
    t: float | None = None,
) -> tuple[PrivacyModel, ...]:
    """The models of the usual shorthand: k, then l-diversity and t-closeness.

    ``l = 1`` asks for no diversity, ``t = None`` for no closeness. Every
    model is made through the registry, from its description.
    """
    if l_variant not in L_VARIANTS:
        raise InvalidParameterError(
            f"l_variant must be one of {list(L_VARIANTS)}; got {l_variant!r}"
        )
    descriptions: list[dict[str, Any]] = [{"model": "k-anonymity", "k": k}]
    if sensitive_attribute is None and (l != 1 or t is not None):
        asked = f"l = {l}" if l != 1 else f"t = {t}"
        raise InvalidParameterError(
            f"{asked} needs a sensitive_attribute; none was given"
        )
    if l_variant == "recursive" and c is None and l != 1:
        raise InvalidParameterError("l_variant 'recursive' needs c (a number > 0)")
    if l != 1:
        description: dict[str, Any] = {
            "model": L_VARIANTS[l_variant],
            "attribute": sensitive_attribute,
            "l": l,
        }
        if l_variant == "entropy" and not isinstance(l, bool):
            description["l"] = float(l) if isinstance(l, int | float) else l
        if l_variant == "recursive":
            description["c"] = c
        descriptions.append(description)
    if t is not None:
        descriptions.append(
            {"model": "t-closeness", "attribute": sensitive_attribute, "t": t}
        )
    return tuple(model_from_description(d) for d in descriptions)


@dataclass(frozen=True)
class Requirement:
    """What every released table must satisfy.

    Parameters
    ----------
    quasi_identifiers : tuple of str
        Attributes an adversary may link on; the classes are formed over them.
    models : tuple of PrivacyModel
        Every model must accept every class.
    suppression_marker : str, default="*"
        The value of a suppressed cell (a value of its own in the classes).

    Examples
    --------
    >>> from ppdm.privacy import EntropyLDiversity, KAnonymity
    >>> req = Requirement(("zip",), (KAnonymity(2), EntropyLDiversity("dx", 2.0)))
    >>> req.k, req.minimal_class_size, req.sensitive_attributes
    (2, 2, ('dx',))
    """

    quasi_identifiers: tuple[str, ...]
    models: tuple[PrivacyModel, ...]
    suppression_marker: str = DEFAULT_SUPPRESSION_MARKER

    def __post_init__(self) -> None:
        if isinstance(self.quasi_identifiers, str):
            raise InvalidParameterError(
                "quasi_identifiers must be a sequence of column names, not a string; "
                f"got {self.quasi_identifiers!r}"
            )
        object.__setattr__(self, "quasi_identifiers", tuple(self.quasi_identifiers))
        object.__setattr__(self, "models", tuple(self.models))
        if not self.quasi_identifiers:
            raise InvalidParameterError(
                "quasi_identifiers must name at least one column"
            )
        if len(set(self.quasi_identifiers)) != len(self.quasi_identifiers):
            raise InvalidParameterError(
                f"quasi_identifiers lists a column twice: {list(self.quasi_identifiers)}"
            )
        if not self.models:
            raise InvalidParameterError(
                "a requirement needs at least one privacy model"
            )
        for model in self.models:
            if not isinstance(model, PrivacyModel):
                raise InvalidParameterError(
                    f"requirement models must be privacy models; got {model!r}"
                )
            attribute = model.sensitive_attribute
            if attribute is not None and attribute in self.quasi_identifiers:
                raise InvalidParameterError(
                    f"sensitive attribute {attribute!r} of {model} is also a "
                    "quasi-identifier; an attribute has one role"
                )
        names = [m.name for m in self.models]
        for name in set(names):
            same = [m for m in self.models if m.name == name]
            if len({m.sensitive_attribute for m in same}) != len(same):
                raise InvalidParameterError(
                    f"privacy model {name!r} is given twice for one attribute"
                )

    @classmethod
    def of(
        cls,
        quasi_identifiers: Sequence[str],
        sensitive_attribute: str | None = None,
        *,
        k: int = 1,
        l: float = 1,  # noqa: E741 - the literature's name
        l_variant: str = "distinct",
        c: float | None = None,
        t: float | None = None,
        extra: Iterable[PrivacyModel] = (),
        suppression_marker: str = DEFAULT_SUPPRESSION_MARKER,
    ) -> Requirement:
        """The requirement of the shorthand parameters (see :func:`requirement_models`)."""
        models = requirement_models(
            k=k,
            sensitive_attribute=sensitive_attribute,
            l=l,
            l_variant=l_variant,
            c=c,
            t=t,
        )
        return cls(tuple(quasi_identifiers), (*models, *extra), suppression_marker)

    # -- what the models need, for searches ---------------------------------
    @property
    def class_models(self) -> tuple[PrivacyModel, ...]:
        """The models that judge each released table's equivalence classes."""
        return tuple(m for m in self.models if m.kind == "class")

    @property
    def release_models(self) -> tuple[PrivacyModel, ...]:
        """The models that judge the released tables together (joins, containment)."""
        return tuple(m for m in self.models if m.kind == "release")

    @property
    def k(self) -> int:
        """The k of the k-anonymity model (1 when there is none)."""
        return max(
            (int(m.k) for m in self.models if m.name == "k-anonymity"), default=1
        )

    @property
    def minimal_class_size(self) -> int:
        """Smallest class every model can accept."""
        return max((m.minimal_class_size for m in self.class_models), default=1)

    @property
    def minimal_distinct_values(self) -> int:
        """Fewest distinct sensitive values (of any sensitive attribute) a class needs."""
        return max((m.minimal_distinct_values for m in self.class_models), default=1)

    def minimal_distinct_values_of(self, attribute: str) -> int:
        """Fewest distinct values of ``attribute`` a class needs (its models' bound)."""
        return max(
            (
                m.minimal_distinct_values
                for m in self.class_models
                if m.uses_sensitive_attribute and m.sensitive_attribute == attribute
            ),
            default=1,
        )

    @property
    def l(self) -> int:  # noqa: E743 - the literature's name
        """Alias of :attr:`minimal_distinct_values` (distinct l)."""
        return self.minimal_distinct_values

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        seen: list[str] = []
        for model in self.models:
            a = model.sensitive_attribute
            if model.uses_sensitive_attribute and a is not None and a not in seen:
                seen.append(a)
        return tuple(seen)

    @property
    def sensitive_attribute(self) -> str | None:
        """The first sensitive attribute, or None."""
        return next(iter(self.sensitive_attributes), None)

    @property
    def decided_by_bounds(self) -> bool:
        """True when class size and distinct values alone decide every model."""
        return all(m.decided_by_bounds for m in self.class_models)

    @property
    def monotonic_under_generalization(self) -> bool:
        return all(m.monotonic_under_generalization for m in self.class_models)

    @property
    def monotonic_under_suppression(self) -> bool:
        return all(m.monotonic_under_suppression for m in self.class_models)

    @property
    def model_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.models)

    # -- asking the models ---------------------------------------------------
    def encode(
        self, table: pd.DataFrame, weights: np.ndarray | None = None
    ) -> dict[str, EncodedSensitive]:
        """Code the sensitive attributes of ``table`` once, for :meth:`accepts_groups`.

        ``weights`` (int, one per row of ``table``) when the table is a
        frequency table: each row stands for that many rows, and the whole
        table's distribution (t-closeness's reference) is weighted.
        """
        from ppdm.privacy.evaluation import encode_sensitive

        return encode_sensitive(self, table, weights)

    def accepts(self, partition: ClassPartition) -> np.ndarray:
        """Which classes every model accepts."""
        from ppdm.privacy.evaluation import requirement_accepts

        return requirement_accepts(self, partition)

    def accepts_groups(
        self,
        ids: np.ndarray,
        n_groups: int,
        encoded: Mapping[str, EncodedSensitive],
        rows: np.ndarray | None = None,
        weights: np.ndarray | None = None,
    ) -> np.ndarray:
        """Which candidate groups every model accepts.

        Parameters
        ----------
        ids : numpy.ndarray of int
            Group of each considered row, ``0..n_groups-1``.
        n_groups : int
        encoded : mapping
            :meth:`encode` of the whole table (t-closeness compares with the
            whole table's distribution, not with the considered rows'); of a
            frequency table, encoded with its counts as weights.
        rows : numpy.ndarray of int, optional
            Positions in the table of the considered rows (default: all, in
            order).
        weights : numpy.ndarray of int, optional
            Rows each considered row stands for, one entry per entry of
            ``ids`` (a frequency table's counts, ``counts[rows]``); default 1.
            Every model then judges the rows described: k-anonymity the
            weighted class size, distinct l-diversity the values of positive
            weight, entropy and recursive (c, l)-diversity and t-closeness the
            weighted counts. With weights, the decisions equal those on the
            expanded rows.
        """
        from ppdm.privacy.evaluation import group_partition

        partition = group_partition(
            self, ids, n_groups, encoded, rows=rows, weights=weights
        )
        return self.accepts(partition)

    def rows_rejected_in_refinements(
        self,
        ids: np.ndarray,
        n_groups: int,
        encoded: Mapping[str, EncodedSensitive],
        weights: np.ndarray | None = None,
    ) -> float:
        """Rows some model rejects at every refinement of the groups (a lower bound).

        Each group counts the largest share any model's
        :meth:`~ppdm.privacy.base.PrivacyModel.rejected_in_refinements` gives
        it. Every node below a lattice node splits its classes, so the rows
        such a node suppresses are at least this many: above the suppression
        budget, it proves the whole down-set infeasible. Arguments as
        :meth:`accepts_groups`.
        """
        from ppdm.privacy.evaluation import group_partition, rows_rejected

        partition = group_partition(self, ids, n_groups, encoded, weights=weights)
        return rows_rejected(self, partition)

    def check(self, table: pd.DataFrame | ClassPartition) -> tuple[PrivacyResult, ...]:
        """Every class model's result on a released table (or its partition)."""
        from ppdm.privacy.evaluation import requirement_results

        return requirement_results(self, table)

    # -- serialisation -------------------------------------------------------
    def describe(self) -> list[dict[str, Any]]:
        return [m.describe() for m in self.models]

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form, in a fixed key order."""
        return {
            "quasi_identifiers": list(self.quasi_identifiers),
            "models": self.describe(),
            "suppression_marker": self.suppression_marker,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Requirement:
        """Inverse of :meth:`to_dict`; unknown keys are an error."""
        unknown = sorted(set(d) - {"quasi_identifiers", "models", "suppression_marker"})
        if unknown:
            raise InvalidParameterError(f"unknown requirement keys {unknown}")
        if "quasi_identifiers" not in d or "models" not in d:
            raise InvalidParameterError(
                "a requirement needs 'quasi_identifiers' and 'models'"
            )
        return cls(
            tuple(d["quasi_identifiers"]),
            tuple(model_from_description(m) for m in d["models"]),
            d.get("suppression_marker", DEFAULT_SUPPRESSION_MARKER),
        )

    def __str__(self) -> str:
        models = ", ".join(str(m) for m in self.models)
        return f"{models} over {', '.join(self.quasi_identifiers)}"
