from __future__ import annotations

from prefect import task

from ppdm.release.artifacts import ArtifactRef, ArtifactStore
from ppdm.steps.base import Discretized
from ppdm.steps.discretize import DiscretizeSettings, discretize_step
from ppdm.tasks._ui import STEP_CACHE, log_fact, table_artifact


@task(name="discretize", cache_policy=STEP_CACHE)
def discretize(
    settings: DiscretizeSettings, store: ArtifactStore, clean: ArtifactRef
) -> Discretized:
    """Discretize: numeric quasi-identifiers to intervals; cut points artifact."""
    output = discretize_step(settings, store, clean)
    show(settings, output)
    return output


def show(settings: DiscretizeSettings, output: Discretized) -> None:
    """The step's artifact: the cut points of each numeric quasi-identifier."""
    cuts = output.summary["cut_points"]
    log_fact(
        "discretize (%s): %s",
        output.summary["method"],
        ", ".join(f"{c}: {len(v)} cut point(s)" for c, v in cuts.items())
        or "no numeric quasi-identifier",
    )
    table_artifact(
        settings.dataset,
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
