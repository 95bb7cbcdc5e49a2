"""The utility report of a release: ``utility.json`` content and ``report.html``.

:func:`build_utility` gathers the numbers (information loss per released
table, hold-out accuracies before and after anonymization, the protocol,
suppressed cells, lost records, the algorithm's Pareto front when it has one)
as a JSON-serialisable dict. :func:`render_report_html` turns that dict into
one self-contained HTML page, plots embedded as base64 PNG.

The output is a pure function of the input: no timestamp, no random state,
PNGs written without the "Software" metadata chunk, and matplotlib driven
through its object API (``matplotlib.figure.Figure`` with the Agg canvas,
never ``pyplot``) under a private ``rc_context``, so the global rcParams are
never touched.
"""

from __future__ import annotations

import base64
import contextlib
import html
import io
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ppdm.model import AnonymizationSpec
from ppdm.privacy._containment import quasi_identifier_columns
from ppdm.privacy.measures import class_sizes
from ppdm.utility.holdout import holdout_utility
from ppdm.utility.learners import MODELS
from ppdm.utility.loss import (
    _json_ready,
    covers_from_hierarchies,
    information_loss,
    release_loss,
)
from ppdm.utility.preprocessing import DiscretizeSettings
from ppdm.utility.scoring import Covers
from ppdm.utility.views import as_training_views
from ppdm.values import canonical_label

__all__ = [
    "accuracy_markdown",
    "build_utility",
    "column_releases",
    "figure_png",
    "new_figure",
    "plot_style",
    "readable_label",
    "release_verdict",
    "render_report_html",
    "utility_report",
]

#: rcParams of every plot, applied only inside :func:`plot_style`.
_STYLE = {
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "figure.dpi": 100.0,
    "savefig.dpi": 100.0,
    "path.simplify": True,
}


@contextlib.contextmanager
def plot_style() -> Iterator[None]:
    """Temporary rcParams for the project's plots (the globals stay as they are)."""
    with matplotlib.rc_context(_STYLE):
        yield


def new_figure(width: float, height: float) -> Figure:
    """A figure on the Agg canvas, independent of pyplot's global state."""
    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    fig.set_layout_engine("tight")
    return fig


def figure_png(fig: Figure) -> bytes:
    """PNG bytes of ``fig``, without metadata that would vary between runs."""
    buffer = io.BytesIO()
    with plot_style():
        fig.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    return buffer.getvalue()


def _class_size_distribution(table: pd.DataFrame, qi: list[str]) -> list[list[int]]:
    sizes = class_sizes(table, qi)
    values, counts = np.unique(sizes, return_counts=True)
    return [[int(v), int(c)] for v, c in zip(values, counts)]


def build_utility(
    original: pd.DataFrame,
    released_tables: Mapping[str, pd.DataFrame],
    spec: AnonymizationSpec,
    holdout: Mapping[str, Any] | None,
    evidence: Mapping[str, Any],
    *,
    risk: Mapping[str, Mapping[str, Any]] | None = None,
    roles: Mapping[str, str] | None = None,
    passthrough: Sequence[Mapping[str, Any]] | None = None,
    pseudonymized: Sequence[str] = (),
) -> dict[str, Any]:
    """The ``utility.json`` content of a release.

    Parameters
    ----------
    original : pandas.DataFrame
        The anonymizer's input table.
    released_tables : mapping of str to pandas.DataFrame
        The release's tables by name (one, or several projections).
    spec : AnonymizationSpec
    holdout : dict or None
        The result of :func:`ppdm.utility.holdout_utility`.
    evidence : mapping
        The algorithm's evidence; its ``"pareto_front"`` (a list of dicts with
        ``"node"``/``"levels"``, metric values and a ``"chosen"`` flag), when
        present, is carried into the report.
    risk : mapping of str to dict, optional
        Re-identification risk per released table, as the verifier measured
        it (the ``risk`` of each table in ``verification.json``); shown so the
        owner sees the privacy side next to the utility side.
    roles : mapping of str to str, optional
        Column -> role (``identifying``, ``quasi_identifier``, ``sensitive``,
        ``insensitive``, ``target``, ``weight``, ``drop``), e.g. the
        configuration's ``columns``. Without it, roles are read from ``spec``
        (quasi-identifiers, sensitive attributes, target) and other columns
        have none.
    passthrough : sequence of dict, optional
        The certificate's ``passthrough`` section: the verifier's figures for
        every column released as is (see :mod:`ppdm.verify.passthrough`).
    pseudonymized : sequence of str, optional
        Identifying columns released as keyed pseudonyms (not in
        ``released_tables``: the learners never see them).

    Returns
    -------
    dict
        ``spec``, ``tables`` (per table: :func:`ppdm.utility.loss.information_loss`
        plus ``class_size_distribution`` as ``[size, n_classes]`` pairs; for a
        table of 0/1 features ``<q>=<value>``, ``class_columns`` names them and
        the class figures are over them as released),
        ``release`` (the whole release, :func:`ppdm.utility.loss.release_loss`:
        every quasi-identifier charged, withheld ones included),
        ``suppressed_cells`` and ``lost_records`` over all tables, ``holdout``,
        ``protocol``, ``pareto_front``, ``risk``, ``columns`` (every column:
        its role, how it leaves and the tables that carry it) and
        ``passthrough``. JSON-serialisable.
    """
    tables: dict[str, Any] = {}
    for name, released in released_tables.items():
        loss = information_loss(original, released, spec)
        qi = list(quasi_identifier_columns(released.columns, spec.quasi_identifiers))
        if qi != loss["quasi_identifiers"]:
            # A feature selection release: its classes are those of the
            # released 0/1 columns as they are (what an attacker who knows a
            # person's quasi-identifiers finds), as the certificate counts them.
            sizes = class_sizes(released, qi)
            loss["class_columns"] = qi
            loss["equivalence_classes"] = len(sizes)
            loss["min_class_size"] = int(sizes.min()) if len(sizes) else 0
            loss["average_class_size"] = (
                float(len(released) / len(sizes)) if len(sizes) else 0.0
            )
        loss["class_size_distribution"] = (
            _class_size_distribution(released, qi) if qi else []
        )
        tables[str(name)] = loss
    pareto = evidence.get("pareto_front") if evidence else None
    utility = {
        "spec": {
            "requirement": spec.requirement.to_dict(),
            "target": spec.target,
            "suppression_limit": float(spec.suppression_limit),
        },
        "rows_original": len(original),
        "tables": tables,
        "release": release_loss(tables, spec.quasi_identifiers, len(original)),
        "suppressed_cells": int(
            sum(t["suppressed_cells"]["count"] for t in tables.values())
        ),
        "lost_records": int(
            max((t["lost_records"] for t in tables.values()), default=0)
        ),
        "holdout": dict(holdout) if holdout is not None else None,
        "protocol": holdout.get("protocol") if holdout is not None else None,
        "pareto_front": list(pareto) if pareto is not None else None,
        "risk": {str(name): dict(r) for name, r in risk.items()} if risk else None,
        "columns": column_releases(
            original, released_tables, spec, roles, pseudonymized=pseudonymized
        ),
        "passthrough": (
            [dict(r) for r in passthrough] if passthrough is not None else None
        ),
        "verdict": release_verdict(
            original, released_tables, spec, pseudonymized=pseudonymized
        ),
    }
    return _json_ready(utility)


