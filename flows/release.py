from __future__ import annotations

from prefect import flow

from ppdm.config import ReleaseConfig, default_config
from ppdm.pipeline import candidate_refs, publication_refs
from tasks.anonymize import anonymize
from tasks.discretize import discretize
from tasks.ingest import ingest
from tasks.publish import publish
from tasks.report import utility_report
from tasks.validate import validate
from tasks.verify import verify


@flow(name="release", log_prints=True)
def release(config: ReleaseConfig) -> str:
    """Release: ingest -> validate -> discretize -> anonymize -> verify -> report -> publish."""
    ingested = ingest(config)
    source_sha = ingested.summary["source_sha256"]
    validated = validate(config, ingested.refs["raw"])
    binned = discretize(config, validated.refs["clean"])
    candidate = anonymize(config, binned.refs["discretized"])
    tables = candidate_refs(candidate)
    verified = verify(config, tables, validated.refs["clean"], source_sha)
    reported = utility_report(
        config,
        validated.refs["clean"],
        binned.refs["cut_points"],
        tables,
        candidate.refs["evidence"],
        verified.refs["certificate"],
    )
    refs = publication_refs(validated, binned, candidate, verified, reported)
    return publish(config, source_sha, refs)


if __name__ == "__main__":
    release(default_config("adult"))
