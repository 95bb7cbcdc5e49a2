"""The contract every privacy check follows, after ARX's ``PrivacyCriterion``.

A privacy check is a small immutable object holding its thresholds. It has a
registry ``name``, a ``kind`` (:data:`CHECK_KINDS`) and answers one question,
``check(...)``, from the released values alone, with results that follow
:class:`CheckResult`: each carries its own achieved figures, whether it
holds, a one-line summary and examples, so the certificate, ``ppdm verify``,
the run log and the UI show any check without knowing which it is.

A privacy model (:class:`PrivacyModel`) is the kind a configuration asks for
under ``models:``; it also describes itself for the verification certificate.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from ppdm._lazy import pandas as pd
from ppdm.exceptions import InvalidParameterError
from ppdm.privacy.measures import ClassPartition

__all__ = [
    "CHECK_KINDS",
    "CheckResult",
    "KParameter",
    "PrivacyCheck",
    "PrivacyModel",
    "PrivacyResult",
    "json_value",
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
        fails = np.asarray(partition.sizes) < self.minimal_class_size
        attribute = self.sensitive_attribute
        if (
            self.uses_sensitive_attribute
            and attribute
            and self.minimal_distinct_values > 1
        ):
            distinct = partition.sensitive(attribute).distinct_per_class()
            fails |= distinct < self.minimal_distinct_values
        return fails.astype(float)

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
        partition = ClassPartition.of(table, quasi_identifiers)
        values = self.per_class(partition)
        passes = self.class_passes(values)
        if len(values) == 0:
            achieved: float | int = 0
        elif self.higher_is_better:
            achieved = values.min()
        else:
            achieved = values.max()
        achieved = json_value(achieved)
        failing = np.flatnonzero(~passes)
        examples: tuple[dict[str, Any], ...] = ()
        if len(failing):
            severity = values[failing] if self.higher_is_better else -values[failing]
            # Worst measure first, then the larger class (more rows exposed),
            # then class id: ids follow the classes' values, so the examples do
            # not depend on the row order or on the engine that built them.
            size = -partition.sizes[failing]
            worst = failing[np.lexsort((failing, size, severity))][:MAX_EXAMPLES]
            keys = partition.keys(worst)
            examples = tuple(
                {
                    **{
                        q: json_value(v) for q, v in zip(keys.columns, row, strict=True)
                    },
                    "size": int(partition.sizes[c]),
                    self.measure: json_value(values[c]),
                }
                for c, row in zip(worst, keys.itertuples(index=False), strict=True)
            )
        return PrivacyResult(
            model=str(self),
            requirement=self.describe(),
            measure=self.measure,
            achieved=achieved,
            passed=bool(len(values) > 0 and passes.all()),
            n_classes=partition.n_classes,
            n_violating_classes=len(failing),
            n_violating_rows=int(partition.sizes[failing].sum()),
            examples=examples,
            kind=self.kind,
        )
