"""A release read together with an earlier release of the same source rows.

Two releases made from the same source hold the same persons: nothing to
difference, but at different granularity each person lies in one class of
each, and an attacker holding both narrows the person to the persons of both
classes (:class:`SameRowsCheck`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ppdm.privacy import Requirement
from ppdm.privacy.base import MAX_EXAMPLES
from ppdm.privacy.measures import ClassPartition
from ppdm.privacy.result import json_value
from ppdm.verify.differencing import paired_tables
from ppdm.verify.regions import (
    Covers,
    first_row_per_class,
    most_specific_class,
    released_class_ids,
)
from ppdm.verify.series_result import SeriesResult

__all__ = ["SameRowsCheck", "check_same_rows"]


@dataclass(frozen=True)
class SameRowsCheck(SeriesResult):
    """One released table read together with an earlier release of the same rows.

    Two releases made from the same source (the same fingerprint) hold the
    same persons: nobody arrived or left, so there is nothing to difference.
    At different granularity (another algorithm, another k) each person lies
    in one class of each, and an attacker holding both narrows the person to
    the persons of both classes. The persons are grouped by their class in
    each release (:func:`most_specific_class`, from the owner's table); every
    group must be one the requirement accepts on its own.

    Attributes
    ----------
    table : str
    against : str
        The earlier release's id.
    n_groups : int
        Groups of persons by their class in each release.
    n_leaking_groups : int
    rows_exposed : int
        Persons in the groups the requirement refuses.
    examples : tuple of dict
        Leaking groups: the cells of the class in this release and in the
        earlier one, and the persons in both.
    accepted : bool
        Released with ``republication: {policy: off}``: a recorded risk.
    """

    table: str
    against: str
    n_groups: int
    n_leaking_groups: int
    rows_exposed: int
    examples: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    accepted: bool = False

    #: The registered check (:class:`ppdm.privacy.SameRows`).
    name: ClassVar[str] = "same-rows"
    figure_names: ClassVar[tuple[str, ...]] = ("n_leaking_groups", "rows_exposed")
    leak_counts: ClassVar[tuple[str, ...]] = ("n_leaking_groups",)

    def describe(self) -> str:
        text = (
            f"{self.table} read together with release {self.against} of the same "
            f"source rows: {self.n_groups} groups of persons by their class in each"
        )
        if self.leaks:
            text += (
                f"; {self.n_leaking_groups} group(s) of {self.rows_exposed} persons "
                "in all are below the requirement"
            )
        return text + self.accepted_note()

    def to_dict(self) -> dict[str, Any]:
        # "same-source" tells this entry from differencing's in the
        # certificate's list of series results.
        return {"check": "same-source", **super().to_dict()}


def check_same_rows(
    tables: Mapping[str, pd.DataFrame],
    earlier: Mapping[str, pd.DataFrame],
    people: pd.DataFrame,
    requirement: Requirement,
    *,
    against: str,
    accepted: bool = False,
    covers: Covers | None = None,
) -> list[SameRowsCheck]:
    """Check every table against the same table of an earlier release of the same rows.

    Parameters
    ----------
    tables, earlier : mapping of str to pandas.DataFrame
        Released tables (text cells) by name, paired by
        :func:`~ppdm.verify.differencing.counterpart`.
    people : pandas.DataFrame
        The owner's table the releases were made from (both of them): the
        quasi-identifiers and the sensitive attributes, as text.
    requirement : Requirement
    against : str
        The earlier release's id, for the result.
    accepted : bool, default=False
        A leak is an accepted risk (``republication: {policy: off}``).
    covers : mapping, optional
        Hierarchy labels -> raw values, per attribute.
    """
    results = []
    for label, table, old in paired_tables(tables, earlier):
        qis = [q for q in requirement.quasi_identifiers if q in table.columns]
        present = set(table.columns) & set(people.columns)
        models = tuple(
            m
            for m in requirement.class_models
            if not m.uses_sensitive_attribute or m.sensitive_attribute in present
        )
        now, _ = most_specific_class(people, table, qis, covers)
        then, _ = most_specific_class(people, old, qis, covers)
        both = (now >= 0) & (then >= 0)
        groups = (
            people[both].reset_index(drop=True).assign(_now=now[both], _then=then[both])
        )
        partition = ClassPartition.of(groups, ["_now", "_then"])
        if models and len(groups):
            judge = Requirement(
                requirement.quasi_identifiers, models, requirement.suppression_marker
            )
            ok = judge.accepts(partition)
        else:
            ok = np.ones(partition.n_classes, dtype=bool)
        bad = np.flatnonzero(~ok)
        keys = partition.keys(bad)
        pair = groups.groupby(["_now", "_then"]).size()
        sizes = [int(pair.loc[(a, b)]) for a, b in keys.itertuples(index=False)]
        order = np.argsort(sizes, kind="stable")[:MAX_EXAMPLES]
        first_now = (
            first_row_per_class(*released_class_ids(table, qis))
            if qis
            else np.zeros(1, int)
        )
        first_then = (
            first_row_per_class(*released_class_ids(old, qis))
            if qis
            else np.zeros(1, int)
        )
        examples = tuple(
            {
                "this release": {
                    q: json_value(table[q].iloc[first_now[a]]) for q in qis
                },
                "earlier release": {
                    q: json_value(old[q].iloc[first_then[b]]) for q in qis
                },
                "persons": sizes[i],
            }
            for i in order
            for a, b in [tuple(keys.iloc[i])]
        )
        results.append(
            SameRowsCheck(
                table=label,
                against=against,
                n_groups=int(partition.n_classes),
                n_leaking_groups=len(bad),
                rows_exposed=int(sum(sizes)),
                examples=examples,
                accepted=accepted,
            )
        )
    return results
