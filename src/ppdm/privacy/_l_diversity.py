"""l-diversity: distinct, entropy and recursive (c, l).

All three variants are defined by Machanavajjhala et al. [1]_; the distinct
variant is the simplest reading of their principle (at least ``l`` distinct
sensitive values per class).

References
----------
.. [1] A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam,
   "l-diversity: Privacy beyond k-anonymity", ACM Transactions on Knowledge
   Discovery from Data 1(1), article 3, 2007.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ppdm.exceptions import InvalidParameterError
from ppdm.privacy.base import TOLERANCE, PrivacyModel

if TYPE_CHECKING:
    import numpy as np

    from ppdm.privacy.measures import ClassPartition

__all__ = ["DistinctLDiversity", "EntropyLDiversity", "RecursiveCLDiversity"]


def _check_attribute(model: str, attribute: object) -> None:
    if not isinstance(attribute, str) or not attribute:
        raise InvalidParameterError(
            f"{model}: attribute must be the sensitive column's name; got {attribute!r}"
        )


def _check_l(model: str, l: object, *, integer: bool) -> None:  # noqa: E741
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(l, bool) or not isinstance(l, kind) or not l >= 1:
        what = "an integer" if integer else "a number"
        raise InvalidParameterError(f"{model}: l must be {what} >= 1; got {l!r}")


class _LDiversity(PrivacyModel):
    measure: ClassVar[str] = "l"
    # Suppressed records form a class of their own whose diversity is not
    # controlled, so suppression cannot be relied on to repair a table.
    monotonic_under_suppression: ClassVar[bool] = False

    attribute: str
    l: float  # noqa: E741
    #: Whether l is a whole number (distinct, recursive) or any number >= 1.
    integer_l: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_attribute(self.name, self.attribute)
        _check_l(self.name, self.l, integer=self.integer_l)

    def describe(self) -> dict[str, Any]:
        l = int(self.l) if self.integer_l else float(self.l)  # noqa: E741
        return {"model": self.name, "attribute": self.attribute, "l": l}

    @property
    def minimal_class_size(self) -> int:
        return int(math.ceil(self.l - TOLERANCE))

    @property
    def minimal_distinct_values(self) -> int:
        # exp(entropy) never exceeds the number of distinct values, and
        # recursive (c, l) needs l of them: ceil(l) bounds all three variants.
        return int(math.ceil(self.l - TOLERANCE))

    def class_passes(self, values: np.ndarray) -> np.ndarray:
        return values >= self.l - TOLERANCE


@dataclass(frozen=True)
class DistinctLDiversity(_LDiversity):
    """Every class holds at least ``l`` distinct values of ``attribute``.

    Parameters
    ----------
    attribute : str
        The sensitive attribute.
    l : int
        Smallest number of distinct values per class, ``l >= 1``.

    References
    ----------
    .. [1] A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam,
       "l-diversity: Privacy beyond k-anonymity", ACM TKDD 1(1), 2007.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"zip": ["a", "a", "b", "b"], "dx": ["x", "y", "x", "x"]})
    >>> r = DistinctLDiversity("dx", 2).check(t, ["zip"])
    >>> str(DistinctLDiversity("dx", 2)), r.achieved, r.passed
    ('distinct 2-diversity of dx', 1, False)
    """

    attribute: str
    l: int  # noqa: E741

    name: ClassVar[str] = "distinct-l-diversity"
    decided_by_bounds: ClassVar[bool] = True

    def __str__(self) -> str:
        return f"distinct {self.l}-diversity of {self.attribute}"

    def per_class(self, partition: ClassPartition) -> np.ndarray:
        return partition.sensitive(self.attribute).distinct_per_class()


@dataclass(frozen=True)
class EntropyLDiversity(_LDiversity):
    """Every class has ``exp(entropy of attribute) >= l``.

    The achieved value is the real ``min exp(H)`` over classes (natural
    logarithm), not rounded down.

    Parameters
    ----------
    attribute : str
    l : float
        ``l >= 1``.

    References
    ----------
    .. [1] A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam,
       "l-diversity: Privacy beyond k-anonymity", ACM TKDD 1(1), 2007.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"zip": ["a"] * 4, "dx": ["x", "y", "x", "y"]})
    >>> r = EntropyLDiversity("dx", 2).check(t, ["zip"])
    >>> str(EntropyLDiversity("dx", 2)), round(r.achieved, 6), r.passed
    ('entropy 2-diversity of dx', 2.0, True)
    """

    attribute: str
    l: float  # noqa: E741

    name: ClassVar[str] = "entropy-l-diversity"
    integer_l: ClassVar[bool] = False

    def __str__(self) -> str:
        return f"entropy {self.l:g}-diversity of {self.attribute}"

    def per_class(self, partition: ClassPartition) -> np.ndarray:
        return partition.sensitive(self.attribute).entropy_l_per_class()

    def rejected_in_refinements(self, partition: ClassPartition) -> np.ndarray:
        """Entropy is concave: a class split into parts has at least their mean
        entropy (:func:`ppdm.privacy.evaluation.entropy_rejected`)."""
        from ppdm.privacy.evaluation import entropy_rejected

        return entropy_rejected(self, partition)


@dataclass(frozen=True)
class RecursiveCLDiversity(_LDiversity):
    """Recursive (c, l)-diversity of ``attribute``.

    With the counts of a class sorted ``r_1 >= ... >= r_m``, the class
    satisfies the model iff ``r_1 < c * (r_l + ... + r_m)``. The achieved
    value is, for this ``c``, the largest ``l`` that every class satisfies.

    Parameters
    ----------
    attribute : str
    c : float
        ``c > 0``.
    l : int
        ``l >= 1``.

    References
    ----------
    .. [1] A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam,
       "l-diversity: Privacy beyond k-anonymity", ACM TKDD 1(1), 2007.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"zip": ["a"] * 4, "dx": ["x", "x", "y", "z"]})
    >>> r = RecursiveCLDiversity("dx", c=2.0, l=3).check(t, ["zip"])
    >>> str(RecursiveCLDiversity("dx", c=2.0, l=3)), r.achieved, r.passed
    ('recursive (2, 3)-diversity of dx', 2, False)
    """

    attribute: str
    c: float
    l: int  # noqa: E741

    name: ClassVar[str] = "recursive-cl-diversity"

    def __post_init__(self) -> None:
        super().__post_init__()
        if (
            isinstance(self.c, bool)
            or not isinstance(self.c, numbers.Real)
            or not self.c > 0
            or math.isinf(self.c)
        ):
            raise InvalidParameterError(
                f"{self.name}: c must be a finite number > 0; got {self.c!r}"
            )

    def __str__(self) -> str:
        return f"recursive ({self.c:g}, {self.l})-diversity of {self.attribute}"

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "c": float(self.c)}

    def per_class(self, partition: ClassPartition) -> np.ndarray:
        return partition.sensitive(self.attribute).recursive_l_per_class(self.c)

    def class_passes(self, values: np.ndarray) -> np.ndarray:
        return values >= self.l
