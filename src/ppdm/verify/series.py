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
either side nesting (Mondrian ranges cut at other medians), and the
composition attack on one person's classes across releases, which needs to
know who persisted (a record key).

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
from ppdm.values import Cell, parse_cell

__all__ = [
    "ClassChange",
    "CompositionCheck",
    "CompositionReport",
    "PersonValues",
    "SameRowsCheck",
    "SeriesCheck",
    "cell_width",
    "check_against",
    "check_same_rows",
    "check_composition",
    "class_changes",
    "class_matches",
    "composition_exposed",
    "counterpart",
    "person_values",
    "leaking_rollups",
    "most_specific_class",
    "rollup_units",
]

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


#: ``{attribute: {hierarchy label: leaf values it covers}}``.
Covers = Mapping[str, Mapping[str, Sequence[str]]]


def _leaves(cell: Cell, covers: Mapping[str, Sequence[str]]) -> frozenset[str] | None:
    """The raw values a categorical cell stands for (None: not categorical)."""
    if cell.kind == "set":
        out: set[str] = set()
        for member in cell.members:
            out.update(covers.get(member, (member,)))
        return frozenset(out)
    if cell.kind == "value":
        return frozenset(covers.get(cell.text, (cell.text,)))
    if cell.kind == "missing":
        return frozenset({""})
    return None


def _number(cell: Cell) -> float | None:
    if cell.kind != "value":
        return None
    try:
        return float(cell.text)
    except ValueError:
        return None


def _bounds(cell: Cell) -> tuple[float, bool, float, bool] | None:
    """``(low, low closed, high, high closed)`` of a numeric cell."""
    if cell.kind == "interval":
        return cell.low, cell.low_closed, cell.high, cell.high_closed
    number = _number(cell)
    return None if number is None else (number, True, number, True)


def _relation(
    a: Cell, b: Cell, covers: Mapping[str, Sequence[str]]
) -> tuple[bool, bool]:
    """``(a within b, a overlaps b)`` for two released cells of one attribute."""
    if b.kind == "suppressed":
        return True, True
    if a.kind == "suppressed":
        return False, True
    ra, rb = _bounds(a), _bounds(b)
    if ra is not None and rb is not None:
        (alo, alc, ahi, ahc), (blo, blc, bhi, bhc) = ra, rb
        low_in = alo > blo or (alo == blo and (blc or not alc))
        high_in = ahi < bhi or (ahi == bhi and (bhc or not ahc))
        apart = ahi < blo or bhi < alo
        apart |= ahi == blo and not (ahc and blc)
        apart |= bhi == alo and not (bhc and alc)
        return low_in and high_in, not apart
    la, lb = _leaves(a, covers), _leaves(b, covers)
    if la is not None and lb is not None:
        return la <= lb, bool(la & lb)
    # A number against a label, or an interval against a set: unrelated
    # grammars; treat as overlapping and not nested (never an exact roll-up).
    return False, True


