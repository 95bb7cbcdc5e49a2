"""Ingest: read the source and snapshot it; fingerprint the source."""

from __future__ import annotations

from ppdm.config import SourceConfig
from ppdm.prepare import ingest
from ppdm.release.artifacts import (
    ArtifactStore,
)
from ppdm.steps.base import Ingested, PartitionSettings, StepSettings


class IngestSettings(StepSettings):
    """Ingest: the source to snapshot."""

    source: SourceConfig
    partitions: PartitionSettings | None = None

    @property
    def description(self) -> str:
        return describe_source(self.source)


def ingest_step(settings: IngestSettings, store: ArtifactStore) -> Ingested:
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
    return Ingested(
        raw=snapshot,
        source_sha256=source_sha,
        summary={
            "rows": len(table),
            "columns": list(table.columns),
            "source_sha256": source_sha,
            "source": settings.description,
        },
    )


def _ingest_parts(settings: IngestSettings, store: ArtifactStore) -> Ingested:
    """Ingest out of core: the source streamed into Parquet parts."""
    from ppdm.scale.engine import map_parts
    from ppdm.scale.ingest_parts import ingest_partitions
    from ppdm.scale.steps import put_parts

    source = settings.source
    staging = store.staging()
    table = ingest_partitions(
        source.kind,
        source.location,
        out_dir=staging,
        partition_rows=settings.partitions.partition_rows,
        map_parts=map_parts,
        **source.reader_options(),
    )
    snapshot = put_parts(store, staging, kind="raw-snapshot")
    return Ingested(
        raw=snapshot,
        source_sha256=table.source_sha256,
        summary={
            "rows": table.rows,
            "columns": list(table.columns),
            "source_sha256": table.source_sha256,
            "source": settings.description,
            "partitions": len(table.paths),
        },
    )


def describe_source(source: SourceConfig) -> str:
    """The source as recorded in reports and manifests (no password)."""
    if source.kind == "embedded":
        return f"embedded:{source.name}"
    if source.kind == "sql":
        from sqlalchemy.engine import make_url

        return f"sql:{make_url(source.url).render_as_string(hide_password=True)}"
    return f"{source.kind}:{source.path}"
