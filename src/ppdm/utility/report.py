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
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ppdm.measures import class_sizes
from ppdm.model import AnonymizationSpec
from ppdm.utility.loss import _json_ready, information_loss

__all__ = [
    "build_utility",
    "figure_png",
    "new_figure",
    "plot_style",
    "render_report_html",
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
        The result of :func:`ppdm.utility.classification.holdout_utility`.
    evidence : mapping
        The algorithm's evidence; its ``"pareto_front"`` (a list of dicts with
        ``"node"``/``"levels"``, metric values and a ``"chosen"`` flag), when
        present, is carried into the report.
    risk : mapping of str to dict, optional
        Re-identification risk per released table, as the verifier measured
        it (the ``risk`` of each table in ``verification.json``); shown so the
        owner sees the privacy side next to the utility side.

    Returns
    -------
    dict
        ``spec``, ``tables`` (per table: :func:`ppdm.utility.loss.information_loss`
        plus ``class_size_distribution`` as ``[size, n_classes]`` pairs),
        ``suppressed_cells`` and ``lost_records`` over all tables, ``holdout``,
        ``protocol`` and ``pareto_front``. JSON-serialisable.
    """
    tables: dict[str, Any] = {}
    for name, released in released_tables.items():
        loss = information_loss(original, released, spec)
        qi = loss["quasi_identifiers"]
        loss["class_size_distribution"] = (
            _class_size_distribution(released, qi) if qi else []
        )
        tables[str(name)] = loss
    pareto = evidence.get("pareto_front") if evidence else None
    utility = {
        "spec": {
            "quasi_identifiers": list(spec.quasi_identifiers),
            "sensitive_attribute": spec.sensitive_attribute,
            "target": spec.target,
            "k": int(spec.k),
            "l": int(spec.l),
            "suppression_limit": float(spec.suppression_limit),
            "suppression_marker": spec.suppression_marker,
        },
        "rows_original": len(original),
        "tables": tables,
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
    }
    return _json_ready(utility)


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
        ax.bar(x - 0.2, original, width=0.4, label="trained on original")
        ax.bar(x + 0.2, anonymized, width=0.4, label="trained on release")
        ax.set_xticks(x, [n.replace("_", " ") for n in names])
        low = min(original + anonymized, default=0.0)
        ax.set_ylim(max(0.0, low - 10.0), 100.0)
        ax.set_ylabel("test accuracy (%)")
        ax.set_title("Accuracy before and after anonymization")
        ax.legend(loc="upper right")
        ax.grid(True, axis="y", alpha=0.3)
        return figure_png(fig)


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
        points = [
            (_metric(e, "k"), _metric(e, "GLM", "ncp"), bool(e.get("chosen")))
            for e in front
        ]
        points = [p for p in points if p[0] is not None and p[1] is not None]
        others = [(k, g) for k, g, chosen in points if not chosen]
        chosen = [(k, g) for k, g, c in points if c]
        if others:
            ax.scatter(*zip(*others), s=20, label="Pareto front")
        if chosen:
            ax.scatter(
                *zip(*chosen), s=90, marker="*", color="crimson", label="chosen node"
            )
        if points and min(p[0] for p in points) > 0:
            ax.set_xscale("log")  # achieved k spans orders of magnitude
        ax.set_xlabel("achieved k")
        ax.set_ylabel("GLM (information loss)")
        ax.set_title("Pareto front of the lattice search")
        if points:
            ax.legend()
        ax.grid(True, alpha=0.3)
        return figure_png(fig)


_CSS = """
body { font-family: sans-serif; max-width: 60em; margin: 2em auto; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: right; }
th { background: #eee; }
td:first-child, th:first-child { text-align: left; }
img { max-width: 100%; }
p.protocol { background: #f6f6f6; padding: 0.8em; border-left: 4px solid #888; }
"""


def render_report_html(
    utility: Mapping[str, Any], *, title: str, plots_dir: Path | None = None
) -> str:
    """A self-contained HTML page for a ``utility.json`` dict.

    Sections: summary, accuracy before/after per model (bar chart and table),
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
    parts.append("<h2>Summary</h2>")
    parts.append(
        _table(
            ["quantity", "value"],
            [
                ["quasi-identifiers", ", ".join(spec.get("quasi_identifiers", []))],
                ["sensitive attribute", spec.get("sensitive_attribute")],
                ["target", spec.get("target")],
                ["k", spec.get("k")],
                ["l", spec.get("l")],
                ["suppression limit", spec.get("suppression_limit")],
                ["original rows", utility.get("rows_original")],
                ["lost records", utility.get("lost_records")],
                ["suppressed cells", utility.get("suppressed_cells")],
            ],
        )
    )

    holdout = utility.get("holdout")
    parts.append("<h2>Classification accuracy</h2>")
    if holdout and holdout.get("accuracy"):
        models = holdout["accuracy"]
        plots["accuracy"] = _accuracy_plot(models)
        parts.append(_img(plots["accuracy"], "accuracy per model"))
        parts.append(
            _table(
                ["model", "trained on original", "trained on release", "difference"],
                [
                    [m, s.get("original"), s.get("anonymized"), s.get("difference")]
                    for m, s in models.items()
                ],
            )
        )
        split = holdout.get("split") or {}
        parts.append(
            _table(
                ["split", "rows"], [[k.replace("_", " "), v] for k, v in split.items()]
            )
        )
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
        per_attribute = (loss.get("ncp") or {}).get("per_attribute") or {}
        if per_attribute:
            parts.append(f"<h3>NCP per quasi-identifier: {html.escape(name)}</h3>")
            parts.append(
                _table(["attribute", "NCP"], [[a, v] for a, v in per_attribute.items()])
            )
    parts.append(
        "<p>NCP/GLM: Iyengar (KDD 2002), Xu et al. (KDD 2006); DM: Bayardo &amp; "
        "Agrawal (ICDE 2005); CM: Iyengar (KDD 2002). Dropped records count as "
        "fully lost in every metric.</p>"
    )

    parts.append("<h2>Class-size distribution</h2>")
    if any(loss.get("class_size_distribution") for loss in tables.values()):
        plots["class_sizes"] = _class_size_plot(tables, spec.get("k"))
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
