"""A release checked against the earlier releases of the same persons: composition.

An attacker who knows a person's quasi-identifiers (and that the person is in
every release, by a record key) finds the classes the person may lie in, in
each release, and intersects the sensitive values those classes show. Each
release can be l-diverse while the intersection leaves fewer than l values,
or one. The check computes, from the released files and the owner's table,
the values each release leaves possible for each person
(:func:`person_values`), and counts the persons this release brings below
the requirement's l (:func:`check_composition`).

References
----------
.. [1] S. R. Ganta, S. P. Kasiviswanathan, A. Smith, "Composition Attacks and
   Auxiliary Information in Data Privacy", KDD 2008.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ppdm.privacy import Requirement
from ppdm.verify.regions import CHUNK, Covers, class_matches
from ppdm.verify.series_result import SeriesResult

__all__ = [
    "CompositionCheck",
    "CompositionReport",
    "PersonValues",
    "check_composition",
    "composition_exposed",
    "person_values",
]


@dataclass(frozen=True)
class PersonValues:
    """The values of one sensitive attribute a release leaves possible for each person.

    The attacker's view: a person whose quasi-identifiers (and record key) the
    attacker knows lies in one of the released classes whose cells contain
    those quasi-identifiers; the person's value is then one of the values
    those classes show. Computed from the released files and the owner's
    table (:func:`person_values`), never from the algorithm's state.

    Attributes
    ----------
    keys : numpy.ndarray
        The record keys, sorted, distinct (text).
    values : tuple of str
        The attribute's values, sorted (the columns of ``possible``).
    possible : numpy.ndarray
        ``(len(keys), len(values))`` bool: value j is possible for person i.
    """

    keys: np.ndarray
    values: tuple[str, ...]
    possible: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        """JSON content: each person's possible values as indices into ``values``."""
        return {
            "values": list(self.values),
            "keys": [str(k) for k in self.keys],
            "possible": [np.flatnonzero(row).tolist() for row in self.possible],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PersonValues:
        values = tuple(str(v) for v in d["values"])
        possible = np.zeros((len(d["keys"]), len(values)), dtype=bool)
        for i, row in enumerate(d["possible"]):
            possible[i, row] = True
        return cls(np.asarray(d["keys"], dtype=object), values, possible)

    def aligned(
        self, keys: np.ndarray, values: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(present, possible)`` over other ``keys`` and ``values``.

        ``present[i]``: ``keys[i]`` is one of this release's persons;
        ``possible`` is all True for persons not present (no information).
        """
        where = pd.Index(self.keys).get_indexer(pd.Index(keys))
        columns = pd.Index(self.values).get_indexer(pd.Index(values))
        present = where >= 0
        out = np.ones((len(keys), len(values)), dtype=bool)
        known = columns >= 0
        block = self.possible[where[present]]
        out[np.ix_(present, known)] = block[:, columns[known]]
        # A value this release never showed is impossible for its persons.
        out[np.ix_(present, ~known)] = False
        return present, out


def person_values(
    people: pd.DataFrame,
    keys: Sequence[str],
    tables: Mapping[str, pd.DataFrame],
    quasi_identifiers: Sequence[str],
    attribute: str,
    covers: Covers | None = None,
) -> PersonValues:
    """The values of ``attribute`` one release leaves possible for each person.

    A person lies in one of the classes whose cells contain the person's
    quasi-identifiers; every table of the release that shows ``attribute``
    narrows the values down to those of the matching classes (the tables'
    rows are not linked, so each table is one more constraint). A person no
    class matches (a row the release left out) is left out: the release says
    nothing of them. Persons who share a record key are one person: the
    union of their values. The caller leaves out releases that do not show
    ``attribute`` (they say nothing of it).
    """
    keys = np.asarray([str(k) for k in keys], dtype=object)
    shown = [t for _, t in sorted(tables.items()) if attribute in t.columns]
    values = sorted({str(v) for t in shown for v in t[attribute].astype(str)})
    possible = np.ones((len(keys), len(values)), dtype=bool)
    informative = np.zeros(len(keys), dtype=bool)
    vocabulary = pd.Index(values)
    for table in shown:
        ids, n, matches = class_matches(people, table, quasi_identifiers, covers)
        shows = np.zeros((n, len(values)), dtype=np.int64)
        np.add.at(shows, (ids, vocabulary.get_indexer(table[attribute].astype(str))), 1)
        shows = shows > 0
        for start in range(0, len(keys), CHUNK):
            rows = np.arange(start, min(start + CHUNK, len(keys)))
            hit = matches(rows)
            seen = (hit.astype(np.int64) @ shows.astype(np.int64)) > 0
            matched = hit.any(axis=1)
            seen[~matched] = True  # no class of this table matches
            informative[rows] |= matched
            possible[rows] &= seen
    # A person no class matches is, to the attacker, not in this release.
    keys, possible = keys[informative], possible[informative]
    unique, inverse = np.unique(keys.astype(str), return_inverse=True)
    merged = np.zeros((len(unique), len(values)), dtype=bool)
    np.logical_or.at(merged, inverse.reshape(-1), possible)
    return PersonValues(unique.astype(object), tuple(values), merged)


@dataclass(frozen=True)
class CompositionCheck(SeriesResult):
    """The composition attack on one sensitive attribute across a release series.

    For each person present in this release and at least one earlier one
    (by record key), the values left possible by every release are
    intersected. ``l`` is the fewest distinct values the requirement asks a
    class to show of the attribute (a bound of every l variant: an
    intersection of value sets carries no frequencies, so the distinct count
    is what the entropy and recursive variants reduce to on it).

    Attributes
    ----------
    attribute : str
    against : tuple of str
        The earlier releases whose person values were compared.
    l : int
    n_persons : int
        Persons present in this release and an earlier one.
    n_below_l : int
        Of those, persons with fewer than ``l`` common values.
    n_exposed : int
        Persons this release brings below ``l`` (fewer common values than
        the earlier releases alone left, and fewer than ``l``): the leak.
    n_certain : int
        Persons with one common value (their value is disclosed).
    accepted : bool
        Released under ``republication: {policy: off}``: an accepted risk.
    """

    attribute: str
    against: tuple[str, ...]
    l: int
    n_persons: int
    n_below_l: int
    n_exposed: int
    n_certain: int
    accepted: bool = False

    #: The registered check (:class:`ppdm.privacy.Composition`).
    name: ClassVar[str] = "composition"
    figure_names: ClassVar[tuple[str, ...]] = ("n_exposed", "n_below_l", "n_certain")
    leak_counts: ClassVar[tuple[str, ...]] = ("n_exposed",)

    @property
    def required(self) -> dict[str, Any]:
        """At least l common values, unless earlier releases left fewer."""
        return {"l": int(self.l), **super().required}

    @property
    def examples(self) -> tuple[dict[str, Any], ...]:
        """None: the persons at fault are named by their record keys, which a
        certificate never shows."""
        return ()

    def describe(self) -> str:
        text = (
            f"composition of {self.attribute} against release(s) "
            f"{', '.join(self.against)}: {self.n_persons} persons in several "
            f"releases, {self.n_below_l} with fewer than {self.l} common values"
        )
        if self.leaks:
            text += f"; this release brings {self.n_exposed} person(s) below l={self.l}"
        return text + self.accepted_note()


def composition_exposed(
    current: PersonValues, earlier: Sequence[PersonValues], l: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per person of ``current``: compared, common count, earlier common count, exposed.

    Returns ``(compared, common, before, exposed)`` over ``current.keys``:
    ``compared`` the person is in an earlier release; ``common`` the number
    of values every release leaves possible; ``before`` the same without
    this release; ``exposed`` this release brings the person below ``l``.
    """
    values = sorted(set(current.values).union(*(e.values for e in earlier)))
    _, now = current.aligned(current.keys, values)
    before = np.ones_like(now)
    compared = np.zeros(len(current.keys), dtype=bool)
    for release in earlier:
        present, possible = release.aligned(current.keys, values)
        compared |= present
        before &= possible
    common = (before & now).sum(axis=1)
    earlier_common = before.sum(axis=1)
    exposed = compared & (common < l) & (common < earlier_common)
    return compared, common, earlier_common, exposed


def check_composition(
    current: Mapping[str, PersonValues],
    earlier: Sequence[tuple[str, Mapping[str, PersonValues]]],
    requirement: Requirement,
    *,
    accepted: bool = False,
) -> list[CompositionCheck]:
    """The composition attack on each sensitive attribute, this release against ``earlier``.

    Parameters
    ----------
    current : mapping of str to PersonValues
        This release's person values, by sensitive attribute.
    earlier : sequence of (release id, mapping of str to PersonValues)
        The earlier releases' person values.
    requirement : Requirement
    accepted : bool, default=False
        Leaks are an accepted risk (``republication: {policy: off}``).
    """
    out = []
    for attribute in sorted(current):
        l = requirement.minimal_distinct_values_of(attribute)
        history = [(rid, v[attribute]) for rid, v in earlier if attribute in v]
        compared, common, _, exposed = composition_exposed(
            current[attribute], [v for _, v in history], l
        )
        out.append(
            CompositionCheck(
                attribute=attribute,
                against=tuple(rid for rid, _ in history),
                l=int(l),
                n_persons=int(compared.sum()),
                n_below_l=int((compared & (common < l)).sum()),
                n_exposed=int(exposed.sum()),
                n_certain=int((compared & (common <= 1)).sum()),
                accepted=accepted,
            )
        )
    return out


@dataclass(frozen=True)
class CompositionReport:
    """The composition part of a certificate's series section.

    Attributes
    ----------
    record_key : str or None
        The configured record key; None when the check was not run.
    results : tuple of CompositionCheck
        One per sensitive attribute the release shows.
    missing : dict
        Earlier release id -> why its person values could not be compared.
    consistent : bool
        The person values the verifier recomputed equal those the
        republication step kept for the next run.
    reason : str or None
        Why the check was not run.
    """

    record_key: str | None = None
    results: tuple[CompositionCheck, ...] = ()
    missing: dict[str, str] = field(default_factory=dict)
    consistent: bool = True
    reason: str | None = None

    @classmethod
    def not_run(cls, reason: str) -> CompositionReport:
        return cls(reason=reason)

    @property
    def run(self) -> bool:
        return self.reason is None

    @property
    def passed(self) -> bool:
        return self.consistent and all(r.passed for r in self.results)

    def describe(self) -> list[str]:
        """One line per result, per release not compared, or why not run."""
        if not self.run:
            return [f"composition check not run: {self.reason}"]
        lines = [r.describe() for r in self.results]
        lines += [
            f"composition not checked against release {rid}: {why}"
            for rid, why in sorted(self.missing.items())
        ]
        if not self.consistent:
            lines.append(
                "composition: the person values kept for the next run differ from "
                "the verifier's"
            )
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "reason": self.reason,
            "record_key": self.record_key,
            "passed": bool(self.passed),
            "consistent": bool(self.consistent),
            "results": [r.to_dict() for r in self.results],
            "not_compared": dict(sorted(self.missing.items())),
        }
