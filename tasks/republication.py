from __future__ import annotations

from collections.abc import Mapping

from prefect import task

from ppdm.release.artifacts import ArtifactRef, ArtifactStore
from ppdm.steps.base import Candidate
from ppdm.steps.republication import RepublicationSettings, republication_step
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
    source_sha256: str | None = None,
) -> Candidate:
    """Republication: the candidate made safe next to the dataset's earlier releases.

    ``raw``, ``quarantine`` and ``clean`` are read only with a record key
    (the composition check); ``clean`` and ``discretized`` with the policy
    ``consistent``; ``source_sha256`` finds the earlier releases of the same
    source.
    """
    output = republication_step(
        settings, store, candidate, raw, quarantine, clean, discretized, source_sha256
    )
    show(settings, output)
    return output


def show(settings: RepublicationSettings, output: Candidate) -> None:
    """The step's artifact and log line: counts of what was held back, never which rows."""
    summary = output.summary
    row = {
        "policy": summary["policy"],
        "earlier releases": ", ".join(summary["against"]) or "none",
        "earlier releases of the same source": ", ".join(summary.get("same_source", []))
        or "none",
        "rows held back": summary["rows_held_back"],
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
            "republication (%s) against %d earlier release(s): %d rows held back",
            summary["policy"],
            len(summary["against"]),
            summary["rows_held_back"],
        )
    if summary.get("same_source"):
        log_fact(
            "republication: %d earlier release(s) of the same source read together "
            "with this one (%s)",
            len(summary["same_source"]),
            ", ".join(summary["same_source"]),
        )
    if not summary["against"] and not summary.get("same_source"):
        log_fact(
            "republication: no earlier release of %s to compare with", settings.dataset
        )
