"""Privacy checks that judge a release against the earlier releases of its dataset.

A release of a changing table is one of a series, and an attacker holds every
earlier release too. The series models are registered in
:data:`ppdm.privacy.PRIVACY_CHECKS` beside the class and release models, with
the same shape: a ``name``, ``kind = "series"``, the parameters they judge by
(the requirement, whether the data owner accepted the risk) and one
``check(...)`` whose results carry their own figures, verdict, summary and
examples (:class:`~ppdm.privacy.base.CheckResult`). They are not asked for
under ``models:``: the republication step and the verifier run them whenever
a dataset has earlier releases.

The measures live with the verifier that reads the released files
(:mod:`ppdm.verify.differencing`, :mod:`ppdm.verify.same_rows`,
:mod:`ppdm.verify.composition`); they are imported when a check runs, so
reading the registry costs no pandas import.

>>> from ppdm.privacy import PRIVACY_CHECKS, Requirement
>>> check = PRIVACY_CHECKS["differencing"](Requirement.of(("age",), k=2))
>>> (check.name, check.kind)
('differencing', 'series')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from ppdm.privacy.base import PrivacyCheck
from ppdm.privacy.requirement import Requirement

if TYPE_CHECKING:
    import pandas as pd

    from ppdm.verify.composition import CompositionCheck, PersonValues
    from ppdm.verify.differencing import SeriesCheck
    from ppdm.verify.regions import Covers
    from ppdm.verify.same_rows import SameRowsCheck

__all__ = [
    "Composition",
    "Differencing",
    "PairingSeriesModel",
    "SameRows",
    "SeriesModel",
]

#: The result type of one pairing check, per table.
_Result = TypeVar("_Result")


class SeriesModel(PrivacyCheck):
    """Base class of the checks with ``kind = "series"``.

    Attributes
    ----------
    requirement : Requirement
        What every group exposed across releases must meet.
    accepted : bool
        The data owner released with ``republication: {policy: off}``: a
        leak is reported as an accepted risk and does not fail the result.
    """

    kind: ClassVar[str] = "series"
    requirement: Requirement
    accepted: bool


class PairingSeriesModel(SeriesModel, Generic[_Result]):
    """A series model that pairs each released table with its counterpart in
    an earlier release, class by class.

    Attributes
    ----------
    covers : mapping, optional
        Hierarchy labels -> raw values, so classes of releases generalized
        differently can be paired.
    """

    covers: Covers | None = None

    def check(
        self,
        tables: Mapping[str, pd.DataFrame],
        earlier: Mapping[str, pd.DataFrame],
        *,
        against: str,
    ) -> tuple[_Result, ...]:
        """One result per table that has a counterpart in ``earlier``."""
        compare, owner = self._comparison()
        return tuple(
            compare(
                tables,
                earlier,
                *owner,
                self.requirement,
                against=against,
                accepted=self.accepted,
                covers=self.covers,
            )
        )

    def _comparison(self) -> tuple[Callable[..., Iterable[_Result]], tuple[Any, ...]]:
        """The measure that pairs the tables, and the owner's data it reads
        after them (imported when a check runs: the registry needs no pandas)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Differencing(PairingSeriesModel["SeriesCheck"]):
    """Classes of both releases gain and lose only groups the requirement accepts.

    :func:`ppdm.verify.differencing.check_against`: per table, the rows only
    one of the two releases holds, class by class and over classes that roll
    up exactly, each judged as a group of its own.
    """

    name: ClassVar[str] = "differencing"
    requirement: Requirement
    accepted: bool = False
    covers: Covers | None = None

    def _comparison(self) -> tuple[Callable[..., Iterable[SeriesCheck]], tuple[()]]:
        from ppdm.verify.differencing import check_against

        return check_against, ()


# eq=False: the owner's table is no value to compare or hash.
@dataclass(frozen=True, eq=False)
class SameRows(PairingSeriesModel["SameRowsCheck"]):
    """Two releases of the same source rows, read together, still meet the requirement.

    :func:`ppdm.verify.same_rows.check_same_rows`: the persons of the owner's
    table (``people``), grouped by their class in each release.
    """

    name: ClassVar[str] = "same-rows"
    requirement: Requirement
    people: pd.DataFrame
    accepted: bool = False
    covers: Covers | None = None

    def _comparison(
        self,
    ) -> tuple[Callable[..., Iterable[SameRowsCheck]], tuple[pd.DataFrame]]:
        from ppdm.verify.same_rows import check_same_rows

        return check_same_rows, (self.people,)


@dataclass(frozen=True)
class Composition(SeriesModel):
    """No person is brought below l by intersecting the values each release leaves.

    :func:`ppdm.verify.composition.check_composition`, per sensitive
    attribute, on the persons' values (by record key) this release and the
    earlier ones leave possible.
    """

    name: ClassVar[str] = "composition"
    requirement: Requirement
    accepted: bool = False

    def check(
        self,
        current: Mapping[str, PersonValues],
        earlier: Sequence[tuple[str, Mapping[str, PersonValues]]],
    ) -> tuple[CompositionCheck, ...]:
        """One result per sensitive attribute of ``current``."""
        from ppdm.verify.composition import check_composition

        return tuple(
            check_composition(
                current, earlier, self.requirement, accepted=self.accepted
            )
        )
