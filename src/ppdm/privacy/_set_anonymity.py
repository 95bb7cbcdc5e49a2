"""Set and partition anonymity: the models of a release of projections (DMPD).

What a configuration needs of the two models: their parameter, description
and bounds, without numpy or pandas. The join, the product formula and the
levels they achieve are in :mod:`ppdm.privacy._partition_anonymity`, imported
when a check runs.

References
----------
.. [1] N. Matatov, L. Rokach and O. Maimon, "Privacy-preserving data mining:
   A feature set partitioning approach", Information Sciences
   180(14):2696-2720, 2010 (Definition 8; Lemma 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ppdm.privacy.base import KParameter
from ppdm.privacy.release_model import ReleaseModel

__all__ = ["JoinAnonymity", "PartitionAnonymity", "SetAnonymity"]


@dataclass(frozen=True)
class JoinAnonymity(KParameter, ReleaseModel):
    """What set and partition anonymity share: ``k``, the smallest class a
    join of two released tables (and, for partition anonymity, a released
    table) may hold, and one check
    (:func:`ppdm.privacy._partition_anonymity.join_anonymity_result`)."""

    k: int

    #: Whether each released table's own classes count too (PAL).
    counts_tables: ClassVar[bool] = False
    judged_by: ClassVar[str] = "ppdm.privacy._partition_anonymity:join_anonymity_result"

    @property
    def minimal_class_size(self) -> int:
        return int(self.k)


@dataclass(frozen=True)
class SetAnonymity(JoinAnonymity):
    """Every join of two released projections is k-anonymous.

    ``SAL >= k``: for every pair of released tables, the natural join (on the
    columns they share: the target, for DMPD's projections) has no class
    over the quasi-identifiers and the join columns smaller than ``k``. Computed by the
    product formula (module docstring), never by materialising the join.
    With one released table there is no join and the achieved level is the
    table's own smallest class.

    Parameters
    ----------
    k : int
        Smallest allowed class of a join, ``k >= 1``.

    References
    ----------
    .. [1] N. Matatov, L. Rokach and O. Maimon, "Privacy-preserving data
       mining: A feature set partitioning approach", Information Sciences
       180(14):2696-2720, 2010 (Definition 8: set anonymity level).
    """

    name: ClassVar[str] = "set-anonymity"
    measure: ClassVar[str] = "SAL"

    def __str__(self) -> str:
        return f"set {self.k}-anonymity (joins of two projections)"


@dataclass(frozen=True)
class PartitionAnonymity(JoinAnonymity):
    """``PartAL = min(PAL, SAL) >= k``: each projection and each join of two.

    ``PAL`` is the smallest class of any released table over the
    quasi-identifiers it holds (the per-table k-anonymity check), ``SAL`` that
    of :class:`SetAnonymity`. DMPD's fitness and validity use the same
    quantities on codes; the verifier gets the per-table part from
    :class:`~ppdm.privacy.KAnonymity` and adds :class:`SetAnonymity`, so this
    model is for a configuration that wants the one number (``models:
    [{model: partition-anonymity, k: 10}]``).

    Parameters
    ----------
    k : int
        Smallest allowed class of a projection or of a join of two.

    References
    ----------
    .. [1] N. Matatov, L. Rokach and O. Maimon, "Privacy-preserving data
       mining: A feature set partitioning approach", Information Sciences
       180(14):2696-2720, 2010 (Definition 8: partial, set and partition anonymity levels).
    """

    name: ClassVar[str] = "partition-anonymity"
    measure: ClassVar[str] = "PartAL"
    counts_tables: ClassVar[bool] = True

    def __str__(self) -> str:
        return f"partition {self.k}-anonymity (projections and joins of two)"
