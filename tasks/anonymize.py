from __future__ import annotations

from prefect import task

from ppdm.release.artifacts import ArtifactRef, ArtifactStore
from ppdm.steps.anonymize import AnonymizeSettings, anonymize_step
from ppdm.steps.base import Candidate
from ppdm.tasks._ui import STEP_CACHE, log_fact, progress_artifact, table_artifact


@task(name="anonymize", cache_policy=STEP_CACHE)
def anonymize(
    settings: AnonymizeSettings, store: ArtifactStore, discretized: ArtifactRef
) -> Candidate:
    """Anonymize: run the configured algorithm; release candidate + evidence artifacts."""
    with progress_artifact(settings.algorithm):
        output = anonymize_step(settings, store, discretized)
    show(settings, output)
    return output


def show(settings: AnonymizeSettings, output: Candidate) -> None:
    """The step's artifact: the rows of each released table."""
    log_fact(
        "anonymize (%s): %d records in; released %s",
        settings.algorithm,
        output.summary["records_in"],
        ", ".join(
            f"{rows} rows in {name}"
            for name, rows in output.summary["rows_out"].items()
        ),
    )
    table_artifact(
        settings.dataset,
        "anonymize",
        [
            {
                "table": name,
                "rows": rows,
                "records_in": output.summary["records_in"],
                "algorithm": settings.algorithm,
            }
            for name, rows in output.summary["rows_out"].items()
        ],
        "Release candidate",
    )
