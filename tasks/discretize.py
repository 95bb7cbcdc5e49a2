from __future__ import annotations

from prefect import task

from ppdm.artifacts import ArtifactRef
from ppdm.config import ReleaseConfig
from ppdm.pipeline import StepOutput, discretize_step
from tasks._ui import STEP_CACHE, table_artifact


@task(name="discretize", cache_policy=STEP_CACHE)
def discretize(config: ReleaseConfig, clean: ArtifactRef) -> StepOutput:
    """Discretize: numeric quasi-identifiers to intervals; cut points artifact."""
    output = discretize_step(config, clean)
    cuts = output.summary["cut_points"]
    table_artifact(
        config,
        "discretize",
        [
            {
                "column": c,
                "method": output.summary["method"],
                "cuts": len(v),
                "cut_points": ", ".join(f"{x:g}" for x in v),
            }
            for c, v in cuts.items()
        ]
        or [{"column": "(none)", "cuts": 0}],
        "Cut points used per numeric quasi-identifier",
    )
    return output
