"""k-anonymity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ppdm.privacy.base import KParameter, PrivacyModel

if TYPE_CHECKING:
    import numpy as np

    from ppdm.privacy.measures import ClassPartition

__all__ = ["KAnonymity"]


@dataclass(frozen=True)
class KAnonymity(KParameter, PrivacyModel):
    """Every equivalence class over the quasi-identifiers has ``>= k`` rows.

    Parameters
    ----------
    k : int
        Smallest allowed class size, ``k >= 1``.

    References
    ----------
    .. [1] L. Sweeney, "k-anonymity: a model for protecting privacy",
       International Journal of Uncertainty, Fuzziness and Knowledge-Based
       Systems 10(5), 557-570, 2002.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"age": ["[20, 29]"] * 3 + ["*"] * 2, "sex": ["F"] * 5})
    >>> r = KAnonymity(3).check(t, ["age", "sex"])
    >>> str(KAnonymity(3)), r.achieved, r.passed, r.n_violating_classes
    ('3-anonymity', 2, False, 1)
    """

    k: int

    name: ClassVar[str] = "k-anonymity"
    measure: ClassVar[str] = "k"
    monotonic_under_generalization: ClassVar[bool] = True
    monotonic_under_suppression: ClassVar[bool] = True
    uses_sensitive_attribute: ClassVar[bool] = False
    decided_by_bounds: ClassVar[bool] = True

    def __str__(self) -> str:
        return f"{self.k}-anonymity"

    @property
    def minimal_class_size(self) -> int:
        return int(self.k)

    def per_class(self, partition: ClassPartition) -> np.ndarray:
        return partition.sizes

    def class_passes(self, values: np.ndarray) -> np.ndarray:
        return values >= self.k
