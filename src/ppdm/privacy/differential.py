"""What a differentially private release spends of a dataset's privacy budget.

An algorithm that releases under (epsilon, delta)-differential privacy says
what one run costs through :meth:`ppdm.algorithms.base.Anonymizer.privacy_cost`.
The cost is written into the release's keyed audit entry, and the budget of a
dataset is the composition of the costs its earlier releases recorded there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["PrivacyCost"]


@dataclass(frozen=True)
class PrivacyCost:
    """The (epsilon, delta) one release spends."""

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.epsilon) and self.epsilon > 0):
            raise ValueError(
                f"epsilon must be a finite number > 0, got {self.epsilon!r}"
            )
        if not (0 <= self.delta < 1):
            raise ValueError(f"delta must be in [0, 1), got {self.delta!r}")

    def as_dict(self) -> dict[str, float]:
        return {"epsilon": self.epsilon, "delta": self.delta}
