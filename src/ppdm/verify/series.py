"""A release checked against the earlier releases of the same table: differencing.

Two releases of a changing table can each be k-anonymous and l-diverse and
still leak together. An attacker who knows that someone joined since the last
release, and that person's quasi-identifiers, finds the person's class in both
releases and subtracts: the rows that were only added to the class are the
newcomers, and if they are few (or share one sensitive value) the newcomer's
record is exposed. Departures leak the same way, from a class that only shrank.

The check reads released files only. For every class (equal quasi-identifier
cells) present in both releases of a table, the released rows are compared as
multisets over every released column: the rows present only in the new release
(*added*) and those present only in the earlier one (*removed*) must each number
0, or form a group of their own that every class model of the requirement
accepts (at least k rows; l distinct sensitive values; ...). When a class both
gained and lost rows the two parts are judged separately: an attacker learns at
least that much from the difference of the counts.

Not covered here (see ``docs/republication.md``): classes that do not match
exactly but overlap (Mondrian ranges cut at other medians, other hierarchy
levels), and the composition attack on one person's classes across releases,
which needs to know who persisted (a record key).

References
----------
.. [1] X. Xiao, Y. Tao, "m-Invariance: Towards Privacy Preserving
   Re-publication of Dynamic Datasets", SIGMOD 2007.
.. [2] B. C. M. Fung, K. Wang, A. W.-C. Fu, J. Pei, "Anonymity for Continuous
   Data Publishing", EDBT 2008.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ppdm.privacy import Requirement
from ppdm.privacy.base import json_value
from ppdm.privacy.measures import ClassPartition

__all__ = ["ClassChange", "SeriesCheck", "class_changes", "check_against"]

#: Leaking classes listed as examples in a result.
MAX_EXAMPLES = 10


@dataclass(frozen=True)
class ClassChange:
    """Rows added to and removed from the classes present in both releases.

    Attributes
    ----------
    added, removed : pandas.DataFrame
        One row per released row added (removed), repeated as often as it was;
        the columns compared, plus ``_class``, the class number.
    keys : pandas.DataFrame
        The quasi-identifier cells of each common class, by class number.
    n_common : int
        Classes present in both releases.
    """

    added: pd.DataFrame
    removed: pd.DataFrame
    keys: pd.DataFrame
    n_common: int


def class_changes(
    current: pd.DataFrame,
    earlier: pd.DataFrame,
    quasi_identifiers: Sequence[str],
) -> ClassChange:
    """The multiset difference of every class present in both tables.

    Cells are compared as released (text). Columns present in one table only
    are left out: an attacker compares what both releases show.
    """
    columns = [c for c in current.columns if c in earlier.columns]
    qis = [q for q in quasi_identifiers if q in columns]
    new = current[columns].astype(str)
    old = earlier[columns].astype(str)
    counts_new = new.value_counts(sort=False)
    counts_old = old.value_counts(sort=False)
    delta = counts_new.sub(counts_old, fill_value=0).astype(np.int64)
    delta = delta[delta != 0]
    frame = delta.index.to_frame(index=False)
    frame.columns = columns
    if qis:
        keys = (
            new[qis]
            .drop_duplicates()
            .merge(old[qis].drop_duplicates(), on=qis)
            .sort_values(qis, kind="stable")
            .reset_index(drop=True)
        )
    else:  # no quasi-identifier: the whole table is one class
        keys = pd.DataFrame(index=range(1 if len(new) and len(old) else 0))
    keys["_class"] = np.arange(len(keys), dtype=np.int64)
    if qis:
        frame = frame.merge(keys, on=qis, how="left", sort=False)
    else:
        frame["_class"] = 0 if len(keys) else -1
    number = frame["_class"].fillna(-1).to_numpy(np.int64)
    frame["_class"] = number
    values = delta.to_numpy()
    common = number >= 0
    keep = common & (values > 0)
    added = frame[keep].loc[frame[keep].index.repeat(values[keep])]
    keep = common & (values < 0)
    removed = frame[keep].loc[frame[keep].index.repeat(-values[keep])]
    return ClassChange(
        added=added.reset_index(drop=True),
        removed=removed.reset_index(drop=True),
        keys=keys.drop(columns="_class"),
        n_common=len(keys),
    )


@dataclass(frozen=True)
class SeriesCheck:
    """One released table checked against the same table of an earlier release.

    Attributes
    ----------
    table : str
    against : str
        The earlier release's id.
    n_common_classes : int
    rows_added, rows_removed : int
        Rows only in the new (earlier) release, within the common classes.
    n_leaking_classes : int
    rows_exposed : int
        Added or removed rows in groups the requirement refuses.
    examples : tuple of dict
        Leaking classes: their quasi-identifier cells and rows added / removed.
    accepted : bool
        The data owner released with ``republication: {policy: off}``: a leak
        does not fail the certificate, it is recorded as an accepted risk.
    """

    table: str
    against: str
    n_common_classes: int
    rows_added: int
    rows_removed: int
    n_leaking_classes: int
    rows_exposed: int
    examples: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    accepted: bool = False

    @property
    def leaks(self) -> bool:
        return self.n_leaking_classes > 0

    @property
    def passed(self) -> bool:
        return not self.leaks or self.accepted

    def describe(self) -> str:
        text = (
            f"{self.table} against release {self.against}: "
            f"{self.n_common_classes} classes in both, {self.rows_added} rows added, "
            f"{self.rows_removed} removed"
        )
        if self.leaks:
            text += (
                f"; {self.n_leaking_classes} class(es) leak by differencing "
                f"({self.rows_exposed} rows exposed)"
            )
            if self.accepted:
                text += " - accepted by the data owner (republication policy off)"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "against": self.against,
            "passed": bool(self.passed),
            "accepted_risk": bool(self.accepted and self.leaks),
            "n_common_classes": int(self.n_common_classes),
            "rows_added": int(self.rows_added),
            "rows_removed": int(self.rows_removed),
            "n_leaking_classes": int(self.n_leaking_classes),
            "rows_exposed": int(self.rows_exposed),
            "examples": [dict(e) for e in self.examples],
        }


def leaking_classes(
    change: ClassChange, requirement: Requirement, columns: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Class numbers whose added (resp. removed) rows the requirement refuses."""
    present = set(columns)
    models = [
        m
        for m in requirement.class_models
        if not m.uses_sensitive_attribute or m.sensitive_attribute in present
    ]
    if not models:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    judge = Requirement(
        requirement.quasi_identifiers, tuple(models), requirement.suppression_marker
    )
    found = []
    for rows in (change.added, change.removed):
        if rows.empty:
            found.append(np.empty(0, np.int64))
            continue
        partition = ClassPartition.of(rows, ["_class"])
        ok = judge.accepts(partition)
        classes = partition.keys(np.arange(partition.n_classes))["_class"].to_numpy()
        found.append(np.sort(classes[~ok].astype(np.int64)))
    return found[0], found[1]


