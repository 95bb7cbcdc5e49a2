"""The release steps as plain functions over an artifact store, and their one order.

Each ``*_step`` function is one step of ``ingest -> validate -> discretize ->
anonymize -> verify -> utility report -> publish``. It receives its own slice
of the configuration (a small frozen settings object, :class:`IngestSettings`
... :class:`PublishSettings`, all made by :func:`plan_release`), the
:class:`~ppdm.release.artifacts.ArtifactStore` and the references of its inputs; it
reads them, calls the core module that does the work, writes its outputs to
the store and returns references plus a small summary for whoever displays
progress.

:func:`run_steps` is the only place where the steps are put in order. It
executes each one through a ``run_step(name, fn, *args)`` callable:
:func:`run_release` calls ``fn(*args)`` in this process (a notebook, a test),
the Prefect flow (``flows/release.py``) calls the Prefect task named ``name``,
a thin wrapper of ``fn``. A step sees only what it reads, so a cache keyed on
its arguments is exact: a new ``utility.test_size`` or ``output_dir`` re-runs
the utility report (and publication) only, a new algorithm does not re-run
validation.
"""

from __future__ import annotations

import csv
import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator

from ppdm import resources
from ppdm.algorithms import ALGORITHMS, Anonymizer, get_algorithm
from ppdm.config import ConfigError, ReleaseConfig, SourceConfig
from ppdm.exceptions import (
    DataValidationError,
    VerificationError,
)
from ppdm.generalization.hierarchies import Hierarchy, load_hierarchies
from ppdm.generalization.ordered_text import date_kinds, months_not_days
from ppdm.model import AnonymizationSpec, AttributeKind, attribute_kind
from ppdm.prepare import ingest, validation
from ppdm.prepare.dataset_folder import contract_fingerprint, load_contract
from ppdm.prepare.discretize import discretize
from ppdm.prepare.roles import release_bound
from ppdm.privacy import Requirement
from ppdm.release import audit, provenance
from ppdm.release.artifacts import (
    ArtifactRef,
    ArtifactStore,
    canonical_json,
    sha256_bytes,
    sha256_file,
)
from ppdm.release.publish import publish_directory
from ppdm.utility.loss import covers_from_hierarchies
from ppdm.utility.report import (
    accuracy_markdown,
    release_record,
    render_report_html,
    utility_report,
)
from ppdm.verify import read_released_table, verify_files
from ppdm.verify.differential import check_released_files
from ppdm.verify.passthrough import PassthroughPolicy

__all__ = [
    "STEPS",
    "StepOutput",
    "StepRunner",
    "HierarchySource",
    "SchemaSource",
    "ReleaseOutcome",
    "IngestSettings",
    "ValidateSettings",
    "DiscretizeSettings",
    "AnonymizeSettings",
    "VerifySettings",
    "UtilitySettings",
    "PublishSettings",
    "ReleasePlan",
    "plan_release",
    "store_for",
    "describe_source",
    "candidate_files",
    "candidate_refs",
    "publication_refs",
    "ingest_step",
    "validate_step",
    "discretize_step",
    "anonymize_step",
    "verify_step",
    "utility_step",
    "publish_step",
    "run_steps",
    "run_release",
]

#: The steps in the order :func:`run_steps` runs them; also the Prefect task names.
STEPS = (
    "ingest",
    "validate",
    "discretize",
    "anonymize",
    "republication",
    "verify",
    "utility-report",
    "publish",
)

#: ``run_step(name, fn, *args)``: execute step ``name``, whose work is ``fn(*args)``.
StepRunner = Callable[..., Any]


@dataclass(frozen=True)
class StepOutput:
    """References a step wrote, and a JSON-safe summary of what it did."""

    refs: dict[str, ArtifactRef]
    summary: dict[str, Any] = field(default_factory=dict)


# -- the configuration, sliced per step ---------------------------------------
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


class _Settings(BaseModel):
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
        """Read and validate every hierarchy file."""
        return load_hierarchies(Path(self.directory))


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


def _load(source: HierarchySource | None) -> dict[str, Hierarchy] | None:
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


class IngestSettings(_Settings):
    """Ingest: the source to snapshot."""

    source: SourceConfig
    partitions: PartitionSettings | None = None

    @property
    def description(self) -> str:
        return describe_source(self.source)


class ValidateSettings(_Settings):
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


class DiscretizeSettings(_Settings):
    """Discretize: the method the algorithm gets, and only what that method reads.

    ``method`` is ``"none"`` for algorithms that take raw numbers
    (``numeric_input == "raw"``: they generalize along hierarchies or split
    numbers themselves). ``columns`` None means every numeric quasi-identifier.
    """

    method: Literal["mdl", "equal-frequency", "none"]
    n_bins: int | None = None
    columns: tuple[str, ...] | None = None
    quasi_identifiers: tuple[str, ...] = ()
    target: str | None = None
    partitions: PartitionSettings | None = None


class AnonymizeSettings(_Settings):
    """Anonymize: the algorithm, its parameters, the requirement and the seed.

    The released tables' rows are shuffled with a generator of their own,
    derived from the same seed (no positional linkage to the input order).
    """

    algorithm: str
    params: dict[str, Any]
    requirement: RequirementField
    target: str | None
    suppression_limit: float
    seed: int
    hierarchies: HierarchySource | None = Field(
        None, description="given to algorithms that generalize along hierarchies"
    )
    partitions: PartitionSettings | None = None

    def build_algorithm(self) -> Anonymizer:
        return get_algorithm(self.algorithm, **self.params)

    def spec(self, hierarchies: Mapping[str, Any] | None = None) -> AnonymizationSpec:
        return AnonymizationSpec(
            requirement=self.requirement,
            target=self.target,
            suppression_limit=self.suppression_limit,
            hierarchies=hierarchies,
        )


class RepublicationSettings(_Settings):
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
        hierarchies = _load(self.hierarchies)
        return covers_from_hierarchies(hierarchies) if hierarchies else None


class VerifySettings(_Settings):
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


class UtilitySettings(_Settings):
    """Utility report: the release it re-makes on the training split, the protocol."""

    anonymize: AnonymizeSettings
    discretize: DiscretizeSettings
    test_size: float
    hierarchies: HierarchySource | None = None
    title: str
    roles: dict[str, str] = Field(default_factory=dict)
    pseudonymized: tuple[str, ...] = ()
    partitions: PartitionSettings | None = None


class PublishSettings(_Settings):
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


