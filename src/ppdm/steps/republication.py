"""Republication: the candidate made safe next to the earlier releases of the dataset."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from ppdm.release.artifacts import (
    ArtifactRef,
    ArtifactStore,
)
from ppdm.release.republication import republish
from ppdm.steps.anonymize import AnonymizeSettings
from ppdm.steps.base import (
    Candidate,
    HierarchySource,
    RequirementField,
    StepSettings,
    hierarchies_of,
)
from ppdm.utility.loss import covers_from_hierarchies


class RepublicationSettings(StepSettings):
    """Republication: the earlier releases of the dataset and the policy.

    ``series`` lists the earlier releases (:class:`ppdm.release.series.EarlierRelease`
    as dicts, with each file's sha256), so a new release in the output
    directory changes the step's cache key.
    """

    requirement: RequirementField
    policy: Literal["hold-back", "consistent", "refuse", "off"] = "hold-back"
    series: list[dict[str, Any]] = Field(default_factory=list)
    seed: int = 0
    hierarchies: HierarchySource | None = Field(
        None, description="read hierarchy labels as the values they cover (roll-ups)"
    )
    record_key: str | None = Field(
        None, description="identifying column that follows persons (composition)"
    )
    anonymize: AnonymizeSettings | None = Field(
        None, description="policy consistent: anonymizes the rows no class contains"
    )

    def covers(self) -> Any:
        hierarchies = hierarchies_of(self.hierarchies)
        return covers_from_hierarchies(hierarchies) if hierarchies else None


def republication_step(
    settings: RepublicationSettings,
    store: ArtifactStore,
    candidate: Mapping[str, ArtifactRef],
    raw: ArtifactRef | None = None,
    quarantine: ArtifactRef | None = None,
    clean: ArtifactRef | None = None,
    discretized: ArtifactRef | None = None,
    source_sha256: str | None = None,
) -> Candidate:
    """Make the candidate safe next to the earlier releases of the dataset.

    With no earlier release, or the policy ``off``, the candidate passes
    unchanged (the verifier still measures and records the leaks of ``off``).
    An earlier release of the same source (``source_sha256``) holds the same
    rows: it is not held back against, it is read together with the
    candidate (:func:`same_source_releases`), and a group of persons the two
    releases together narrow below the requirement refuses the release
    unless the policy is ``off``. With ``record_key`` (and the raw snapshot,
    quarantine and clean table of this run), the composition check joins
    differencing, and the person values of the release are kept in the work
    directory for the next run (:mod:`ppdm.release.series_state`). The
    policy ``consistent`` first recodes the rows into the latest earlier
    release's classes (:func:`consistent_tables`, from ``clean`` and
    ``discretized``), then holds back. A refusal raises
    :class:`~ppdm.exceptions.VerificationError`; the run records it in the
    audit log (:func:`record_refusal`).
    """
    return republish(
        settings, store, candidate, raw, quarantine, clean, discretized, source_sha256
    )
