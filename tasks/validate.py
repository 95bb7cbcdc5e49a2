from __future__ import annotations

import pandas as pd
from prefect import task

from ppdm.release.artifacts import ArtifactRef, ArtifactStore
from ppdm.steps.base import Validated
from ppdm.steps.validate import ValidateSettings, validate_step
from ppdm.tasks._ui import STEP_CACHE, log_fact, table_artifact

SHOWN_REJECTIONS = 50


@task(name="validate", cache_policy=STEP_CACHE)
def validate(
    settings: ValidateSettings, store: ArtifactStore, raw: ArtifactRef
) -> Validated:
    """Validate: pandera schema + Great Expectations suite; rejected rows to quarantine.

    The schema and suite are keyed by content (``settings.schema_source``).
    """
    output = validate_step(settings, store, raw)
    show(settings, output)
    return output


def show(settings: ValidateSettings, output: Validated) -> None:
    """The step's artifacts: counts, and the first quarantined rows with their reasons."""
    report = output.summary
    quarantine = output.quarantine
    log_fact(
        "validate: %s rows in, %s rejected to quarantine (%.2f%%; limit %.0f%%), %s clean",
        report.get("rows_in"),
        report.get("rows_rejected"),
        100 * (report.get("rejected_fraction") or 0.0),
        100 * (report.get("limit") or 0.0),
        report.get("rows_clean"),
    )
    table_artifact(
        settings.dataset,
        "validate",
        [
            {
                "rows_in": report.get("rows_in"),
                "rows_clean": report.get("rows_clean"),
                "rows_rejected": report.get("rows_rejected"),
                "rejected_fraction": report.get("rejected_fraction"),
                "limit": report.get("limit"),
                # the quarantine holds raw rows: it stays in the private work
                # directory, and its path stays out of the UI
                "quarantine": "work directory (owner only)",
            }
        ],
        "Schema validation (pandera + Great Expectations)",
    )
    if quarantine.rows:
        rejected = pd.read_csv(
            quarantine.path, dtype=str, keep_default_na=False, nrows=SHOWN_REJECTIONS
        )
        table_artifact(
            settings.dataset,
            "quarantine",
            rejected[["_source_row", "_reasons"]].to_dict("records"),
            f"First {SHOWN_REJECTIONS} quarantined rows and their reasons "
            f"(all {quarantine.rows} in the quarantine of the private work directory)",
        )