@dataclass(frozen=True)
class ReleasePlan:
    """The artifact store and every step's settings, made from one configuration."""

    store: ArtifactStore
    ingest: IngestSettings
    validate: ValidateSettings
    discretize: DiscretizeSettings
    anonymize: AnonymizeSettings
    republication: RepublicationSettings
    verify: VerifySettings
    utility: UtilitySettings
    publish: PublishSettings
    #: The Dask cluster of an out-of-core release (None: in memory).
    cluster: Any = None


def resolve_engine(config: ReleaseConfig) -> Literal["pandas", "dask"]:
    """The engine a release runs on: the configured one, or for ``auto`` by size.

    ``auto`` runs out of core when the source file (or the Parquet
    directory's files) is above ``out_of_core.size_threshold_mb`` and the
    algorithm runs on the frequency table; a database source is read in
    memory unless ``engine: dask`` says otherwise.
    """
    if config.engine != "auto":
        return config.engine
    if (
        not ALGORITHMS[config.algorithm].frequency_table
        or config.republication.policy == "consistent"
        or config.republication.record_key is not None
        or config.source.kind not in ("csv", "parquet")
    ):
        return "pandas"
    path = Path(config.source.path)
    if path.is_dir():
        size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    else:
        size = path.stat().st_size if path.is_file() else 0
    threshold = config.out_of_core.size_threshold_mb * 2**20
    return "dask" if size > threshold else "pandas"


def store_for(config: ReleaseConfig) -> ArtifactStore:
    """The artifact store of a configuration (``work_dir``, else the default work dir)."""
    return ArtifactStore(config.store_dir.resolve())


def passthrough_policy(config: ReleaseConfig) -> dict[str, Any]:
    """What the verifier's pass-through check reads: columns, acceptances, limits."""
    return {
        "columns": list(config.released_as_is),
        "accepted": list(config.accept_passthrough),
        **(
            {"acknowledged": list(config.acknowledge_identifier_passthrough)}
            if config.acknowledge_identifier_passthrough
            else {}
        ),
        **config.passthrough.model_dump(),
    }


def _pseudonym_key(spec: str) -> bytes:
    from ppdm.release.keys import resolve_key

    return resolve_key(spec)


def _discretize_settings(
    config: ReleaseConfig, partitions: PartitionSettings | None = None
) -> DiscretizeSettings:
    method = config.discretize.method
    if ALGORITHMS[config.algorithm].numeric_input == "raw":
        method = "none"  # the algorithm generalizes the raw values itself
    if method == "none":
        return DiscretizeSettings(
            dataset=config.dataset, method="none", partitions=partitions
        )
    columns = config.discretize.columns
    return DiscretizeSettings(
        dataset=config.dataset,
        method=method,
        n_bins=config.discretize.n_bins if method == "equal-frequency" else None,
        columns=tuple(columns) if columns is not None else None,
        quasi_identifiers=tuple(config.quasi_identifiers) if columns is None else (),
        target=config.target if method == "mdl" else None,
        partitions=partitions,
    )


def plan_release(config: ReleaseConfig) -> ReleasePlan:
    """Slice ``config`` into the settings of each step.

    The hierarchy files are fingerprinted here (not parsed): a step that
    generalizes along them is keyed on their content.
    """
    directory = config.hierarchy_dir
    hierarchies = HierarchySource.of(directory) if directory is not None else None
    uses_hierarchies = ALGORITHMS[config.algorithm].uses_hierarchies
    out_dir = Path(config.output_dir).resolve()
    schema = SchemaSource.of(config.schema_dir)
    key_id = None
    if config.pseudonymized:
        from ppdm.release.keys import key_id as identify_key

        key_id = identify_key(_pseudonym_key(config.pseudonym_key))
    passthrough = passthrough_policy(config)
    dataset = config.dataset
    source = describe_source(config.source)
    partitions = cluster = None
    if resolve_engine(config) == "dask":
        from ppdm.scale.engine import ClusterSettings

        scale = config.out_of_core
        partitions = PartitionSettings(
            partition_rows=scale.partition_rows, sample_rows=scale.sample_rows
        )
        cluster = ClusterSettings(
            workers=scale.workers,
            threads_per_worker=scale.threads_per_worker,
            memory_limit=scale.memory_limit,
            address=scale.address,
        )
    anonymize = AnonymizeSettings(
        dataset=dataset,
        algorithm=config.algorithm,
        params=dict(config.params),
        requirement=config.requirement,
        target=config.target,
        suppression_limit=config.suppression_limit,
        seed=config.seed,
        hierarchies=hierarchies if uses_hierarchies else None,
        partitions=partitions,
    )
    from ppdm.release.series import earlier_releases

    republication = RepublicationSettings(
        dataset=dataset,
        requirement=config.requirement,
        policy=config.republication.policy,
        series=[
            r.to_dict()
            for r in earlier_releases(out_dir, dataset, config.republication.against)
        ],
        seed=config.seed,
        hierarchies=hierarchies,
        record_key=config.republication.record_key,
        anonymize=anonymize if config.republication.policy == "consistent" else None,
    )
    if partitions is not None and republication.series:
        raise ConfigError(
            f"the output directory already holds releases of {dataset!r}; checking "
            "a new release against them (republication) runs in memory, which "
            "the Dask engine does not do yet: use engine: pandas, or another "
            "output_dir"
        )
    return ReleasePlan(
        store=store_for(config),
        ingest=IngestSettings(
            dataset=dataset, source=config.source, partitions=partitions
        ),
        validate=ValidateSettings(
            dataset=dataset,
            source=source,
            max_rejected_fraction=config.validation.max_rejected_fraction,
            schema_source=schema,
            released_columns=tuple(config.released_columns),
            pseudonymized=tuple(config.pseudonymized),
            pseudonym_key=config.pseudonym_key if config.pseudonymized else None,
            pseudonym_key_id=key_id,
            partitions=partitions,
        ),
        discretize=_discretize_settings(config, partitions),
        anonymize=anonymize,
        republication=republication,
        verify=VerifySettings(
            dataset=dataset,
            algorithm=config.algorithm,
            requirement=config.requirement,
            engine=config.verification.engine,
            size_threshold_mb=config.verification.size_threshold_mb,
            memory_limit=config.verification.memory_limit,
            hierarchies=hierarchies,
            audit_log=str(out_dir / audit.AUDIT_LOG_NAME),
            audit_key=config.audit_key,
            passthrough=passthrough,
            republication=republication if republication.series else None,
            algorithm_params=dict(config.params),  # differential privacy entry
            released_columns=tuple(config.released_columns),
        ),
        utility=UtilitySettings(
            dataset=dataset,
            anonymize=anonymize,
            discretize=_discretize_settings(config),
            test_size=config.utility.test_size,
            hierarchies=hierarchies,
            title=f"{dataset}: {config.algorithm}, "
            + ", ".join(str(m) for m in config.requirement.models),
            roles=config.roles,
            pseudonymized=tuple(config.pseudonymized),
            partitions=partitions,
        ),
        publish=PublishSettings(
            dataset=dataset,
            output_dir=str(out_dir),
            algorithm=config.algorithm,
            params=dict(config.params),
            quasi_identifiers=tuple(config.quasi_identifiers),
            sensitive_attribute=config.sensitive_attribute,
            target=config.target,
            requirement=config.requirement,
            suppression_limit=config.suppression_limit,
            seed=config.seed,
            source=source,
            config=_public_config(config),
            hierarchies=hierarchies,
            schema_source=schema,
            roles=config.roles,
            passthrough=passthrough,
            audit_key=config.audit_key,
        ),
        cluster=cluster,
    )


