"""The figures of a certificate, one row per check, for every display.

``ppdm verify``, ``ppdm show`` and ``ppdm run --json``, the run log, the
Prefect UI's verification artifact and the record section of ``report.html``
all show a release's privacy checks the same way: each check's registered
name, what it was checked on, what it requires, what the release achieved and
its verdict, as the check's own result states them
(:class:`~ppdm.privacy.base.CheckResult`). A release checked only for
k-anonymity shows one k row per table; one with entropy l-diversity,
differential privacy or series checks shows theirs, and nothing else.

>>> import pandas as pd
>>> from ppdm.privacy import Requirement
>>> from ppdm.verify import verify_tables
>>> t = pd.DataFrame({"age": ["[20, 29]"] * 2 + ["[30, 39]"] * 3})
>>> (row,) = check_figures(verify_tables({"t": t}, Requirement.of(("age",), k=2)))
>>> row.line()
'k-anonymity on t: required k = 2; achieved k = 2; passed'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ppdm.privacy import CheckResult
from ppdm.verify.certificate import Certificate, checks_of

__all__ = [
    "CHECK_COLUMNS",
    "CheckFigures",
    "check_figures",
    "figures_markdown",
    "figures_of",
    "figures_text",
]

#: The header of a table of checks (:meth:`CheckFigures.cells`).
CHECK_COLUMNS = ("check", "kind", "checked on", "required", "achieved", "verdict")


@dataclass(frozen=True)
class CheckFigures:
    """One check of a certificate, as every display shows it.

    Attributes
    ----------
    check : str
        The check's registered name (:data:`ppdm.privacy.PRIVACY_CHECKS`).
    kind : str
        ``"class"``, ``"release"`` or ``"series"``.
    on : str
        What it was checked on: a table's name, ``"all tables together"``,
        ``"against release <id>"``.
    required, achieved : str
        The check's ``required`` and ``figures`` in words (``k = 5``).
    verdict : str
        ``"passed"``, ``"failed"``, or ``"accepted risk"`` for a series leak
        the data owner released under ``republication: {policy: off}``.
    summary : str
        The result's own line in words.
    """

    check: str
    kind: str
    on: str
    required: str
    achieved: str
    verdict: str
    summary: str

    @property
    def passed(self) -> bool:
        return self.verdict != "failed"

    def line(self) -> str:
        """One line of text: ``k-anonymity on t: required k = 5; achieved k = 7; passed``."""
        return (
            f"{self.check} on {self.on}: required {self.required}; "
            f"achieved {self.achieved}; {self.verdict}"
        )

    def cells(self) -> tuple[str, ...]:
        """The row of a table of checks, under :data:`CHECK_COLUMNS`."""
        return (
            self.check,
            self.kind,
            self.on,
            self.required,
            self.achieved,
            self.verdict,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def figures_markdown(rows: Iterable[CheckFigures]) -> list[str]:
    """The lines of a Markdown table of checks, each with its summary in words."""
    lines = [
        "| " + " | ".join((*CHECK_COLUMNS, "in words")) + " |",
        "|" + "---|" * (len(CHECK_COLUMNS) + 1),
    ]
    for row in rows:
        cells = (*row.cells(), row.summary)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return lines


def figures_text(figures: Mapping[str, Any]) -> str:
    """``k = 5, l = 2.5``: measures by name, numbers in their shortest form."""
    shown = ", ".join(f"{name} = {_number(v)}" for name, v in figures.items())
    return shown or "n/a"


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def check_figures(
    certificate: Certificate | Mapping[str, Any],
) -> tuple[CheckFigures, ...]:
    """Every check of ``certificate`` (an object, or ``verification.json``
    read back), in :meth:`Certificate.checks`' order."""
    checks = (
        certificate.checks()
        if isinstance(certificate, Certificate)
        else checks_of(certificate)
    )
    return tuple(figures_of(where, result) for where, result in checks)


def figures_of(where: str, result: CheckResult) -> CheckFigures:
    """The row of one check's ``result``, checked on ``where``."""
    if not result.passed:
        verdict = "failed"
    elif getattr(result, "leaks", False):
        verdict = "accepted risk"
    else:
        verdict = "passed"
    return CheckFigures(
        check=result.name,
        kind=result.kind,
        on=where,
        required=figures_text(result.required),
        achieved=figures_text(result.figures),
        verdict=verdict,
        summary=result.summary(),
    )
