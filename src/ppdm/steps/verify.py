"""Verify: the independent verifier re-reads the candidate files and certifies them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ppdm.exceptions import VerificationError
from ppdm.generalization.hierarchies import Hierarchy
from ppdm.privacy import Requirement
from ppdm.release import audit
from ppdm.release.artifacts import (
    ArtifactRef,
    ArtifactStore,
)
from ppdm.release.republication import checked_against_series
from ppdm.steps.base import (
    HierarchySource,
    RequirementField,
    StepSettings,
    Verified,
    candidate_files,
    hierarchies_of,
    utc_now,
)
from ppdm.steps.republication import RepublicationSettings
from ppdm.utility.loss import covers_from_hierarchies
from ppdm.verify import VerifyOptions, verify_files
from ppdm.verify.differential import check_released_files
from ppdm.verify.passthrough import PassthroughPolicy


class VerifySettings(StepSettings):
    """Verify: the requirement, the engine, and where a rejection is recorded."""

    algorithm: str
    requirement: RequirementField
    engine: Literal["auto", "pandas", "dask"]
    size_threshold_mb: float
    memory_limit: str
    hierarchies: HierarchySource | None = Field(
        None, description="read released hierarchy labels as the values they cover"
    )
    audit_log: str
    audit_key: str = "env:PPDM_AUDIT_KEY"
    passthrough: dict[str, Any] = Field(
        default_factory=dict,
        description="columns released as is, those accepted, and the limits",
    )
    republication: RepublicationSettings | None = Field(
        None, description="earlier releases the candidate is checked against"
    )
    # Differential privacy entry (ppdm.verify.differential): the algorithm's
    # parameters and the columns the configuration releases.
    algorithm_params: dict[str, Any] = Field(default_factory=dict)
    released_columns: tuple[str, ...] = ()


def verify_step(
    settings: VerifySettings,
    store: ArtifactStore,
    candidate: Mapping[str, ArtifactRef],
    original: ArtifactRef,
    source_sha256: str,
) -> Verified:
    """Re-check the candidate files independently; fail (and publish nothing) if short."""
    for ref in candidate.values():
        ref.verify()
    files = candidate_files(candidate)
    hierarchies = hierarchies_of(settings.hierarchies)
    if any(ref.partitioned for ref in candidate.values()):
        certificate = _verify_parts(settings, candidate, source_sha256, hierarchies)
        return _verified(settings, store, certificate)
    population = store.read_table(original)
    options = VerifyOptions(
        original=population,
        input_sha256=source_sha256,
        covers=covers_from_hierarchies(hierarchies) if hierarchies else None,
        passthrough=PassthroughPolicy.from_dict(settings.passthrough),
    )
    if _out_of_core(settings, files, settings.requirement):
        from ppdm.scale.engine import current_client
        from ppdm.verify.out_of_core import verify_tables_out_of_core

        certificate = verify_tables_out_of_core(
            files,
            settings.requirement,
            options,
            memory_limit=settings.memory_limit,
            client=current_client(),  # the run's cluster, if a run is under way
        )
    else:
        certificate = verify_files(files, settings.requirement, options)
    if settings.republication is not None:
        certificate = checked_against_series(
            certificate, settings.republication, files, store, original, source_sha256
        )
    certificate = certificate.with_differential_privacy(  # None: not a DP release
        check_released_files(
            files,
            settings.algorithm,
            settings.algorithm_params,
            declared_columns=settings.released_columns,
            n_rows=len(population),
        )
    )
    return _verified(settings, store, certificate)


def _verify_parts(
    settings: VerifySettings,
    candidate: Mapping[str, ArtifactRef],
    source_sha256: str,
    hierarchies: Mapping[str, Hierarchy] | None,
) -> Any:
    """Verify a partitioned candidate on the release's cluster, out of core.

    The clean table is not read into memory: the journalist and marketer
    risks (which need the population) and the proxy part of the pass-through
    check are left out, and the certificate says so.
    """
    from ppdm.scale.engine import current_client
    from ppdm.verify.out_of_core import verify_parquet

    (name, ref), *more = sorted(candidate.items())
    if more:  # the algorithms that run on frequency tables release one table
        raise VerificationError(
            f"an out-of-core release holds one table; the candidate holds "
            f"{1 + len(more)}",
            {},
        )
    certificate = verify_parquet(
        ref.path,
        settings.requirement,
        VerifyOptions(
            input_sha256=source_sha256,
            covers=covers_from_hierarchies(hierarchies) if hierarchies else None,
            passthrough=PassthroughPolicy.from_dict(settings.passthrough),
        ),
        engine="dask",
        memory_limit=settings.memory_limit,
        name=name,
        client=current_client(),
    )
    from dataclasses import replace

    note = (
        "journalist and marketer risks not computed: an out-of-core release does "
        "not read the population (the clean table) into memory"
    )
    tables = tuple(
        replace(table, risk=replace(table.risk, population_note=note))
        if table.risk.population_rows is None
        else table
        for table in certificate.tables
    )
    return replace(certificate, tables=tables)


def _verified(
    settings: VerifySettings, store: ArtifactStore, certificate: Any
) -> Verified:
    """Store the certificate; a failed one is logged in the audit chain and raised."""
    ref = store.put_json(certificate.to_dict(), kind="certificate")
    if not certificate.passed:
        audit.append_entry(
            settings.audit_log,
            {
                "event": "release-rejected",
                "dataset": settings.dataset,
                "algorithm": settings.algorithm,
                "reason": certificate.summary(),
                "certificate_sha256": ref.sha256,
                "created_at": utc_now(),
            },
            key=settings.audit_key,
        )
        raise VerificationError(
            f"verification failed, nothing was published: {certificate.summary()}",
            certificate.to_dict(),
        )
    return Verified(certificate=ref, summary=certificate.to_dict())


def _out_of_core(
    settings: VerifySettings, files: Mapping[str, Path], requirement: Requirement
) -> bool:
    """Verify with Dask when configured, or (auto) when the candidate is large.

    Auto keeps a release with release models (checked on all tables together)
    in memory.
    """
    if settings.engine == "auto" and requirement.release_models:
        return False
    if settings.engine != "auto":
        return settings.engine == "dask"
    size = sum(path.stat().st_size for path in files.values())
    return size > settings.size_threshold_mb * 2**20


def record_refusal(settings: VerifySettings, step: str, refused: Exception) -> None:
    """Append a refusal of ``step`` to the audit log, as a failed verification is.

    Called by the run, not the step: where the audit log is does not enter
    the step's settings (its cache key).
    """
    audit.append_entry(
        settings.audit_log,
        {
            "event": "release-rejected",
            "dataset": settings.dataset,
            "algorithm": settings.algorithm,
            "step": step,
            "reason": str(refused),
            "created_at": utc_now(),
        },
        key=settings.audit_key,
    )
