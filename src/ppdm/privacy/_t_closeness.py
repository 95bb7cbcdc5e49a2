"""t-closeness."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ppdm.exceptions import InvalidParameterError
from ppdm.privacy.base import TOLERANCE, PrivacyModel

if TYPE_CHECKING:
    import numpy as np

    from ppdm.privacy.measures import ClassPartition

__all__ = ["TCloseness"]


@dataclass(frozen=True)
class TCloseness(PrivacyModel):
    """Every class's distribution of ``attribute`` is within ``t`` of the table's.

    The distance is the Earth Mover's Distance with the equal ground distance
    for nominal attributes and the ordered distance for numeric or ordinal
    ones (see :func:`ppdm.privacy.measures.t_closeness`).

    Parameters
    ----------
    attribute : str
    t : float
        Largest allowed distance, in ``[0, 1]``.
    ordered : bool or None, default=None
        Force the ordered (True) or equal (False) distance; None decides from
        the released values.

    References
    ----------
    .. [1] N. Li, T. Li, S. Venkatasubramanian, "t-closeness: Privacy beyond
       k-anonymity and l-diversity", Proc. IEEE 23rd International Conference
       on Data Engineering (ICDE), 106-115, 2007.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"zip": ["a", "a", "b", "b"], "dx": ["x", "y", "x", "x"]})
    >>> r = TCloseness("dx", 0.2).check(t, ["zip"])
    >>> str(TCloseness("dx", 0.2)), r.achieved, r.passed
    ('0.2-closeness of dx', 0.25, False)
    """

    attribute: str
    t: float
    ordered: bool | None = None

    name: ClassVar[str] = "t-closeness"
    measure: ClassVar[str] = "t"
    higher_is_better: ClassVar[bool] = False
    # Li et al. (2007) prove the generalization property for both ground
    # distances; removing records changes the whole-table distribution too.
    monotonic_under_generalization: ClassVar[bool] = True
    monotonic_under_suppression: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if not isinstance(self.attribute, str) or not self.attribute:
            raise InvalidParameterError(
                f"t-closeness: attribute must be the sensitive column's name; "
                f"got {self.attribute!r}"
            )
        if (
            isinstance(self.t, bool)
            or not isinstance(self.t, numbers.Real)
            or not 0 <= self.t <= 1
        ):
            raise InvalidParameterError(
                f"t-closeness: t must be a number in [0, 1]; got {self.t!r}"
            )
        if self.ordered not in (None, True, False):
            raise InvalidParameterError(
                f"t-closeness: ordered must be True, False or None; "
                f"got {self.ordered!r}"
            )

    def __str__(self) -> str:
        return f"{self.t:g}-closeness of {self.attribute}"

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "model": self.name,
            "attribute": self.attribute,
            "t": float(self.t),
        }
        if self.ordered is not None:
            out["ordered"] = bool(self.ordered)
        return out

    def per_class(self, partition: ClassPartition) -> np.ndarray:
        counts = partition.sensitive(self.attribute)
        return counts.emd_per_class(ordered=self.ordered)

    def class_passes(self, values: np.ndarray) -> np.ndarray:
        return values <= self.t + TOLERANCE

    def rejected_in_refinements(self, partition: ClassPartition) -> np.ndarray:
        """Both distances are convex in a class's distribution and at most 1
        (:func:`ppdm.privacy.evaluation.closeness_rejected`)."""
        from ppdm.privacy.evaluation import closeness_rejected

        return closeness_rejected(self, partition)
