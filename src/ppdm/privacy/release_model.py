"""Privacy models that judge the released tables together, not class by class.

Some releases cannot be judged one table at a time: DMPD's projections can be
joined on the target they all carry, and a feature-selection release is
private under k-anonymity by containment, a property of each record's set of
features rather than of equivalence classes. A :class:`ReleaseModel` reads
every released table at once and answers with one
:class:`~ppdm.privacy.result.PrivacyResult` (its examples name the tables or
records at fault). It is registered in :data:`ppdm.privacy.PRIVACY_CHECKS`
like the class models, so configurations, manifests and certificates name it
the same way; the verifier calls :meth:`ReleaseModel.check_release` on the
released files, and searches never ask it about candidate groups.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

from ppdm.privacy.base import PrivacyModel

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from ppdm.privacy.measures import ClassPartition
    from ppdm.privacy.result import PrivacyResult

__all__ = ["ReleaseModel"]


class ReleaseModel(PrivacyModel):
    """Base class of the models with ``kind = "release"``."""

    kind: ClassVar[str] = "release"
    uses_sensitive_attribute: ClassVar[bool] = False
    monotonic_under_generalization: ClassVar[bool] = False

    #: The function that judges the released tables, ``"module:function"``,
    #: called with the model, the tables and the quasi-identifiers. It is
    #: named, not imported (as the algorithm registry names the algorithms):
    #: building the model, as a configuration does, imports no data library,
    #: and the function's module is imported when a check runs.
    judged_by: ClassVar[str]

    def check_release(
        self,
        tables: Mapping[str, pd.DataFrame],
        quasi_identifiers: Sequence[str],
    ) -> PrivacyResult:
        """Check the model on every released table (cells as released: text).

        Parameters
        ----------
        tables : mapping of str to pandas.DataFrame
            Table name -> released table, as the verifier read it.
        quasi_identifiers : sequence of str
            The requirement's quasi-identifiers (a table may hold some of them).
        """
        module, _, function = self.judged_by.partition(":")
        judge = getattr(importlib.import_module(module), function)
        return judge(self, tables, quasi_identifiers)

    def per_class(self, partition: ClassPartition) -> np.ndarray:
        raise TypeError(f"{self} judges the whole release, not equivalence classes")

    def class_passes(self, values: np.ndarray) -> np.ndarray:
        raise TypeError(f"{self} judges the whole release, not equivalence classes")

    def check(
        self,
        table: pd.DataFrame | ClassPartition,
        quasi_identifiers: Sequence[str],
    ) -> PrivacyResult:
        """One table is a release of one table."""
        from ppdm.privacy.measures import ClassPartition

        if isinstance(table, ClassPartition):
            raise TypeError(f"{self} needs the released tables, not a partition")
        return self.check_release({"release": table}, quasi_identifiers)
