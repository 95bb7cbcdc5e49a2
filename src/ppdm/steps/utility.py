"""Utility report: information loss, hold-out accuracy and risk; utility.json and report.html."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

import pandas as pd
from pydantic import Field

from ppdm import parallel
from ppdm.release import provenance
from ppdm.release.artifacts import (
    ArtifactRef,
    ArtifactStore,
)
from ppdm.release.data_files import read_released_table
from ppdm.steps.anonymize import AnonymizeSettings
from ppdm.steps.base import (
    HierarchySource,
    PartitionSettings,
    Reported,
    StepSettings,
    candidate_files,
    hierarchies_of,
)
from ppdm.steps.discretize import DiscretizeSettings
from ppdm.utility.report import (
    release_record,
    utility_report,
)


class UtilitySettings(StepSettings):
    """Utility report: the release it re-makes on the training split, the protocol."""

    anonymize: AnonymizeSettings
    discretize: DiscretizeSettings
    test_size: float
    hierarchies: HierarchySource | None = None
    title: str
    roles: dict[str, str] = Field(default_factory=dict)
    pseudonymized: tuple[str, ...] = ()
    partitions: PartitionSettings | None = None


def utility_step(
    settings: UtilitySettings,
    store: ArtifactStore,
    clean: ArtifactRef,
    candidate: Mapping[str, ArtifactRef],
    evidence: ArtifactRef,
    certificate: ArtifactRef,
) -> Reported:
    """Information loss, hold-out accuracy and risk; utility.json and report.html.

    The hold-out protocol re-makes the release on the training split, with the
    discretization fitted on that split only (no test row shapes a cut point).
    """
    hierarchies = hierarchies_of(settings.hierarchies)
    # A pseudonym is a row key, not a feature: the learners never see it.
    hidden = list(settings.pseudonymized)
    measured_on = None
    if settings.partitions is not None:
        original, released, measured_on = _utility_sample(settings, clean, candidate)
        released = {
            name: frame.drop(columns=hidden, errors="ignore")
            for name, frame in released.items()
        }
    else:
        original = store.read_table(clean)
        released = {
            name: read_released_table(path).drop(columns=hidden, errors="ignore")
            for name, path in candidate_files(candidate).items()
        }
    checked = store.read_json(certificate)
    risk = {name: table["risk"] for name, table in checked["tables"].items()}
    record = release_record(
        checked,
        {name: ref.sha256 for name, ref in candidate.items()},
        dataset=settings.dataset,
        algorithm=settings.anonymize.algorithm,
        code_version=provenance.code_version(),
        library_versions=provenance.library_versions(),
        sample=released,
    )
    if measured_on is not None:
        record["measured_on"] = measured_on
    with _models_trained_where(settings):
        utility, html = utility_report(
            original.drop(columns=hidden, errors="ignore"),
            released,
            algorithm=settings.anonymize.build_algorithm(),
            spec=settings.anonymize.spec(hierarchies),
            discretize_settings=settings.discretize,
            test_size=settings.test_size,
            seed=settings.anonymize.seed,
            evidence=store.read_json(evidence)["evidence"],
            risk=risk,
            title=settings.title,
            roles=dict(settings.roles),
            passthrough=checked.get("passthrough"),
            pseudonymized=hidden,
            record=record,
        )
    utility["title"] = settings.title
    return Reported(
        utility=store.put_json(utility, kind="utility"),
        report=store.put_bytes(html.encode("utf-8"), kind="report", suffix="html"),
        summary=utility,
    )


def _models_trained_where(
    settings: UtilitySettings,
) -> contextlib.AbstractContextManager[None]:
    """Out of core, the report's models train on the cluster's workers.

    They are idle by then, and the driver would fit the models one after the
    other. When the flow already spreads independent evaluations (its task
    runner), or in memory, nothing changes. Each model's result is the same
    wherever it is fitted: its seed is in the job.
    """
    if settings.partitions is None or parallel.installed() is not None:
        return contextlib.nullcontext()
    from ppdm.scale.engine import map_large

    return parallel.mapped_by(map_large)


def _utility_sample(
    settings: UtilitySettings,
    clean: ArtifactRef,
    candidate: Mapping[str, ArtifactRef],
) -> tuple[pd.DataFrame, dict[str, pd.DataFrame], dict[str, Any]]:
    """Seeded samples of the clean and the released parts, for the utility report.

    The hold-out protocol re-makes the release in memory on the clean
    sample's training split; the information loss is measured on the sample
    of released rows. The report states the sample's size.
    """
    from ppdm.release.data_files import released_text
    from ppdm.scale.steps import parts_of, sample_parts

    rows = settings.partitions.sample_rows
    seed = settings.anonymize.seed
    original = sample_parts(parts_of(clean), rows, total=clean.rows, seed=seed)
    released = {
        name: released_text(
            sample_parts(parts_of(ref), rows, total=ref.rows, seed=seed)
        )
        for name, ref in candidate.items()
    }
    measured_on = {
        "clean_rows": len(original),
        "clean_rows_total": clean.rows,
        "released_rows": {name: len(frame) for name, frame in released.items()},
        "released_rows_total": {name: ref.rows for name, ref in candidate.items()},
        "seed": seed,
    }
    return original, released, measured_on
