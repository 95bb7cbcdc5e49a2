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

Classes that roll up exactly are compared the same way (:func:`rollup_units`):
an earlier class whose region is covered exactly by several finer classes of
the new release (a lattice node one level lower, a Mondrian range cut in two),
or the reverse. Their rows are compared on the columns that are not
quasi-identifiers, since the quasi-identifier cells differ by construction.

Not covered here (see ``docs/republication.md``): classes that overlap without
either side nesting (Mondrian ranges cut at other medians). The composition
attack on one person's classes across releases needs to know who persisted
(a record key): :mod:`ppdm.verify.composition`.

References
----------
.. [1] X. Xiao, Y. Tao, "m-Invariance: Towards Privacy Preserving
   Re-publication of Dynamic Datasets", SIGMOD 2007.
.. [2] B. C. M. Fung, K. Wang, A. W.-C. Fu, J. Pei, "Anonymity for Continuous
   Data Publishing", EDBT 2008.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ppdm.privacy import Requirement
from ppdm.privacy.base import MAX_EXAMPLES
from ppdm.privacy.measures import ClassPartition
from ppdm.privacy.result import json_value
from ppdm.verify.regions import Covers, rollup_units
from ppdm.verify.series_result import SeriesResult

__all__ = [
    "ClassChange",
    "SeriesCheck",
    "check_against",
    "class_changes",
    "counterpart",
    "paired_tables",
    "leaking_classes",
    "leaking_rollups",
]


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


