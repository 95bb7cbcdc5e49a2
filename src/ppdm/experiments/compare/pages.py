"""The pages of a comparison: terminal table, Markdown, HTML, plots and files.

:func:`write_outputs` writes a comparison's files; :func:`render_overview`
the documentation page of recorded comparisons
(``python -m ppdm.experiments.compare docs``).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.experiments.compare.grid import BASELINE
from ppdm.experiments.compare.results import Comparison, recommendation
from ppdm.pages import render
from ppdm.release.artifacts import write_json
from ppdm.utility.learners import MODELS

#: Short labels of the learners for narrow tables.
_SHORT = {"decision_tree": "tree", "naive_bayes": "NB", "logistic_regression": "logit"}


def _fmt(value: Any, spec: str = ".3f") -> str:
    if value is None:
        return "–"
    if isinstance(value, float | np.floating):
        if not math.isfinite(value):
            return "–"
        return format(float(value), spec)
    return str(value)


def _table_rows(
    summary: pd.DataFrame, models: Sequence[str]
) -> tuple[list[str], list[list[str]]]:
    header = ["algorithm", "k"]
    header += [f"{_SHORT.get(m, m)} %" for m in models]
    header += ["GLM", "CM", "supp. cells", "lost", "k*", "l*", "s/fold", "MiB", "folds"]
    body = []
    for row in summary.to_dict(orient="records"):
        cells = [row["algorithm"], str(row["k"])]
        for m in models:
            mean, sd = row[f"acc_{m}"], row[f"sd_{m}"]
            cells.append(
                "–"
                if not math.isfinite(mean)
                else f"{100 * mean:.2f} ± {100 * sd:.2f}"
                if math.isfinite(sd)
                else f"{100 * mean:.2f}"
            )
        cells += [
            _fmt(row["glm"]),
            _fmt(row["cm"]),
            _fmt(row["suppressed_cells"], ".1f"),
            _fmt(row["lost_records"], ".1f"),
            _fmt(row["achieved_k"], ".0f"),
            _fmt(row["achieved_l"], ".0f"),
            _fmt(row["seconds"], ".2f"),
            _fmt(row["peak_mib"], ".1f"),
            f"{row['folds']}/{row['folds_total']}"
            if row["status"] != "refused"
            else "refused",
        ]
        body.append(cells)
    return header, body


def terminal_table(result: Comparison, *, width: int = 120) -> str:
    """The summary as a fixed-width table for a terminal, reasons below it."""
    models = list(result.config.get("models") or MODELS)
    header, body = _table_rows(result.summary, models)
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = [
        "  ".join(
            c.rjust(w) if i > 0 else c.ljust(w)
            for i, (c, w) in enumerate(zip(r, widths))
        )
        for r in [header, *body]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for row in result.summary.itertuples():
        if row.reason:
            text = f"  {row.algorithm} k={row.k}: {row.reason}"
            lines.append(text if len(text) <= width else text[: width - 1] + "…")
    return "\n".join(lines)


def _markdown_table(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += [
        "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in body
    ]
    return "\n".join(lines)


def _tests_rows(
    tests: Sequence[Mapping[str, Any]],
) -> tuple[list[str], list[list[str]]]:
    header = ["k", "model", "best", "second", "mean diff (pp)", "F", "p", "significant"]
    body = [
        [
            str(t["k"]),
            t["model"],
            t["best"],
            t["second"],
            f"{100 * t['mean_difference']:+.2f}",
            _fmt(float(t["statistic"]), ".2f"),
            f"{t['p_value']:.3g}",
            "yes" if t["significant"] else "no",
        ]
        for t in tests
    ]
    return header, body


_LEGEND = (
    "Accuracy: mean ± sd over the successful folds, on the untouched test "
    "halves. GLM: normalized certainty penalty (Iyengar's general loss metric, "
    "0 = nothing generalized, 1 = everything suppressed), against the raw "
    "training half. CM: classification metric. supp. cells, lost: mean "
    "suppressed quasi-identifier cells and dropped records per training half. "
    "k*, l*: the smallest achieved k and distinct l over the folds' releases. "
    "s/fold: anonymization wall time per training half. MiB: peak traced memory "
    "of one anonymization (first training half, tracemalloc, run alone). folds: "
    "folds that succeeded of those run."
)


def render_markdown(
    result: Comparison,
    *,
    title: str = "",
    notes: str = "",
    images: Mapping[str, str] | None = None,
) -> str:
    """The comparison as a Markdown page (``images``: caption -> relative path)."""
    config = result.config
    models = list(config.get("models") or MODELS)
    header, body = _table_rows(result.summary, models)
    lines = [f"# {title or 'Comparison: ' + str(config['dataset'])}", ""]
    if notes:
        lines += [notes, ""]
    lines += [
        f"Dataset **{config['dataset']}**: {config['rows']} rows"
        + (
            f" (seeded stratified sample of {config['sample']})"
            if config.get("sample")
            else ""
        )
        + f"; quasi-identifiers {', '.join(config['quasi_identifiers'])}; target "
        f"{config['target']}; requirement {', '.join(config['requirement'])} "
        f"(k varied); suppression limit {config['suppression_limit']}; "
        f"discretize {config['discretize']}; seed {config['seed']}. Registered "
        f"algorithms: {', '.join(config['registered'])}.",
        "",
        config["protocol"],
        "",
        "## Recommendation",
        "",
        *[f"- {s}" for s in result.recommendation],
        "",
        "## Results",
        "",
        _markdown_table(header, body),
        "",
        _LEGEND,
        "",
    ]
    if result.tests:
        th, tb = _tests_rows(result.tests)
        lines += [
            "## Best two at each k: combined 5x2cv F test",
            "",
            _markdown_table(th, tb),
            "",
        ]
    for caption, path in (images or {}).items():
        lines += [f"![{caption}]({path})", ""]
    return "\n".join(lines)


def render_html(
    result: Comparison,
    *,
    title: str = "",
    notes: str = "",
    plots: Mapping[str, bytes] | None = None,
) -> str:
    """The comparison as one self-contained HTML page (plots inlined), from
    the template ``ppdm/templates/comparison.html.j2``."""
    config = result.config
    models = list(config.get("models") or MODELS)
    header, body = _table_rows(result.summary, models)
    return render(
        "comparison.html.j2",
        {
            "title": title or f"Comparison: {config['dataset']}",
            "notes": notes,
            "protocol": config["protocol"],
            "recommendation": list(result.recommendation),
            "header": header,
            "rows": body,
            "legend": _LEGEND,
            "tests": _tests_rows(result.tests) if result.tests else None,
            "plots": list((plots or {}).items()),
        },
    )


# -- plots --------------------------------------------------------------------------
def plot_accuracy_vs_k(result: Comparison, *, title: str = "") -> bytes:
    """PNG: accuracy (mean ± sd) against k, one panel per model, one line per
    algorithm, the original data as a dashed line."""
    from ppdm.utility.report import figure_png, new_figure, plot_style

    summary = result.summary
    models = list(result.config.get("models") or MODELS)
    with plot_style():
        fig = new_figure(4.2 * len(models), 4.0)
        measured = summary[
            (summary["algorithm"] != BASELINE)
            & summary["status"].isin(["ok", "partial"])
        ]
        baseline = summary[summary["algorithm"] == BASELINE]
        markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
        names = list(dict.fromkeys(measured["algorithm"]))
        for i, model in enumerate(models):
            ax = fig.add_subplot(1, len(models), i + 1)
            for a, name in enumerate(names):
                group = measured[measured["algorithm"] == name].sort_values("k")
                ax.errorbar(
                    group["k"],
                    100 * group[f"acc_{model}"],
                    yerr=100 * group[f"sd_{model}"].fillna(0.0),
                    marker=markers[a % len(markers)],
                    color=f"C{a % 10}",
                    capsize=3,
                    label=name,
                )
            if len(baseline):
                ax.axhline(
                    100 * float(baseline[f"acc_{model}"].iloc[0]),
                    color="grey",
                    linestyle="--",
                    label="original data",
                )
            if len(measured) and measured["k"].max() / max(measured["k"].min(), 1) >= 8:
                ax.set_xscale("log")
            ax.set_xlabel("k")
            ax.set_ylabel("accuracy (%)")
            ax.set_title(model.replace("_", " "))
            ax.grid(True, alpha=0.3)
            if i == 0:
                ax.legend(fontsize="small")
        fig.suptitle(title or f"{result.config['dataset']}: accuracy vs k (5 x 2 CV)")
        return figure_png(fig)


def _axes_of(
    objectives: Sequence[str], front: Sequence[Mapping[str, Any]]
) -> tuple[str, str]:
    keys = {str(key).lower(): key for key in (front[0] if front else {})}
    wanted = [keys[o.lower()] for o in objectives if o.lower() in keys]
    numeric = [
        key
        for key, value in (front[0] if front else {}).items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    ]
    for default in ("k", "GLM"):
        if default in numeric and default not in wanted:
            wanted.append(default)
    wanted += [key for key in numeric if key not in wanted]
    return (wanted + ["", ""])[0], (wanted + ["", ""])[1]


def plot_pareto_fronts(result: Comparison) -> bytes | None:
    """PNG: each front-reporting algorithm's Pareto front (first fold), per k.

    None when no algorithm reported a front.
    """
    if not result.fronts:
        return None
    from ppdm.utility.report import figure_png, new_figure, plot_style

    names = sorted(result.fronts)
    with plot_style():
        fig = new_figure(5.0 * len(names), 4.0)
        for i, name in enumerate(names):
            ax = fig.add_subplot(1, len(names), i + 1)
            by_k = result.fronts[name]
            x_key = y_key = ""
            low = math.inf
            for j, k in enumerate(sorted(by_k)):
                front = by_k[k]["front"]
                x_key, y_key = _axes_of(by_k[k]["objectives"], front)
                points = [
                    (e.get(x_key), e.get(y_key), bool(e.get("chosen"))) for e in front
                ]
                points = [
                    (x, y, c)
                    for x, y, c in points
                    if isinstance(x, int | float) and isinstance(y, int | float)
                ]
                if not points:
                    continue
                ax.scatter(
                    [p[0] for p in points],
                    [p[1] for p in points],
                    s=22,
                    marker="osD^v"[j % 5],
                    facecolors="none",
                    edgecolors=f"C{j % 10}",
                    label=f"requested k={k}",
                )
                low = min(low, min(p[0] for p in points))
                chosen = [p for p in points if p[2]]
                if chosen:
                    ax.scatter(
                        [p[0] for p in chosen],
                        [p[1] for p in chosen],
                        s=110,
                        marker="*",
                        color=f"C{j % 10}",
                        edgecolors="black",
                    )
            if x_key.lower() == "k" and 0 < low < math.inf:
                ax.set_xscale("log")  # achieved k spans orders of magnitude
            ax.set_xlabel(f"{x_key} (of the front member)")
            ax.set_ylabel(y_key)
            ax.set_title(f"{name}: Pareto front, first fold (★ released)")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize="small")
        return figure_png(fig)


# -- files -------------------------------------------------------------------------
def write_outputs(
    result: Comparison, out: Path | str, *, title: str = "", notes: str = ""
) -> dict[str, Path]:
    """Write the comparison's files into ``out`` (created when missing).

    ``comparison.csv`` (the summary), ``comparison.json`` (summary, tests,
    fronts, recommendation, set-up), ``folds.csv`` (every fold and model),
    ``accuracy_vs_k.png``, ``pareto_fronts.png`` (when an algorithm reports a
    front), ``comparison.md`` and ``comparison.html``.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "csv": out / "comparison.csv",
        "json": out / "comparison.json",
        "folds": out / "folds.csv",
        "plot": out / "accuracy_vs_k.png",
        "markdown": out / "comparison.md",
        "html": out / "comparison.html",
    }
    result.summary.to_csv(paths["csv"], index=False)
    result.rows.to_csv(paths["folds"], index=False)
    document = result.to_dict()
    if notes:
        document["config"]["notes"] = notes
    write_json(paths["json"], document)
    plots = {"Accuracy vs k": plot_accuracy_vs_k(result)}
    paths["plot"].write_bytes(plots["Accuracy vs k"])
    images = {"Accuracy vs k": paths["plot"].name}
    fronts = plot_pareto_fronts(result)
    if fronts is not None:
        paths["fronts"] = out / "pareto_fronts.png"
        paths["fronts"].write_bytes(fronts)
        plots["Pareto fronts"] = fronts
        images["Pareto fronts"] = paths["fronts"].name
    paths["markdown"].write_text(
        render_markdown(result, title=title, notes=notes, images=images),
        encoding="utf-8",
    )
    paths["html"].write_text(
        render_html(result, title=title, notes=notes, plots=plots), encoding="utf-8"
    )
    return paths


