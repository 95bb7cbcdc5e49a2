from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.runtime import flow_run

from ppdm.release.manifest import report_markdown
from ppdm.steps.publish import PublishSettings, ReleaseFiles, publish_step
from ppdm.tasks._ui import log_fact, markdown_artifact, transient_only


@task(
    name="publish",
    retries=3,
    retry_delay_seconds=[1, 2, 4],
    retry_condition_fn=transient_only,
    cache_policy=NO_CACHE,
)
def publish(
    settings: PublishSettings,
    source_sha256: str,
    files: ReleaseFiles,
    series: Mapping[str, Any] | None = None,
) -> str:
    """Publish: atomic, content-addressed release directory + audit-log entry."""
    release_dir = publish_step(
        settings,
        source_sha256,
        files,
        series,
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
        f"Release published: `{settings.dataset}/{release_dir.name}` in the output "
        "directory",
        "Published release directory",
    )
    # The page itself lives in the release directory (listed in manifest.json);
    # the UI gets its figures as Markdown, which it renders, with no local path.
    markdown_artifact(
        settings.dataset,
        "report",
        report_markdown(release_dir),
        "The release record: verdict, accuracy against the majority rule, files",
    )
    return str(release_dir)


def _event(release_dir: Path) -> str:
    """ "new release" or "republished" (the same content), as the audit log records it."""
    from ppdm.release.audit import AUDIT_LOG_NAME, read_entries

    entries = read_entries(release_dir.parent.parent / AUDIT_LOG_NAME)
    events = [e["event"] for e in entries if e.get("release_id") == release_dir.name]
    return "republished" if events[-1:] == ["republish"] else "new release"
