from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from ppdm.release.artifacts import ArtifactStore
from ppdm.steps.base import Ingested
from ppdm.steps.ingest import IngestSettings, ingest_step
from ppdm.tasks._ui import log_fact, table_artifact, transient_only


@task(
    name="ingest",
    retries=3,
    retry_delay_seconds=[1, 2, 4],
    retry_condition_fn=transient_only,
    cache_policy=NO_CACHE,
)
def ingest(settings: IngestSettings, store: ArtifactStore) -> Ingested:
    """Ingest: read the source (embedded, CSV, Parquet or SQL) into a raw Parquet snapshot."""
    output = ingest_step(settings, store)
    table_artifact(
        settings.dataset,
        "ingest",
        [
            {
                "source": output.summary["source"],
                "rows": output.summary["rows"],
                "columns": len(output.summary["columns"]),
                "source_sha256": output.summary["source_sha256"],
                # the raw snapshot stays in the private work directory; its
                # path stays out of the UI
                "snapshot_sha256": output.raw.sha256,
            }
        ],
        "Raw snapshot of the source",
    )
    log_fact(
        "ingest: %d rows, %d columns from %s (sha256 %s...)",
        output.summary["rows"],
        len(output.summary["columns"]),
        output.summary["source"],
        output.summary["source_sha256"][:12],
    )
    return output
