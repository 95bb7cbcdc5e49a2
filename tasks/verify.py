from __future__ import annotations

from collections.abc import Mapping

from prefect import task
from prefect.cache_policies import NO_CACHE

from ppdm.artifacts import ArtifactRef
from ppdm.config import ReleaseConfig
from ppdm.pipeline import StepOutput, verify_step
from tasks._ui import markdown_artifact
from tasks.anonymize import dataset_hierarchies


@task(name="verify", cache_policy=NO_CACHE)
def verify(
    config: ReleaseConfig,
    candidate: Mapping[str, ArtifactRef],
    original: ArtifactRef,
    source_sha256: str,
) -> StepOutput:
    """Verify: independent check of the candidate files; the certificate artifact."""
    output = verify_step(
        config, candidate, original, source_sha256, dataset_hierarchies(config)
    )
    markdown_artifact(
        config,
        "verify",
        "```json\n" + _short(output.summary) + "\n```",
        "Verification certificate (passed)",
    )
    return output


def _short(certificate: dict) -> str:
    import json

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
