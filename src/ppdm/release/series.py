"""The release series of a dataset, and the republication policy applied to a candidate.

The series is what the output directory's audit log records for the dataset:
every ``publish`` (or ``recovered``) entry, in the chain's order, with the
sha256 of each released file. A candidate is compared with the released files
of those releases (:mod:`ppdm.verify.differencing`,
:mod:`ppdm.verify.composition`); under the ``hold-back`` policy every class
that leaks by differencing against one of them is released as it was in the
latest earlier release that holds it (the same released rows), so the
difference is empty:

- its newcomers are held back (they stay in the owner's table and are
  candidates again next run, when enough of them may be released together);
- its departed rows stay in the release, as they were released before.

By induction over the series (each earlier release passed this check against
the ones before it) the class then differs from every earlier release by
groups that were already accepted. Nothing here reads the algorithm's state:
the policy works on released cells, and the verifier checks the result again
from the files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import ArtifactIntegrityError, VerificationError
from ppdm.privacy import Requirement
from ppdm.privacy.measures import ClassPartition
from ppdm.release.artifacts import recorded_file_problem
from ppdm.release.audit_log import release_entries
from ppdm.release.data_files import read_released_table, released_tables
from ppdm.verify.composition import PersonValues, composition_exposed, person_values
from ppdm.verify.differencing import (
    class_changes,
    counterpart,
    leaking_classes,
    leaking_rollups,
)
from ppdm.verify.regions import (
    CHUNK,
    cell_width,
    class_matches,
    first_row_per_class,
    rollup_units,
)

__all__ = [
    "EarlierRelease",
    "HoldBack",
    "ConsistentRecoding",
    "as_before",
    "consistent_recoding",
    "current_person_values",
    "failing_classes",
    "earlier_releases",
    "exposed_persons",
    "hold_back",
    "hold_back_composition",
    "leaking_keys",
    "load_tables",
    "paired_earlier",
]


@dataclass(frozen=True)
class EarlierRelease:
    """A published release of the dataset, as the audit log records it.

    Attributes
    ----------
    release_id : str
    files : dict
        Table name -> ``(path, sha256)`` of each released data file.
    source_sha256 : str or None
        The fingerprint of the source it was made from (None: not recorded).
        A release of the same fingerprint holds the same rows: between the
        two nobody arrived or left.
    partitioned : tuple of (str, str)
        ``(path, sha256)`` of each released data file written in parts
        (``data/<table>/part-*.parquet``, an out-of-core release); ``files``
        does not hold them.
    """

    release_id: str
    files: dict[str, tuple[str, str]]
    source_sha256: str | None = None
    partitioned: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "release_id": self.release_id,
            "files": {name: list(pair) for name, pair in sorted(self.files.items())},
            "source_sha256": self.source_sha256,
            "partitioned": [list(pair) for pair in self.partitioned],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EarlierRelease:
        return cls(
            d["release_id"],
            {name: (pair[0], pair[1]) for name, pair in d["files"].items()},
            d.get("source_sha256"),
            tuple((path, digest) for path, digest in d.get("partitioned", ())),
        )


def earlier_releases(
    out_dir: Path | str, dataset: str, against: str = "all"
) -> list[EarlierRelease]:
    """The releases of ``dataset`` the audit log of ``out_dir`` records, oldest first."""
    out_dir = Path(out_dir)
    seen: dict[str, EarlierRelease] = {}
    for where, entry, released in release_entries(out_dir, dataset):
        files = {
            Path(r["path"]).stem: (str(out_dir / r["path"]), r["sha256"])
            for r in released
            if Path(r["path"]).parent.name == "data"
        }
        # An out-of-core release writes each table in parts under data/<table>/.
        pieces = tuple(
            (str(out_dir / r["path"]), r["sha256"])
            for r in released
            if Path(r["path"]).parent.name != "data"
        )
        source = entry.get("source_sha256")
        seen[where] = EarlierRelease(
            Path(where).parts[1],
            files,
            source if isinstance(source, str) else None,
            pieces,
        )
    series = list(seen.values())
    return series[-1:] if against == "last" else series


def load_tables(release: EarlierRelease) -> dict[str, pd.DataFrame]:
    """The released tables of ``release``, each file checked against its recorded sha256.

    A table is read in whatever format it was published (a CSV, or the
    Parquet parts of an out-of-core release), as the verifier reads it.

    Raises
    ------
    ArtifactIntegrityError
        A file is missing or changed since it was published.
    """
    recorded = {path: digest for path, digest in release.files.values()}
    recorded.update(release.partitioned)
    for path, digest in recorded.items():
        if recorded_file_problem(path, digest) is not None:
            raise ArtifactIntegrityError(
                f"earlier release {release.release_id}: {path} is missing or "
                "changed since it was published (the audit log records its "
                "sha256); run `ppdm audit verify` on the output directory"
            )
    tables = {
        name: read_released_table(path, current_labels=True)
        for name, (path, _) in release.files.items()
    }
    parts = released_tables(path for path, _ in release.partitioned)
    tables.update(
        {name: read_released_table(p, current_labels=True) for name, p in parts.items()}
    )
    return dict(sorted(tables.items()))


def leaking_keys(
    table: pd.DataFrame, earlier: pd.DataFrame, requirement: Requirement
) -> pd.DataFrame:
    """Quasi-identifier cells of the classes that leak by differencing."""
    change = class_changes(table, earlier, requirement.quasi_identifiers)
    columns = [c for c in table.columns if c in earlier.columns]
    grown, shrunk = leaking_classes(change, requirement, columns)
    return change.keys.iloc[np.union1d(grown, shrunk)].reset_index(drop=True)


@dataclass(frozen=True)
class HoldBack:
    """What the hold-back policy changed in one release candidate.

    Attributes
    ----------
    held_back : dict
        Table name -> rows of the candidate withheld (newcomers, and rows whose
        released cells changed).
    kept : dict
        Table name -> rows of earlier releases kept (departed rows).
    classes : dict
        Table name -> classes released as they were before.
    against : tuple of str
        The earlier releases compared with.
    """

    held_back: dict[str, int]
    kept: dict[str, int]
    classes: dict[str, int]
    against: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return any(self.classes.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "against": list(self.against),
            "rows_held_back": sum(self.held_back.values()),
            "rows_kept_from_earlier_releases": sum(self.kept.values()),
            "classes_released_as_before": sum(self.classes.values()),
            "by_table": {
                name: {
                    "rows_held_back": self.held_back[name],
                    "rows_kept_from_earlier_releases": self.kept[name],
                    "classes_released_as_before": self.classes[name],
                }
                for name in sorted(self.held_back)
            },
        }


def hold_back(
    tables: Mapping[str, pd.DataFrame],
    series: Sequence[tuple[str, Mapping[str, pd.DataFrame]]],
    requirement: Requirement,
    covers: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
) -> tuple[dict[str, pd.DataFrame], HoldBack]:
    """Release every leaking class as it was in the latest earlier release, or withhold it.

    A class (or exact roll-up) that leaks by differencing is released with
    the rows the latest earlier release holding it showed, when those rows
    are rows of the candidate's class (only newcomers are held back) and the
    requirement accepts them as a class of their own. Otherwise (a member
    left, the earlier class is smaller than this requirement asks, the
    earlier side of a roll-up is several classes) the class is withheld with
    its rows: a class absent from the release has nothing to subtract. So
    every released row is a row of the candidate, and every class hold-back
    touched meets the requirement. A class that leaks again after being
    released as before is withheld.

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        The candidate's released tables (text cells).
    series : sequence of (release id, tables)
        The earlier releases, oldest first.
    requirement : Requirement
    covers : mapping, optional
        Hierarchy labels -> raw values, per attribute (roll-ups across levels).

    Returns
    -------
    tables : dict
        The candidate with leaking classes replaced or withheld (row order:
        unchanged rows first, then the replaced classes; the caller shuffles).
    HoldBack

    Raises
    ------
    VerificationError
        A leak remains after more rounds than the tables have rows (a guard:
        each round withholds rows or settles a class).
    """
    out: dict[str, pd.DataFrame] = {}
    held, kept, replaced = (dict.fromkeys(sorted(tables), 0) for _ in range(3))
    for name in sorted(tables):
        table = tables[name].astype(str)
        earlier = paired_earlier(name, table, series)
        qis = [q for q in requirement.quasi_identifiers if q in table.columns]
        # Cells of the classes released as before: each is settled once.
        settled: set[tuple[str, ...]] = set()
        limit = len(table) + sum(len(t) for _, t in earlier) + 2
        for _ in range(limit):
            keys = _all_leaks(table, earlier, requirement, qis)
            # ``len``, not ``empty``: with no quasi-identifier the one class
            # (the whole table) is a row of no column.
            if len(keys):
                table, withheld, restored = _as_before(
                    table, keys, earlier, qis, requirement, settled
                )
                n = len(keys)
            else:
                table, withheld, restored, n = _rolled_up_as_before(
                    table, earlier, requirement, covers, settled
                )
            if not n:
                table, withheld, n = _withhold_failing(table, requirement, settled)
                restored = 0
                if not n:
                    break
            held[name] += withheld
            kept[name] += restored
            replaced[name] += n
        else:
            raise VerificationError(
                f"republication refused, nothing was published: {name}: "
                f"{len(keys)} class(es) still leak by differencing after {limit} "
                "rounds of hold-back; e.g. "
                + ", ".join(
                    str(dict(r)) for r in keys.head(3).to_dict(orient="records")
                )
            )
        if table.empty and len(tables[name]):
            raise VerificationError(
                f"republication refused, nothing was published: {name}: every "
                "class leaks by differencing against earlier release(s) "
                + ", ".join(rid for rid, _ in earlier)
                + f", and none could be released as before; all {len(tables[name])} "
                "rows would be withheld"
            )
        out[name] = table
    return out, HoldBack(held, kept, replaced, tuple(rid for rid, _ in series))


def paired_earlier(
    name: str,
    table: pd.DataFrame,
    series: Sequence[tuple[str, Mapping[str, pd.DataFrame]]],
) -> list[tuple[str, pd.DataFrame]]:
    """Each earlier release's table of the same columns (the verifier's pairing), as text."""
    return [
        (rid, t[m].astype(str))
        for rid, t in series
        if (m := counterpart(name, table, t)) is not None
    ]


def _all_leaks(
    table: pd.DataFrame,
    earlier: Sequence[tuple[str, pd.DataFrame]],
    requirement: Requirement,
    qis: list[str],
) -> pd.DataFrame:
    found = [leaking_keys(table, old, requirement) for _, old in earlier]
    if not found:
        return pd.DataFrame(columns=qis)
    if not qis:  # the whole table is the one class: leaking or not
        return pd.DataFrame(index=range(1 if any(len(f) for f in found) else 0))
    return pd.concat(found, ignore_index=True).drop_duplicates(ignore_index=True)


def _cells(frame: pd.DataFrame, qis: list[str]) -> list[tuple[str, ...]]:
    """Each row's quasi-identifier cells as a tuple (a class's name)."""
    return [tuple(map(str, row)) for row in frame[qis].itertuples(index=False)]


def _refused(rows: pd.DataFrame, requirement: Requirement | None) -> set[tuple]:
    """Classes of ``rows`` (by their cells) the requirement refuses on their own."""
    if requirement is None or rows.empty:
        return set()
    qis = [q for q in requirement.quasi_identifiers if q in rows.columns]
    failing = failing_classes(rows, requirement)
    if not qis:
        return {()} if len(failing) else set()
    return set(_cells(failing, qis))


def _by_class(
    frame: pd.DataFrame, qis: list[str]
) -> list[tuple[tuple[str, ...], pd.DataFrame]]:
    """``(cells, rows)`` of every class of ``frame``, in order of appearance."""
    positions: dict[tuple[str, ...], list[int]] = {}
    for i, cells in enumerate(_cells(frame, qis)):
        positions.setdefault(cells, []).append(i)
    return [(cells, frame.iloc[rows]) for cells, rows in positions.items()]


def _accepts_group(rows: pd.DataFrame, requirement: Requirement | None) -> bool:
    """The requirement accepts ``rows`` as one group (class models it can read)."""
    if requirement is None:
        return True
    present = set(rows.columns)
    models = tuple(
        m
        for m in requirement.class_models
        if not m.uses_sensitive_attribute or m.sensitive_attribute in present
    )
    if rows.empty or not models:
        return True
    judge = Requirement(
        requirement.quasi_identifiers, models, requirement.suppression_marker
    )
    return bool(judge.accepts(ClassPartition.of(rows, []))[0])


def _as_it_was(
    old: pd.DataFrame,
    current: pd.DataFrame,
    columns: list[str],
    requirement: Requirement | None,
) -> pd.DataFrame | None:
    """The rows of an earlier class to release again for a leaking class, or None.

    The earlier rows still among ``current`` (compared on ``columns``), so
    that nothing is added to the class. When some are gone (they left, or
    are in another class of this release), enough more are withheld, values
    the gone rows do not show first, that the rows missing form a group the
    requirement accepts on its own: subtracting the two releases then finds
    that group, never the leavers alone. None (withhold the class) when what
    remains is no class the requirement accepts.
    """
    old = old.reset_index(drop=True)
    if columns:
        mine = pd.Series(list(map(tuple, old[columns].astype(str).to_numpy())))
        have = pd.Series(
            list(map(tuple, current[columns].astype(str).to_numpy()))
        ).value_counts()
        rank = mine.groupby(mine).cumcount()
        present = (rank < mine.map(have).fillna(0)).to_numpy()
    else:
        present = np.arange(len(old)) < len(current)
    gone, stay = old[~present], old[present]
    if requirement is None:  # nothing to judge a missing group by
        return None if len(gone) or stay.empty else stay
    if not gone.empty:
        sensitive = next(
            (a for a in getattr(requirement, "sensitive_attributes", ()) if a in old),
            None,
        )
        left = list(range(len(stay)))
        while not _accepts_group(gone, requirement) and left:
            shown = set(gone[sensitive].astype(str)) if sensitive else set()
            pick = next(
                (i for i in left if str(stay[sensitive].iloc[i]) not in shown)
                if sensitive
                else iter(()),
                left[0],
            )
            left.remove(pick)
            gone = pd.concat([gone, stay.iloc[[pick]]])
        if not _accepts_group(gone, requirement):
            return None
        stay = stay.iloc[left]
    if stay.empty or not _accepts_group(stay, requirement):
        return None
    return stay


def _withhold_failing(
    table: pd.DataFrame, requirement: Requirement, settled: set[tuple[str, ...]]
) -> tuple[pd.DataFrame, int, int]:
    """Withhold the classes released as before that the requirement refuses now.

    Only hold-back's own classes: the algorithm's classes are the verifier's
    to judge. Reached when a class passed on its own but the release around
    it changed (t-closeness reads the whole table's distribution).
    """
    qis = [q for q in requirement.quasi_identifiers if q in table.columns]
    bad = _refused(table, requirement) & settled
    if not bad:
        return table, 0, 0
    drop = np.fromiter((c in bad for c in _cells(table, qis)), bool, len(table))
    return table[~drop].reset_index(drop=True), int(drop.sum()), len(bad)


def _rolled_up_as_before(
    table: pd.DataFrame,
    earlier: Sequence[tuple[str, pd.DataFrame]],
    requirement: Requirement,
    covers: Mapping[str, Mapping[str, Sequence[str]]] | None,
    settled: set[tuple[str, ...]],
) -> tuple[pd.DataFrame, int, int, int]:
    """Replace or withhold the leaking roll-ups against the latest release that has one.

    A roll-up is one class on one side containing several on the other. Its
    region is released as one class with that class's cells (true of every
    row of the region) and the earlier rows still in the region (on the
    columns that are not quasi-identifiers), as :func:`_as_it_was` keeps
    them: nothing is added, and what is missing is a group the requirement
    accepts. Otherwise the candidate's classes of the region are withheld.
    """
    columns = list(table.columns)
    qis = [q for q in requirement.quasi_identifiers if q in columns]
    others = [c for c in columns if c not in requirement.quasi_identifiers]
    for _, old in reversed(earlier):
        shared = [c for c in columns if c in old.columns]
        units = rollup_units(table, old, requirement.quasi_identifiers, covers)
        found = leaking_rollups(units, table, old, requirement, shared)
        if not found or set(columns) - set(old.columns):
            continue
        drop = np.zeros(len(table), dtype=bool)
        taken = [old.iloc[:0][columns]]
        for (rows_c, rows_e), _ in found:
            drop[rows_c] = True
            after = old.iloc[rows_e][columns]
            # The cells of the one class on either side: true of every row
            # of the region (it contains the other side's classes).
            cells = set(_cells(after, qis))
            if len(cells) != 1:
                cells = set(_cells(table.iloc[rows_c], qis))
            if len(cells) == 1 and not cells & settled:
                rows = _as_it_was(after, table.iloc[rows_c], others, requirement)
                if rows is not None:
                    taken.append(rows.assign(**dict(zip(qis, next(iter(cells))))))
                    settled |= cells
        before = table[drop]
        after = pd.concat(taken, ignore_index=True)
        delta = (
            before[others]
            .value_counts(sort=False)
            .sub(after[others].value_counts(sort=False), fill_value=0)
            if others
            else pd.Series([len(before) - len(after)])
        )
        result = pd.concat([table[~drop], after], ignore_index=True)
        return (
            result,
            int(delta[delta > 0].sum()),
            int(-delta[delta < 0].sum()),
            len(found),
        )
    return table, 0, 0, 0


def _as_before(
    table: pd.DataFrame,
    keys: pd.DataFrame,
    earlier: Sequence[tuple[str, pd.DataFrame]],
    qis: list[str],
    requirement: Requirement | None = None,
    settled: set[tuple[str, ...]] | None = None,
) -> tuple[pd.DataFrame, int, int]:
    """Release the classes ``keys`` as in the latest release holding them, or withhold them.

    Each class as :func:`_as_it_was` keeps the earlier rows (compared on every
    column), and not a second time (``settled``, updated); otherwise the
    class is withheld.
    """
    settled = set() if settled is None else settled
    if not qis:  # one class: the whole table
        rows = earlier[-1][1][table.columns].reset_index(drop=True)
        columns = list(table.columns)
        kept = None if () in settled else _as_it_was(rows, table, columns, requirement)
        rows = table.iloc[:0] if kept is None else kept
        settled.add(())
        delta = table.value_counts(sort=False).sub(
            rows.value_counts(sort=False), fill_value=0
        )
        return rows, int(delta[delta > 0].sum()), int(-delta[delta < 0].sum())
    marked = keys.assign(_leak=True)
    in_leak = table[qis].merge(marked, on=qis, how="left")["_leak"].notna().to_numpy()
    pieces = [table[~in_leak]]
    current = table[in_leak]
    columns = list(table.columns)
    todo = keys[[c not in settled for c in _cells(keys, qis)]]
    for _, old in reversed(earlier):
        if todo.empty:
            break
        hit = old[qis].merge(todo.assign(_leak=True), on=qis, how="left")
        chosen = hit["_leak"].notna().to_numpy()
        if not chosen.any():
            continue
        rows = old[chosen][columns]
        done = rows[qis].drop_duplicates()
        # Decided here: as before, or withheld (never an older release's
        # rows instead: that class would differ from this one's).
        now = dict(_by_class(current, qis))
        for cells, group in _by_class(rows, qis):
            kept = _as_it_was(group, now[cells], columns, requirement)
            if kept is not None:
                pieces.append(kept)
                settled.add(cells)
        todo = (
            todo.merge(done, on=qis, how="left", indicator=True)
            .query("_merge == 'left_only'")
            .drop(columns="_merge")
        )
    result = pd.concat(pieces, ignore_index=True)
    before = current.value_counts(sort=False)
    # No earlier release holding any of the classes: they are withheld.
    after = pd.concat(pieces[1:] or [table.iloc[:0]], ignore_index=True).value_counts(
        sort=False
    )
    delta = before.sub(after, fill_value=0)
    held, kept = int(delta[delta > 0].sum()), int(-delta[delta < 0].sum())
    return result, held, kept


# -- composition ---------------------------------------------------------------
#: Rounds of composition hold-back before the release is refused.
COMPOSITION_ROUNDS = 6


def current_person_values(
    tables: Mapping[str, pd.DataFrame],
    people: pd.DataFrame,
    keys: Sequence[str],
    requirement: Requirement,
    covers: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
) -> dict[str, PersonValues]:
    """Person values of every sensitive attribute some table of the release shows."""
    return {
        attribute: person_values(
            people, keys, tables, requirement.quasi_identifiers, attribute, covers
        )
        for attribute in requirement.sensitive_attributes
        if any(attribute in t.columns for t in tables.values())
    }


def exposed_persons(
    tables: Mapping[str, pd.DataFrame],
    people: pd.DataFrame,
    keys: Sequence[str],
    earlier: Sequence[Mapping[str, PersonValues]],
    requirement: Requirement,
    covers: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
) -> np.ndarray:
    """Rows of ``people`` whose record key this release brings below l (composition)."""
    keys = np.asarray([str(k) for k in keys], dtype=object)
    exposed: set[str] = set()
    for attribute, now in current_person_values(
        tables, people, keys, requirement, covers
    ).items():
        history = [e[attribute] for e in earlier if attribute in e]
        if not history:
            continue
        l = requirement.minimal_distinct_values_of(attribute)
        bad = composition_exposed(now, history, l)[3]
        exposed.update(now.keys[bad])
    return np.flatnonzero(np.isin(keys, list(exposed)))


def hold_back_composition(
    tables: Mapping[str, pd.DataFrame],
    series: Sequence[tuple[str, Mapping[str, pd.DataFrame]]],
    requirement: Requirement,
    people: pd.DataFrame,
    keys: Sequence[str],
    earlier: Sequence[Mapping[str, PersonValues]],
    covers: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
) -> tuple[dict[str, pd.DataFrame], HoldBack, int]:
    """Hold back against differencing and composition together.

    Differencing first (:func:`hold_back`). Then every class that may hold a
    person whom this release brings below l (the values common to all their
    releases, :func:`ppdm.verify.composition.composition_exposed`) is released as
    in the latest earlier release holding the same cells (its values then
    are those an earlier release already showed), or, when no earlier release
    holds it or it already is as before, withheld with its rows. A withheld
    class says nothing of the persons it would have matched. Differencing is
    checked again after each round.

    Returns
    -------
    tables, HoldBack, persons
        ``persons``: how many persons the first round found exposed.

    Raises
    ------
    VerificationError
        Persons are still exposed after :data:`COMPOSITION_ROUNDS` rounds.
    """
    names = sorted(tables)
    held = dict.fromkeys(names, 0)
    kept = dict.fromkeys(names, 0)
    classes = dict.fromkeys(names, 0)
    current = dict(tables)
    first = None
    for round_ in range(COMPOSITION_ROUNDS):
        current, step = hold_back(current, series, requirement, covers)
        _add(held, kept, classes, step)
        rows = exposed_persons(current, people, keys, earlier, requirement, covers)
        if first is None:
            first = len(np.unique(np.asarray(keys, dtype=object)[rows].astype(str)))
        if not len(rows):
            return current, HoldBack(held, kept, classes, _ids(series)), first
        current, step = _compose_as_before(
            current, series, requirement, people.iloc[rows], covers, withhold=round_ > 0
        )
        _add(held, kept, classes, step)
    raise VerificationError(
        f"republication refused, nothing was published: {len(rows)} person(s) "
        "present in earlier releases would have fewer common sensitive values "
        f"than l across the releases (composition), still after {COMPOSITION_ROUNDS} "
        "rounds of hold-back"
    )


def _ids(series: Sequence[tuple[str, Any]]) -> tuple[str, ...]:
    return tuple(rid for rid, _ in series)


def _add(
    held: dict[str, int], kept: dict[str, int], classes: dict[str, int], step: HoldBack
) -> None:
    for name in held:
        held[name] += step.held_back.get(name, 0)
        kept[name] += step.kept.get(name, 0)
        classes[name] += step.classes.get(name, 0)


def _compose_as_before(
    tables: Mapping[str, pd.DataFrame],
    series: Sequence[tuple[str, Mapping[str, pd.DataFrame]]],
    requirement: Requirement,
    persons: pd.DataFrame,
    covers: Mapping[str, Mapping[str, Sequence[str]]] | None,
    *,
    withhold: bool,
) -> tuple[dict[str, pd.DataFrame], HoldBack]:
    """The classes that may hold ``persons`` released as before, or withheld."""
    out: dict[str, pd.DataFrame] = {}
    held, kept, replaced = (dict.fromkeys(sorted(tables), 0) for _ in range(3))
    for name in sorted(tables):
        table = tables[name].astype(str)
        shows = any(a in table.columns for a in requirement.sensitive_attributes)
        qis = [q for q in requirement.quasi_identifiers if q in table.columns]
        if not shows or not len(persons):
            out[name] = table
            continue
        ids, _, matches = class_matches(
            persons, table, requirement.quasi_identifiers, covers
        )
        hit = np.flatnonzero(matches(np.arange(len(persons))).any(axis=0))
        if not len(hit):
            out[name] = table
            continue
        chosen = np.isin(ids, hit)
        earlier = paired_earlier(name, table, series)
        if withhold or not qis or not earlier:
            out[name] = table[~chosen]
            held[name] = int(chosen.sum())
        else:
            keys = table[chosen][qis].drop_duplicates().reset_index(drop=True)
            out[name], held[name], kept[name] = _as_before(
                table, keys, earlier, qis, requirement
            )
        replaced[name] = len(hit)
    return out, HoldBack(held, kept, replaced, _ids(series))


# -- consistent: the previous release's generalization, reused -----------------
def consistent_recoding(
    people: pd.DataFrame,
    rows: pd.DataFrame,
    earlier: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    covers: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
) -> tuple[pd.DataFrame, np.ndarray]:
    """Recode each row into the earlier release's class whose region contains it.

    Parameters
    ----------
    people : pandas.DataFrame
        The rows' quasi-identifier values as in the owner's table (text).
    rows : pandas.DataFrame
        The same rows as the algorithm would release them (text); their
        columns that are not quasi-identifiers are kept.
    earlier : pandas.DataFrame
        The earlier released table (text cells).
    quasi_identifiers : sequence of str
    covers : mapping, optional
        Hierarchy labels -> raw values, per attribute.

    Returns
    -------
    recoded : pandas.DataFrame
        The rows that an earlier class contains, with that class's cells
        (the class first in the cells' sort order when several contain it),
        in the columns of ``rows``.
    unmatched : numpy.ndarray
        Positions of the rows no earlier class contains.
    """
    qis = [q for q in quasi_identifiers if q in earlier.columns and q in rows.columns]
    if not qis or earlier.empty:  # no class to recode into
        return rows.iloc[:0].astype(str), np.arange(len(rows))
    ids, n, matches = class_matches(people, earlier, qis, covers)
    first = first_row_per_class(ids, n)
    cells = earlier.iloc[first][qis].astype(str).reset_index(drop=True)
    # The most specific class first (the smallest region: a suppressed
    # outlier class contains every row), then the cells' sort order.
    width = sum(
        cells[q].map(lambda text, q=q: cell_width(text, (covers or {}).get(q, {})))
        for q in qis
    ).to_numpy(dtype=float)
    order = np.lexsort([cells[q].to_numpy() for q in reversed(qis)] + [width])
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    chosen = np.full(len(rows), -1, dtype=np.int64)
    for start in range(0, len(rows), CHUNK):
        block = np.arange(start, min(start + CHUNK, len(rows)))
        hit = matches(block)
        ranked = np.where(hit, rank[None, :], n)
        best = ranked.min(axis=1)
        chosen[block] = np.where(best < n, order[np.minimum(best, n - 1)], -1)
    matched = chosen >= 0
    recoded = rows[matched].astype(str).reset_index(drop=True)
    for q in qis:
        recoded[q] = cells[q].to_numpy()[chosen[matched]]
    return recoded[list(rows.columns)], np.flatnonzero(~matched)


def failing_classes(table: pd.DataFrame, requirement: Requirement) -> pd.DataFrame:
    """Quasi-identifier cells of the classes the requirement refuses on their own."""
    qis = [q for q in requirement.quasi_identifiers if q in table.columns]
    present = set(table.columns)
    models = tuple(
        m
        for m in requirement.class_models
        if not m.uses_sensitive_attribute or m.sensitive_attribute in present
    )
    if not qis or not models or table.empty:
        return pd.DataFrame(columns=qis)
    judge = Requirement(
        requirement.quasi_identifiers, models, requirement.suppression_marker
    )
    partition = ClassPartition.of(table, qis)
    ok = judge.accepts(partition)
    return partition.keys(np.flatnonzero(~ok))[qis].astype(str).reset_index(drop=True)


#: The classes of earlier releases, replacing a candidate's (public name).
as_before = _as_before


@dataclass(frozen=True)
class ConsistentRecoding:
    """What the policy ``consistent`` did to each table, before holding back.

    Attributes
    ----------
    by_table : dict
        Table name -> ``(recoded, anew, withheld, kept, classes)``: rows
        recoded into an earlier class, rows anonymized on their own, rows
        withheld, rows of earlier releases kept, classes released as before
        or withheld.
    """

    by_table: dict[str, tuple[int, int, int, int, int]] = field(default_factory=dict)

    def add(
        self, name: str, recoded: int, anew: int, withheld: int, kept: int, classes: int
    ) -> ConsistentRecoding:
        return ConsistentRecoding(
            {**self.by_table, name: (recoded, anew, withheld, kept, classes)}
        )

    @property
    def recoded(self) -> int:
        return sum(t[0] for t in self.by_table.values())

    @property
    def anew(self) -> int:
        return sum(t[1] for t in self.by_table.values())

    def plus(self, held: HoldBack) -> HoldBack:
        """``held`` with this recoding's withheld and kept rows added."""
        withheld = dict(held.held_back)
        kept = dict(held.kept)
        classes = dict(held.classes)
        for name, (_, _, w, k, c) in self.by_table.items():
            withheld[name] = withheld.get(name, 0) + w
            kept[name] = kept.get(name, 0) + k
            classes[name] = classes.get(name, 0) + c
        return HoldBack(withheld, kept, classes, held.against)