def _survived(column: pd.Series, marker: str) -> int:
    """Cells of a released column that still say something (not suppressed,
    not generalized to the hierarchy's root ``*``, not missing)."""
    text = column.astype("string")
    return int((text.notna() & ~text.isin([marker, "*"])).sum())


def release_verdict(
    original: pd.DataFrame,
    released_tables: Mapping[str, pd.DataFrame],
    spec: AnonymizationSpec,
    *,
    pseudonymized: Sequence[str] = (),
) -> dict[str, Any]:
    """What an analyst gets: the share of each quasi-identifier that survived.

    A quasi-identifier survives in a row when the release keeps its cell
    neither suppressed nor generalized to ``*``; its share is over the
    original rows (a record the release dropped kept nothing) and taken in
    the table that keeps it best. A quasi-identifier released as 0/1
    features (feature selection) counts every released row of those
    features.

    Returns
    -------
    dict
        ``quasi_identifiers`` (``{name: share in [0, 1]}``), ``dropped``
        (columns of ``original`` that no table carries), ``released``
        (columns carried by some table), ``warnings`` (sentences: every
        quasi-identifier suppressed; only the target and the sensitive
        attribute released) and ``line`` (all of it in one sentence).
    """
    n = len(original)
    marker = spec.suppression_marker
    shares: dict[str, float] = {}
    for q in spec.quasi_identifiers:
        best = 0
        for table in released_tables.values():
            if q in table.columns:
                best = max(best, _survived(table[q], marker))
            elif any(str(c).startswith(f"{q}=") for c in table.columns):
                best = max(best, len(table))
        shares[q] = best / n if n else 0.0
    released = list(
        dict.fromkeys(
            str(c)
            for table in released_tables.values()
            for c in table.columns
            if str(c) not in pseudonymized
        )
    )
    dropped = [
        str(c)
        for c in original.columns
        if str(c) not in released
        and str(c) not in pseudonymized
        and not any(r.startswith(f"{c}=") for r in released)
    ]
    warnings = []
    if shares and all(share == 0.0 for share in shares.values()):
        warnings.append(
            "every quasi-identifier is suppressed or withheld: the release tells "
            "an analyst nothing about them, and an accuracy 'difference' near "
            "zero here means both models fell back to the class frequencies, "
            "not that nothing was lost"
        )
    kept = {
        spec.target,
        spec.sensitive_attribute,
        *spec.requirement.sensitive_attributes,
    } - {None}
    if released and set(released) <= kept:
        warnings.append(
            "the release holds only the target and the sensitive attribute ("
            + ", ".join(released)
            + "): no column to predict from"
        )
    line = (
        "Quasi-identifiers surviving (not suppressed, not generalized to *): "
        + (", ".join(f"{q} {_share(share)}" for q, share in shares.items()) or "none")
        + ". Dropped columns: "
        + (", ".join(dropped) or "none")
        + "."
        + "".join(f" Warning: {w}." for w in warnings)
    )
    return {
        "quasi_identifiers": shares,
        "dropped": dropped,
        "released": released,
        "warnings": warnings,
        "line": line,
    }


def _leaves(role: str | None, released: bool) -> str:
    """How a column of ``role`` leaves the building, in words."""
    if role == "quasi_identifier":
        if released:
            return "generalized or suppressed (quasi-identifier)"
        return "withheld (a quasi-identifier no table carries)"
    if not released:
        return "dropped (never released)"
    if role == "identifying":
        return "pseudonymized (keyed HMAC-SHA256)"
    if role == "sensitive":
        return "released as is, protected by the privacy models (sensitive)"
    if role in ("insensitive", "target", "weight"):
        return f"released as is on purpose ({role})"
    if role is None:
        return "released as is (no role given)"
    return f"released as is (role {role})"


