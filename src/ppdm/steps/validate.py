"""Validate: pandera and Great Expectations on the snapshot; rejected rows to quarantine."""

from __future__ import annotations

import functools

from ppdm.exceptions import DataValidationError
from ppdm.prepare import validation
from ppdm.prepare.roles import release_bound
from ppdm.release.artifacts import (
    ArtifactRef,
    ArtifactStore,
)
from ppdm.steps.base import (
    PartitionSettings,
    SchemaSource,
    StepSettings,
    Validated,
    resolve_pseudonym_key,
)


class ValidateSettings(StepSettings):
    """Validate: the contract, the rejection limit, and what may leave the building.

    ``released_columns`` are kept of the valid rows (identifiers, weights and
    dropped columns stop here); ``pseudonymized`` identifying columns are
    replaced by keyed pseudonyms, the key named by ``pseudonym_key`` and
    recorded only by its id (so a new key re-runs the step).
    """

    source: str
    max_rejected_fraction: float
    schema_source: SchemaSource
    released_columns: tuple[str, ...]
    pseudonymized: tuple[str, ...] = ()
    pseudonym_key: str | None = None
    pseudonym_key_id: str | None = None
    partitions: PartitionSettings | None = None


def validate_step(
    settings: ValidateSettings, store: ArtifactStore, raw: ArtifactRef
) -> Validated:
    """Validate with pandera and Great Expectations; quarantine rejected rows.

    The clean table keeps only what may be released (by role), with
    identifying columns as keyed pseudonyms when asked.
    """
    if settings.partitions is not None:
        return _validate_parts(settings, store, raw)
    table = store.read_table(raw)
    schema, suite = settings.schema_source.load()
    try:
        outcome = validation.validate_table(
            table,
            schema,
            suite,
            max_rejected_fraction=settings.max_rejected_fraction,
            source=settings.source,
        )
    except DataValidationError as err:
        _raise_with_quarantine(err, store)
        raise
    key = _pseudonym_key(settings)
    clean = release_bound(
        outcome.clean,
        settings.released_columns,
        pseudonymized=settings.pseudonymized,
        key=key,
    )
    return Validated(
        clean=store.put_table(clean, kind="clean-table"),
        quarantine=store.put_csv(outcome.quarantine, kind="quarantine"),
        validation=store.put_json(outcome.report, kind="validation-report"),
        summary=dict(outcome.report),
    )


def _validate_parts(
    settings: ValidateSettings, store: ArtifactStore, raw: ArtifactRef
) -> Validated:
    """Validate out of core: per part, the table-level expectations from summaries."""
    from ppdm.scale.engine import map_parts
    from ppdm.scale.steps import parts_of, put_parts
    from ppdm.scale.validate_parts import validate_partitions

    schema, suite = settings.schema_source.load()
    checked = store.staging()
    # Each partition's clean rows are cut to the columns a release may carry
    # where they are validated: written once, not written, read and written.
    bound = functools.partial(
        release_bound,
        columns=tuple(settings.released_columns),
        pseudonymized=tuple(settings.pseudonymized),
        key=_pseudonym_key(settings),
    )
    try:
        outcome = validate_partitions(
            parts_of(raw),
            schema,
            suite,
            max_rejected_fraction=settings.max_rejected_fraction,
            source=settings.source,
            out_dir=checked,
            map_parts=map_parts,
            finish=bound,
        )
    except DataValidationError as err:
        _raise_with_quarantine(err, store)
        raise
    import shutil

    clean_ref = put_parts(store, checked / "clean", kind="clean-table")
    shutil.rmtree(checked, ignore_errors=True)
    return Validated(
        clean=clean_ref,
        quarantine=store.put_csv(outcome.quarantine, kind="quarantine"),
        validation=store.put_json(outcome.report, kind="validation-report"),
        summary=dict(outcome.report),
    )


def _raise_with_quarantine(err: DataValidationError, store: ArtifactStore) -> None:
    """Raise the rejection with its rejected rows kept in the work directory and
    named; return when it carries none (the caller re-raises it as it is)."""
    outcome = getattr(err, "outcome", None)
    if outcome is None:
        return
    ref = store.put_csv(outcome.quarantine, kind="quarantine")
    raise type(err)(
        f"{err} Rejected rows and reasons: {ref.path}", err.failure_cases
    ) from err


def _pseudonym_key(settings: ValidateSettings) -> bytes | None:
    if settings.pseudonym_key is None:
        return None
    return resolve_pseudonym_key(settings.pseudonym_key)
