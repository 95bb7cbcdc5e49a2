"""``report.html``: the utility report of a release, rendered from templates.

:func:`render_report_html` computes what the page shows from a
``utility.json`` dict (rows of every table, plots, sentences) and hands it to
the Jinja2 templates ``ppdm/templates/report*.j2``, which hold all the
markup (:mod:`ppdm.pages` renders them, escaping every value). The page is a
pure function of the dict and the title: no timestamp, no random state,
deterministic PNGs (:mod:`ppdm.utility.plots`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ppdm.pages import render
from ppdm.utility.plots import accuracy_plot, class_size_plot, pareto_plot
from ppdm.utility.report_text import (
    accuracy_rows,
    accuracy_warnings,
    describe_models,
    fmt,
    readable_label,
    share,
    utc,
)
from ppdm.verify.figures import CHECK_COLUMNS, CheckFigures

__all__ = ["page_context", "render_report_html"]


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
        The output of :func:`ppdm.utility.report_data.build_utility`.
    title : str
    plots_dir : pathlib.Path, optional
        Also write each plot there as a PNG file (same bytes as embedded).

    Returns
    -------
    str
        The page; byte-identical for the same ``utility`` and ``title``.
    """
    context = page_context(utility, title=title)
    if plots_dir is not None:
        plots_dir.mkdir(parents=True, exist_ok=True)
        for name, png in context["plots"].items():
            (plots_dir / f"{name}.png").write_bytes(png)
    return render("report.html.j2", context)


def page_context(utility: Mapping[str, Any], *, title: str) -> dict[str, Any]:
    """Everything ``report.html.j2`` writes, computed: rows, plots, sentences."""
    spec = utility.get("spec") or {}
    requirement = spec.get("requirement") or {}
    record = utility.get("record") or {}
    verdict = utility.get("verdict") or {}
    holdout = utility.get("holdout")
    tables = utility.get("tables") or {}
    plots: dict[str, bytes] = {}
    accuracy = None
    if holdout and holdout.get("accuracy"):
        plots["accuracy"] = accuracy_plot(holdout["accuracy"])
        header, rows = accuracy_rows(holdout)
        accuracy = {
            "plot": plots["accuracy"],
            "header": header,
            "rows": rows,
            "warnings": accuracy_warnings(utility),
            "views": _views(holdout),
            "split": [
                [k.replace("_", " "), v]
                for k, v in (holdout.get("split") or {}).items()
            ],
            "cut_points": _cut_points(holdout.get("preprocessing")),
        }
    class_sizes = None
    if any(loss.get("class_size_distribution") for loss in tables.values()):
        k = next(
            (
                m["k"]
                for m in requirement.get("models", [])
                if m["model"] == "k-anonymity"
            ),
            None,
        )
        class_sizes = plots["class_sizes"] = class_size_plot(tables, k)
    front = utility.get("pareto_front")
    pareto = None
    if front:
        plots["pareto"] = pareto_plot(front)
        header = list(dict.fromkeys(str(key) for entry in front for key in entry))
        pareto = {
            "plot": plots["pareto"],
            "header": header,
            "rows": [[entry.get(h) for h in header] for entry in front],
        }
    risk = utility.get("risk")
    return {
        "title": title,
        "plots": plots,
        "summary": [
            ["quasi-identifiers", ", ".join(requirement.get("quasi_identifiers", []))],
            ["privacy models", describe_models(requirement.get("models", []))],
            ["target", spec.get("target")],
            ["suppression limit", spec.get("suppression_limit")],
            ["released tables", ", ".join(utility.get("tables") or {}) or None],
            ["original rows", utility.get("rows_original")],
            ["lost records", utility.get("lost_records")],
            ["suppressed cells", utility.get("suppressed_cells")],
        ],
        "headline": (
            {
                "release_id": record["release_id"],
                "dataset": record.get("dataset"),
                "created": utc(record.get("created_at")),
                "verdict": record.get("verdict"),
            }
            if record.get("release_id")
            else None
        ),
        "verdict": (
            {
                "line": verdict["line"],
                "css": "verdict warning" if verdict.get("warnings") else "verdict",
            }
            if verdict.get("line")
            else None
        ),
        "record_page": _record(record) if record else None,
        "columns": _columns(utility.get("columns"), utility.get("passthrough")),
        "accuracy": accuracy,
        "holdout_error": (holdout or {}).get("error"),
        "protocol": utility.get("protocol") or "No classifier protocol was run.",
        "loss": _loss(tables, utility.get("release")),
        "class_size_plot": class_sizes,
        "risk": _risk(risk) if risk else None,
        "pareto": pareto,
    }


