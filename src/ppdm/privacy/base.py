"""The contract every privacy check follows, after ARX's ``PrivacyCriterion``.

A privacy check is a small immutable object holding its thresholds. It has a
registry ``name``, a ``kind`` (:data:`CHECK_KINDS`) and answers one question,
``check(...)``, from the released values alone, with results that follow
:class:`CheckResult`: each carries its own achieved figures, whether it
holds, a one-line summary and examples, so the certificate, ``ppdm verify``,
the run log and the UI show any check without knowing which it is.

A privacy model (:class:`PrivacyModel`) is the kind a configuration asks for
under ``models:``; it also describes itself for the verification certificate.

This module holds what a configuration needs of a model (its name,
parameters, their checks, its description and the searches' bounds) and
imports neither numpy nor pandas: validating a configuration builds the
models. What judges released values (:meth:`PrivacyModel.check` and the
refinement bounds) lives in :mod:`ppdm.privacy.evaluation`, imported when a
check runs; its results are :class:`ppdm.privacy.result.PrivacyResult`.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from ppdm.exceptions import InvalidParameterError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from ppdm.privacy.measures import ClassPartition
    from ppdm.privacy.result import PrivacyResult

__all__ = [
    "CHECK_KINDS",
    "CheckResult",
    "KParameter",
    "PrivacyCheck",
    "PrivacyModel",
]

#: What a registered check judges: ``"class"``, the equivalence classes of
#: each released table; ``"release"``, the released tables together;
#: ``"series"``, a release against the earlier releases of its dataset.
CHECK_KINDS = ("class", "release", "series")

#: Violating classes listed in a result (the worst ones first).
MAX_EXAMPLES = 10

# Float measures (entropy l, EMD) are compared with this slack so that a
# class exactly at the threshold (e.g. two equally frequent values and l=2,
# where exp(ln 2) may round below 2) is not failed by rounding.
TOLERANCE = 1e-9


@runtime_checkable
class CheckResult(Protocol):
    """What every registered privacy check returns, whatever its kind.

    ``name`` and ``kind`` are the registered check's; ``figures`` what the
    release achieved (by measure name, JSON-safe); ``required`` what the
    check asks of the release, in the same form; ``summary()`` one line in
    words, stating the figures and, when it fails, what is wrong;
    ``examples`` up to ten cases at fault (classes, groups, tables).
    """

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def passed(self) -> bool: ...

    @property
    def figures(self) -> dict[str, Any]: ...

    @property
    def required(self) -> dict[str, Any]: ...

    @property
    def examples(self) -> tuple[dict[str, Any], ...]: ...

    def summary(self) -> str: ...


class PrivacyCheck(ABC):
    """Base class of every registered privacy check.

    Class attributes
    ----------------
    name : str
        Registry key in :data:`ppdm.privacy.PRIVACY_CHECKS`.
    kind : str
        One of :data:`CHECK_KINDS`.
    """

    name: ClassVar[str]
    kind: ClassVar[str]

    @abstractmethod
    def check(self, *args: Any, **kwargs: Any) -> Any:
        """Judge a release: a :class:`CheckResult`, or one per part checked."""


class KParameter:
    """Mixin of the models whose one parameter is ``k``, an integer >= 1
    (k-anonymity, by containment, set and partition anonymity): its check
    and description, written once."""

    name: ClassVar[str]
    k: int

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, numbers.Integral):
            raise InvalidParameterError(
                f"{self.name}: k must be an integer >= 1; got {self.k!r}"
            )
        if self.k < 1:
            raise InvalidParameterError(f"{self.name}: k must be >= 1; got {self.k}")

    def describe(self) -> dict[str, Any]:
        return {"model": self.name, "k": int(self.k)}


class PrivacyModel(PrivacyCheck):
    """Base class of the privacy models (immutable dataclasses).

    Subclasses define the per-class measure and its threshold; the shared
    :meth:`check` counts the violating classes and picks examples.

    Class attributes
    ----------------
    name : str
        Registry key in :data:`ppdm.privacy.PRIVACY_MODELS`.
    measure : str
        Name of the achieved value in results and certificates.
    monotonic_under_generalization : bool
        Whether generalizing a table that satisfies the model (merging classes)
        keeps it satisfied; lattice searches may prune on it.
    monotonic_under_suppression : bool
        Whether removing the records of violating classes can only repair the
        table (as in ARX's ``isMonotonicWithSuppression``).
    """

    name: ClassVar[str]
    measure: ClassVar[str]
    monotonic_under_generalization: ClassVar[bool] = True
    monotonic_under_suppression: ClassVar[bool] = False
    #: Whether the model reads a sensitive attribute.
    uses_sensitive_attribute: ClassVar[bool] = True
    #: What the model judges: ``"class"``, the equivalence classes of each
    #: released table (every model here), or ``"release"``, the released
    #: tables together (:class:`ppdm.privacy.release_model.ReleaseModel`).
    kind: ClassVar[str] = "class"

    @property
    def sensitive_attribute(self) -> str | None:
        return getattr(self, "attribute", None)

    @property
    def minimal_class_size(self) -> int:
        """Smallest class that can satisfy the model (ARX's pruning bound)."""
        return 1

    @property
    def minimal_distinct_values(self) -> int:
        """Fewest distinct sensitive values a class needs to satisfy the model.

        A necessary condition searches can test cheaply (a bit set of the
        values present) before asking :meth:`accepts`.
        """
        return 1

    #: True when the two bounds above are the model itself, so a search that
    #: enforces them needs no further :meth:`accepts` call (k-anonymity,
    #: distinct l-diversity).
    decided_by_bounds: ClassVar[bool] = False

    @classmethod
    def from_description(cls, description: dict[str, Any]) -> PrivacyModel:
        """Rebuild a model from its :meth:`describe` (inverse of it)."""
        params = {key: value for key, value in description.items() if key != "model"}
        return cls(**params)

    def accepts(self, partition: ClassPartition) -> np.ndarray:
        """Which classes of ``partition`` satisfy the model (one bool each)."""
        return self.class_passes(self.per_class(partition))

    def rejected_in_refinements(self, partition: ClassPartition) -> np.ndarray:
        """Per class, a share of its rows the model rejects however the class is split.

        Every more specific generalization splits each class into subclasses;
        this is a lower bound, valid for every such split, on the share of a
        class's rows that fall in subclasses the model rejects. A class below
        :attr:`minimal_class_size`, or with fewer distinct sensitive values
        than :attr:`minimal_distinct_values`, has every subclass fail too
        (share 1). Models whose measure is concave or convex in a class's
        distribution bound the share of the other failing classes (entropy
        l-diversity, t-closeness). A lattice search prunes below a node on
        these bounds whether or not the model is monotone.
        """
        from ppdm.privacy.evaluation import rejected_by_bounds

        return rejected_by_bounds(self, partition)

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """Name and thresholds, for the certificate (ARX's ``render()``)."""

    @abstractmethod
    def per_class(self, partition: ClassPartition) -> np.ndarray:
        """The model's measure for every class."""

    @abstractmethod
    def class_passes(self, values: np.ndarray) -> np.ndarray:
        """Which classes meet the threshold, given :meth:`per_class`."""

    #: True when a larger per-class value is better (k, l); False for t.
    higher_is_better: ClassVar[bool] = True

    def check(
        self,
        table: pd.DataFrame | ClassPartition,
        quasi_identifiers: Sequence[str],
    ) -> PrivacyResult:
        """Check the model on a released table.

        Parameters
        ----------
        table : pandas.DataFrame or ClassPartition
            The released values (suppressed cells and missing values are
            values of their own), or its partition over
            ``quasi_identifiers`` when several models share it.
        quasi_identifiers : sequence of str

        Returns
        -------
        PrivacyResult
        """
        from ppdm.privacy.evaluation import model_result

        return model_result(self, table, quasi_identifiers)