def column_releases(
    original: pd.DataFrame,
    released_tables: Mapping[str, pd.DataFrame],
    spec: AnonymizationSpec,
    roles: Mapping[str, str] | None = None,
    *,
    pseudonymized: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Every column, its role and how it leaves: the report's column table.

    Columns come in the order of ``roles``, then those released or in
    ``original`` that ``roles`` does not name. Whether a column is released
    is read from the released tables themselves, except ``pseudonymized``
    identifiers, which the report's learners are not given (a pseudonym is a
    row key, not a feature) and which every released table carries.

    Returns
    -------
    list of dict
        ``column``, ``role`` (None when unknown), ``released_as`` (words) and
        ``tables`` (the released tables that carry it).
    """
    known: dict[str, str | None] = {}
    if roles is not None:
        known.update(roles)
    else:
        for q in spec.quasi_identifiers:
            known[q] = "quasi_identifier"
        for a in spec.requirement.sensitive_attributes:
            known[a] = "sensitive"
        if spec.target is not None:
            known[spec.target] = "target"
    order = list(known)
    for frame in (*released_tables.values(), original):
        order += [str(c) for c in frame.columns if c not in known and c not in order]
    # Feature selection releases a quasi-identifier as 0/1 indicator columns
    # named "<quasi-identifier>=<value>", one per selected value.
    feature_of = {
        column: column.split("=", 1)[0]
        for column in order
        if column not in known
        and "=" in column
        and known.get(column.split("=", 1)[0]) == "quasi_identifier"
    }
    out = []
    for column in dict.fromkeys(order):
        tables = [str(n) for n, t in released_tables.items() if column in t.columns]
        if column in pseudonymized:
            tables = [str(n) for n in released_tables]
        role = known.get(column)
        released_as = _leaves(role, bool(tables))
        if column in feature_of:
            role = "quasi_identifier"
            released_as = f"0/1 feature of quasi-identifier {feature_of[column]}"
        elif not tables and column in feature_of.values():
            released_as = "released only as the 0/1 features of its selected values"
        out.append(
            {
                "column": column,
                "role": role,
                "released_as": released_as,
                "tables": tables,
            }
        )
    return out


# ----------------------------------------------------------------- rendering


def _fmt(value: Any) -> str:
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
        return "(" + ", ".join(_fmt(v) for v in value) + ")"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_fmt(v)}" for k, v in value.items())
    return str(value)


def _table(header: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_fmt(v))}</td>" for v in row) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}">'


def _accuracy_plot(models: Mapping[str, Mapping[str, float]]) -> bytes:
    with plot_style():
        fig = new_figure(6.0, 3.5)
        ax = fig.add_subplot(1, 1, 1)
        names = list(models)
        x = np.arange(len(names))
        original = [100 * (models[m].get("original") or 0.0) for m in names]
        anonymized = [100 * (models[m].get("anonymized") or 0.0) for m in names]
        for shift, side, heights, label in (
            (-0.2, "original", original, "trained on original"),
            (0.2, "anonymized", anonymized, "trained on release"),
        ):
            errors = _error_bars(models, names, side, heights)
            ax.bar(
                x + shift,
                heights,
                width=0.4,
                label=label,
                yerr=errors,
                capsize=3 if errors is not None else 0,
            )
        ax.set_xticks(x, [n.replace("_", " ") for n in names])
        low = min(original + anonymized, default=0.0)
        ax.set_ylim(max(0.0, low - 10.0), 100.0)
        ax.set_ylabel("test accuracy (%)")
        ax.set_title("Accuracy before and after anonymization")
        ax.legend(loc="upper right")
        ax.grid(True, axis="y", alpha=0.3)
        return figure_png(fig)


def _error_bars(
    models: Mapping[str, Mapping[str, Any]],
    names: Sequence[str],
    side: str,
    heights: Sequence[float],
) -> np.ndarray | None:
    """(2, n) distances from each bar to its 95 % interval's ends, or None
    when no model has an interval (a report made before intervals existed)."""
    intervals = [models[m].get(f"{side}_ci95") for m in names]
    if not any(intervals):
        return None
    out = np.zeros((2, len(names)))
    for i, (interval, height) in enumerate(zip(intervals, heights)):
        if interval:
            out[0, i] = max(height - 100 * interval[0], 0.0)
            out[1, i] = max(100 * interval[1] - height, 0.0)
    return out


def _class_size_plot(tables: Mapping[str, Mapping[str, Any]], k: int | None) -> bytes:
    with plot_style():
        fig = new_figure(6.0, 3.5)
        ax = fig.add_subplot(1, 1, 1)
        for name, loss in tables.items():
            pairs = loss.get("class_size_distribution") or []
            if not pairs:
                continue
            sizes = np.array([p[0] for p in pairs], dtype=float)
            counts = np.array([p[1] for p in pairs], dtype=float)
            bins = np.unique(np.geomspace(1, max(sizes.max(), 2) + 1, 30).round())
            ax.hist(sizes, bins=bins, weights=counts, histtype="step", label=name)
        if k:
            ax.axvline(k, linestyle="--", color="grey", label=f"required k = {k}")
        ax.set_xscale("log")
        ax.set_xlabel("equivalence-class size")
        ax.set_ylabel("number of classes")
        ax.set_title("Class-size distribution")
        ax.legend()
        ax.grid(True, alpha=0.3)
        return figure_png(fig)


def _metric(entry: Mapping[str, Any], *names: str) -> float | None:
    lowered = {str(k).lower(): v for k, v in entry.items()}
    for name in names:
        value = lowered.get(name.lower())
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def _pareto_plot(front: list[Mapping[str, Any]]) -> bytes:
    with plot_style():
        fig = new_figure(6.0, 3.5)
        ax = fig.add_subplot(1, 1, 1)
        # A lattice search's front is k vs information loss; DMPD's is
        # partition anonymity (k) vs the wrapper's accuracy.
        by_accuracy = all(_metric(e, "GLM", "ncp") is None for e in front)
        measure = ("accuracy",) if by_accuracy else ("GLM", "ncp")
        points = [
            (_metric(e, "k"), _metric(e, *measure), bool(e.get("chosen")))
            for e in front
        ]
        points = [p for p in points if p[0] is not None and p[1] is not None]
        others = [(k, g) for k, g, chosen in points if not chosen]
        chosen = [(k, g) for k, g, c in points if c]
        if others:
            ax.scatter(*zip(*others), s=20, label="Pareto front")
        if chosen:
            ax.scatter(
                *zip(*chosen),
                s=90,
                marker="*",
                color="crimson",
                label="released" if by_accuracy else "chosen node",
            )
        if points and min(p[0] for p in points) > 0:
            ax.set_xscale("log")  # achieved k spans orders of magnitude
        ax.set_xlabel("achieved k")
        if by_accuracy:
            ax.set_ylabel("accuracy (wrapper cross-validation)")
            ax.set_title("Pareto front: accuracy vs partition anonymity")
        else:
            ax.set_ylabel("GLM (information loss)")
            ax.set_title("Pareto front of the lattice search")
        if points:
            ax.legend()
        ax.grid(True, alpha=0.3)
        return figure_png(fig)


def _interval_text(interval: Sequence[float] | None) -> str:
    if not interval:
        return "–"
    return f"[{_fmt(float(interval[0]))}, {_fmt(float(interval[1]))}]"


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
                    _interval_text(entry.get(f"{side}_ci95")),
                    entry.get(f"{side}_balanced_accuracy"),
                    _interval_text(entry.get(f"{side}_balanced_accuracy_ci95")),
                    entry.get(f"{side}_roc_auc"),
                    _interval_text(entry.get(f"{side}_roc_auc_ci95")),
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
                _interval_text(rule.get("accuracy_ci95")),
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
                    f"{rule.get('class')!r} (accuracy {_fmt(entry.get(side))} vs "
                    f"{_fmt(rule.get('accuracy'))}, balanced accuracy "
                    f"{_fmt(entry.get(f'{side}_balanced_accuracy'))} vs "
                    f"{_fmt(rule.get('balanced_accuracy'))})"
                )
    return out


def accuracy_markdown(utility: Mapping[str, Any]) -> str:
    """The page's verdict line and accuracy table as Markdown (the Prefect UI
    renders it; the HTML page stays in the release directory)."""
    holdout = utility.get("holdout") or {}
    lines = []
    record = utility.get("record") or {}
    if record:
        lines += [
            f"**{record.get('dataset')}**, {record.get('algorithm')}: verifier "
            f"{record.get('verdict')}",
            "",
        ]
    verdict = (utility.get("verdict") or {}).get("line")
    if verdict:
        lines += [verdict, ""]
    if holdout.get("accuracy"):
        header, rows = accuracy_rows(holdout)
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "---|" * len(header))
        lines += ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in rows]
        lines.append("")
    else:
        lines += ["No hold-out evaluation was run for this release.", ""]
    lines += [f"- **Warning:** {w}" for w in accuracy_warnings(utility)]
    lines += [
        f"- lost records: {_fmt(utility.get('lost_records'))}, suppressed cells: "
        f"{_fmt(utility.get('suppressed_cells'))}",
    ]
    return "\n".join(["# Utility", "", *lines]) + "\n"


def _views_html(holdout: Mapping[str, Any]) -> list[str]:
    """Per-view accuracy of each model, when the release has several views."""
    views = holdout.get("views") or []
    models = holdout.get("accuracy") or {}
    if len(views) < 2:
        return []
    rows = [
        [m, *((s.get("per_view") or {}).get(v) for v in views), s.get("anonymized")]
        for m, s in models.items()
    ]
    return [
        f"<h3>Training views ({len(views)})</h3>",
        "<p>One model per view, trained on that view's columns; the last column "
        "is their naive Bayes combination (DMPD, Matatov, Rokach &amp; Maimon "
        "2010), the accuracy reported above.</p>",
        _table(["model", *views, "combined"], rows),
    ]


def _preprocessing_html(preprocessing: Mapping[str, Any] | None) -> list[str]:
    """The cut points the hold-out fitted on its training part."""
    cut_points = (preprocessing or {}).get("cut_points") or {}
    if not cut_points:
        return []
    return [
        "<h3>Cut points fitted on the training part</h3>",
        _table(
            ["attribute", "method", "cut points"],
            [
                [name, preprocessing.get("method"), ", ".join(_fmt(c) for c in cuts)]
                for name, cuts in cut_points.items()
            ],
        ),
    ]


def _share(value: Any) -> str | None:
    """A share as a percentage (never shown as 100% when below it)."""
    if value is None:
        return None
    text = f"{100 * float(value):.3g}%"
    return ">99.9%" if text == "100%" and float(value) < 1.0 else text


def _columns_html(
    columns: Sequence[Mapping[str, Any]] | None,
    passthrough: Sequence[Mapping[str, Any]] | None,
) -> list[str]:
    """Every column with its role and how it leaves; figures of the as-is ones."""
    if not columns and passthrough is None:
        return []
    parts = ["<h2>Columns and how they are released</h2>"]
    if columns:
        parts.append(
            _table(
                ["column", "role", "how it leaves", "released in"],
                [
                    [
                        c.get("column"),
                        (c.get("role") or "–").replace("_", " "),
                        c.get("released_as"),
                        ", ".join(c.get("tables") or []) or "–",
                    ]
                    for c in columns
                ],
            )
        )
    if passthrough is None:
        parts.append(
            "<p>The verifier did not check the columns released as is for this "
            "release.</p>"
        )
        return parts
    if not passthrough:
        parts.append("<p>No column is released as is beyond the ones above.</p>")
        return parts
    parts.append(
        "<p>Columns released as is, measured by the independent verifier on the "
        "released files. <i>Below k</i>: the column added to the "
        "quasi-identifiers, the classes smaller than k and the share of rows "
        "in them, and the share of rows alone in their class. <i>Proxy</i>: "
        "the share of rows whose value of the column reveals a "
        "quasi-identifier's original value (at least k rows of the original "
        "table share that column value and that one quasi-identifier value) "
        "while the release generalized or suppressed it.</p>"
    )
    rows = []
    for r in passthrough:
        limits = r.get("limits") or {}
        proxy = (
            _share(r.get("proxy_share")) if r.get("proxy_measured") else "not measured"
        )
        attribute = r.get("proxy_attribute")
        rows.append(
            [
                r.get("column"),
                r.get("table"),
                r.get("k"),
                r.get("classes_below_k"),
                _share(r.get("below_k_share")),
                _share(r.get("unique_share")),
                f"{proxy} ({attribute})" if attribute else proxy,
                f"{_share(limits.get('max_below_k_share'))} / "
                f"{_share(limits.get('max_proxy_share'))}",
                r.get("status"),
            ]
        )
    parts.append(
        _table(
            [
                "column",
                "table",
                "k",
                "classes below k",
                "rows below k",
                "rows unique",
                "proxy (quasi-identifier)",
                "limits (below k / proxy)",
                "verdict",
            ],
            rows,
        )
    )
    accepted = [r.get("column") for r in passthrough if r.get("accepted")]
    if any(r.get("exceeds") and r.get("accepted") for r in passthrough):
        names = ", ".join(
            dict.fromkeys(
                str(r.get("column"))
                for r in passthrough
                if r.get("exceeds") and r.get("accepted")
            )
        )
        parts.append(
            "<p><strong>Warning: Accepted by the data owner</strong> although above "
            f"a limit: {html.escape(names)} (configuration key "
            "<code>accept_passthrough</code>).</p>"
        )
    acknowledged = [r for r in passthrough if r.get("acknowledged")]
    if acknowledged:
        parts.append(
            "<p><strong>Warning: released as is although it looks like a direct "
            "identifier</strong>, on the data owner's acknowledgement: "
            + html.escape(
                "; ".join(
                    f"{r.get('column')} ({r.get('identifier')})" for r in acknowledged
                )
            )
            + " (configuration key <code>acknowledge_identifier_passthrough</code>)."
            "</p>"
        )
    elif accepted:
        parts.append(
            "<p>Accepted by the data owner in advance, and within the limits: "
            f"{html.escape(', '.join(dict.fromkeys(map(str, accepted))))}.</p>"
        )
    return parts


_CSS = """
body { font-family: sans-serif; max-width: 60em; margin: 2em auto; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: right; }
th { background: #eee; }
td:first-child, th:first-child { text-align: left; }
img { max-width: 100%; }
p.protocol { background: #f6f6f6; padding: 0.8em; border-left: 4px solid #888; }
p.verdict { font-weight: bold; padding: 0.6em; border-left: 4px solid #2a7; }
p.warning { border-left: 4px solid #c30; padding: 0.4em 0.6em; background: #fff3f0; }
@media print {
  body { max-width: none; margin: 0; font-size: 10pt; }
  h2 { break-after: avoid; }
  table, img, p.verdict { break-inside: avoid; }
  th { background: none; }
  p.protocol, p.warning { background: none; }
}
@page { margin: 15mm; }
"""


def _describe_models(models: Sequence[Mapping[str, Any]]) -> str:
    """The requirement's models in words, from their ``describe()``."""
    from ppdm.privacy import model_from_description

    return "; ".join(str(model_from_description(m)) for m in models) or "none"


def render_report_html(
    utility: Mapping[str, Any], *, title: str, plots_dir: Path | None = None
) -> str:
    """A self-contained HTML page for a ``utility.json`` dict.

    Sections: summary, every column with its role and how it leaves (with the
    verifier's figures for the columns released as is, and which the data
    owner accepted), accuracy before/after per model (bar chart and table),
    the evaluation protocol, information loss per released table, the
    class-size distribution and, when the algorithm produced one, its Pareto
    front (table and GLM-vs-k scatter with the chosen node highlighted).

    Parameters
    ----------
    utility : mapping
        The output of :func:`build_utility`.
    title : str
    plots_dir : pathlib.Path, optional
        Also write each plot there as a PNG file (same bytes as embedded).

    Returns
    -------
    str
        The page; byte-identical for the same ``utility`` and ``title``.
    """
    plots: dict[str, bytes] = {}
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    spec = utility.get("spec") or {}
    requirement = spec.get("requirement") or {}
    parts.append("<h2>Summary</h2>")
    parts.append(
        _table(
            ["quantity", "value"],
            [
                [
                    "quasi-identifiers",
                    ", ".join(requirement.get("quasi_identifiers", [])),
                ],
                ["privacy models", _describe_models(requirement.get("models", []))],
                ["target", spec.get("target")],
                ["suppression limit", spec.get("suppression_limit")],
                ["released tables", ", ".join(utility.get("tables") or {}) or None],
                ["original rows", utility.get("rows_original")],
                ["lost records", utility.get("lost_records")],
                ["suppressed cells", utility.get("suppressed_cells")],
            ],
        )
    )

    record = utility.get("record") or {}
    if record.get("release_id"):
        parts.append(
            f'<p class="record-id">Release <code>{html.escape(record["release_id"])}'
            f"</code> of {html.escape(str(record.get('dataset')))}, created "
            f"{html.escape(_utc(record.get('created_at')))}; independent "
            f"verifier: <strong>{html.escape(str(record.get('verdict')))}</strong>"
            "</p>"
        )
    verdict = utility.get("verdict") or {}
    if verdict.get("line"):
        css = "verdict warning" if verdict.get("warnings") else "verdict"
        parts.append(f'<p class="{css}">{html.escape(verdict["line"])}</p>')
    parts.extend(_record_html(utility.get("record")))
    parts.extend(_columns_html(utility.get("columns"), utility.get("passthrough")))

    holdout = utility.get("holdout")
    parts.append("<h2>Classification accuracy</h2>")
    if holdout and holdout.get("accuracy"):
        models = holdout["accuracy"]
        plots["accuracy"] = _accuracy_plot(models)
        parts.append(_img(plots["accuracy"], "accuracy per model"))
        header, rows = accuracy_rows(holdout)
        parts.append(_table(header, rows))
        parts.extend(
            f'<p class="warning"><strong>Warning:</strong> {html.escape(w)}</p>'
            for w in accuracy_warnings(utility)
        )
        parts.append(
            "<p>Intervals (95%): Wilson score intervals for accuracy (Wilson "
            "1927); a normal approximation over the per-class recalls for "
            "balanced accuracy (Brodersen et al. 2010); Hanley &amp; McNeil "
            "(1982) for ROC AUC (macro one-vs-rest over the classes for more "
            "than two, Hand &amp; Till 2001). The majority-class rule (ZeroR) "
            "always predicts the most frequent class of the training part: a "
            "model that does not beat it on these test rows learnt nothing "
            "usable.</p>"
        )
        parts.extend(_views_html(holdout))
        split = holdout.get("split") or {}
        parts.append(
            _table(
                ["split", "rows"], [[k.replace("_", " "), v] for k, v in split.items()]
            )
        )
        parts.extend(_preprocessing_html(holdout.get("preprocessing")))
    else:
        parts.append("<p>No hold-out evaluation was run for this release.</p>")
    if holdout and holdout.get("error"):
        parts.append(
            "<p><strong>The algorithm could not anonymize the training part; no "
            f"accuracy after anonymization:</strong> {html.escape(holdout['error'])}</p>"
        )
    parts.append("<h3>Protocol</h3>")
    protocol = utility.get("protocol") or "No classifier protocol was run."
    parts.append(f'<p class="protocol">{html.escape(protocol)}</p>')

    tables = utility.get("tables") or {}
    parts.append("<h2>Information loss</h2>")
    rows = []
    for name, loss in tables.items():
        ncp = loss.get("ncp") or {}
        suppressed = loss.get("suppressed_cells") or {}
        rows.append(
            [
                name,
                loss.get("rows_released"),
                ncp.get("mean"),
                ncp.get("total"),
                loss.get("discernibility"),
                loss.get("classification_metric"),
                loss.get("equivalence_classes"),
                loss.get("min_class_size"),
                loss.get("average_class_size"),
                suppressed.get("count"),
                suppressed.get("fraction"),
                loss.get("lost_records"),
            ]
        )
    whole = utility.get("release")
    if whole and len(tables) != 1:
        ncp = whole.get("ncp") or {}
        rows.append(
            [
                "whole release",
                None,
                ncp.get("mean"),
                ncp.get("total"),
                None,
                None,
                None,
                None,
                None,
                whole.get("suppressed_cells"),
                None,
                whole.get("lost_records"),
            ]
        )
    parts.append(
        _table(
            [
                "table",
                "rows",
                "NCP/GLM mean",
                "NCP total",
                "DM",
                "CM",
                "classes",
                "min class",
                "mean class",
                "suppressed cells",
                "suppressed fraction",
                "lost records",
            ],
            rows,
        )
    )
    for name, loss in tables.items():
        if loss.get("class_columns"):
            parts.append(
                f"<p>{html.escape(name)}: classes over the released 0/1 features "
                f"({len(loss['class_columns'])} columns) as they are; an attacker "
                "who knows a person's quasi-identifiers knows which features are 0 "
                "too.</p>"
            )
    for name, loss in tables.items():
        per_attribute = (loss.get("ncp") or {}).get("per_attribute") or {}
        if per_attribute:
            parts.append(f"<h3>NCP per quasi-identifier: {html.escape(name)}</h3>")
            parts.append(
                _table(["attribute", "NCP"], [[a, v] for a, v in per_attribute.items()])
            )
    if whole and len(tables) != 1:
        released_in = whole.get("released_in") or {}
        parts.append(
            "<p>Whole release: each quasi-identifier is charged its NCP in the "
            "table that keeps it best; one released in no table is charged as "
            "suppressed in every record.</p>"
        )
        parts.append(
            _table(
                ["quasi-identifier", "released in", "NCP"],
                [
                    [
                        q,
                        ", ".join(names) or "withheld",
                        (whole.get("ncp") or {}).get("per_attribute", {}).get(q),
                    ]
                    for q, names in released_in.items()
                ],
            )
        )
    parts.append(
        "<p>NCP/GLM: Iyengar (KDD 2002), Xu et al. (KDD 2006); DM: Bayardo &amp; "
        "Agrawal (ICDE 2005); CM: Iyengar (KDD 2002). Dropped records count as "
        "fully lost in every metric.</p>"
    )

    parts.append("<h2>Class-size distribution</h2>")
    if any(loss.get("class_size_distribution") for loss in tables.values()):
        k = next(
            (
                m["k"]
                for m in requirement.get("models", [])
                if m["model"] == "k-anonymity"
            ),
            None,
        )
        plots["class_sizes"] = _class_size_plot(tables, k)
        parts.append(_img(plots["class_sizes"], "class-size distribution"))
    else:
        parts.append("<p>No quasi-identifier was released.</p>")

    risk = utility.get("risk")
    if risk:
        parts.append("<h2>Re-identification risk</h2>")
        parts.append(
            "<p>Measured by the independent verifier on the released files. "
            "Prosecutor risk assumes the attacker knows the person is in the "
            "release (1 / class size); journalist risk uses the original table as "
            "the population the attacker links against; marketer risk is the "
            "expected share of records re-identified by linking all of them "
            "(El Emam, <i>Guide to the De-Identification of Personal Health "
            "Information</i>, 2013).</p>"
        )
        names = [
            "prosecutor_max", "prosecutor_average", "prosecutor_records_at_risk",
            "journalist_max", "journalist_records_at_risk", "marketer", "threshold",
        ]  # fmt: skip
        parts.append(
            _table(
                ["table", *names],
                [[table, *(r.get(n) for n in names)] for table, r in risk.items()],
            )
        )

    front = utility.get("pareto_front")
    if front:
        parts.append("<h2>Pareto front</h2>")
        plots["pareto"] = _pareto_plot(front)
        parts.append(_img(plots["pareto"], "Pareto front"))
        header = list(dict.fromkeys(str(key) for entry in front for key in entry))
        parts.append(
            _table(header, [[entry.get(h) for h in header] for entry in front])
        )

    parts.append("</body></html>")
    if plots_dir is not None:
        plots_dir.mkdir(parents=True, exist_ok=True)
        for name, png in plots.items():
            (plots_dir / f"{name}.png").write_bytes(png)
    return "\n".join(parts) + "\n"


# ----------------------------------------------------------------- one entry


def utility_report(
    original: pd.DataFrame,
    release_tables: Mapping[str, pd.DataFrame],
    *,
    algorithm: Any,
    spec: AnonymizationSpec,
    discretize_settings: Any,
    test_size: float = 0.3,
    seed: int,
    evidence: Mapping[str, Any] | None = None,
    risk: Mapping[str, Mapping[str, Any]] | None = None,
    covers: Covers | None = None,
    title: str | None = None,
    models: Sequence[str] = MODELS,
    missing: str = "weka",
    roles: Mapping[str, str] | None = None,
    passthrough: Sequence[Mapping[str, Any]] | None = None,
    pseudonymized: Sequence[str] = (),
    record: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], str]:
    """The utility report of a release: ``utility.json`` content and ``report.html``.

    Runs the hold-out protocol (:func:`ppdm.utility.holdout.holdout_utility`)
    by repeating the release pipeline on the training split: the numeric
    quasi-identifiers are discretized with ``discretize_settings`` fitted on
    the training split only (and applied to the test split), then
    ``algorithm`` anonymizes it with ``spec`` and
    ``numpy.random.default_rng(seed)``; the models are trained on
    ``algorithm.training_views(release)`` (several views are combined by the
    naive Bayes rule of DMPD). Then the information loss of the published
    ``release_tables`` against ``original`` (:func:`build_utility`) and the
    page (:func:`render_report_html`).

    Parameters
    ----------
    original : pandas.DataFrame
        The clean table the release was made from, before discretization.
    release_tables : mapping of str to pandas.DataFrame
        The published tables by name (as read back from the candidate files).
    algorithm : Anonymizer
        A fresh instance of the release's algorithm with its parameters.
    spec : AnonymizationSpec
        The release's requirement, target, suppression limit and hierarchies.
    discretize_settings : DiscretizeSettings, mapping, object or None
        ``method`` ("mdl", "equal-frequency" or "none"), ``n_bins`` and
        ``columns`` (None: every numeric quasi-identifier), e.g. the release
        configuration's ``discretize`` section; never fitted cut points. As
        in the discretize step, an algorithm that generalizes raw values
        along hierarchies gets them unbinned.
    test_size : float, default=0.3
    seed : int
        The release seed: the split, the models and the algorithm's rng.
    evidence : mapping, optional
        The algorithm's evidence (a ``"pareto_front"`` is shown).
    risk : mapping of str to dict, optional
        Re-identification risk per table, from the verification certificate.
    covers : mapping, optional
        Coverage of generalized labels; default: from ``spec.hierarchies``.
    title : str, optional
        Page title; default names the algorithm, k and l.
    models : sequence of str, default=MODELS
    missing : {"weka", "zeros", "indicator"}, default="weka"
        Treatment of unknown cells (:data:`ppdm.utility.learners.MISSING`).
        "indicator" gives naive Bayes and logistic regression a missing-value
        indicator; it is not the default because the test rows are original
        rows, never suppressed, and logistic regression then reads every one
        of them as the "known" part of the release (Adult, kACTUS k = 10:
        84.5 % with "weka", 77.2 % with "indicator", ZeroR 76.1 %;
        benchmarks/results/missing-indicator.md).
    roles : mapping of str to str, optional
        Column -> role (the configuration's ``columns``), for the section
        "Columns and how they are released".
    passthrough : sequence of dict, optional
        The verification certificate's ``passthrough`` section (figures of
        every column released as is, and whether the data owner accepted it).
    pseudonymized : sequence of str, optional
        Identifying columns released as keyed pseudonyms (not in
        ``released_tables``: the learners never see them).
    record : mapping, optional
        What makes the page a record of the release (:func:`release_record`):
        the verdict, the source and data files' sha256, code and library
        versions, the release series; stored as ``utility["record"]``.

    Returns
    -------
    (dict, str)
        The ``utility.json`` content (JSON-serialisable) and the HTML page.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from ppdm.algorithms import get_algorithm
    >>> rng = np.random.default_rng(0)
    >>> age = rng.integers(20, 70, 120)
    >>> table = pd.DataFrame({"age": age, "income": np.where(age > 45, "hi", "lo")})
    >>> spec = AnonymizationSpec.of(("age",), None, "income", k=5)
    >>> algorithm = get_algorithm("mondrian")
    >>> release = algorithm.anonymize(table, spec, np.random.default_rng(0))
    >>> utility, page = utility_report(
    ...     table, release.tables, algorithm=algorithm, spec=spec,
    ...     discretize_settings={"method": "mdl"}, seed=0)
    >>> sorted(utility["holdout"]["accuracy"]["decision_tree"])[:3]
    ['anonymized', 'anonymized_balanced_accuracy', 'anonymized_balanced_accuracy_ci95']
    >>> utility["holdout"]["zero_r"]["class"], utility["verdict"]["dropped"]
    ('hi', [])
    >>> page.startswith("<!DOCTYPE html>")
    True
    """
    settings = DiscretizeSettings.of(discretize_settings)
    raw_input = getattr(algorithm, "uses_hierarchies", False) or (
        getattr(algorithm, "numeric_input", "either") == "raw"
    )
    if covers is None and spec.hierarchies:
        covers = covers_from_hierarchies(spec.hierarchies)
    holdout = None
    if spec.target is not None:
        # The baseline is prepared as the release's discretize step configures
        # it for every algorithm; only the algorithm's own input is unbinned
        # when it generalizes raw values itself.
        baseline = settings.prepare_for(original, spec.quasi_identifiers, spec.target)
        prepare = None if raw_input else baseline

        def anonymize_training_split(train: pd.DataFrame) -> list:
            release = algorithm.anonymize(train, spec, np.random.default_rng(seed))
            return as_training_views(release, algorithm=algorithm)

        holdout = holdout_utility(
            original,
            anonymize_training_split,
            target=spec.target,
            test_size=test_size,
            seed=seed,
            models=models,
            marker=spec.suppression_marker,
            covers=covers,
            missing=missing,
            prepare=prepare,
            prepare_original=baseline,
        )
    utility = build_utility(
        original,
        release_tables,
        spec,
        holdout,
        evidence or {},
        risk=risk,
        roles=roles,
        passthrough=passthrough,
        pseudonymized=pseudonymized,
    )
    if record is not None:
        utility["record"] = dict(record)
    if title is None:
        name = getattr(algorithm, "name", type(algorithm).__name__)
        models = ", ".join(str(m) for m in spec.models)
        title = f"{name}: {models}"
    return utility, render_report_html(utility, title=title)


def release_record(
    certificate: Mapping[str, Any],
    data_files: Mapping[str, str],
    *,
    dataset: str,
    algorithm: str,
    code_version: str,
    library_versions: Mapping[str, str],
    sample: Mapping[str, pd.DataFrame] | None = None,
) -> dict[str, Any]:
    """The facts that make ``report.html`` a record of what was released.

    Only what leaves the building: the released files' hashes, a few released
    rows, the verifier's verdict and the source's hash (never its rows). The
    release id, date, audit sequence number and key id are added when the
    release is published (:func:`ppdm.steps.publish.publish_step` renders the
    published page).
    """
    series = certificate.get("series")
    return {
        "dataset": dataset,
        "algorithm": algorithm,
        "verdict": "passed" if certificate.get("passed") else "failed",
        "requirement": certificate.get("requirement"),
        "source_sha256": certificate.get("input_sha256"),
        "data_files": dict(sorted(data_files.items())),
        "code_version": code_version,
        "library_versions": dict(sorted(library_versions.items())),
        "series": series,
        "release_models": certificate.get("release"),
        "sample": {
            name: frame.head(5).astype(str).to_dict(orient="split")
            for name, frame in sorted((sample or {}).items())
        },
    }


def _utc(stamp: Any) -> str:
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


def _record_html(record: Mapping[str, Any] | None) -> list[str]:
    if not record:
        return []
    requirement = record.get("requirement") or {}
    parts = ["<h2>Release record</h2>"]
    published = record.get("release_id") is not None
    identity = (
        [
            ["release id", record.get("release_id")],
            ["created", _utc(record.get("created_at"))],
            [
                "audit entry",
                f"sequence number {record.get('audit_seq')} of audit.jsonl (the "
                "publish entry of this release id), audit key id "
                f"{record.get('audit_key_id') or 'none (unkeyed)'}",
            ],
        ]
        if published
        else [
            [
                "release id and date",
                "given when the release is published (manifest.json)",
            ]
        ]
    )
    series_rows = record.get("series_rows")
    if series_rows:
        identity.append(
            [
                "release series",
                f"{series_rows.get('held_back') or 0:,} rows held back by the "
                "series check (not in this release; counted, never named), "
                f"{series_rows.get('kept_from_earlier_releases') or 0:,} kept as "
                "earlier releases published them; checked against "
                + (", ".join(series_rows.get("against") or []) or "no earlier release"),
            ]
        )
    if record.get("command"):
        identity.append(["reproduce with", record["command"]])
    parts.append(
        _table(
            ["fact", "value"],
            [
                *identity,
                [
                    "verdict of the independent verifier",
                    f"{record['verdict']}: "
                    + _describe_models(requirement.get("models", []))
                    + " over "
                    + ", ".join(requirement.get("quasi_identifiers", [])),
                ],
                ["dataset", record.get("dataset")],
                ["algorithm", record.get("algorithm")],
                ["source sha256", record.get("source_sha256")],
                ["code version", record.get("code_version")],
                [
                    "libraries",
                    ", ".join(
                        f"{k} {v}"
                        for k, v in (record.get("library_versions") or {}).items()
                    ),
                ],
            ],
        )
    )
    measured_on = record.get("measured_on")
    # An out-of-core release is a directory of Parquet parts per table.
    where = "data/{}/ (Parquet parts)" if measured_on else "data/{}.csv"
    parts.append("<h3>Released files</h3>")
    parts.append(
        _table(
            ["file", "sha256"],
            [[where.format(n), h] for n, h in (record.get("data_files") or {}).items()],
        )
    )
    if measured_on:
        released = measured_on.get("released_rows") or {}
        totals = measured_on.get("released_rows_total") or {}
        parts.append(
            "<p>This release was made out of core, partition by partition. The "
            "utility figures on this page (hold-out accuracy, information loss) "
            f"were measured on a seeded sample: {measured_on['clean_rows']:,} of "
            f"the {measured_on['clean_rows_total']:,} clean rows, and "
            + ", ".join(
                f"{released[n]:,} of the {totals.get(n, 0):,} released rows of "
                f"{html.escape(n)}"
                for n in released
            )
            + f" (seed {measured_on.get('seed')}). The verifier's verdict covers "
            "every released row.</p>"
        )
    for name, split in (record.get("sample") or {}).items():
        parts.append(
            f"<h3>First rows of {html.escape(where.format(name))} as released</h3>"
            "<p>Rows are shuffled; the original rows are never put in a shared "
            "file, so no 'before' rows are shown.</p>"
        )
        parts.append(
            _table(
                list(split["columns"]),
                [[readable_label(v) for v in r] for r in split["data"]],
            )
        )
    for result in record.get("release_models") or ():
        parts.append(
            f"<p>Checked on all released tables together: {html.escape(result['model'])}"
            f" ({html.escape(str(result['measure']))} = "
            f"{html.escape(_fmt(result['achieved']))}): "
            f"{'passed' if result['passed'] else 'failed'}.</p>"
        )
    series = record.get("series")
    parts.append("<h2>Release series</h2>")
    if not series:
        parts.append(
            "<p>No earlier release of this dataset in the output directory: "
            "nothing to compare with.</p>"
        )
        return parts
    differencing = [r for r in series["results"] if r.get("check") != "same-source"]
    same = [r for r in series["results"] if r.get("check") == "same-source"]

    def verdict(r: dict[str, Any]) -> str:
        if r["accepted_risk"]:
            return "accepted risk (policy off)"
        return "passed" if r["passed"] else "failed"

    if differencing:
        parts.append(
            "<p>Checked by differencing against the earlier releases "
            + ", ".join(
                html.escape(r) for r in sorted({r["against"] for r in differencing})
            )
            + ": for every class present in both (or rolling up exactly), the rows "
            "only added and only removed must be none, or a group the requirement "
            "accepts on its own. Rows held back are counted in the run's log, never "
            "named.</p>"
        )
        parts.append(
            _table(
                [
                    "table",
                    "against",
                    "classes in both",
                    "rows added",
                    "rows removed",
                    "roll-ups",
                    "leaking",
                    "verdict",
                ],
                [
                    [
                        r["table"],
                        r["against"],
                        r["n_common_classes"],
                        r["rows_added"],
                        r["rows_removed"],
                        r.get("n_rollups", 0),
                        r["n_leaking_classes"] + r.get("n_leaking_rollups", 0),
                        verdict(r),
                    ]
                    for r in differencing
                ],
            )
        )
    if same:
        parts.append(
            "<p>Read together with the earlier releases of the same source "
            + ", ".join(html.escape(r) for r in sorted({r["against"] for r in same}))
            + " (the same rows: nobody arrived or left): the persons grouped by "
            "their class in each release must each form a group the requirement "
            "accepts.</p>"
        )
        parts.append(
            _table(
                [
                    "table",
                    "against",
                    "groups",
                    "below the requirement",
                    "persons",
                    "verdict",
                ],  # fmt: skip
                [
                    [
                        r["table"],
                        r["against"],
                        r["n_groups"],
                        r["n_leaking_groups"],
                        r["rows_exposed"],
                        verdict(r),
                    ]
                    for r in same
                ],
            )
        )
    parts.extend(_composition_section(series.get("composition")))
    return parts


def _composition_section(composition: dict[str, Any] | None) -> list[str]:
    """The composition check of the release series: counts of persons, never keys."""
    if composition is None:
        return []
    if not composition.get("run"):
        return [
            "<p>Composition (one person's classes across releases): not checked, "
            + html.escape(str(composition.get("reason")))
            + ".</p>"
        ]
    parts = [
        "<p>Composition: for each person present in this release and an earlier "
        "one (followed by the record key, which is never released), the "
        "sensitive values every release leaves possible must still number at "
        "least l, unless the earlier releases alone already left fewer.</p>",
        _table(
            [
                "attribute",
                "against",
                "persons in several releases",
                "fewer than l common values",
                "one common value",
                "brought below l by this release",
                "verdict",
            ],
            [
                [
                    r["attribute"],
                    ", ".join(r["against"]),
                    r["n_persons"],
                    r["n_below_l"],
                    r["n_certain"],
                    r["n_exposed"],
                    "accepted risk (policy off)"
                    if r["accepted_risk"]
                    else ("passed" if r["passed"] else "failed"),
                ]
                for r in composition.get("results", [])
            ],
        ),
    ]
    parts.extend(
        f"<p>Not compared with release {html.escape(rid)}: {html.escape(why)}.</p>"
        for rid, why in sorted(composition.get("not_compared", {}).items())
    )
    return parts