def _views(holdout: Mapping[str, Any]) -> dict[str, Any] | None:
    """Per-view accuracy of each model, when the release has several views."""
    views = holdout.get("views") or []
    models = holdout.get("accuracy") or {}
    if len(views) < 2:
        return None
    return {
        "count": len(views),
        "header": ["model", *views, "combined"],
        "rows": [
            [m, *((s.get("per_view") or {}).get(v) for v in views), s.get("anonymized")]
            for m, s in models.items()
        ],
    }


def _cut_points(preprocessing: Mapping[str, Any] | None) -> list[list[Any]]:
    """The cut points the hold-out fitted on its training part."""
    cut_points = (preprocessing or {}).get("cut_points") or {}
    return [
        [name, preprocessing.get("method"), ", ".join(fmt(c) for c in cuts)]
        for name, cuts in cut_points.items()
    ]


def _columns(
    columns: Sequence[Mapping[str, Any]] | None,
    passthrough: Sequence[Mapping[str, Any]] | None,
) -> dict[str, Any] | None:
    """Every column with its role and how it leaves; figures of the as-is ones."""
    if not columns and passthrough is None:
        return None
    roles = [
        [
            c.get("column"),
            (c.get("role") or "–").replace("_", " "),
            c.get("released_as"),
            ", ".join(c.get("tables") or []) or "–",
        ]
        for c in columns or ()
    ]
    if not passthrough:
        return {"roles": roles, "passthrough": passthrough}
    rows = []
    for r in passthrough:
        limits = r.get("limits") or {}
        proxy = (
            share(r.get("proxy_share")) if r.get("proxy_measured") else "not measured"
        )
        attribute = r.get("proxy_attribute")
        rows.append(
            [
                r.get("column"),
                r.get("table"),
                r.get("k"),
                r.get("classes_below_k"),
                share(r.get("below_k_share")),
                share(r.get("unique_share")),
                f"{proxy} ({attribute})" if attribute else proxy,
                f"{share(limits.get('max_below_k_share'))} / "
                f"{share(limits.get('max_proxy_share'))}",
                r.get("status"),
            ]
        )
    above = [r for r in passthrough if r.get("exceeds") and r.get("accepted")]
    accepted = [r.get("column") for r in passthrough if r.get("accepted")]
    return {
        "roles": roles,
        "passthrough": rows,
        "accepted_above": ", ".join(dict.fromkeys(str(r.get("column")) for r in above)),
        "acknowledged": "; ".join(
            f"{r.get('column')} ({r.get('identifier')})"
            for r in passthrough
            if r.get("acknowledged")
        ),
        "accepted": ", ".join(dict.fromkeys(map(str, accepted))),
    }


