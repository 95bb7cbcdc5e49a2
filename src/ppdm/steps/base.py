"""What every step shares: its settings' base, its output, the hierarchies and the
contract it reads by content, and the candidate tables among its references."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator

from ppdm import resources
from ppdm.generalization.hierarchies import Hierarchy, load_hierarchies
from ppdm.prepare.dataset_folder import contract_fingerprint, load_contract
from ppdm.privacy import Requirement
from ppdm.release.artifacts import (
    ArtifactRef,
)


@dataclass(frozen=True, kw_only=True)
class StepOutput:
    """What a step did, for display: a JSON-safe summary.

    Each step's result is a subclass whose fields are the artifacts it wrote
    (and the facts a later step reads); the summary is for whoever shows
    progress, never read as data by another step.
    """

    summary: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Ingested(StepOutput):
    """Ingest: the raw snapshot, and the fingerprint of the source."""

    raw: ArtifactRef
    source_sha256: str


@dataclass(frozen=True, kw_only=True)
class Validated(StepOutput):
    """Validate: the clean table, the quarantine, the validation report."""

    clean: ArtifactRef
    quarantine: ArtifactRef
    validation: ArtifactRef


@dataclass(frozen=True, kw_only=True)
class Discretized(StepOutput):
    """Discretize: the binned table and the cut points."""

    discretized: ArtifactRef
    cut_points: ArtifactRef


@dataclass(frozen=True, kw_only=True)
class Candidate(StepOutput):
    """Anonymize, then republication: the release candidate's tables by name.

    ``evidence`` is the algorithm's (anonymize); ``held_back`` the
    republication step's record of what it changed (None: nothing).
    """

    tables: dict[str, ArtifactRef]
    evidence: ArtifactRef | None = None
    held_back: ArtifactRef | None = None


@dataclass(frozen=True, kw_only=True)
class Verified(StepOutput):
    """Verify: the certificate (its dict form is the summary)."""

    certificate: ArtifactRef


@dataclass(frozen=True, kw_only=True)
class Reported(StepOutput):
    """Utility report: utility.json and report.html (utility's dict is the summary)."""

    utility: ArtifactRef
    report: ArtifactRef


def _as_requirement(value: Any) -> Requirement:
    if isinstance(value, Requirement):
        return value
    if isinstance(value, Mapping):
        return Requirement.from_dict(value)
    raise TypeError(f"expected a Requirement or its dict form; got {value!r}")


#: A :class:`~ppdm.privacy.Requirement` field, serialised as ``to_dict()``.
RequirementField = Annotated[
    Requirement,
    PlainValidator(_as_requirement),
    PlainSerializer(lambda r: r.to_dict(), return_type=dict),
]


class StepSettings(BaseModel):
    """What one step reads of the configuration (frozen, no other keys)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dataset: str = Field(description="names the step's records and UI artifacts")


class HierarchySource(BaseModel):
    """Where a release's generalization hierarchies are, and what they hash to.

    Serialised (and so cache-keyed) by content only: the attribute names and
    the sha256 of the files, not the directory they were read from.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    directory: str = Field(exclude=True)
    attributes: tuple[str, ...]
    sha256: str

    @classmethod
    def of(cls, directory: Path | str) -> HierarchySource:
        directory = Path(directory).resolve()
        return cls(
            directory=str(directory),
            attributes=tuple(resources.hierarchy_files(directory)),
            sha256=resources.hierarchy_fingerprint(directory),
        )

    def load(self) -> dict[str, Hierarchy]:
        """Read and validate every hierarchy file (once per content in a process).

        The anonymize, verify and utility steps of a run each read the same
        files; they are parsed once, keyed by the directory and the sha256
        the plan took of them.
        """
        return dict(_hierarchies(self.directory, self.sha256))


@functools.lru_cache(maxsize=8)
def _hierarchies(directory: str, sha256: str) -> dict[str, Hierarchy]:
    return load_hierarchies(Path(directory))


class SchemaSource(BaseModel):
    """A dataset folder's contract (schema.yaml, suite.json) and its hash.

    Serialised (and so cache-keyed) by content only, like :class:`HierarchySource`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    directory: str = Field(exclude=True)
    sha256: str

    @classmethod
    def of(cls, directory: Path | str) -> SchemaSource:
        directory = Path(directory).resolve()
        return cls(directory=str(directory), sha256=contract_fingerprint(directory))

    def load(self) -> tuple[Any, dict[str, Any]]:
        """The pandera schema and the GX suite."""
        contract = load_contract(self.directory)
        return contract.schema, contract.suite


def hierarchies_of(source: HierarchySource | None) -> dict[str, Hierarchy] | None:
    return source.load() if source is not None else None


class PartitionSettings(BaseModel):
    """How an out-of-core release cuts its table (present only on the Dask engine).

    The partitioning decides which seed stream each row meets, so it is part
    of every step's cache key; where the partitions are processed (the
    cluster) is not.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    partition_rows: int
    sample_rows: int


def resolve_pseudonym_key(spec: str) -> bytes:
    from ppdm.release.keys import resolve_key

    return resolve_key(spec)


def candidate_files(tables: Mapping[str, ArtifactRef]) -> dict[str, Path]:
    """``{table name: path}`` of the release candidate's tables."""
    return {name: Path(ref.path) for name, ref in tables.items()}


def utc_now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()
