from __future__ import annotations

from collections.abc import Mapping

from prefect import task
from prefect.cache_policies import NO_CACHE

from ppdm.release.artifacts import ArtifactRef, ArtifactStore
from ppdm.steps.base import Verified
from ppdm.steps.verify import VerifySettings, verify_step
from ppdm.tasks._ui import log_fact, markdown_artifact
from ppdm.verify.figures import check_figures, figures_markdown


@task(name="verify", cache_policy=NO_CACHE)
def verify(
    settings: VerifySettings,
    store: ArtifactStore,
    candidate: Mapping[str, ArtifactRef],
    original: ArtifactRef,
    source_sha256: str,
) -> Verified:
    """Verify: independent check of the candidate files; the certificate artifact."""
    output = verify_step(settings, store, candidate, original, source_sha256)
    tables = output.summary["tables"]
    for name, table in tables.items():
        log_fact(
            "verify: %s %s; %d rows",
            name,
            "passed" if table["passed"] else "failed",
            table["rows"],
        )
    # Each check in its own figures: the tables', the tables' together, the series'.
    for row in check_figures(output.summary):
        log_fact("verify: %s", row.line())
    markdown_artifact(
        settings.dataset,
        "verify",
        certificate_markdown(output.summary),
        "Verification certificate (passed)",
    )
    return output


def certificate_markdown(certificate: dict) -> str:
    """The certificate as an operator reads it: the requirement, the tables,
    then each check with its own figures."""
    lines = [
        f"# Verification: {'PASSED' if certificate['passed'] else 'FAILED'}",
        "",
        "| privacy model | parameters |",
        "|---|---|",
    ]
    for model in certificate["requirement"]["models"]:
        parameters = ", ".join(
            f"{key} = {value}" for key, value in sorted(model.items()) if key != "model"
        )
        lines.append(f"| {model['model']} | {parameters} |")
    lines += [
        "",
        "| table | rows | passed | sha256 of the file |",
        "|---|---|---|---|",
    ]
    for name, table in sorted(certificate["tables"].items()):
        passed = "yes" if table["passed"] else "no"
        lines.append(
            f"| {name} | {table['rows']} | {passed} | `{table.get('sha256', 'n/a')}` |"
        )
    lines += ["", *figures_markdown(check_figures(certificate))]
    lines += [
        "",
        "Quasi-identifiers: "
        + ", ".join(certificate["requirement"]["quasi_identifiers"])
        + ". Checked on the candidate files by the independent verifier.",
    ]
    return "\n".join(lines)
