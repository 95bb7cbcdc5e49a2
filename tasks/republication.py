from __future__ import annotations

from collections.abc import Mapping

from prefect import get_run_logger, task

from ppdm.pipeline import RepublicationSettings, StepOutput, republication_step
from ppdm.release.artifacts import ArtifactRef, ArtifactStore
from ppdm.tasks._ui import STEP_CACHE, table_artifact


@task(name="republication", cache_policy=STEP_CACHE)
def republication(
    settings: RepublicationSettings,
    store: ArtifactStore,
    candidate: Mapping[str, ArtifactRef],
    raw: ArtifactRef | None = None,
    quarantine: ArtifactRef | None = None,
    clean: ArtifactRef | None = None,
    discretized: ArtifactRef | None = None,
) -> StepOutput:
    """Republication: the candidate made safe next to the dataset's earlier releases.

    ``raw``, ``quarantine`` and ``clean`` are read only with a record key
    (the composition check); ``clean`` and ``discretized`` with the policy
    ``consistent``.
    """
    output = republication_step(
        settings, store, candidate, raw, quarantine, clean, discretized
    )
    summary = output.summary
    table_artifact(
        settings.dataset,
        "republication",
        [
            {
                "policy": summary["policy"],
                "earlier releases": ", ".join(summary["against"]) or "none",
                "rows held back": summary["rows_held_back"],
                "departed rows kept": summary["rows_kept_from_earlier_releases"],
                "classes released as before": summary["classes_released_as_before"],
                "persons exposed by composition (first round)": summary.get(
                    "composition_persons_exposed", "no record key"
                ),
            }
        ],
        "Release series: what was held back (counts only)",
    )
    if summary["against"]:
        get_run_logger().info(
            "republication (%s) against %d earlier release(s): %d rows held back, "
            "%d departed rows kept",
            summary["policy"],
            len(summary["against"]),
            summary["rows_held_back"],
            summary["rows_kept_from_earlier_releases"],
        )
    return output
