from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.artifacts import create_progress_artifact, update_progress_artifact

from ppdm import progress
from ppdm.artifacts import ArtifactRef
from ppdm.config import ReleaseConfig
from ppdm.hierarchies import load_hierarchies
from ppdm.pipeline import StepOutput, anonymize_step
from tasks._ui import STEP_CACHE, table_artifact

HIERARCHIES = Path(__file__).resolve().parent.parent / "hierarchies"


def dataset_hierarchies(config: ReleaseConfig):
    """The dataset's generalization hierarchies, when the project ships them."""
    directory = HIERARCHIES / config.dataset
    return load_hierarchies(directory) if directory.is_dir() else None


@task(name="anonymize", cache_policy=STEP_CACHE)
def anonymize(config: ReleaseConfig, discretized: ArtifactRef) -> StepOutput:
    """Anonymize: run the configured algorithm; release candidate + evidence artifacts."""
    artifact_id = create_progress_artifact(progress=0.0, description=config.algorithm)
    shown = [0.0]

    def show(fraction: float, description: str) -> None:
        if fraction - shown[0] >= 0.05 or fraction >= 1.0:  # each update is an API call
            shown[0] = fraction
            update_progress_artifact(
                artifact_id=artifact_id,
                progress=100 * fraction,
                description=description,
            )

    with progress.listening(show):
        output = anonymize_step(config, discretized, dataset_hierarchies(config))
    update_progress_artifact(artifact_id=artifact_id, progress=100.0)
    table_artifact(
        config,
        "anonymize",
        [
            {
                "table": name,
                "rows": rows,
                "records_in": output.summary["records_in"],
                "algorithm": config.algorithm,
            }
            for name, rows in output.summary["rows_out"].items()
        ],
        "Release candidate",
    )
    return output
