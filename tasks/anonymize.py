from __future__ import annotations

from prefect import task
from prefect.artifacts import create_progress_artifact, update_progress_artifact

from ppdm import progress
from ppdm.pipeline import AnonymizeSettings, StepOutput, anonymize_step
from ppdm.release.artifacts import ArtifactRef, ArtifactStore
from ppdm.tasks._ui import STEP_CACHE, log_fact, table_artifact


@task(name="anonymize", cache_policy=STEP_CACHE)
def anonymize(
    settings: AnonymizeSettings, store: ArtifactStore, discretized: ArtifactRef
) -> StepOutput:
    """Anonymize: run the configured algorithm; release candidate + evidence artifacts."""
    artifact_id = create_progress_artifact(progress=0.0, description=settings.algorithm)
    shown = [0.0]

    def update(fraction: float, description: str) -> None:
        if fraction - shown[0] >= 0.05 or fraction >= 1.0:  # each update is an API call
            shown[0] = fraction
            update_progress_artifact(
                artifact_id=artifact_id,
                progress=100 * fraction,
                description=description,
            )

    with progress.listening(update):
        output = anonymize_step(settings, store, discretized)
    update_progress_artifact(artifact_id=artifact_id, progress=100.0)
    show(settings, output)
    return output


def show(settings: AnonymizeSettings, output: StepOutput) -> None:
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
