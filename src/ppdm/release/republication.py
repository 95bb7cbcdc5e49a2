"""The series logic of a release: hold back, consistent classes, same source, composition.

The republication step (:mod:`ppdm.steps.republication`) calls :func:`republish`;
the verify step adds the series part of the certificate with
:func:`checked_against_series`. Both compare the candidate with the earlier
releases of the dataset that are not a republication of the same files."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdm.exceptions import DataValidationError, VerificationError
from ppdm.prepare import validation
from ppdm.release.artifacts import (
    ArtifactRef,
    ArtifactStore,
    sha256_file,
)
from ppdm.release.data_files import (
    as_released,
    put_released_table,
    read_released_table,
)
from ppdm.release.row_order import shuffled_rows
from ppdm.steps.base import Candidate, candidate_files, hierarchies_of

if TYPE_CHECKING:
    from ppdm.steps.republication import RepublicationSettings


def comparable_releases(
    settings: RepublicationSettings, files: Mapping[str, Path]
) -> list[Any]:
    """The earlier releases to compare with: all but a republication of these files."""
    from ppdm.release.series import EarlierRelease

    if not settings.series:
        return []
    digests = {name: sha256_file(path) for name, path in files.items()}
    series = [EarlierRelease.from_dict(d) for d in settings.series]
    return [r for r in series if {n: sha for n, (_, sha) in r.files.items()} != digests]


def persons_with_keys(
    settings: RepublicationSettings,
    store: ArtifactStore,
    raw: ArtifactRef,
    quarantine: ArtifactRef | None,
    clean: ArtifactRef,
) -> tuple[pd.DataFrame, list[str]]:
    """The persons of the clean table: quasi-identifiers as text, and record keys.

    The record key is an identifying column, so the clean table does not hold
    it; it is read from the raw snapshot (private, in the work directory),
    row for row without the rows validation quarantined.
    """
    table = store.read_table(clean)
    source = store.read_table(raw)
    rejected = np.empty(0, dtype=np.int64)
    if quarantine is not None and quarantine.rows:
        quarantine.verify()
        rejected = pd.read_csv(quarantine.path, usecols=[validation.SOURCE_ROW])[
            validation.SOURCE_ROW
        ].to_numpy(np.int64)
    keep = np.setdiff1d(np.arange(len(source), dtype=np.int64), rejected)
    if len(keep) != len(table):  # the snapshot and the clean table disagree
        raise DataValidationError(
            f"republication.record_key {settings.record_key!r}: the clean table has "
            f"{len(table)} rows, the raw snapshot {len(keep)} after quarantine"
        )
    keys = source[settings.record_key].iloc[keep].astype("string").fillna("")
    qis = [q for q in settings.requirement.quasi_identifiers if q in table.columns]
    people = pd.DataFrame(
        {q: table[q].astype("string").fillna("").astype(str) for q in qis}
    )
    return people, keys.astype(str).tolist()


def kept_states(
    settings: RepublicationSettings, store: ArtifactStore, earlier: list[Any]
) -> tuple[list[tuple[str, Any]], dict[str, str]]:
    """The person values of the earlier releases, and why some are missing."""
    from ppdm.release.series_state import load_state

    found, missing = [], {}
    for release in earlier:
        state = load_state(
            store, settings.dataset, {n: sha for n, (_, sha) in release.files.items()}
        )
        if isinstance(state, str):
            missing[release.release_id] = state
        else:
            found.append((release.release_id, state.values))
    return found, missing


#: What a refusal of the series check tells the data owner to do.
SERIES_REMEDY = (
    "to compare algorithms or parameters on one table, release into another "
    "output directory; to publish anyway, set republication policy: off (the "
    "risk is then recorded as accepted in the certificate and the audit log)"
)


def republish(
    settings: RepublicationSettings,
    store: ArtifactStore,
    candidate: Mapping[str, ArtifactRef],
    raw: ArtifactRef | None,
    quarantine: ArtifactRef | None,
    clean: ArtifactRef | None,
    discretized: ArtifactRef | None,
    source_sha256: str | None,
) -> Candidate:
    from ppdm.release.series import (
        exposed_persons,
        hold_back,
        hold_back_composition,
        load_tables,
    )

    files = candidate_files(candidate)
    earlier = comparable_releases(settings, files)
    same = same_source_releases(settings, store, files, earlier, clean, source_sha256)
    earlier = [r for r in earlier if r.release_id not in same]
    summary: dict[str, Any] = {
        "policy": settings.policy,
        "against": [r.release_id for r in earlier],
        "same_source": sorted(same),
        "rows_held_back": 0,
        "rows_kept_from_earlier_releases": 0,
        "classes_released_as_before": 0,
    }
    people = keys = None
    if settings.record_key is not None and raw is not None and clean is not None:
        people, keys = persons_with_keys(settings, store, raw, quarantine, clean)
        summary["composition_persons_exposed"] = 0

    def done(
        tables: dict[str, ArtifactRef], held_back: ArtifactRef | None = None
    ) -> Candidate:
        if people is not None:
            keep_state(settings, store, tables, people, keys)
        return Candidate(tables=tables, held_back=held_back, summary=summary)

    if not earlier or settings.policy == "off":
        return done(dict(candidate))
    tables = {name: read_released_table(path) for name, path in files.items()}
    series = [(r.release_id, load_tables(r)) for r in earlier]
    requirement = settings.requirement
    states = kept_states(settings, store, earlier)[0] if people is not None else []
    if settings.policy == "refuse":
        from ppdm.privacy import Differencing

        differencing = Differencing(requirement, covers=settings.covers())
        leaks = [
            result.summary()
            + (f", e.g. {result.examples[0]}" if result.examples else "")
            for rid, old in series
            for result in differencing.check(tables, old, against=rid)
            if result.leaks
        ]
        if people is not None and states:
            exposed = exposed_persons(
                tables,
                people,
                keys,
                [v for _, v in states],
                requirement,
                settings.covers(),
            )
            if len(exposed):
                leaks.append(
                    f"{len(set(np.asarray(keys)[exposed]))} person(s) present in "
                    "earlier releases would have fewer common sensitive values "
                    "than l across the releases (composition)"
                )
        if leaks:
            raise VerificationError(
                "republication refused, nothing was published (republication "
                "policy 'refuse'): " + "; ".join(leaks)
            )
        return done(dict(candidate))
    recoding = None
    if (
        settings.policy == "consistent"
        and clean is not None
        and discretized is not None
    ):
        tables, recoding = consistent_tables(
            settings, store, tables, series, clean, discretized
        )
    if people is not None and states:
        safe, held, exposed = hold_back_composition(
            tables,
            series,
            requirement,
            people,
            keys,
            [v for _, v in states],
            settings.covers(),
        )
        summary["composition_persons_exposed"] = exposed
    else:
        safe, held = hold_back(tables, series, requirement, settings.covers())
    if recoding is not None:
        held = recoding.plus(held)
        summary["rows_recoded_into_earlier_classes"] = recoding.recoded
        summary["rows_anonymized_anew"] = recoding.anew
    summary.update(
        {k: v for k, v in held.to_dict().items() if k != "against"},
    )
    if not held.changed and recoding is None:
        return done(dict(candidate))
    shuffle = np.random.default_rng(np.random.SeedSequence(settings.seed).spawn(2)[1])
    released = dict(candidate)
    for name, frame in sorted(safe.items()):
        if held.classes[name] or recoding is not None:
            # Sorted first, so the bytes depend on the rows released, not on the
            # order in which earlier releases were consulted (a republish of
            # the same input finds its own release).
            rows = frame.sort_values(list(frame.columns), kind="stable")
            released[name] = put_released_table(store, shuffled_rows(rows, shuffle))
    return done(released, store.put_json(summary, kind="held-back"))


def same_source_releases(
    settings: RepublicationSettings,
    store: ArtifactStore,
    files: Mapping[str, Path],
    earlier: list[Any],
    clean: ArtifactRef | None,
    source_sha256: str | None,
) -> set[str]:
    """The ids of the earlier releases made from this run's source, checked.

    Nobody arrived or left between them and this run, so there is nothing to
    hold back; read together with the candidate, every group of persons by
    their class in each must meet the requirement
    (:func:`ppdm.verify.same_rows.check_same_rows`), else the release is refused.
    Under the policy ``off`` the verifier records the figures instead.
    """
    from ppdm.privacy import SameRows
    from ppdm.release.series import load_tables

    same = [
        r
        for r in earlier
        if source_sha256 is not None and r.source_sha256 == source_sha256
    ]
    ids = {r.release_id for r in same}
    if not same or settings.policy == "off":
        return ids
    if clean is None:
        raise VerificationError(
            "republication refused, nothing was published: release(s) "
            + ", ".join(sorted(ids))
            + " were made from the same source, and the check of the two read "
            "together needs the clean table, which was not given"
        )
    tables = {name: read_released_table(path) for name, path in files.items()}
    people = people_values(settings.requirement, store.read_table(clean))
    same_rows = SameRows(settings.requirement, people, covers=settings.covers())
    for release in same:
        leaking = [
            r
            for r in same_rows.check(
                tables, load_tables(release), against=release.release_id
            )
            if r.leaks
        ]
        if leaking:
            groups = sum(r.n_leaking_groups for r in leaking)
            persons = sum(r.rows_exposed for r in leaking)
            example = next((r.examples[0] for r in leaking if r.examples), None)
            raise VerificationError(
                "republication refused, nothing was published: release "
                f"{release.release_id} of {settings.dataset} was made from the "
                f"same source (sha256 {source_sha256}) with other classes; read "
                "together, its classes and this candidate's intersect into "
                f"{groups} group(s) of {persons} persons in all that do not meet "
                + ", ".join(str(m) for m in settings.requirement.models)
                + (f" (e.g. {example})" if example else "")
                + "; "
                + SERIES_REMEDY
            )
    return ids


def people_values(requirement: Any, clean: pd.DataFrame) -> pd.DataFrame:
    """The quasi-identifiers and sensitive attributes of the clean table, as text."""
    columns = [
        c
        for c in (*requirement.quasi_identifiers, *requirement.sensitive_attributes)
        if c in clean.columns
    ]
    return pd.DataFrame(
        {c: clean[c].astype("string").fillna("").astype(str) for c in columns}
    )


def consistent_tables(
    settings: RepublicationSettings,
    store: ArtifactStore,
    tables: Mapping[str, pd.DataFrame],
    series: list[tuple[str, dict[str, pd.DataFrame]]],
    clean: ArtifactRef,
    discretized: ArtifactRef,
) -> tuple[dict[str, pd.DataFrame], Any]:
    """The policy ``consistent``: the latest earlier release's classes, reused.

    Every row that a class of the latest earlier release contains is
    released with that class's cells; the algorithm anonymizes the other
    rows on their own (rows it cannot, fewer than k say, are held back). A
    class that the requirement then refuses on its own (it lost members) is
    released as in the latest earlier release holding it, or withheld.
    """
    from ppdm.exceptions import AnonymizationError
    from ppdm.release.series import (
        ConsistentRecoding,
        as_before,
        consistent_recoding,
        failing_classes,
        paired_earlier,
    )

    requirement = settings.requirement
    covers = settings.covers()
    clean_table = store.read_table(clean)
    binned = store.read_table(discretized)
    out: dict[str, pd.DataFrame] = {}
    recoding = ConsistentRecoding()
    for name, table in sorted(tables.items()):
        earlier = paired_earlier(name, table, series)
        qis = [q for q in requirement.quasi_identifiers if q in table.columns]
        if not earlier or not qis:
            out[name] = table
            continue
        columns = list(table.columns)
        people = pd.DataFrame(
            {q: clean_table[q].astype("string").fillna("").astype(str) for q in qis}
        )
        rows = as_released(binned[columns])
        recoded, unmatched = consistent_recoding(
            people, rows, earlier[-1][1], qis, covers
        )
        pieces, withheld = [recoded], 0
        if len(unmatched):
            assert settings.anonymize is not None
            try:
                release = settings.anonymize.build_algorithm().anonymize(
                    binned.iloc[unmatched].reset_index(drop=True),
                    settings.anonymize.spec(
                        hierarchies_of(settings.anonymize.hierarchies)
                    ),
                    np.random.default_rng(settings.anonymize.seed),
                )
                pieces.append(as_released(release.tables[name])[columns])
            except AnonymizationError:  # too few for a release of their own
                withheld = len(unmatched)
        result = pd.concat(pieces, ignore_index=True)
        kept = 0
        failing = failing_classes(result, requirement)
        if len(failing):
            result, held, kept = as_before(result, failing, earlier, qis, requirement)
            withheld += held
        failing = failing_classes(result, requirement)
        if len(failing):  # not in an earlier release either: withheld
            marked = failing.assign(_fail=True)
            drop = result[qis].merge(marked, on=qis, how="left")["_fail"].notna()
            withheld += int(drop.sum())
            result = result[~drop.to_numpy()].reset_index(drop=True)
        out[name] = result
        recoding = recoding.add(
            name, len(recoded), len(unmatched), withheld, kept, len(failing)
        )
    return out, recoding


def keep_state(
    settings: RepublicationSettings,
    store: ArtifactStore,
    candidate: Mapping[str, ArtifactRef],
    people: pd.DataFrame,
    keys: list[str],
) -> None:
    """Keep the released person values for the next run's composition check."""
    from ppdm.release.series import current_person_values
    from ppdm.release.series_state import save_state

    files = candidate_files(candidate)
    tables = {name: read_released_table(path) for name, path in files.items()}
    values = current_person_values(
        tables, people, keys, settings.requirement, settings.covers()
    )
    save_state(
        store,
        settings.dataset,
        {name: candidate[name].sha256 for name in files},
        str(settings.record_key),
        keys,
        values,
    )


