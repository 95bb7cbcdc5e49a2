from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from prefect import task
from prefect.artifacts import create_link_artifact
from prefect.cache_policies import NO_CACHE
from prefect.runtime import flow_run

from ppdm.pipeline import PublishSettings, publish_step
from ppdm.release.artifacts import ArtifactRef
from ppdm.tasks._ui import artifact_key, log_fact, markdown_artifact, transient_only


@task(
    name="publish",
    retries=3,
    retry_delay_seconds=[1, 2, 4],
    retry_condition_fn=transient_only,
    cache_policy=NO_CACHE,
)
def publish(
    settings: PublishSettings, source_sha256: str, refs: Mapping[str, ArtifactRef]
) -> str:
    """Publish: atomic, content-addressed release directory + audit-log entry."""
    release_dir = publish_step(
        settings,
        source_sha256,
        refs,
        flow_run_id=str(flow_run.id) if flow_run.id else None,
    )
    log_fact(
        "publish: %s %s/%s in %s",
        _event(release_dir),
        settings.dataset,
        release_dir.name,
        release_dir.parent.parent,
    )
    markdown_artifact(
        settings.dataset,
        "publish",
        f"Release published: `{release_dir}`",
        "Published release directory",
    )
    create_link_artifact(
        key=artifact_key(settings.dataset, "report"),
        link=(release_dir / "report.html").resolve().as_uri(),
        link_text=f"report.html of {settings.dataset}/{release_dir.name}",
        description="The release record: verdict, files, accuracy, risk",
    )
    return str(release_dir)


def _event(release_dir: Path) -> str:
    """ "new release" or "republished" (the same content), as the audit log records it."""
    from ppdm.release.audit import AUDIT_LOG_NAME, read_entries

    entries = read_entries(release_dir.parent.parent / AUDIT_LOG_NAME)
    events = [e["event"] for e in entries if e.get("release_id") == release_dir.name]
    return "republished" if events[-1:] == ["republish"] else "new release"
