from __future__ import annotations

from collections.abc import Mapping

from prefect import task
from prefect.cache_policies import NO_CACHE

from ppdm.privacy import CheckResult
from ppdm.release.artifacts import ArtifactRef, ArtifactStore
from ppdm.steps.base import Verified
from ppdm.steps.verify import VerifySettings, verify_step
from ppdm.tasks._ui import log_fact, markdown_artifact
from ppdm.verify.certificate import checks_of


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
    checks = checks_of(output.summary)
    tables = output.summary["tables"]
    for name, table in tables.items():
        log_fact(
            "verify: %s passed; %d rows; %s",
            name,
            table["rows"],
            achieved_line([r for where, r in checks if where == name]),
        )
    # The checks of the tables together and of the series, each in its own words.
    for where, result in checks:
        if where not in tables:
            log_fact("verify: %s: %s", where, result.summary())
    markdown_artifact(
        settings.dataset,
        "verify",
        certificate_markdown(output.summary),
        "Verification certificate (passed)",
    )
    return output


def achieved_line(results: list[CheckResult]) -> str:
    """Each checked model with the figures it achieved, as its own result states them."""
    shown = [
        f"{getattr(result, 'model', result.name)}: "
        + ", ".join(
            f"{key} = {_figure(value)}" for key, value in result.figures.items()
        )
        for result in results
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
        "| check | kind | on | holds | achieved | in words |",
        "|---|---|---|---|---|---|",
    ]
    for where, result in checks_of(certificate):
        figures = ", ".join(
            f"{key} = {_figure(value)}" for key, value in result.figures.items()
        )
        holds = "yes" if result.passed else "no"
        summary = result.summary().replace("|", "\\|")
        lines.append(
            f"| {result.name} | {result.kind} | {where} | {holds} | {figures} "
            f"| {summary} |"
        )
    lines += [
        "",
        "Quasi-identifiers: "
        + ", ".join(certificate["requirement"]["quasi_identifiers"])
        + ". Checked on the candidate files by the independent verifier.",
    ]
    return "\n".join(lines)