def _cell_relations(
    current: pd.Series, earlier: pd.Series, covers: Mapping[str, Sequence[str]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Codes of both columns' cells and the (within, overlaps) matrices between them.

    Returns codes of ``current``, codes of ``earlier``, ``c_in_e[i, j]``,
    ``e_in_c[j, i]`` and ``overlap[i, j]`` over the distinct cells.
    """
    codes_c, cells_c = pd.factorize(current, sort=True)
    codes_e, cells_e = pd.factorize(earlier, sort=True)
    parsed_c = [parse_cell(v) for v in cells_c]
    parsed_e = [parse_cell(v) for v in cells_e]
    c_in_e = np.zeros((len(parsed_c), len(parsed_e)), dtype=bool)
    e_in_c = np.zeros((len(parsed_e), len(parsed_c)), dtype=bool)
    overlap = np.zeros((len(parsed_c), len(parsed_e)), dtype=bool)
    # Distinct cells of one attribute are few (tens to hundreds): a loop over
    # their pairs is small next to the rows, which are never looped over.
    for i, a in enumerate(parsed_c):
        for j, b in enumerate(parsed_e):
            c_in_e[i, j], overlap[i, j] = _relation(a, b, covers)
            e_in_c[j, i] = _relation(b, a, covers)[0]
    return codes_c, codes_e, c_in_e, e_in_c, overlap


def rollup_units(
    current: pd.DataFrame,
    earlier: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    covers: Covers | None = None,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Groups of classes that cover exactly the same region in both releases.

    Each unit is ``(current rows, earlier rows)`` (row positions): one earlier
    class and the several current classes nested in it that are the only
    current classes overlapping it, or one current class and the several
    earlier classes nested in it likewise. Classes with equal cells are not
    units here (:func:`class_changes` compares them).
    """
    qis = [
        q for q in quasi_identifiers if q in current.columns and q in earlier.columns
    ]
    if not qis or current.empty or earlier.empty:
        return []
    covers = covers or {}
    ids_c, n_c = _class_ids(current, qis)
    ids_e, n_e = _class_ids(earlier, qis)
    first_c = _first_rows(ids_c, n_c)
    first_e = _first_rows(ids_e, n_e)
    within_ce = np.ones((n_c, n_e), dtype=bool)
    within_ec = np.ones((n_e, n_c), dtype=bool)
    overlaps = np.ones((n_c, n_e), dtype=bool)
    for q in qis:
        codes_c, codes_e, c_in_e, e_in_c, overlap = _cell_relations(
            current[q].astype(str), earlier[q].astype(str), covers.get(q, {})
        )
        kc, ke = codes_c[first_c], codes_e[first_e]
        within_ce &= c_in_e[np.ix_(kc, ke)]
        within_ec &= e_in_c[np.ix_(ke, kc)]
        overlaps &= overlap[np.ix_(kc, ke)]
    # A class of suppressed outliers (every cell suppressed) contains every
    # region without being made of the classes inside it: its rows are not
    # the other classes' rows. Beside other classes it is no roll-up of them.
    if n_c > 1:
        overlaps[_all_suppressed(current, qis, first_c), :] = False
    if n_e > 1:
        overlaps[:, _all_suppressed(earlier, qis, first_e)] = False
    equal = within_ce & within_ec.T
    units = []
    # One earlier class covering several (or one unequal) current classes.
    for e in range(n_e):
        touching = np.flatnonzero(overlaps[:, e])
        if (
            len(touching)
            and within_ce[touching, e].all()
            and not equal[touching, e].any()
        ):
            units.append(
                (np.flatnonzero(np.isin(ids_c, touching)), np.flatnonzero(ids_e == e))
            )
    # One current class covering several (or one unequal) earlier classes.
    for c in range(n_c):
        touching = np.flatnonzero(overlaps[c, :])
        if (
            len(touching)
            and within_ec[touching, c].all()
            and not equal[c, touching].any()
        ):
            units.append(
                (np.flatnonzero(ids_c == c), np.flatnonzero(np.isin(ids_e, touching)))
            )
    return units


def _all_suppressed(
    table: pd.DataFrame, qis: list[str], first: np.ndarray
) -> np.ndarray:
    """Per class (its first row): every quasi-identifier cell is suppressed."""
    out = np.ones(len(first), dtype=bool)
    for q in qis:
        cells = table[q].astype(str).to_numpy()[first]
        out &= np.array([parse_cell(c).kind == "suppressed" for c in cells], dtype=bool)
    return out


def _class_ids(table: pd.DataFrame, qis: list[str]) -> tuple[np.ndarray, int]:
    ids, uniques = pd.MultiIndex.from_frame(table[qis].astype(str)).factorize()
    return ids.astype(np.int64), len(uniques)


def _first_rows(ids: np.ndarray, n: int) -> np.ndarray:
    first = np.full(n, -1, dtype=np.int64)
    first[ids[::-1]] = np.arange(len(ids) - 1, -1, -1)
    return first


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

    @property
    def leaks(self) -> bool:
        return self.n_leaking_classes > 0 or self.n_leaking_rollups > 0

    @property
    def passed(self) -> bool:
        return not self.leaks or self.accepted

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
            "n_rollups": int(self.n_rollups),
            "n_leaking_rollups": int(self.n_leaking_rollups),
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
    for name in sorted(tables):
        table = tables[name]
        match = counterpart(name, table, earlier)
        if match is None:
            continue
        old = earlier[match]
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
                table=name if match == name else f"{name} (as {match})",
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


# -- composition: one person's classes across releases --------------------------
#: Persons compared at once when matching them to classes (bounds the memory
#: of the person x class matrix).
CHUNK = 2048


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


def class_matches(
    people: pd.DataFrame,
    table: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    covers: Covers | None = None,
) -> tuple[np.ndarray, int, Any]:
    """Which released classes of ``table`` each person may lie in.

    Parameters
    ----------
    people : pandas.DataFrame
        The persons' quasi-identifier values (text, as in the owner's table).
    table : pandas.DataFrame
        A released table (text cells).
    quasi_identifiers : sequence of str
        The requirement's; those ``table`` does not show say nothing.
    covers : mapping, optional
        Hierarchy labels -> raw values, per attribute.

    Returns
    -------
    class_of_row : numpy.ndarray
        The class number of every row of ``table``.
    n_classes : int
    matches : callable
        ``matches(rows)`` -> ``(len(rows), n_classes)`` bool for the persons
        at positions ``rows``: the class's cells contain the person's values.
    """
    qis = [q for q in quasi_identifiers if q in table.columns and q in people.columns]
    covers = covers or {}
    if not qis:
        ids = np.zeros(len(table), dtype=np.int64)
        n = 1 if len(table) else 0
        return ids, n, lambda rows: np.ones((len(rows), n), dtype=bool)
    ids, n = _class_ids(table, qis)
    first = _first_rows(ids, n)
    parts = []
    for q in qis:
        codes_p, codes_c, p_in_c, _, _ = _cell_relations(
            people[q].astype(str), table[q].astype(str), covers.get(q, {})
        )
        parts.append((codes_p, p_in_c[:, codes_c[first]]))

    def matches(rows: np.ndarray) -> np.ndarray:
        out = np.ones((len(rows), n), dtype=bool)
        for codes_p, within in parts:
            out &= within[codes_p[rows]]
        return out

    return ids, n, matches


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
class CompositionCheck:
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

    @property
    def leaks(self) -> bool:
        return self.n_exposed > 0

    @property
    def passed(self) -> bool:
        return not self.leaks or self.accepted

    def describe(self) -> str:
        text = (
            f"composition of {self.attribute} against release(s) "
            f"{', '.join(self.against)}: {self.n_persons} persons in several "
            f"releases, {self.n_below_l} with fewer than {self.l} common values"
        )
        if self.leaks:
            text += f"; this release brings {self.n_exposed} person(s) below l={self.l}"
            if self.accepted:
                text += " - accepted by the data owner (republication policy off)"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "attribute": self.attribute,
            "against": list(self.against),
            "l": int(self.l),
            "passed": bool(self.passed),
            "accepted_risk": bool(self.accepted and self.leaks),
            "n_persons": int(self.n_persons),
            "n_below_l": int(self.n_below_l),
            "n_exposed": int(self.n_exposed),
            "n_certain": int(self.n_certain),
        }


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


# -- the same rows released twice ----------------------------------------------
def cell_width(text: str, covers: Mapping[str, Sequence[str]]) -> float:
    """log of how many values a released cell stands for (a suppressed cell: most)."""
    cell = parse_cell(text)
    if cell.kind == "suppressed":
        return 64.0
    if cell.kind == "interval":
        span = cell.high - cell.low
        return float(np.log1p(span)) if np.isfinite(span) else 48.0
    if cell.kind == "set":
        return float(np.log(sum(len(covers.get(m, (m,))) for m in cell.members) or 1))
    if cell.kind == "value":
        return float(np.log(len(covers.get(cell.text, (cell.text,)))))
    return 0.0


def most_specific_class(
    people: pd.DataFrame,
    table: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    covers: Covers | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The class of ``table`` each person lies in.

    The class whose cells contain the person's values; of several, the most
    specific (the smallest region: a class of suppressed outliers contains
    everyone), ties by class number.

    Returns
    -------
    class_of_person : numpy.ndarray
        Class number per person, -1 where no class contains the person.
    class_of_row : numpy.ndarray
        Class number of every row of ``table``.
    """
    qis = [q for q in quasi_identifiers if q in table.columns and q in people.columns]
    ids, n, matches = class_matches(people, table, qis, covers)
    chosen = np.full(len(people), -1, dtype=np.int64)
    if not n:
        return chosen, ids
    first = _first_rows(ids, n)
    width = np.zeros(n)
    for q in qis:
        cells = table[q].astype(str).to_numpy()[first]
        width += [cell_width(c, (covers or {}).get(q, {})) for c in cells]
    order = np.lexsort([np.arange(n), width])
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    for start in range(0, len(people), CHUNK):
        block = np.arange(start, min(start + CHUNK, len(people)))
        ranked = np.where(matches(block), rank[None, :], n)
        best = ranked.min(axis=1)
        chosen[block] = np.where(best < n, order[np.minimum(best, n - 1)], -1)
    return chosen, ids


@dataclass(frozen=True)
class SameRowsCheck:
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

    @property
    def leaks(self) -> bool:
        return self.n_leaking_groups > 0

    @property
    def passed(self) -> bool:
        return not self.leaks or self.accepted

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
            if self.accepted:
                text += " - accepted by the data owner (republication policy off)"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": "same-source",
            "table": self.table,
            "against": self.against,
            "passed": bool(self.passed),
            "accepted_risk": bool(self.accepted and self.leaks),
            "n_groups": int(self.n_groups),
            "n_leaking_groups": int(self.n_leaking_groups),
            "rows_exposed": int(self.rows_exposed),
            "examples": [dict(e) for e in self.examples],
        }


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
        Released tables (text cells) by name, paired by :func:`counterpart`.
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
    for name in sorted(tables):
        table = tables[name]
        match = counterpart(name, table, earlier)
        if match is None:
            continue
        old = earlier[match]
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
        first_now = _first_rows(*_class_ids(table, qis)) if qis else np.zeros(1, int)
        first_then = _first_rows(*_class_ids(old, qis)) if qis else np.zeros(1, int)
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
                table=name if match == name else f"{name} (as {match})",
                against=against,
                n_groups=int(partition.n_classes),
                n_leaking_groups=len(bad),
                rows_exposed=int(sum(sizes)),
                examples=examples,
                accepted=accepted,
            )
        )
    return results