# -- the documentation page: recorded comparisons and peers ------------------------
_NUMBER_COLUMNS = (
    "glm",
    "cm",
    "suppressed_cells",
    "lost_records",
    "achieved_k",
    "achieved_l",
    "seconds",
    "seconds_sd",
    "peak_mib",
)


def _summary_frame(records: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(list(records))
    for column in frame.columns:
        if column in _NUMBER_COLUMNS or column.startswith(("acc_", "sd_")):
            frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    return frame


def comparison_from_json(path: Path | str) -> Comparison:
    """A :class:`Comparison` read back from its ``comparison.json`` (no fold rows).

    Enough to draw its plots and word its recommendation again from the
    recorded numbers.
    """
    document = json.loads(Path(path).read_text("utf-8"))
    fronts = {
        algorithm: {int(k): front for k, front in by_k.items()}
        for algorithm, by_k in (document.get("pareto_fronts") or {}).items()
    }
    result = Comparison(
        rows=pd.DataFrame(),
        summary=_summary_frame(document["summary"]),
        tests=list(document.get("tests") or []),
        fronts=fronts,
        config=dict(document["config"]),
    )
    result.recommendation = recommendation(result)
    return result


def render_overview(
    directories: Sequence[Path | str],
    *,
    docs: Path | str,
    title: str = "",
    note: str = "",
) -> tuple[str, str]:
    """The documentation page of recorded comparisons: (Markdown, HTML).

    Each directory holds a ``ppdm compare`` output (``comparison.json``,
    ``accuracy_vs_k.png``, ``pareto_fronts.png``) and, when the peer benchmark
    was run on the same folds, ``peers/peers.json``. The Markdown links the
    plots relative to ``docs`` (the directory the page is written to); the
    HTML inlines them.
    """
    docs = Path(docs)
    title = title or "Which algorithm, which k? Recorded comparisons"
    md = [f"# {title}", ""]
    sections: list[dict[str, Any]] = []
    intro = (
        "Generated by `python -m ppdm.experiments.compare docs` from the recorded "
        "`ppdm compare` outputs below; every number comes from those runs. Each "
        "comparison runs every registered algorithm (and, in the same folds, the "
        "peer libraries anonypy and anjana, in an environment of their own) "
        "under the same seeded 5 x 2-fold cross-validation with the dataset "
        "configuration's privacy requirement; k is varied."
    )
    md += [intro, ""] + ([note, ""] if note else [])
    for directory in map(Path, directories):
        document = json.loads((directory / "comparison.json").read_text("utf-8"))
        recorded = comparison_from_json(directory / "comparison.json")
        # plots and words drawn again from the recorded numbers
        (directory / "accuracy_vs_k.png").write_bytes(plot_accuracy_vs_k(recorded))
        fronts_png = plot_pareto_fronts(recorded)
        if fronts_png is not None:
            (directory / "pareto_fronts.png").write_bytes(fronts_png)
        document["recommendation"] = recorded.recommendation
        config = document["config"]
        summary = recorded.summary
        peers_path = directory / "peers" / "peers.json"
        peers = (
            json.loads(peers_path.read_text("utf-8")) if peers_path.exists() else None
        )
        models = list(config.get("models") or MODELS)
        dataset = str(config["dataset"])
        heading = f"{directory.name}: {dataset}, {config['rows']} rows" + (
            f" (seeded stratified sample of {config['sample']})"
            if config.get("sample")
            else ""
        )
        setup = (
            f"Requirement {', '.join(config['requirement'])} (k varied: "
            f"{', '.join(map(str, config['k']))}); quasi-identifiers "
            f"{', '.join(config['quasi_identifiers'])}; target {config['target']}; "
            f"suppression limit {config['suppression_limit']}; discretize "
            f"{config['discretize']}; seed {config['seed']}. Registered algorithms "
            f"at the time of the run: {', '.join(config['registered'])}. Runner: "
            f"{config.get('runner')}; total {_fmt(config.get('seconds_total'), '.0f')} s."
        )
        notes = str(config.get("notes", ""))
        md += [f"## {heading}", "", notes, "", setup, "", "### Recommendation", ""]
        md += [f"- {s}" for s in document["recommendation"]] + [""]
        section: dict[str, Any] = {
            "heading": heading,
            "notes": notes,
            "setup": setup,
            "recommendation": list(document["recommendation"]),
            "peers": None,
            "tests": None,
            "checks": None,
            "images": [],
        }
        sections.append(section)
        frames = [summary]
        if peers is not None:
            frames.append(_summary_frame(peers["summary"]))
        header, rows = _table_rows(pd.concat(frames, ignore_index=True), models)
        md += ["### Results", "", _markdown_table(header, rows), ""]
        section["header"], section["rows"] = header, rows
        if peers is not None:
            text = (
                "anonypy-mondrian and anjana are the peer libraries "
                f"({', '.join(f'{k} {v}' for k, v in peers['versions'].items())}), "
                "run on the same folds in their own environment and scored by the "
                f"same learners; command: `{peers['command']}`."
            )
            md += [text, ""]
            section["peers"] = text
        tests = document.get("tests") or []
        if tests:
            th, tb = _tests_rows(tests)
            md += ["### Best two at each k: combined 5x2cv F test", ""]
            md += [_markdown_table(th, tb), ""]
            section["tests"] = (th, tb)
        if peers is not None and peers.get("checks"):
            checks = peers["checks"]
            ch = list(checks[0])
            cb = [[_fmt(c[h], ".2f") for h in ch] for c in checks]
            caption = (
                "Verification of the peers' releases: pycanon's achieved k and l "
                "and its time next to the project's measures on the same tables "
                "(ms, mean per fold)"
            )
            md += [f"### {caption}", "", _markdown_table(ch, cb), ""]
            section["checks"] = {"caption": caption, "header": ch, "rows": cb}
        for name, caption in (
            ("accuracy_vs_k.png", "Accuracy vs k"),
            ("pareto_fronts.png", "Pareto fronts (first fold)"),
        ):
            image = directory / name
            if image.exists():
                link = Path(os.path.relpath(image, docs)).as_posix()
                md += [f"![{dataset}: {caption}]({link})", ""]
                section["images"].append(
                    (caption, f"{dataset}: {caption}", image.read_bytes())
                )
    md += ["", _LEGEND, ""]
    page = render(
        "comparisons.html.j2",
        {
            "title": title,
            "intro": intro,
            "note": note,
            "sections": sections,
            "legend": _LEGEND,
        },
    )
    return "\n".join(md), page


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ppdm.experiments.compare docs DIR... --out docs/compare``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m ppdm.experiments.compare")
    commands = parser.add_subparsers(dest="command", required=True)
    docs = commands.add_parser("docs", help="write the recorded comparisons' page")
    docs.add_argument("directories", nargs="+", type=Path)
    docs.add_argument(
        "--out", type=Path, required=True, help="page path without suffix"
    )
    docs.add_argument("--note", default="", help="a paragraph under the intro")
    args = parser.parse_args(argv)
    markdown, page = render_overview(
        args.directories, docs=args.out.parent, note=args.note
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".md").write_text(markdown, encoding="utf-8")
    args.out.with_suffix(".html").write_text(page, encoding="utf-8")
    print(args.out.with_suffix(".md"))
    print(args.out.with_suffix(".html"))
    return 0