# -- ingest -----------------------------------------------------------------
def ingest_step(settings: IngestSettings, store: ArtifactStore) -> StepOutput:
    """Read the source and snapshot it as Parquet; fingerprint the source."""
    source = settings.source
    if settings.partitions is not None:
        return _ingest_parts(settings, store)
    table = ingest.load_source(source.kind, source.location, **source.reader_options())
    snapshot = store.put_table(table, kind="raw-snapshot")
    if source.kind in ("csv", "parquet"):
        source_sha = ingest.file_sha256(source.path)
    else:  # embedded data and SQL results: the content is the source
        source_sha = ingest.fingerprint(table)
    return StepOutput(
        {"raw": snapshot},
        {
            "rows": len(table),
            "columns": list(table.columns),
            "source_sha256": source_sha,
            "source": settings.description,
        },
    )


def _ingest_parts(settings: IngestSettings, store: ArtifactStore) -> StepOutput:
    """Ingest out of core: the source streamed into Parquet parts."""
    from ppdm.scale.ingest_parts import ingest_partitions
    from ppdm.scale.steps import put_parts

    source = settings.source
    staging = store.staging()
    table = ingest_partitions(
        source.kind,
        source.location,
        out_dir=staging,
        partition_rows=settings.partitions.partition_rows,
        **source.reader_options(),
    )
    snapshot = put_parts(store, staging, kind="raw-snapshot")
    return StepOutput(
        {"raw": snapshot},
        {
            "rows": table.rows,
            "columns": list(table.columns),
            "source_sha256": table.source_sha256,
            "source": settings.description,
            "partitions": len(table.paths),
        },
    )


def _public_config(config: ReleaseConfig) -> dict[str, Any]:
    """The configuration as the manifest records it: a URL's password masked."""
    data = config.model_dump(mode="json", by_alias=True)
    source = data.get("source") or {}
    if source.get("kind") == "sql" and source.get("url"):
        source["url"] = _masked_url(source["url"])
    return data


def _masked_url(url: str) -> str:
    # source_name masks the password (and secret query arguments) however
    # malformed the URL; its " (query: ...)" tail is not wanted here. A URL
    # without a secret is kept as written (so is its release id).
    masked = ingest.source_name("sql", url, "", None).rsplit(" (query: ", 1)[0]
    return masked if "***" in masked else url


def describe_source(source: SourceConfig) -> str:
    """The source as recorded in reports and manifests (no password)."""
    if source.kind == "embedded":
        return f"embedded:{source.name}"
    if source.kind == "sql":
        from sqlalchemy.engine import make_url

        return f"sql:{make_url(source.url).render_as_string(hide_password=True)}"
    return f"{source.kind}:{source.path}"


# -- validate ---------------------------------------------------------------
def validate_step(
    settings: ValidateSettings, store: ArtifactStore, raw: ArtifactRef
) -> StepOutput:
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
        outcome = getattr(err, "outcome", None)
        if outcome is not None:
            ref = store.put_csv(outcome.quarantine, kind="quarantine")
            raise type(err)(
                f"{err} Rejected rows and reasons: {ref.path}", err.failure_cases
            ) from err
        raise
    key = (
        _pseudonym_key(settings.pseudonym_key)
        if settings.pseudonym_key is not None
        else None
    )
    clean = release_bound(
        outcome.clean,
        settings.released_columns,
        pseudonymized=settings.pseudonymized,
        key=key,
    )
    refs = {
        "clean": store.put_table(clean, kind="clean-table"),
        "quarantine": store.put_csv(outcome.quarantine, kind="quarantine"),
        "validation": store.put_json(outcome.report, kind="validation-report"),
    }
    return StepOutput(refs, dict(outcome.report))


def _validate_parts(
    settings: ValidateSettings, store: ArtifactStore, raw: ArtifactRef
) -> StepOutput:
    """Validate out of core: per part, the table-level expectations from summaries."""
    from ppdm.scale.engine import map_parts
    from ppdm.scale.steps import bound_parts, parts_of, put_parts
    from ppdm.scale.validate_parts import validate_partitions

    schema, suite = settings.schema_source.load()
    checked = store.staging()
    try:
        outcome = validate_partitions(
            parts_of(raw),
            schema,
            suite,
            max_rejected_fraction=settings.max_rejected_fraction,
            source=settings.source,
            out_dir=checked,
            map_parts=map_parts,
        )
    except DataValidationError as err:
        outcome = getattr(err, "outcome", None)
        if outcome is not None:
            ref = store.put_csv(outcome.quarantine, kind="quarantine")
            raise type(err)(
                f"{err} Rejected rows and reasons: {ref.path}", err.failure_cases
            ) from err
        raise
    key = (
        _pseudonym_key(settings.pseudonym_key)
        if settings.pseudonym_key is not None
        else None
    )
    clean = store.staging()
    bound_parts(
        [Path(p) for p in outcome.clean.paths],
        clean,
        settings.released_columns,
        pseudonymized=settings.pseudonymized,
        key=key,
    )
    import shutil

    shutil.rmtree(checked, ignore_errors=True)
    refs = {
        "clean": put_parts(store, clean, kind="clean-table"),
        "quarantine": store.put_csv(outcome.quarantine, kind="quarantine"),
        "validation": store.put_json(outcome.report, kind="validation-report"),
    }
    return StepOutput(refs, dict(outcome.report))


