from __future__ import annotations

from collections.abc import Mapping

from prefect import task

from ppdm.pipeline import RepublicationSettings, StepOutput, republication_step
from ppdm.release.artifacts import ArtifactRef, ArtifactStore
from ppdm.tasks._ui import STEP_CACHE, log_fact, table_artifact


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
    show(settings, output)
    return output


def show(settings: RepublicationSettings, output: StepOutput) -> None:
    """The step's artifact and log line: counts of what was held back, never which rows."""
    summary = output.summary
    row = {
        "policy": summary["policy"],
        "earlier releases": ", ".join(summary["against"]) or "none",
        "rows held back": summary["rows_held_back"],
        "departed rows kept": summary["rows_kept_from_earlier_releases"],
        "classes released as before": summary["classes_released_as_before"],
        "persons exposed by composition (first round)": summary.get(
            "composition_persons_exposed", "no record key"
        ),
    }
    if "rows_recoded_into_earlier_classes" in summary:  # policy consistent
        row["rows recoded into earlier classes"] = summary[
            "rows_recoded_into_earlier_classes"
        ]
        row["rows anonymized anew"] = summary["rows_anonymized_anew"]
    table_artifact(
        settings.dataset,
        "republication",
        [row],
        "Release series: what was held back (counts only)",
    )
    if summary["against"]:
        log_fact(
            "republication (%s) against %d earlier release(s): %d rows held back, "
            "%d departed rows kept",
            summary["policy"],
            len(summary["against"]),
            summary["rows_held_back"],
            summary["rows_kept_from_earlier_releases"],
        )
    else:
        log_fact(
            "republication: no earlier release of %s to compare with", settings.dataset
        )
