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


@dataclass(frozen=True)
class StepOutput:
    """References a step wrote, and a JSON-safe summary of what it did."""

    refs: dict[str, ArtifactRef]
    summary: dict[str, Any] = field(default_factory=dict)


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


def candidate_files(refs: Mapping[str, ArtifactRef]) -> dict[str, Path]:
    """``{table name: path}`` of the release candidate among a step's refs."""
    return {
        key.split(":", 1)[1]: Path(ref.path)
        for key, ref in refs.items()
        if key.startswith("table:")
    }


def tables_by_name(refs: Mapping[str, ArtifactRef]) -> dict[str, ArtifactRef]:
    """The table references of ``refs`` by table name."""
    return {k.split(":", 1)[1]: v for k, v in refs.items() if k.startswith("table:")}


def candidate_refs(anonymized: StepOutput) -> dict[str, ArtifactRef]:
    """The release candidate's tables among the anonymize step's references."""
    return {k: v for k, v in anonymized.refs.items() if k.startswith("table:")}


def utc_now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()
