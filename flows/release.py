from __future__ import annotations

from prefect import flow

from ppdm.config import ReleaseConfig, default_config
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
    tables = {k: v for k, v in candidate.refs.items() if k.startswith("table:")}
    verified = verify(config, tables, validated.refs["clean"], source_sha)
    reported = utility_report(
        config,
        validated.refs["clean"],
        binned.refs["cut_points"],
        tables,
        candidate.refs["evidence"],
        verified.refs["certificate"],
    )
    return publish(
        config,
        source_sha,
        {
            **tables,
            "certificate": verified.refs["certificate"],
            "utility": reported.refs["utility"],
            "report": reported.refs["report"],
            "evidence": candidate.refs["evidence"],
            "cut_points": binned.refs["cut_points"],
            "validation": validated.refs["validation"],
        },
    )


if __name__ == "__main__":
    release(default_config("adult"))