def check_against(
    tables: Mapping[str, pd.DataFrame],
    earlier: Mapping[str, pd.DataFrame],
    requirement: Requirement,
    *,
    against: str,
    accepted: bool = False,
) -> list[SeriesCheck]:
    """Check every table of a release against the same table of an earlier one.

    Parameters
    ----------
    tables, earlier : mapping of str to pandas.DataFrame
        Released tables (as read from the files) by name; a table the earlier
        release does not have is not compared.
    requirement : Requirement
    against : str
        The earlier release's id, for the result.
    accepted : bool, default=False
        Leaks are an accepted risk (``republication: {policy: off}``).
    """
    results = []
    for name in sorted(tables):
        if name not in earlier:
            continue
        table = tables[name]
        change = class_changes(table, earlier[name], requirement.quasi_identifiers)
        columns = [c for c in table.columns if c in earlier[name].columns]
        grown, shrunk = leaking_classes(change, requirement, columns)
        leaking = np.union1d(grown, shrunk)
        added = np.bincount(
            change.added["_class"].to_numpy(np.int64), minlength=change.n_common
        )
        removed = np.bincount(
            change.removed["_class"].to_numpy(np.int64), minlength=change.n_common
        )
        exposed = int(added[grown].sum() + removed[shrunk].sum())
        worst = leaking[np.argsort(-(added + removed)[leaking], kind="stable")]
        examples = tuple(
            {
                **{q: json_value(v) for q, v in change.keys.iloc[c].items()},
                "added": int(added[c]),
                "removed": int(removed[c]),
            }
            for c in worst[:MAX_EXAMPLES]
        )
        results.append(
            SeriesCheck(
                table=name,
                against=against,
                n_common_classes=change.n_common,
                rows_added=int(len(change.added)),
                rows_removed=int(len(change.removed)),
                n_leaking_classes=int(len(leaking)),
                rows_exposed=exposed,
                examples=examples,
                accepted=accepted,
            )
        )
    return results
