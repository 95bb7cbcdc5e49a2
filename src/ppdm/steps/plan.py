"""The plan of a release: one configuration sliced into each step's settings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ppdm.algorithms import ALGORITHMS
from ppdm.compute_config import resolve_engine
from ppdm.config import ReleaseConfig
from ppdm.preflight import out_of_core_series_error
from ppdm.recipe import binning_for
from ppdm.release import audit
from ppdm.release.artifacts import (
    ArtifactStore,
)
from ppdm.release.manifest import public_config
from ppdm.steps.anonymize import AnonymizeSettings
from ppdm.steps.base import (
    HierarchySource,
    PartitionSettings,
    SchemaSource,
    resolve_pseudonym_key,
)
from ppdm.steps.discretize import DiscretizeSettings
from ppdm.steps.ingest import IngestSettings, describe_source
from ppdm.steps.publish import PublishSettings
from ppdm.steps.republication import RepublicationSettings
from ppdm.steps.utility import UtilitySettings
from ppdm.steps.validate import ValidateSettings
from ppdm.steps.verify import VerifySettings


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
    #: The run's Dask cluster (:class:`ppdm.scale.engine.ClusterSettings`),
    #: started when a step first needs it.
    cluster: Any = None


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


def _discretize_settings(
    config: ReleaseConfig,
    partitions: PartitionSettings | None = None,
    *,
    for_algorithm: bool = True,
) -> DiscretizeSettings:
    """The discretize step's settings: what the algorithm gets (the rule about
    unbinned numbers applied), or with ``for_algorithm=False`` the configured
    binning (the utility report's baseline, binned for every algorithm)."""
    method = config.discretize.method
    if for_algorithm:
        method = binning_for(config.algorithm, config.discretize).method
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

        key_id = identify_key(resolve_pseudonym_key(config.pseudonym_key))
    passthrough = passthrough_policy(config)
    dataset = config.dataset
    source = describe_source(config.source)
    partitions = None
    compute = config.compute
    if resolve_engine(config) == "dask":
        partitions = PartitionSettings(
            partition_rows=compute.partition_rows, sample_rows=compute.sample_rows
        )
    from ppdm.scale.engine import ClusterSettings  # no Dask import until started

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
        raise out_of_core_series_error(dataset)
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
            engine=compute.verify_engine,
            size_threshold_mb=compute.verify_threshold_mb,
            memory_limit=compute.memory_limit,
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
            discretize=_discretize_settings(config, for_algorithm=False),
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
            config=public_config(config),
            hierarchies=hierarchies,
            schema_source=schema,
            roles=config.roles,
            passthrough=passthrough,
            audit_key=config.audit_key,
        ),
        cluster=ClusterSettings.of(compute),
    )