def _unit_difference(
    current: pd.DataFrame, earlier: pd.DataFrame, columns: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rows only in ``current`` and rows only in ``earlier``, on ``columns``."""
    if not columns:
        n = len(current) - len(earlier)
        empty = pd.DataFrame(index=range(0))
        return (
            pd.DataFrame(index=range(max(n, 0))),
            pd.DataFrame(index=range(max(-n, 0))) if n < 0 else empty,
        )
    delta = (
        current[columns]
        .astype(str)
        .value_counts(sort=False)
        .sub(earlier[columns].astype(str).value_counts(sort=False), fill_value=0)
        .astype(np.int64)
    )
    frame = delta.index.to_frame(index=False)
    frame.columns = columns
    values = delta.to_numpy()
    added = frame.loc[frame.index.repeat(np.clip(values, 0, None))]
    removed = frame.loc[frame.index.repeat(np.clip(-values, 0, None))]
    return added.reset_index(drop=True), removed.reset_index(drop=True)


@dataclass(frozen=True)
class SeriesCheck(SeriesResult):
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
    n_rollups, n_leaking_rollups : int
        Groups of classes that roll up exactly (:func:`rollup_units`), and
        those whose difference the requirement refuses.
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
    n_rollups: int = 0
    n_leaking_rollups: int = 0

    #: The registered check (:class:`ppdm.privacy.Differencing`).
    name: ClassVar[str] = "differencing"
    figure_names: ClassVar[tuple[str, ...]] = (
        "n_leaking_classes",
        "n_leaking_rollups",
        "rows_exposed",
    )
    leak_counts: ClassVar[tuple[str, ...]] = ("n_leaking_classes", "n_leaking_rollups")

    def describe(self) -> str:
        text = (
            f"{self.table} against release {self.against}: "
            f"{self.n_common_classes} classes in both, {self.rows_added} rows added, "
            f"{self.rows_removed} removed"
        )
        if self.n_rollups:
            text += f"; {self.n_rollups} groups of classes roll up exactly"
        if self.leaks:
            text += (
                f"; {self.n_leaking_classes} class(es) and "
                f"{self.n_leaking_rollups} roll-up(s) leak by differencing "
                f"({self.rows_exposed} rows exposed)"
            )
        return text + self.accepted_note()


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


def counterpart(
    name: str, table: pd.DataFrame, earlier: Mapping[str, pd.DataFrame]
) -> str | None:
    """The table of an earlier release that ``table`` is compared with.

    The one with the same set of columns: the same name first, else the first
    by name. Tables are matched by their columns, not their names, because a
    release of projections numbers them in the order it chose them
    (``projection-1`` of one month may hold other columns than that of the
    next, and the same columns under another number). Tables whose columns
    differ are not compared (see ``docs/republication.md``).
    """
    columns = set(map(str, table.columns))
    same = [n for n in sorted(earlier) if set(map(str, earlier[n].columns)) == columns]
    if name in same:
        return name
    return same[0] if same else None


def paired_tables(
    tables: Mapping[str, pd.DataFrame], earlier: Mapping[str, pd.DataFrame]
) -> Iterator[tuple[str, pd.DataFrame, pd.DataFrame]]:
    """Each table (by name, in order) with its :func:`counterpart` in ``earlier``.

    Yields the table's label in a result (its name, and the earlier table's
    when they differ), the table, and the earlier table; a table without a
    counterpart is not compared.
    """
    for name in sorted(tables):
        table = tables[name]
        match = counterpart(name, table, earlier)
        if match is not None:
            label = name if match == name else f"{name} (as {match})"
            yield label, table, earlier[match]


def check_against(
    tables: Mapping[str, pd.DataFrame],
    earlier: Mapping[str, pd.DataFrame],
    requirement: Requirement,
    *,
    against: str,
    accepted: bool = False,
    covers: Covers | None = None,
) -> list[SeriesCheck]:
    """Check every table of a release against the same table of an earlier one.

    Parameters
    ----------
    tables, earlier : mapping of str to pandas.DataFrame
        Released tables (as read from the files) by name. Each table is
        compared with the earlier table of the same columns
        (:func:`counterpart`); one the earlier release has no counterpart of
        is not compared.
    requirement : Requirement
    against : str
        The earlier release's id, for the result.
    accepted : bool, default=False
        Leaks are an accepted risk (``republication: {policy: off}``).
    covers : mapping, optional
        Hierarchy labels -> raw values, per attribute, so that classes at
        different hierarchy levels are recognised as rolling up.
    """
    results = []
    for label, table, old in paired_tables(tables, earlier):
        change = class_changes(table, old, requirement.quasi_identifiers)
        columns = [c for c in table.columns if c in old.columns]
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
        units = rollup_units(table, old, requirement.quasi_identifiers, covers)
        leaking_units, unit_rows = _leaking_units(
            units, table, old, requirement, columns
        )
        exposed += unit_rows
        results.append(
            SeriesCheck(
                table=label,
                against=against,
                n_common_classes=change.n_common,
                rows_added=int(len(change.added)),
                rows_removed=int(len(change.removed)),
                n_leaking_classes=int(len(leaking)),
                rows_exposed=exposed,
                examples=examples,
                accepted=accepted,
                n_rollups=len(units),
                n_leaking_rollups=leaking_units,
            )
        )
    return results


def _leaking_units(
    units: Sequence[tuple[np.ndarray, np.ndarray]],
    table: pd.DataFrame,
    earlier: pd.DataFrame,
    requirement: Requirement,
    columns: Sequence[str],
) -> tuple[int, int]:
    """How many roll-up units leak, and the rows they expose."""
    found = leaking_rollups(units, table, earlier, requirement, columns)
    return len(found), sum(rows for _, rows in found)


def leaking_rollups(
    units: Sequence[tuple[np.ndarray, np.ndarray]],
    table: pd.DataFrame,
    earlier: pd.DataFrame,
    requirement: Requirement,
    columns: Sequence[str],
) -> list[tuple[tuple[np.ndarray, np.ndarray], int]]:
    """The roll-up units whose difference the requirement refuses, with the rows exposed."""
    others = [c for c in columns if c not in requirement.quasi_identifiers]
    present = set(others)
    models = tuple(
        m
        for m in requirement.class_models
        if not m.uses_sensitive_attribute or m.sensitive_attribute in present
    )
    if not units or not models:
        return []
    judge = Requirement(
        requirement.quasi_identifiers, models, requirement.suppression_marker
    )
    found = []
    for rows_c, rows_e in units:
        added, removed = _unit_difference(
            table.iloc[rows_c], earlier.iloc[rows_e], others
        )
        bad = 0
        for group in (added, removed):
            if len(group) and not judge.accepts(ClassPartition.of(group, []))[0]:
                bad += len(group)
        if bad:
            found.append(((rows_c, rows_e), bad))
    return found
