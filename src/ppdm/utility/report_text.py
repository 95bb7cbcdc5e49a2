"""Words and figures of the utility report, shared by the page and the Markdown.

Formatting of cells (:func:`fmt`), the accuracy table and its warnings, the
Markdown summary the Prefect UI shows, and how times, shares, privacy models
and released labels read on the page. Plain strings: the HTML escaping is the
template's (:mod:`ppdm.utility.report_html`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ppdm.values import canonical_label
from ppdm.verify.figures import CheckFigures, figures_markdown

__all__ = [
    "accuracy_markdown",
    "accuracy_rows",
    "accuracy_warnings",
    "describe_models",
    "fmt",
    "interval_text",
    "readable_label",
    "share",
    "utc",
]


def fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return "–"
        if value != 0 and (abs(value) >= 1e6 or abs(value) < 1e-3):
            return f"{value:.3e}"
        return f"{value:,.4f}".rstrip("0").rstrip(".")
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(fmt(v) for v in value) + ")"
    if isinstance(value, dict):
        return ", ".join(f"{k}={fmt(v)}" for k, v in value.items())
    return str(value)


def interval_text(interval: Sequence[float] | None) -> str:
    if not interval:
        return "–"
    return f"[{fmt(float(interval[0]))}, {fmt(float(interval[1]))}]"


_SIDES = (("original", "original"), ("anonymized", "release"))


def accuracy_rows(holdout: Mapping[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """The accuracy table of the page and of the Prefect artifact.

    One row per model and training table (original, release) with accuracy,
    balanced accuracy and ROC AUC and their intervals, the accuracy
    difference on the release row, and a note when the model is no better
    than the majority-class rule; then the rule's own row.
    """
    header = [
        "model",
        "trained on",
        "accuracy",
        "95% interval",
        "balanced accuracy",
        "95% interval",
        "ROC AUC",
        "95% interval",
        "accuracy difference",
        "vs majority rule",
    ]
    rows: list[list[Any]] = []
    for model, entry in (holdout.get("accuracy") or {}).items():
        flags = entry.get("no_better_than_zero_r") or {}
        for side, label in _SIDES:
            rows.append(
                [
                    model,
                    label,
                    entry.get(side),
                    interval_text(entry.get(f"{side}_ci95")),
                    entry.get(f"{side}_balanced_accuracy"),
                    interval_text(entry.get(f"{side}_balanced_accuracy_ci95")),
                    entry.get(f"{side}_roc_auc"),
                    interval_text(entry.get(f"{side}_roc_auc_ci95")),
                    entry.get("difference") if side == "anonymized" else None,
                    (
                        None
                        if side not in flags
                        else ("NO BETTER" if flags[side] else "above")
                    ),
                ]
            )
    rule = holdout.get("zero_r")
    if rule:
        rows.append(
            [
                f"majority class (always {rule['class']!r})",
                "original",
                rule.get("accuracy"),
                interval_text(rule.get("accuracy_ci95")),
                rule.get("balanced_accuracy"),
                None,
                rule.get("roc_auc"),
                None,
                None,
                None,
            ]
        )
    return header, rows


def accuracy_warnings(utility: Mapping[str, Any]) -> list[str]:
    """Sentences an analyst must read before trusting an accuracy difference."""
    holdout = utility.get("holdout") or {}
    rule = holdout.get("zero_r") or {}
    out = list((utility.get("verdict") or {}).get("warnings") or [])
    for model, entry in (holdout.get("accuracy") or {}).items():
        for side, label in _SIDES:
            if (entry.get("no_better_than_zero_r") or {}).get(side):
                out.append(
                    f"{model.replace('_', ' ')} trained on the {label} is no "
                    "better than always predicting the majority class "
                    f"{rule.get('class')!r} (accuracy {fmt(entry.get(side))} vs "
                    f"{fmt(rule.get('accuracy'))}, balanced accuracy "
                    f"{fmt(entry.get(f'{side}_balanced_accuracy'))} vs "
                    f"{fmt(rule.get('balanced_accuracy'))})"
                )
    return out


def accuracy_markdown(utility: Mapping[str, Any]) -> str:
    """The page's verdict line, privacy checks and accuracy table as Markdown
    (the Prefect UI renders it; the HTML page stays in the release directory)."""
    holdout = utility.get("holdout") or {}
    lines = []
    record = utility.get("record") or {}
    if record:
        lines += [
            f"**{record.get('dataset')}**, {record.get('algorithm')}: verifier "
            f"{record.get('verdict')}",
            "",
        ]
    if record.get("checks"):
        rows = [CheckFigures(**row) for row in record["checks"]]
        lines += [*figures_markdown(rows), ""]
    verdict = (utility.get("verdict") or {}).get("line")
    if verdict:
        lines += [verdict, ""]
    if holdout.get("accuracy"):
        header, rows = accuracy_rows(holdout)
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "---|" * len(header))
        lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
        lines.append("")
    else:
        lines += ["No hold-out evaluation was run for this release.", ""]
    lines += [f"- **Warning:** {w}" for w in accuracy_warnings(utility)]
    lines += [
        f"- lost records: {fmt(utility.get('lost_records'))}, suppressed cells: "
        f"{fmt(utility.get('suppressed_cells'))}",
    ]
    return "\n".join(["# Utility", "", *lines]) + "\n"


def share(value: Any) -> str | None:
    """A share as a percentage (never shown as 100% when below it)."""
    if value is None:
        return None
    text = f"{100 * float(value):.3g}%"
    return ">99.9%" if text == "100%" and float(value) < 1.0 else text


def describe_models(models: Sequence[Mapping[str, Any]]) -> str:
    """The requirement's models in words, from their ``describe()``."""
    from ppdm.privacy import model_from_description

    return "; ".join(str(model_from_description(m)) for m in models) or "none"


def utc(stamp: Any) -> str:
    """An ISO time in UTC as people read it: ``2026-11-28 17:34:31 UTC``."""
    text = str(stamp)
    if text.endswith("+00:00"):
        return text[: -len("+00:00")].replace("T", " ") + " UTC"
    return text


_LONG_NUMBER = re.compile(r"-?\d+\.\d{7,}")


def readable_label(text: str) -> str:
    """A released cell as the page shows it.

    Open intervals are written as comparisons, as the released files write
    them since the value grammar has that form (``< 23.5``, ``>= 39.5``); a
    label of an earlier release, ``(-inf, 23.5)``, is shown in the same form
    (:func:`ppdm.values.canonical_label`). A number with a binary-float tail
    (a kACTUS group mean, ``34.333333333333336``) is cut to 10 significant
    digits; interval bounds and cut points carry the data's own precision
    already, so a label reads on the page as in the file.

    Examples
    --------
    >>> readable_label("[7.1507, 8.13055)"), readable_label("(-inf, 23.5)")
    ('[7.1507, 8.13055)', '< 23.5')
    >>> readable_label("34.333333333333336")
    '34.33333333'
    """
    text = _LONG_NUMBER.sub(lambda m: f"{float(m.group()):.10g}", str(text))
    return str(canonical_label(text))
