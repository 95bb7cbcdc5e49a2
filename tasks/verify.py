from __future__ import annotations

import json
from collections.abc import Mapping

from prefect import task
from prefect.cache_policies import NO_CACHE

from ppdm.pipeline import StepOutput, VerifySettings, verify_step
from ppdm.release.artifacts import ArtifactRef, ArtifactStore
from ppdm.tasks._ui import log_fact, markdown_artifact


@task(name="verify", cache_policy=NO_CACHE)
def verify(
    settings: VerifySettings,
    store: ArtifactStore,
    candidate: Mapping[str, ArtifactRef],
    original: ArtifactRef,
    source_sha256: str,
) -> StepOutput:
    """Verify: independent check of the candidate files; the certificate artifact."""
    output = verify_step(settings, store, candidate, original, source_sha256)
    for name, table in output.summary["tables"].items():
        achieved = table["measures"]
        log_fact(
            "verify: %s passed; %d rows, achieved k = %s, distinct l = %s",
            name,
            table["rows"],
            achieved.get("k", "n/a"),
            achieved.get("distinct_l", "n/a"),
        )
    markdown_artifact(
        settings.dataset,
        "verify",
        "```json\n" + _short(output.summary) + "\n```",
        "Verification certificate (passed)",
    )
    return output


def _short(certificate: dict) -> str:
    keep = {
        "passed": certificate["passed"],
        "requirement": certificate["requirement"],
        "achieved": {
            name: table["measures"] for name, table in certificate["tables"].items()
        },
        "risk": {
            name: table.get("risk") for name, table in certificate["tables"].items()
        },
    }
    return json.dumps(keep, indent=2, sort_keys=True, default=str)
