"""Where released classes lie: against each other, and where a person lies among them.

A released cell stands for a region of values (an interval, a set of
hierarchy leaves, one value, everything when suppressed). The series checks
need two questions answered from the released cells alone:

- which classes of two releases cover exactly the same region
  (:func:`rollup_units`: a lattice node one level lower, a Mondrian range
  cut in two), so the differencing check can compare their rows;
- which classes of a release contain a person's values
  (:func:`class_matches`, :func:`most_specific_class`), for the composition
  and same-rows checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ppdm.values import Cell, parse_cell

__all__ = [
    "CHUNK",
    "Covers",
    "cell_relations",
    "cell_width",
    "class_matches",
    "first_row_per_class",
    "most_specific_class",
    "released_class_ids",
    "rollup_units",
]

#: Persons compared at once when matching them to classes (bounds the memory
#: of the person x class matrix).
CHUNK = 2048

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


def cell_relations(
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
    ids_c, n_c = released_class_ids(current, qis)
    ids_e, n_e = released_class_ids(earlier, qis)
    first_c = first_row_per_class(ids_c, n_c)
    first_e = first_row_per_class(ids_e, n_e)
    within_ce = np.ones((n_c, n_e), dtype=bool)
    within_ec = np.ones((n_e, n_c), dtype=bool)
    overlaps = np.ones((n_c, n_e), dtype=bool)
    for q in qis:
        codes_c, codes_e, c_in_e, e_in_c, overlap = cell_relations(
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


def released_class_ids(table: pd.DataFrame, qis: list[str]) -> tuple[np.ndarray, int]:
    ids, uniques = pd.MultiIndex.from_frame(table[qis].astype(str)).factorize()
    return ids.astype(np.int64), len(uniques)


def first_row_per_class(ids: np.ndarray, n: int) -> np.ndarray:
    first = np.full(n, -1, dtype=np.int64)
    first[ids[::-1]] = np.arange(len(ids) - 1, -1, -1)
    return first


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
    ids, n = released_class_ids(table, qis)
    first = first_row_per_class(ids, n)
    parts = []
    for q in qis:
        codes_p, codes_c, p_in_c, _, _ = cell_relations(
            people[q].astype(str), table[q].astype(str), covers.get(q, {})
        )
        parts.append((codes_p, p_in_c[:, codes_c[first]]))

    def matches(rows: np.ndarray) -> np.ndarray:
        out = np.ones((len(rows), n), dtype=bool)
        for codes_p, within in parts:
            out &= within[codes_p[rows]]
        return out

    return ids, n, matches


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
    first = first_row_per_class(ids, n)
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
