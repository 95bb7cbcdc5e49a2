from __future__ import annotations

from collections.abc import Mapping

from prefect import task
from prefect.cache_policies import NO_CACHE

from ppdm.release.artifacts import ArtifactRef, ArtifactStore
from ppdm.steps.base import Verified
from ppdm.steps.verify import VerifySettings, verify_step
from ppdm.tasks._ui import log_fact, markdown_artifact


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
    for name, table in output.summary["tables"].items():
        log_fact(
            "verify: %s passed; %d rows; %s",
            name,
            table["rows"],
            achieved_line(table),
        )
    dp = output.summary.get("differential_privacy")
    if dp:
        log_fact(
            "verify: (%g, %g)-differential privacy %s; every class >= k = %s: %s",
            dp["epsilon"],
            dp["delta"],
            dp["holds"].split(" (")[0],
            dp["checked"]["k"],
            "yes" if dp["checked"]["every_class_at_least_k"] else "no",
        )
    markdown_artifact(
        settings.dataset,
        "verify",
        certificate_markdown(output.summary),
        "Verification certificate (passed)",
    )
    return output


def achieved_line(table: dict) -> str:
    """Each checked model with the figure it achieved, as its own result states it."""
    shown = [
        f"{result['model']}: {result['measure']} = {_figure(result.get('achieved'))}"
        for result in table.get("models") or ()
    ]
    return "; ".join(shown) or "no per-class model checked"


def _figure(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def certificate_markdown(certificate: dict) -> str:
    """The certificate as an operator reads it: the requirement, then each table's figures."""
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
        "| table | rows | passed | achieved | sha256 of the file |",
        "|---|---|---|---|---|",
    ]
    for name, table in sorted(certificate["tables"].items()):
        achieved = ", ".join(
            f"{key} = {value:g}" if isinstance(value, float) else f"{key} = {value}"
            for key, value in sorted(table["measures"].items())
        )
        passed = "yes" if table["passed"] else "no"
        lines.append(
            f"| {name} | {table['rows']} | {passed} | {achieved} "
            f"| `{table.get('sha256', 'n/a')}` |"
        )
    lines += [
        "",
        "Quasi-identifiers: "
        + ", ".join(certificate["requirement"]["quasi_identifiers"])
        + ". Checked on the candidate files by the independent verifier.",
    ]
    return "\n".join(lines)