def _loss(
    tables: Mapping[str, Mapping[str, Any]], whole: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Information loss per released table and of the whole release."""
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
    several = bool(whole) and len(tables) != 1
    if several:
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
    return {
        "header": [
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
        "rows": rows,
        "class_columns": [
            (name, len(loss["class_columns"]))
            for name, loss in tables.items()
            if loss.get("class_columns")
        ],
        "per_attribute": [
            (name, [[a, v] for a, v in per_attribute.items()])
            for name, loss in tables.items()
            if (per_attribute := (loss.get("ncp") or {}).get("per_attribute") or {})
        ],
        "whole": (
            [
                [
                    q,
                    ", ".join(names) or "withheld",
                    (whole.get("ncp") or {}).get("per_attribute", {}).get(q),
                ]
                for q, names in (whole.get("released_in") or {}).items()
            ]
            if several
            else None
        ),
    }


_RISK = (
    "prosecutor_max",
    "prosecutor_average",
    "prosecutor_records_at_risk",
    "journalist_max",
    "journalist_records_at_risk",
    "marketer",
    "threshold",
)


def _risk(risk: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    return {
        "header": ["table", *_RISK],
        "rows": [[table, *(r.get(n) for n in _RISK)] for table, r in risk.items()],
    }


def _record(record: Mapping[str, Any]) -> dict[str, Any]:
    """The release record section: who, what, which files, the series checks."""
    requirement = record.get("requirement") or {}
    if record.get("release_id") is not None:
        facts = [
            ["release id", record.get("release_id")],
            ["created", utc(record.get("created_at"))],
            [
                "audit entry",
                f"sequence number {record.get('audit_seq')} of audit.jsonl (the "
                "publish entry of this release id), audit key id "
                f"{record.get('audit_key_id') or 'none (unkeyed)'}",
            ],
        ]
    else:
        facts = [
            [
                "release id and date",
                "given when the release is published (manifest.json)",
            ]
        ]
    series_rows = record.get("series_rows")
    if series_rows:
        facts.append(
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
        facts.append(["reproduce with", record["command"]])
    facts += [
        [
            "verdict of the independent verifier",
            f"{record['verdict']}: "
            + describe_models(requirement.get("models", []))
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
                f"{k} {v}" for k, v in (record.get("library_versions") or {}).items()
            ),
        ],
    ]
    measured_on = record.get("measured_on")
    # An out-of-core release is a directory of Parquet parts per table.
    where = "data/{}/ (Parquet parts)" if measured_on else "data/{}.csv"
    sample = None
    if measured_on:
        released = measured_on.get("released_rows") or {}
        totals = measured_on.get("released_rows_total") or {}
        sample = {
            "clean_rows": measured_on["clean_rows"],
            "clean_rows_total": measured_on["clean_rows_total"],
            "released": ", ".join(
                f"{released[n]:,} of the {totals.get(n, 0):,} released rows of {n}"
                for n in released
            ),
            "seed": measured_on.get("seed"),
        }
    return {
        "facts": facts,
        "files": [
            [where.format(n), h] for n, h in (record.get("data_files") or {}).items()
        ],
        "measured_on": sample,
        "samples": [
            (
                where.format(name),
                list(split["columns"]),
                [[readable_label(v) for v in r] for r in split["data"]],
            )
            for name, split in (record.get("sample") or {}).items()
        ],
        "checks": (
            {
                "header": list(CHECK_COLUMNS),
                "rows": [list(CheckFigures(**row).cells()) for row in checks],
            }
            if (checks := record.get("checks"))
            else None
        ),
        "series": _series(record.get("series")),
    }


def _series(series: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The series checks against earlier releases: counts, never keys."""
    if not series:
        return None
    differencing = [r for r in series["results"] if r.get("check") != "same-source"]
    same = [r for r in series["results"] if r.get("check") == "same-source"]

    def verdict(r: Mapping[str, Any]) -> str:
        if r["accepted_risk"]:
            return "accepted risk (policy off)"
        return "passed" if r["passed"] else "failed"

    composition = series.get("composition")
    if composition is not None:
        composition = {
            "run": bool(composition.get("run")),
            "reason": composition.get("reason"),
            "rows": [
                [
                    r["attribute"],
                    ", ".join(r["against"]),
                    r["n_persons"],
                    r["n_below_l"],
                    r["n_certain"],
                    r["n_exposed"],
                    verdict(r),
                ]
                for r in composition.get("results", [])
            ]
            if composition.get("run")
            else [],
            "not_compared": sorted(composition.get("not_compared", {}).items()),
        }
    return {
        "differencing": [
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
        "differencing_against": ", ".join(sorted({r["against"] for r in differencing})),
        "same_source": [
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
        "same_source_against": ", ".join(sorted({r["against"] for r in same})),
        "composition": composition,
    }
