"""Publish: the release directory assembled, renamed into place and logged in the audit chain."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from ppdm.release import budget
from ppdm.release.artifacts import (
    ArtifactRef,
    canonical_json,
    sha256_bytes,
    sha256_file,
)
from ppdm.release.data_files import data_file_names, released_header
from ppdm.release.manifest import (
    audit_entry,
    identity_config,
    record_page,
    release_manifest,
)
from ppdm.release.publish import publish_directory
from ppdm.steps.base import (
    Candidate,
    Discretized,
    HierarchySource,
    Reported,
    RequirementField,
    SchemaSource,
    StepSettings,
    Validated,
    Verified,
    utc_now,
)


class PublishSettings(StepSettings):
    """Publish: the whole configuration, for the manifest, and where to publish."""

    output_dir: str
    algorithm: str
    params: dict[str, Any]
    quasi_identifiers: tuple[str, ...]
    sensitive_attribute: str | None
    target: str | None
    requirement: RequirementField
    suppression_limit: float
    seed: int
    source: str
    config: dict[str, Any]
    hierarchies: HierarchySource | None = None
    schema_source: SchemaSource | None = None
    roles: dict[str, str] = Field(default_factory=dict)
    passthrough: dict[str, Any] = Field(default_factory=dict)
    audit_key: str = "env:PPDM_AUDIT_KEY"


def publish_step(
    settings: PublishSettings,
    source_sha256: str,
    files_in: ReleaseFiles,
    series: Mapping[str, Any] | None = None,
    flow_run_id: str | None = None,
) -> Path:
    """Publish an immutable release directory atomically and log it in the audit chain.

    ``files_in`` are the released tables and the artifacts published beside
    them (:func:`release_files`). The directory is assembled under a temporary name beside its
    final place and renamed in one step. Its id is derived from the released
    content, so a re-run with the same inputs, config and seed finds its own
    release instead of writing a second copy.

    ``report.html`` is rendered here, from ``utility.json``, as the record of
    the release: its id, creation time and audit key id are known only now,
    so the page is left out of the id (it is derived from the other files)
    and a republication keeps the page first published. ``series`` is the
    republication step's summary (rows held back, counts only).
    """
    out_dir = Path(settings.output_dir)
    for ref in files_in.refs():
        ref.verify()
    laid_out = data_file_names(files_in.tables)
    named = {rel: path for rel, (path, _) in laid_out.items()}
    rows = {rel: n for rel, (_, n) in laid_out.items()}
    named.update(
        {
            "verification.json": Path(files_in.certificate.path),
            "utility.json": Path(files_in.utility.path),
            "evidence.json": Path(files_in.evidence.path),
            "cut_points.json": Path(files_in.cut_points.path),
            "validation.json": Path(files_in.validation.path),
        }
    )
    hashes = {rel: sha256_file(path) for rel, path in named.items()}
    files = [
        {
            "path": rel,
            "sha256": hashes[rel],
            "rows": rows[rel],
            "columns": released_header(named[rel]),
        }
        for rel in sorted(rows)
    ]
    identity = {
        "source_sha256": source_sha256,
        "config": identity_config(settings.config),
        "files": hashes,
    }
    release_id = sha256_bytes(canonical_json(identity))[:16]
    release_dir = out_dir / settings.dataset / release_id
    created_at = utc_now()
    # The page is rendered under the audit log's lock, once its entry's number
    # is known; a partial (not a closure) so the call can be pickled.
    page = functools.partial(
        record_page,
        settings,
        Path(files_in.utility.path),
        release_id=release_id,
        created_at=created_at,
        source_sha256=source_sha256,
        series=dict(series) if series is not None else None,
    )

    manifest = release_manifest(
        settings,
        release_id=release_id,
        source_sha256=source_sha256,
        files=files,
        artifacts={rel: h for rel, h in hashes.items() if rel not in rows},
        created_at=created_at,
        flow_run_id=flow_run_id,
    )
    certificate = json.loads(Path(files_in.certificate.path).read_bytes())
    entry = audit_entry(settings, manifest, certificate.get("series"))
    # A differentially private release records its spend and is refused, under
    # the audit log's lock, beyond its dataset's budget (ppdm.release.budget).
    spend = budget.publication(
        settings.algorithm,
        settings.params,
        files_in.evidence.path,
        settings.dataset,
        settings.config.get("privacy_budget"),
    )
    manifest.update(spend.fields)
    entry.update(spend.fields)
    return publish_directory(
        out_dir,
        release_dir,
        named,
        hashes,
        manifest,
        entry,
        page,
        audit_key=settings.audit_key,
        check=spend.check,
    )


@dataclass(frozen=True)
class ReleaseFiles:
    """What a release directory is made of: the released tables by name, and
    the artifacts published beside them."""

    tables: dict[str, ArtifactRef]
    certificate: ArtifactRef
    utility: ArtifactRef
    report: ArtifactRef
    evidence: ArtifactRef
    cut_points: ArtifactRef
    validation: ArtifactRef

    def refs(self) -> list[ArtifactRef]:
        """Every reference, tables first."""
        return [
            *self.tables.values(),
            self.certificate,
            self.utility,
            self.report,
            self.evidence,
            self.cut_points,
            self.validation,
        ]


def release_files(
    validated: Validated,
    binned: Discretized,
    anonymized: Candidate,
    verified: Verified,
    reported: Reported,
    released: Candidate | None = None,
) -> ReleaseFiles:
    """Everything :func:`publish_step` puts in a release directory.

    ``released`` is the republication step's candidate when it changed the
    anonymize step's tables.
    """
    assert anonymized.evidence is not None
    return ReleaseFiles(
        tables=dict((released or anonymized).tables),
        certificate=verified.certificate,
        utility=reported.utility,
        report=reported.report,
        evidence=anonymized.evidence,
        cut_points=binned.cut_points,
        validation=validated.validation,
    )
