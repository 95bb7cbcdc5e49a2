from __future__ import annotations

import pandas as pd
from prefect import task

from ppdm.artifacts import ArtifactRef
from ppdm.config import ReleaseConfig
from ppdm.pipeline import StepOutput, validate_step
from schemas import get_schema
from tasks._ui import STEP_CACHE, table_artifact

SHOWN_REJECTIONS = 50


@task(name="validate", cache_policy=STEP_CACHE)
def validate(config: ReleaseConfig, raw: ArtifactRef) -> StepOutput:
    """Validate: pandera schema + Great Expectations suite; rejected rows to quarantine."""
    schema, suite = get_schema(config.schema)
    output = validate_step(config, raw, schema, suite)
    report = output.summary
    quarantine = output.refs["quarantine"]
    table_artifact(
        config,
        "validate",
        [
            {
                "rows_in": report.get("rows_in"),
                "rows_clean": report.get("rows_clean"),
                "rows_rejected": report.get("rows_rejected"),
                "rejected_fraction": report.get("rejected_fraction"),
                "limit": report.get("limit"),
                "quarantine": quarantine.path,
            }
        ],
        "Schema validation (pandera + Great Expectations)",
    )
    if quarantine.rows:
        rejected = pd.read_csv(
            quarantine.path, dtype=str, keep_default_na=False, nrows=SHOWN_REJECTIONS
        )
        table_artifact(
            config,
            "quarantine",
            rejected[["_source_row", "_reasons"]].to_dict("records"),
            f"First {SHOWN_REJECTIONS} quarantined rows and their reasons "
            f"(all {quarantine.rows} in {quarantine.path})",
        )
    return output
