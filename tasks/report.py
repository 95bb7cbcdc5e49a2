from __future__ import annotations

from collections.abc import Mapping

from prefect import task

from ppdm.release.artifacts import ArtifactRef, ArtifactStore
from ppdm.steps.base import Reported
from ppdm.steps.utility import UtilitySettings, utility_step
from ppdm.tasks._ui import STEP_CACHE, log_fact, markdown_artifact, progress_artifact
from ppdm.utility.report import accuracy_markdown


@task(name="utility-report", cache_policy=STEP_CACHE)
def utility_report(
    settings: UtilitySettings,
    store: ArtifactStore,
    clean: ArtifactRef,
    candidate: Mapping[str, ArtifactRef],
    evidence: ArtifactRef,
    certificate: ArtifactRef,
) -> Reported:
    """Utility report: accuracy, information loss, risk; utility.json + report.html."""
    with progress_artifact("utility report: hold-out split, then the models"):
        output = utility_step(settings, store, clean, candidate, evidence, certificate)
    show(settings, output)
    return output


def show(settings: UtilitySettings, output: Reported) -> None:
    """The step's artifact: accuracy before and after, per model."""
    accuracy = output.summary.get("holdout", {}).get("accuracy", {})
    log_fact(
        "utility: hold-out accuracy original -> released: %s; %s records lost, %s cells "
        "suppressed",
        ", ".join(
            f"{model} {_accuracy(row.get('original'))} -> {_accuracy(row.get('anonymized'))}"
            for model, row in sorted(accuracy.items())
        )
        or "not measured",
        output.summary.get("lost_records", "n/a"),
        output.summary.get("suppressed_cells", "n/a"),
    )
    markdown_artifact(
        settings.dataset,
        "utility-report",
        accuracy_markdown(output.summary),
        "Accuracy, balanced accuracy and ROC AUC against the majority rule",
    )


def _accuracy(value: float | None) -> str:
    """An accuracy to four places, or "n/a" when it could not be measured."""
    return "n/a" if value is None else f"{value:.4f}"