def checked_against_series(
    certificate: Any,
    settings: RepublicationSettings,
    files: Mapping[str, Path],
    store: ArtifactStore | None = None,
    original: ArtifactRef | None = None,
    source_sha256: str | None = None,
) -> Any:
    """The certificate with the series checks against the earlier releases.

    Differencing on the released files; against a release of the same
    source, the two read together (the persons of the clean table grouped
    by their class in each); composition when a record key is
    configured: the verifier recomputes each person's values from the
    released files, the clean table and the record keys the republication
    step kept, and compares them with the kept state of the earlier releases.
    """
    from ppdm.privacy import Differencing, SameRows
    from ppdm.release.series import load_tables

    earlier = comparable_releases(settings, files)
    if not earlier:  # only a republication of these very files
        return certificate
    tables = {name: read_released_table(path) for name, path in files.items()}
    covers = settings.covers()
    accepted = settings.policy == "off"
    people = None
    if store is not None and original is not None and source_sha256 is not None:
        people = people_values(settings.requirement, store.read_table(original))
    requirement = settings.requirement
    differencing = Differencing(requirement, accepted=accepted, covers=covers)
    same_rows = (
        None
        if people is None
        else SameRows(requirement, people, accepted=accepted, covers=covers)
    )
    results = []
    for release in earlier:
        # Against a release of the same source nobody arrived or left: the two
        # are read together instead of differenced.
        check = (
            same_rows
            if same_rows is not None and release.source_sha256 == source_sha256
            else differencing
        )
        results.extend(
            check.check(tables, load_tables(release), against=release.release_id)
        )
    earlier = [r for r in earlier if people is None or r.source_sha256 != source_sha256]
    composition = composition_report(settings, store, original, files, tables, earlier)
    return certificate.with_series(results, composition)