# -- discretize -------------------------------------------------------------
def discretize_step(
    settings: DiscretizeSettings, store: ArtifactStore, clean: ArtifactRef
) -> StepOutput:
    """Bin numeric quasi-identifiers into intervals; save the cut points."""
    if settings.partitions is not None:
        return _discretize_parts(settings, store, clean)
    table = store.read_table(clean)
    if settings.columns is not None:
        columns = list(settings.columns)
    else:
        columns = [
            c
            for c in settings.quasi_identifiers
            if attribute_kind(table[c]) is AttributeKind.NUMERIC
        ]
    if settings.method == "none" or not columns:
        cut_points: dict[str, list[float]] = {}
        binned = table
    else:
        extra = {"n_bins": settings.n_bins} if settings.n_bins is not None else {}
        result = discretize(
            table, columns, settings.target, method=settings.method, **extra
        )
        binned, cut_points = result.table, result.cut_points
    refs = {
        "discretized": store.put_table(binned, kind="discretized-table"),
        "cut_points": store.put_json(
            {"method": settings.method, "cut_points": cut_points}, kind="cut-points"
        ),
    }
    return StepOutput(refs, {"method": settings.method, "cut_points": cut_points})


def _discretize_parts(
    settings: DiscretizeSettings, store: ArtifactStore, clean: ArtifactRef
) -> StepOutput:
    """Discretize out of core: cut points from exact per-part histograms."""
    import pyarrow.parquet as pq

    from ppdm.scale.discretize_parts import (
        apply_cut_points_partitioned,
        fit_cut_points_partitioned,
    )
    from ppdm.scale.engine import map_parts
    from ppdm.scale.steps import parts_of, put_parts

    parts = parts_of(clean)
    if settings.columns is not None:
        columns = list(settings.columns)
    else:
        # The kind of a column is that of its (typed) Parquet schema.
        head = pq.read_schema(parts[0]).empty_table().to_pandas()
        columns = [
            c
            for c in settings.quasi_identifiers
            if attribute_kind(head[c]) is AttributeKind.NUMERIC
        ]
    cut_points: dict[str, list[float]] = {}
    binned_ref = clean
    if settings.method != "none" and columns:
        extra = {"n_bins": settings.n_bins} if settings.n_bins is not None else {}
        cut_points = fit_cut_points_partitioned(
            parts,
            columns,
            settings.target,
            method=settings.method,
            map_parts=map_parts,
            **extra,
        )
        binned = store.staging()
        apply_cut_points_partitioned(parts, cut_points, binned, map_parts=map_parts)
        binned_ref = put_parts(store, binned, kind="discretized-table")
    refs = {
        "discretized": binned_ref,
        "cut_points": store.put_json(
            {"method": settings.method, "cut_points": cut_points}, kind="cut-points"
        ),
    }
    return StepOutput(refs, {"method": settings.method, "cut_points": cut_points})


# -- anonymize --------------------------------------------------------------
def anonymize_step(
    settings: AnonymizeSettings, store: ArtifactStore, discretized: ArtifactRef
) -> StepOutput:
    """Run the configured algorithm with ``rng = default_rng(seed)``."""
    if settings.partitions is not None:
        return _anonymize_parts(settings, store, discretized)
    table = store.read_table(discretized)
    release = settings.build_algorithm().anonymize(
        table,
        settings.spec(_load(settings.hierarchies)),
        np.random.default_rng(settings.seed),
    )
    # No exact date of a quasi-identifier leaves, whatever the algorithm kept.
    dates = date_kinds(table, settings.requirement.quasi_identifiers)
    shuffle = np.random.default_rng(np.random.SeedSequence(settings.seed).spawn(1)[0])
    refs = {
        f"table:{name}": store.put_csv(
            shuffled_rows(months_not_days(frame, dates), shuffle),
            kind="release-candidate",
        )
        for name, frame in sorted(release.tables.items())
    }
    refs["evidence"] = store.put_json(
        {
            "algorithm": release.algorithm,
            "params": dict(release.params),
            "records_in": release.records_in,
            "evidence": dict(release.evidence),
        },
        kind="evidence",
    )
    rows_out = {name: len(frame) for name, frame in release.tables.items()}
    return StepOutput(
        refs,
        {
            "algorithm": settings.algorithm,
            "records_in": len(table),
            "rows_out": rows_out,
        },
    )


def _anonymize_parts(
    settings: AnonymizeSettings, store: ArtifactStore, discretized: ArtifactRef
) -> StepOutput:
    """Anonymize out of core: recode the frequency table, release part by part."""
    from ppdm.scale import steps

    parts = steps.parts_of(discretized)
    spec = settings.spec(_load(settings.hierarchies))
    frequencies = steps.frequency_table(parts, steps.frequency_columns(spec))
    recoding = settings.build_algorithm().recode(
        frequencies, spec, np.random.default_rng(settings.seed)
    )
    dates = date_kinds(recoding.original, spec.quasi_identifiers)
    if dates:  # no exact date of a quasi-identifier leaves
        recoding = replace(recoding, released=months_not_days(recoding.released, dates))
    released = store.staging()
    rows = steps.release_parts(parts, recoding, released, seed=settings.seed)
    refs = {"table:release": steps.put_parts(store, released, kind="release-candidate")}
    refs["evidence"] = store.put_json(
        steps.recoding_summary(
            recoding,
            {"combinations": len(frequencies), "partitions": len(parts)},
        ),
        kind="evidence",
    )
    return StepOutput(
        refs,
        {
            "algorithm": settings.algorithm,
            "records_in": frequencies.n_rows,
            "rows_out": {"release": rows},
        },
    )


# -- republication ------------------------------------------------------------
def _earlier(settings: RepublicationSettings, files: Mapping[str, Path]) -> list[Any]:
    """The earlier releases to compare with: all but a republication of these files."""
    from ppdm.release.series import EarlierRelease

    if not settings.series:
        return []
    digests = {name: sha256_file(path) for name, path in files.items()}
    series = [EarlierRelease.from_dict(d) for d in settings.series]
    return [r for r in series if {n: sha for n, (_, sha) in r.files.items()} != digests]


def _people(
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


def _states(
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


def republication_step(
    settings: RepublicationSettings,
    store: ArtifactStore,
    candidate: Mapping[str, ArtifactRef],
    raw: ArtifactRef | None = None,
    quarantine: ArtifactRef | None = None,
    clean: ArtifactRef | None = None,
    discretized: ArtifactRef | None = None,
    source_sha256: str | None = None,
) -> StepOutput:
    """Make the candidate safe next to the earlier releases of the dataset.

    With no earlier release, or the policy ``off``, the candidate passes
    unchanged (the verifier still measures and records the leaks of ``off``).
    An earlier release of the same source (``source_sha256``) holds the same
    rows: it is not held back against, it is read together with the
    candidate (:func:`_same_source`), and a group of persons the two
    releases together narrow below the requirement refuses the release
    unless the policy is ``off``. With ``record_key`` (and the raw snapshot,
    quarantine and clean table of this run), the composition check joins
    differencing, and the person values of the release are kept in the work
    directory for the next run (:mod:`ppdm.release.series_state`). The
    policy ``consistent`` first recodes the rows into the latest earlier
    release's classes (:func:`_consistent`, from ``clean`` and
    ``discretized``), then holds back. A refusal raises
    :class:`~ppdm.exceptions.VerificationError`; the run records it in the
    audit log (:func:`record_refusal`).
    """
    return _republication(
        settings, store, candidate, raw, quarantine, clean, discretized, source_sha256
    )


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
            "created_at": _now(),
        },
        key=settings.audit_key,
    )


