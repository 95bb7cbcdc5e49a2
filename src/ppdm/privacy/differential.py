"""What a differentially private release spends of a dataset's privacy budget.

An algorithm that releases under (epsilon, delta)-differential privacy says
what one run costs through :meth:`ppdm.algorithms.base.Anonymizer.privacy_cost`.
The cost is written into the release's keyed audit entry, and the budget of a
dataset is the composition of the costs its earlier releases recorded there.
:class:`DifferentialPrivacy` is the registered check of such a release.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ppdm.privacy.base import PrivacyCheck

if TYPE_CHECKING:
    import pandas as pd

    from ppdm.verify.differential import DifferentialPrivacyCheck

__all__ = ["DifferentialPrivacy", "PrivacyCost"]


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


@dataclass(frozen=True)
class DifferentialPrivacy(PrivacyCheck):
    """The differential privacy entry as a registered check of the released tables.

    The guarantee is the algorithm's (its sampling and randomized choices);
    :func:`ppdm.verify.differential.check_differential_privacy` states it and
    checks what the files can show. Not asked for under ``models:``: a
    release of a differentially private algorithm always carries it.
    """

    name: ClassVar[str] = "differential-privacy"
    kind: ClassVar[str] = "release"
    algorithm: str
    params: Mapping[str, Any]
    declared_columns: tuple[str, ...]
    n_rows: int | None = None
    delta: float | None = None

    def check(
        self, tables: Mapping[str, pd.DataFrame]
    ) -> DifferentialPrivacyCheck | None:
        """The entry for ``tables`` (None: the algorithm is not differentially private)."""
        from ppdm.verify.differential import check_differential_privacy

        return check_differential_privacy(
            tables,
            self.algorithm,
            self.params,
            declared_columns=self.declared_columns,
            n_rows=self.n_rows,
            delta=self.delta,
        )