def composition_report(
    settings: RepublicationSettings,
    store: ArtifactStore | None,
    original: ArtifactRef | None,
    files: Mapping[str, Path],
    tables: Mapping[str, pd.DataFrame],
    earlier: list[Any],
) -> Any:
    """The composition part of the certificate's series section."""
    from ppdm.privacy import Composition
    from ppdm.release.series import current_person_values
    from ppdm.release.series_state import load_state, merge
    from ppdm.verify.composition import CompositionReport

    if settings.record_key is None:
        return CompositionReport.not_run(
            "no record key is configured (republication.record_key)"
        )
    if store is None or original is None:
        return CompositionReport.not_run("the clean table was not given")
    digests = {name: sha256_file(path) for name, path in files.items()}
    state = load_state(store, settings.dataset, digests)
    if isinstance(state, str):
        return CompositionReport.not_run(f"this release has {state}")
    clean = store.read_table(original)
    keys = json.loads(Path(state.keys.path).read_text(encoding="utf-8"))
    qis = [q for q in settings.requirement.quasi_identifiers if q in clean.columns]
    people = pd.DataFrame(
        {q: clean[q].astype("string").fillna("").astype(str) for q in qis}
    )
    if len(keys) != len(people):
        return CompositionReport.not_run(
            f"the kept record keys ({len(keys)}) do not match the clean table "
            f"({len(people)} rows)"
        )
    current = current_person_values(
        tables, people, keys, settings.requirement, settings.covers()
    )
    found, missing = kept_states(settings, store, earlier)
    results = Composition(
        settings.requirement, accepted=settings.policy == "off"
    ).check(current, found)
    # The kept state holds this release's persons as the verifier sees them
    # (merged with an earlier run that published the same files, if any).
    agrees = set(current) == set(state.values) and all(
        merge(current[a], state.values[a]).to_dict() == state.values[a].to_dict()
        for a in current
    )
    return CompositionReport(
        record_key=str(settings.record_key),
        results=tuple(results),
        missing=missing,
        consistent=agrees,
    )