#: What a refusal of the series check tells the data owner to do.
SERIES_REMEDY = (
    "to compare algorithms or parameters on one table, release into another "
    "output directory; to publish anyway, set republication policy: off (the "
    "risk is then recorded as accepted in the certificate and the audit log)"
)


def _republication(
    settings: RepublicationSettings,
    store: ArtifactStore,
    candidate: Mapping[str, ArtifactRef],
    raw: ArtifactRef | None,
    quarantine: ArtifactRef | None,
    clean: ArtifactRef | None,
    discretized: ArtifactRef | None,
    source_sha256: str | None,
) -> StepOutput:
    from ppdm.release.series import (
        exposed_persons,
        hold_back,
        hold_back_composition,
        load_tables,
    )

    files = candidate_files(candidate)
    earlier = _earlier(settings, files)
    parted = [r for r in earlier if r.partitioned]
    if parted:
        # Its tables are in parts too large to be read into memory here; a
        # release compared with nothing would pass over it silently.
        raise VerificationError(
            "republication refused, nothing was published: earlier release(s) "
            + ", ".join(f"{r.release_id} ({r.partitioned[0]}, ...)" for r in parted)
            + f" of {settings.dataset} were published out of core, in parts, and "
            "the series check does not read releases in parts; release into "
            "another output directory"
        )
    same = _same_source(settings, store, files, earlier, clean, source_sha256)
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
        people, keys = _people(settings, store, raw, quarantine, clean)
        summary["composition_persons_exposed"] = 0

    def done(refs: dict[str, ArtifactRef]) -> StepOutput:
        if people is not None:
            _keep_state(settings, store, refs, people, keys)
        return StepOutput(refs, summary)

    if not earlier or settings.policy == "off":
        return done(dict(candidate))
    tables = {name: read_released_table(path) for name, path in files.items()}
    series = [(r.release_id, load_tables(r)) for r in earlier]
    requirement = settings.requirement
    states = _states(settings, store, earlier)[0] if people is not None else []
    if settings.policy == "refuse":
        from ppdm.verify.series import check_against

        leaks = [
            result.describe()
            + (f", e.g. {result.examples[0]}" if result.examples else "")
            for rid, old in series
            for result in check_against(
                tables, old, requirement, against=rid, covers=settings.covers()
            )
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
        tables, recoding = _consistent(
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
    refs = dict(candidate)
    for name, frame in sorted(safe.items()):
        if held.classes[name] or recoding is not None:
            # Sorted first, so the bytes depend on the rows released, not on the
            # order in which earlier releases were consulted (a republish of
            # the same input finds its own release).
            rows = frame.sort_values(list(frame.columns), kind="stable")
            refs[f"table:{name}"] = store.put_csv(
                shuffled_rows(rows, shuffle), kind="release-candidate"
            )
    refs["held-back"] = store.put_json(summary, kind="held-back")
    return done(refs)


def _same_source(
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
    (:func:`ppdm.verify.series.check_same_rows`), else the release is refused.
    Under the policy ``off`` the verifier records the figures instead.
    """
    from ppdm.release.series import load_tables
    from ppdm.verify.series import check_same_rows

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
    people = _people_values(settings.requirement, store.read_table(clean))
    requirement = settings.requirement
    for release in same:
        leaking = [
            r
            for r in check_same_rows(
                tables,
                load_tables(release),
                people,
                requirement,
                against=release.release_id,
                covers=settings.covers(),
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
                + ", ".join(str(m) for m in requirement.models)
                + (f" (e.g. {example})" if example else "")
                + "; "
                + SERIES_REMEDY
            )
    return ids


def _people_values(requirement: Any, clean: pd.DataFrame) -> pd.DataFrame:
    """The quasi-identifiers and sensitive attributes of the clean table, as text."""
    columns = [
        c
        for c in (*requirement.quasi_identifiers, *requirement.sensitive_attributes)
        if c in clean.columns
    ]
    return pd.DataFrame(
        {c: clean[c].astype("string").fillna("").astype(str) for c in columns}
    )


def _consistent(
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
        Recoding,
        as_before,
        consistent_recoding,
        failing_classes,
    )
    from ppdm.verify.series import counterpart

    requirement = settings.requirement
    covers = settings.covers()
    clean_table = store.read_table(clean)
    binned = store.read_table(discretized)
    out: dict[str, pd.DataFrame] = {}
    recoding = Recoding()
    for name, table in sorted(tables.items()):
        latest = next(
            (
                (rid, old[m])
                for rid, old in reversed(series)
                if (m := counterpart(name, table, old)) is not None
            ),
            None,
        )
        qis = [q for q in requirement.quasi_identifiers if q in table.columns]
        if latest is None or not qis:
            out[name] = table
            continue
        columns = list(table.columns)
        people = pd.DataFrame(
            {q: clean_table[q].astype("string").fillna("").astype(str) for q in qis}
        )
        rows = _as_text(binned[columns])
        recoded, unmatched = consistent_recoding(
            people, rows, latest[1].astype(str), qis, covers
        )
        pieces, withheld = [recoded], 0
        if len(unmatched):
            assert settings.anonymize is not None
            try:
                release = settings.anonymize.build_algorithm().anonymize(
                    binned.iloc[unmatched].reset_index(drop=True),
                    settings.anonymize.spec(_load(settings.anonymize.hierarchies)),
                    np.random.default_rng(settings.anonymize.seed),
                )
                pieces.append(_as_text(release.tables[name])[columns])
            except AnonymizationError:  # too few for a release of their own
                withheld = len(unmatched)
        result = pd.concat(pieces, ignore_index=True)
        earlier = [
            (rid, old[m].astype(str))
            for rid, old in series
            if (m := counterpart(name, table, old)) is not None
        ]
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


def _as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """A table as its released CSV reads back: every cell text."""
    import io

    from ppdm.release.artifacts import table_to_csv_bytes

    return pd.read_csv(
        io.BytesIO(table_to_csv_bytes(frame)),
        dtype=str,
        keep_default_na=False,
        na_filter=False,
    )


def _keep_state(
    settings: RepublicationSettings,
    store: ArtifactStore,
    refs: Mapping[str, ArtifactRef],
    people: pd.DataFrame,
    keys: list[str],
) -> None:
    """Keep the released person values for the next run's composition check."""
    from ppdm.release.series import current_person_values
    from ppdm.release.series_state import save_state

    files = candidate_files(refs)
    tables = {name: read_released_table(path) for name, path in files.items()}
    values = current_person_values(
        tables, people, keys, settings.requirement, settings.covers()
    )
    save_state(
        store,
        settings.dataset,
        {name: refs[f"table:{name}"].sha256 for name in files},
        str(settings.record_key),
        keys,
        values,
    )


def shuffled_rows(frame: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """The rows of a released table in a random order (no positional linkage)."""
    return frame.iloc[rng.permutation(len(frame))].reset_index(drop=True)


def candidate_files(refs: Mapping[str, ArtifactRef]) -> dict[str, Path]:
    """``{table name: path}`` of the release candidate among a step's refs."""
    return {
        key.split(":", 1)[1]: Path(ref.path)
        for key, ref in refs.items()
        if key.startswith("table:")
    }


def _by_table(refs: Mapping[str, ArtifactRef]) -> dict[str, ArtifactRef]:
    """The table references of ``refs`` by table name."""
    return {k.split(":", 1)[1]: v for k, v in refs.items() if k.startswith("table:")}


def candidate_refs(anonymized: StepOutput) -> dict[str, ArtifactRef]:
    """The release candidate's tables among the anonymize step's references."""
    return {k: v for k, v in anonymized.refs.items() if k.startswith("table:")}


def publication_refs(
    validated: StepOutput,
    binned: StepOutput,
    anonymized: StepOutput,
    verified: StepOutput,
    reported: StepOutput,
    tables: Mapping[str, ArtifactRef] | None = None,
) -> dict[str, ArtifactRef]:
    """Everything :func:`publish_step` puts in a release directory, by role.

    ``tables`` are the released tables when the republication step changed
    the anonymize step's candidate.
    """
    return {
        **(candidate_refs(anonymized) if tables is None else dict(tables)),
        "certificate": verified.refs["certificate"],
        "utility": reported.refs["utility"],
        "report": reported.refs["report"],
        "evidence": anonymized.refs["evidence"],
        "cut_points": binned.refs["cut_points"],
        "validation": validated.refs["validation"],
    }


# -- verify -----------------------------------------------------------------
def verify_step(
    settings: VerifySettings,
    store: ArtifactStore,
    candidate: Mapping[str, ArtifactRef],
    original: ArtifactRef,
    source_sha256: str,
) -> StepOutput:
    """Re-check the candidate files independently; fail (and publish nothing) if short."""
    for ref in candidate.values():
        ref.verify()
    files = candidate_files(candidate)
    hierarchies = _load(settings.hierarchies)
    if any(ref.partitioned for ref in candidate.values()):
        certificate = _verify_parts(settings, candidate, source_sha256, hierarchies)
        return _verified(settings, store, certificate)
    common = {
        "original": store.read_table(original),
        "input_sha256": source_sha256,
        "covers": covers_from_hierarchies(hierarchies) if hierarchies else None,
        "passthrough": PassthroughPolicy.from_dict(settings.passthrough),
    }
    if _out_of_core(settings, files, settings.requirement):
        from ppdm.verify.out_of_core import verify_csv_files

        certificate = verify_csv_files(
            files,
            settings.requirement,
            memory_limit=settings.memory_limit,
            **common,
        )
    else:
        certificate = verify_files(files, settings.requirement, **common)
    if settings.republication is not None:
        certificate = _checked_against_series(
            certificate, settings.republication, files, store, original, source_sha256
        )
    certificate = certificate.with_differential_privacy(  # None: not a DP release
        check_released_files(
            files,
            settings.algorithm,
            settings.algorithm_params,
            declared_columns=settings.released_columns,
            n_rows=len(common["original"]),
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

    (name, ref), *more = sorted(_by_table(candidate).items())
    if more:  # the algorithms that run on frequency tables release one table
        raise VerificationError(
            f"an out-of-core release holds one table; the candidate holds "
            f"{1 + len(more)}",
            {},
        )
    certificate = verify_parquet(
        ref.path,
        settings.requirement,
        engine="dask",
        memory_limit=settings.memory_limit,
        input_sha256=source_sha256,
        name=name,
        client=current_client(),
        covers=covers_from_hierarchies(hierarchies) if hierarchies else None,
        passthrough=PassthroughPolicy.from_dict(settings.passthrough),
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
) -> StepOutput:
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
                "created_at": _now(),
            },
            key=settings.audit_key,
        )
        raise VerificationError(
            f"verification failed, nothing was published: {certificate.summary()}",
            certificate.to_dict(),
        )
    return StepOutput({"certificate": ref}, certificate.to_dict())


def _checked_against_series(
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
    from ppdm.release.series import load_tables
    from ppdm.verify.series import check_against, check_same_rows

    # Releases in parts are refused by the republication step, never read.
    earlier = [r for r in _earlier(settings, files) if not r.partitioned]
    if not earlier:  # only a republication of these very files
        return certificate
    tables = {name: read_released_table(path) for name, path in files.items()}
    covers = settings.covers()
    accepted = settings.policy == "off"
    people = None
    if store is not None and original is not None and source_sha256 is not None:
        people = _people_values(settings.requirement, store.read_table(original))
    results = []
    for release in earlier:
        if people is not None and release.source_sha256 == source_sha256:
            check = partial(check_same_rows, people=people)
        else:
            check = check_against
        results.extend(
            check(
                tables,
                load_tables(release),
                requirement=settings.requirement,
                against=release.release_id,
                accepted=accepted,
                covers=covers,
            )
        )
    earlier = [r for r in earlier if people is None or r.source_sha256 != source_sha256]
    composition = _composition(settings, store, original, files, tables, earlier)
    return certificate.with_series(results, composition)


def _composition(
    settings: RepublicationSettings,
    store: ArtifactStore | None,
    original: ArtifactRef | None,
    files: Mapping[str, Path],
    tables: Mapping[str, pd.DataFrame],
    earlier: list[Any],
) -> Any:
    """The composition part of the certificate's series section."""
    from ppdm.release.series import current_person_values
    from ppdm.release.series_state import load_state, merge
    from ppdm.verify.series import CompositionReport, check_composition

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
    found, missing = _states(settings, store, earlier)
    results = check_composition(
        current, found, settings.requirement, accepted=settings.policy == "off"
    )
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


# -- utility report ---------------------------------------------------------
def utility_step(
    settings: UtilitySettings,
    store: ArtifactStore,
    clean: ArtifactRef,
    candidate: Mapping[str, ArtifactRef],
    evidence: ArtifactRef,
    certificate: ArtifactRef,
) -> StepOutput:
    """Information loss, hold-out accuracy and risk; utility.json and report.html.

    The hold-out protocol re-makes the release on the training split, with the
    discretization fitted on that split only (no test row shapes a cut point).
    """
    hierarchies = _load(settings.hierarchies)
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
        {name: ref.sha256 for name, ref in _by_table(candidate).items()},
        dataset=settings.dataset,
        algorithm=settings.anonymize.algorithm,
        code_version=provenance.code_version(),
        library_versions=provenance.library_versions(),
        sample=released,
    )
    if measured_on is not None:
        record["measured_on"] = measured_on
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
    refs = {
        "utility": store.put_json(utility, kind="utility"),
        "report": store.put_bytes(html.encode("utf-8"), kind="report", suffix="html"),
    }
    return StepOutput(refs, utility)


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
    from ppdm.scale.steps import parts_of, sample_parts
    from ppdm.verify.out_of_core import released_text

    rows = settings.partitions.sample_rows
    seed = settings.anonymize.seed
    original = sample_parts(parts_of(clean), rows, total=clean.rows, seed=seed)
    released = {
        name: released_text(
            sample_parts(parts_of(ref), rows, total=ref.rows, seed=seed)
        )
        for name, ref in _by_table(candidate).items()
    }
    measured_on = {
        "clean_rows": len(original),
        "clean_rows_total": clean.rows,
        "released_rows": {name: len(frame) for name, frame in released.items()},
        "released_rows_total": {
            name: ref.rows for name, ref in _by_table(candidate).items()
        },
        "seed": seed,
    }
    return original, released, measured_on


# -- publish ----------------------------------------------------------------
def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


#: Configuration keys that say where things are (or where the work runs), not
#: what is released: left out of a release's identity, so moving them never
#: makes a second release.
_LOCATION_KEYS = (
    "output_dir",
    "work_dir",
    "hierarchies",
    "schema",
    "audit_key",
    "parallel",
)


#: Keys of ``out_of_core`` that say where the partitions are processed.
_CLUSTER_KEYS = ("workers", "threads_per_worker", "memory_limit", "address")


def _identity_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The configuration as it decides what is released (no locations, no cluster)."""
    kept = {k: v for k, v in config.items() if k not in _LOCATION_KEYS}
    if isinstance(kept.get("source"), Mapping) and "password" in kept["source"]:
        # Where the password is kept is no part of what is released.
        kept["source"] = {k: v for k, v in kept["source"].items() if k != "password"}
    if isinstance(kept.get("out_of_core"), Mapping):
        kept["out_of_core"] = {
            k: v for k, v in kept["out_of_core"].items() if k not in _CLUSTER_KEYS
        }
    return kept


def publish_step(
    settings: PublishSettings,
    source_sha256: str,
    refs: Mapping[str, ArtifactRef],
    series: Mapping[str, Any] | None = None,
    flow_run_id: str | None = None,
) -> Path:
    """Publish an immutable release directory atomically and log it in the audit chain.

    ``refs`` holds the candidate tables (``table:<name>``) and the keys
    ``certificate``, ``utility``, ``report``, ``evidence``, ``cut_points`` and
    ``validation``. The directory is assembled under a temporary name beside its
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
    for ref in refs.values():
        ref.verify()
    named: dict[str, Path] = {}
    rows: dict[str, int | None] = {}
    for name, ref in _by_table(refs).items():
        if ref.partitioned:  # an out-of-core table: its Parquet parts
            for part in ref.parts:
                named[f"data/{name}/{part.name}"] = part
                rows[f"data/{name}/{part.name}"] = _parquet_rows(part)
        else:
            named[f"data/{name}.csv"] = Path(ref.path)
            rows[f"data/{name}.csv"] = ref.rows
    named.update(
        {
            "verification.json": Path(refs["certificate"].path),
            "utility.json": Path(refs["utility"].path),
            "evidence.json": Path(refs["evidence"].path),
            "cut_points.json": Path(refs["cut_points"].path),
            "validation.json": Path(refs["validation"].path),
        }
    )
    hashes = {rel: sha256_file(path) for rel, path in named.items()}
    files = [
        {
            "path": rel,
            "sha256": hashes[rel],
            "rows": rows[rel],
            "columns": _columns(named[rel]),
        }
        for rel in sorted(named)
        if rel.startswith("data/")
    ]
    identity = {
        "source_sha256": source_sha256,
        "config": _identity_config(settings.config),
        "files": hashes,
    }
    release_id = sha256_bytes(canonical_json(identity))[:16]
    release_dir = out_dir / settings.dataset / release_id
    created_at = _now()
    # The page is rendered under the audit log's lock, once its entry's number
    # is known; a partial (not a closure) so the call can be pickled.
    page = functools.partial(
        _record_page,
        settings,
        Path(refs["utility"].path),
        release_id=release_id,
        created_at=created_at,
        source_sha256=source_sha256,
        series=dict(series) if series is not None else None,
    )

    manifest = {
        "dataset": settings.dataset,
        "release_id": release_id,
        "algorithm": settings.algorithm,
        "params": dict(settings.params),
        "quasi_identifiers": list(settings.quasi_identifiers),
        "sensitive_attribute": settings.sensitive_attribute,
        "target": settings.target,
        "requirement": settings.requirement.to_dict(),
        "suppression_limit": settings.suppression_limit,
        "seed": settings.seed,
        "source": settings.source,
        "source_sha256": source_sha256,
        "hierarchies": (
            settings.hierarchies.model_dump(mode="json")
            if settings.hierarchies is not None
            else None
        ),
        "schema_sha256": (
            settings.schema_source.sha256 if settings.schema_source else None
        ),
        "roles": dict(settings.roles),
        "passthrough": PassthroughPolicy.from_dict(settings.passthrough).to_dict(),
        "files": files,
        "artifacts": {
            rel: hashes[rel] for rel in sorted(hashes) if not rel.startswith("data/")
        },
        "config": settings.config,
        "code_version": provenance.code_version(),
        "library_versions": provenance.library_versions(),
        "created_at": created_at,
        "flow_run_id": flow_run_id,
    }
    entry = {
        "dataset": settings.dataset,
        "release_id": release_id,
        "algorithm": settings.algorithm,
        "requirement": settings.requirement.describe(),
        "seed": settings.seed,
        "source_sha256": source_sha256,
        "verified": True,
        "code_version": manifest["code_version"],
        "flow_run_id": flow_run_id,
        "created_at": manifest["created_at"],
    }
    series = json.loads(Path(refs["certificate"].path).read_bytes()).get("series")
    if series is not None:
        # What the release was checked against, and a leak the owner accepted
        # with the policy off, stay on the record next to the release.
        entry["republication"] = {
            "policy": settings.config.get("republication", {}).get("policy"),
            "checked_against": series["checked_against"],
            "accepted_risk": any(r["accepted_risk"] for r in series["results"]),
        }
    return publish_directory(
        out_dir,
        release_dir,
        named,
        hashes,
        manifest,
        entry,
        page,
        audit_key=settings.audit_key,
    )


def report_markdown(release_dir: Path) -> str:
    """The published page's record and figures as Markdown (no local path)."""
    manifest = json.loads((release_dir / "manifest.json").read_bytes())
    utility = json.loads((release_dir / "utility.json").read_bytes())
    record = utility.get("record") or {}
    head = [
        f"# Release {manifest['release_id']} of {manifest['dataset']}",
        "",
        f"- created (UTC): {manifest.get('created_at')}",
        f"- algorithm: {manifest.get('algorithm')}; requirement: "
        f"{settings_requirement(manifest)}",
        f"- independent verifier: **{record.get('verdict', 'n/a')}**",
        f"- source sha256: `{manifest.get('source_sha256')}`",
        "- files: "
        + ", ".join(f"`{f['path']}` ({f['rows']} rows)" for f in manifest["files"]),
        "- the full page: `report.html` in the release directory",
        "",
    ]
    body = accuracy_markdown(utility).replace("# Utility", "## Utility", 1)
    return "\n".join(head) + "\n" + body


def settings_requirement(manifest: Mapping[str, Any]) -> str:
    """The manifest's requirement in words."""
    from ppdm.privacy import model_from_description

    models = (manifest.get("requirement") or {}).get("models") or []
    return "; ".join(str(model_from_description(m)) for m in models) or "none"


def _record_page(
    settings: PublishSettings,
    utility_path: Path,
    audit_seq: int,
    *,
    release_id: str,
    created_at: str,
    source_sha256: str,
    series: Mapping[str, Any] | None,
) -> bytes:
    """report.html with what makes it a record: id, date, audit entry, command."""
    # The key id only (never the key); resolved as publish_directory resolves it.
    key_id = audit.audit_key(settings.audit_key).id
    utility = json.loads(utility_path.read_bytes())
    record = dict(utility.get("record") or {})
    record.update(
        {
            "release_id": release_id,
            "created_at": created_at,
            "audit_key_id": key_id,
            "audit_seq": audit_seq,
            "source_sha256": source_sha256,
            "series_rows": (
                {
                    "held_back": series.get("rows_held_back"),
                    "kept_from_earlier_releases": series.get(
                        "rows_kept_from_earlier_releases"
                    ),
                    "against": list(series.get("against") or []),
                }
                if series
                else None
            ),
            "command": (
                "ppdm run --config release.yaml  (release.yaml: the `config` object "
                f"of manifest.json; seed {settings.seed}; the source with sha256 "
                f"{source_sha256})"
            ),
        }
    )
    utility["record"] = record
    title = utility.get("title") or f"{settings.dataset}: {settings.algorithm}"
    return render_report_html(utility, title=title).encode("utf-8")


def _columns(path: Path) -> list[str]:
    """The column names of a released CSV or Parquet part (what an analyst receives)."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    with open(path, newline="", encoding="utf-8") as handle:
        return next(csv.reader(handle), [])


def _parquet_rows(path: Path) -> int:
    from ppdm.scale.steps import parquet_rows

    return parquet_rows(path)


# -- the one order of the steps -----------------------------------------------
@dataclass(frozen=True)
class ReleaseOutcome:
    """What a release run produced: where it is, and what was checked and measured."""

    release_dir: Path
    certificate: dict[str, Any]
    utility: dict[str, Any]

    def __fspath__(self) -> str:
        return str(self.release_dir)

    def __str__(self) -> str:
        return str(self.release_dir)


def run_steps(config: ReleaseConfig, *, run_step: StepRunner) -> ReleaseOutcome:
    """Run every step of a release in order.

    Parameters
    ----------
    config : ReleaseConfig
        Names the dataset folder (schema and suite), the source and the rest.
    run_step : callable
        ``run_step(name, fn, *args)`` executes the step ``name`` (one of
        :data:`STEPS`), whose work is ``fn(*args)``, and returns its result.

    Returns
    -------
    ReleaseOutcome
    """
    from ppdm.preflight import preflight

    preflight(config)
    plan = plan_release(config)
    if plan.cluster is None:
        return _run_planned(plan, run_step)
    from ppdm.scale.engine import cluster, using

    with cluster(plan.cluster) as running, using(running):
        return _run_planned(plan, run_step)


def _run_planned(plan: ReleasePlan, run_step: StepRunner) -> ReleaseOutcome:
    store = plan.store
    ingested = run_step("ingest", ingest_step, plan.ingest, store)
    source_sha = ingested.summary["source_sha256"]
    validated = run_step(
        "validate",
        validate_step,
        plan.validate,
        store,
        ingested.refs["raw"],
    )
    clean = validated.refs["clean"]
    binned = run_step("discretize", discretize_step, plan.discretize, store, clean)
    candidate = run_step(
        "anonymize",
        anonymize_step,
        plan.anonymize,
        store,
        binned.refs["discretized"],
    )
    try:
        republished = run_step(
            "republication",
            republication_step,
            plan.republication,
            store,
            candidate_refs(candidate),
            ingested.refs["raw"],
            validated.refs["quarantine"],
            clean,
            binned.refs["discretized"],
            source_sha,
        )
    except VerificationError as refused:
        record_refusal(plan.verify, "republication", refused)
        raise
    tables = {k: v for k, v in republished.refs.items() if k.startswith("table:")}
    verified = run_step(
        "verify", verify_step, plan.verify, store, tables, clean, source_sha
    )
    reported = run_step(
        "utility-report",
        utility_step,
        plan.utility,
        store,
        clean,
        tables,
        candidate.refs["evidence"],
        verified.refs["certificate"],
    )
    refs = publication_refs(validated, binned, candidate, verified, reported, tables)
    release_dir = run_step(
        "publish", publish_step, plan.publish, source_sha, refs, republished.summary
    )
    return ReleaseOutcome(
        release_dir=Path(release_dir),
        certificate=dict(verified.summary),
        utility=dict(reported.summary),
    )


def _call(name: str, fn: Callable[..., Any], *args: Any) -> Any:
    return fn(*args)


def run_release(config: ReleaseConfig) -> ReleaseOutcome:
    """Run every step in order in this process.

    From a notebook: ``outcome = pipeline.run_release(config.load_config(PATH))``;
    ``outcome.release_dir``, ``outcome.certificate`` and ``outcome.utility``
    hold where the release is, what the verifier found and what it is worth.
    """
    return run_steps(config, run_step=_call)
