"""Accuracy-vs-k experiments: the kACTUS paper's 5 x 2 CV over algorithms and k.

Run as a command::

    python -m ppdm.experiments.accuracy --dataset adult --algorithms mondrian,kactus \\
        --k 1,5,10,15,20,30 --qi all --out benchmarks/results/accuracy-adult

For every (algorithm, k) it runs :func:`ppdm.utility.cross_validate`
with an ``anonymize_fn`` built from :func:`ppdm.algorithms.get_algorithm`, an
:class:`ppdm.model.AnonymizationSpec` and ``numpy.random.default_rng(seed)``
(a fresh generator per call, so every fold is reproducible on its own). ``k=1``
means the data unchanged: no algorithm runs, and the row is shared by every
algorithm as its starting point. With ``--discretize mdl`` the numeric
quasi-identifiers are discretized inside each fold, with cut points fitted on
the training half only.

Outputs in ``--out``: ``results.csv`` (one row per algorithm, k, repeat, fold,
model), ``results.md`` (mean +- sd per algorithm, k and model),
``accuracy_vs_k.png`` (one line per algorithm x model) and ``config.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.algorithms import get_algorithm
from ppdm.exceptions import AnonymizationError, InvalidParameterError
from ppdm.model import AnonymizationSpec
from ppdm.prepare import datasets
from ppdm.prepare.discretize import METHODS
from ppdm.release.artifacts import write_json
from ppdm.utility.cross_validation import CV_PROTOCOL, cross_validate, summarize_cv
from ppdm.utility.holdout import AnonymizeFn
from ppdm.utility.learners import MISSING, MISSING_TEXT, MODELS, RANGES
from ppdm.utility.loss import covers_from_hierarchies
from ppdm.utility.preprocessing import DiscretizeSettings, make_discretize_prepare

__all__ = [
    "DEFAULT_TARGETS",
    "ExperimentResult",
    "main",
    "make_anonymize_fn",
    "make_discretize_prepare",
    "plot_accuracy_vs_k",
    "run_experiment",
    "summary_markdown",
    "write_outputs",
]

logger = logging.getLogger(__name__)

#: Class attribute of each embedded data set.
DEFAULT_TARGETS = {"adult": "income", "german": "credit"}


@dataclass(frozen=True)
class ExperimentResult:
    """Rows of a sweep and the (algorithm, k) pairs that failed.

    Attributes
    ----------
    results : pandas.DataFrame
        :func:`cross_validate` rows with ``algorithm`` and ``k`` columns first.
    errors : list of dict
        ``{"algorithm", "k", "error"}`` for each pair whose algorithm raised
        (e.g. an infeasible constraint); those pairs have no rows.
    config : dict
        The experiment's parameters (JSON-serialisable).
    """

    results: pd.DataFrame
    errors: list[dict[str, Any]] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)


def make_anonymize_fn(
    algorithm: str,
    spec: AnonymizationSpec,
    seed: int,
    params: Mapping[str, Any] | None = None,
) -> AnonymizeFn:
    """``train -> training views`` of the release of ``train`` by ``algorithm``.

    The views are ``anonymizer.training_views(release)``: one table for most
    algorithms, several projections for DMPD. Each call builds
    ``numpy.random.default_rng(seed)`` afresh, so the release of a given
    training table does not depend on the calls before it.
    """
    anonymizer = get_algorithm(algorithm, **dict(params or {}))

    def anonymize(train: pd.DataFrame) -> list[pd.DataFrame]:
        release = anonymizer.anonymize(train, spec, np.random.default_rng(seed))
        return anonymizer.training_views(release)

    return anonymize


def _identity(train: pd.DataFrame) -> pd.DataFrame:
    return train


def run_experiment(
    table: pd.DataFrame,
    *,
    algorithms: Sequence[str],
    ks: Sequence[int],
    quasi_identifiers: Sequence[str],
    target: str,
    sensitive_attribute: str | None = None,
    l: int = 1,
    suppression_limit: float = 0.0,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    seed: int = 0,
    repeats: int = 5,
    folds: int = 2,
    models: Sequence[str] = MODELS,
    discretize_method: str | None = None,
    n_bins: int = 5,
    hierarchies: Mapping[str, Any] | None = None,
    missing: str = "weka",
    ranges: str = "midpoint",
) -> ExperimentResult:
    """Cross-validated accuracy of every (algorithm, k).

    Parameters
    ----------
    table : pandas.DataFrame
        The original data (target without missing values).
    algorithms : sequence of str
        Registry names (:data:`ppdm.algorithms.ALGORITHMS`).
    ks : sequence of int
        ``1`` means no anonymization (computed once, reported for every
        algorithm).
    quasi_identifiers, target, sensitive_attribute, l, suppression_limit
        The :class:`AnonymizationSpec` fields.
    params : mapping, optional
        ``{algorithm: {parameter: value}}``.
    seed, repeats, folds, models
        Passed to :func:`cross_validate`; ``seed`` also seeds the algorithms.
    discretize_method : {"mdl", "equal-frequency"} or None
        Discretize the numeric quasi-identifiers inside each fold.
    n_bins : int, default=5
    hierarchies : mapping, optional
        ``{attribute: Hierarchy}``: given to the algorithms through the spec,
        and used to read released hierarchy labels as the values they cover.
    missing : {"weka", "zeros", "indicator"}, default="weka"
        Treatment of suppressed and missing cells by the models
        (:data:`ppdm.utility.MISSING`).
    ranges : {"midpoint", "uniform"}, default="midpoint"
        How the C4.5 tree reads a released numeric range
        (:data:`ppdm.utility.RANGES`).

    Returns
    -------
    ExperimentResult
    """
    params = params or {}
    if any(isinstance(k, bool) or int(k) != k or k < 1 for k in ks):
        raise InvalidParameterError(f"every k must be an integer >= 1; got {list(ks)}")
    prepare = DiscretizeSettings.of(
        {"method": discretize_method or "none", "n_bins": n_bins}
    ).prepare_for(table, quasi_identifiers, target)
    cv: dict[str, Any] = {
        "target": target,
        "seed": seed,
        "repeats": repeats,
        "folds": folds,
        "models": models,
        "prepare": prepare,
        "with_original": False,
        "covers": covers_from_hierarchies(hierarchies) if hierarchies else None,
        "missing": missing,
        "ranges": ranges,
    }
    frames: list[pd.DataFrame] = []
    errors: list[dict[str, Any]] = []
    baseline = None
    for k in sorted({int(k) for k in ks}):
        if k == 1:
            logger.info("k=1: the data unchanged")
            baseline = cross_validate(table, _identity, **cv)
            for algorithm in algorithms:
                frames.append(baseline.assign(algorithm=algorithm, k=1))
            continue
        spec = AnonymizationSpec.of(
            quasi_identifiers=tuple(quasi_identifiers),
            sensitive_attribute=sensitive_attribute,
            target=target,
            k=k,
            l=l,
            suppression_limit=suppression_limit,
            hierarchies=hierarchies,
        )
        for algorithm in algorithms:
            logger.info("%s, k=%d", algorithm, k)
            anonymize = make_anonymize_fn(algorithm, spec, seed, params.get(algorithm))
            try:
                rows = cross_validate(table, anonymize, **cv)
            except AnonymizationError as error:
                logger.warning("%s, k=%d failed: %s", algorithm, k, error)
                errors.append({"algorithm": algorithm, "k": k, "error": str(error)})
                continue
            frames.append(rows.assign(algorithm=algorithm, k=k))
    results = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if len(results):
        first = ["algorithm", "k"]
        results = results[first + [c for c in results.columns if c not in first]]
        results = results.sort_values(
            ["algorithm", "k", "repeat", "fold", "model"], kind="stable"
        ).reset_index(drop=True)
    config = {
        "algorithms": list(algorithms),
        "k": sorted({int(k) for k in ks}),
        "quasi_identifiers": list(quasi_identifiers),
        "target": target,
        "sensitive_attribute": sensitive_attribute,
        "l": int(l),
        "suppression_limit": float(suppression_limit),
        "params": {a: dict(p) for a, p in params.items()},
        "seed": int(seed),
        "repeats": int(repeats),
        "folds": int(folds),
        "models": list(models),
        "discretize": discretize_method,
        "n_bins": int(n_bins),
        "hierarchies": sorted(hierarchies) if hierarchies else [],
        "missing": missing,
        "ranges": ranges,
        "rows": len(table),
        "protocol": CV_PROTOCOL.format(
            repeats=repeats, folds=folds, missing_text=MISSING_TEXT[missing]
        ),
    }
    return ExperimentResult(results=results, errors=errors, config=config)


def summary_markdown(result: ExperimentResult) -> str:
    """Markdown table: accuracy (%) mean +- sd [95% t interval] per algorithm,
    k and model."""
    lines = []
    if len(result.results):
        summary = summarize_cv(result.results, by=("algorithm", "k", "model"))
        present = list(dict.fromkeys(summary["model"]))
        order = [m for m in result.config.get("models", []) if m in present]
        models = order + [m for m in present if m not in order]
        seconds = (
            result.results.groupby(["algorithm", "k"])["seconds_anonymize"].mean()
            if "seconds_anonymize" in result.results
            else pd.Series(dtype=float)
        )
        lines.append(
            "| algorithm | k | " + " | ".join(models) + " | anonymize s/fold |"
        )
        lines.append("|---|---:|" + "---:|" * (len(models) + 1))
        cells = {
            (
                row.algorithm,
                row.k,
                row.model,
            ): (
                f"{100 * row.mean:.2f} ± {100 * row.sd:.2f} "
                f"[{100 * row.ci_low:.2f}, {100 * row.ci_high:.2f}]"
            )
            for row in summary.itertuples()
        }
        for algorithm, k in dict.fromkeys(zip(summary["algorithm"], summary["k"])):
            values = [cells.get((algorithm, k, m), "") for m in models]
            values.append(f"{seconds.get((algorithm, k), float('nan')):.2f}")
            lines.append(f"| {algorithm} | {k} | " + " | ".join(values) + " |")
    for error in result.errors:
        lines.append("")
        lines.append(
            f"- {error['algorithm']}, k={error['k']}: failed: {error['error']}"
        )
    return "\n".join(lines) + "\n"


def plot_accuracy_vs_k(results: pd.DataFrame, *, title: str = "") -> bytes:
    """PNG bytes: mean accuracy (+- sd) vs k, one line per algorithm x model."""
    from ppdm.utility.report import figure_png, new_figure, plot_style

    with plot_style():
        fig = new_figure(7.0, 4.5)
        ax = fig.add_subplot(1, 1, 1)
        if len(results):
            summary = summarize_cv(results, by=("algorithm", "model", "k"))
            algorithms = sorted(summary["algorithm"].unique())
            models = list(dict.fromkeys(results["model"]))
            # colour = model, line style and marker = algorithm; a small
            # horizontal shift per algorithm keeps the error bars apart
            styles = ["-", "--", ":", "-."]
            markers = ["o", "s", "^", "D"]
            span = float(summary["k"].max() - summary["k"].min()) or 1.0
            for (algorithm, model), group in summary.groupby(
                ["algorithm", "model"], sort=True
            ):
                a = algorithms.index(algorithm)
                m = models.index(model)
                group = group.sort_values("k")
                shift = (a - (len(algorithms) - 1) / 2) * 0.008 * span
                ax.errorbar(
                    group["k"] + shift,
                    100 * group["mean"],
                    yerr=100 * group["sd"].fillna(0.0),
                    color=f"C{m % 10}",
                    linestyle=styles[a % len(styles)],
                    marker=markers[a % len(markers)],
                    capsize=3,
                    label=f"{algorithm} / {model}",
                )
            ax.legend(fontsize="small")
        ax.set_xlabel("k")
        ax.set_ylabel("accuracy (%)")
        ax.set_title(title or "Accuracy vs k (5 x 2 CV)")
        ax.grid(True, alpha=0.3)
        return figure_png(fig)


def write_outputs(
    result: ExperimentResult, out: Path, *, title: str = "", notes: str = ""
) -> dict[str, Path]:
    """Write results.csv, results.md, accuracy_vs_k.png, config.json (+ errors).

    ``notes`` (e.g. the command, machine and date of the run) opens results.md.
    """
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "csv": out / "results.csv",
        "markdown": out / "results.md",
        "plot": out / "accuracy_vs_k.png",
        "config": out / "config.json",
    }
    result.results.to_csv(paths["csv"], index=False)
    header = f"# {title}\n\n" if title else ""
    header += f"{notes}\n\n" if notes else ""
    protocol = result.config.get("protocol", "")
    paths["markdown"].write_text(
        header + protocol + "\n\nAccuracy (%) on the held-out halves, mean ± sd "
        "over the folds, and the 95% t interval of the mean [low, high] (the "
        "folds share training rows, so the interval is optimistic; compare "
        "methods with the combined 5 x 2 CV F-test).\n\n" + summary_markdown(result),
        encoding="utf-8",
    )
    paths["plot"].write_bytes(plot_accuracy_vs_k(result.results, title=title))
    config = dict(result.config, errors=result.errors)
    write_json(paths["config"], config)
    return paths


def _parse_params(items: Sequence[str]) -> dict[str, dict[str, Any]]:
    params: dict[str, dict[str, Any]] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        algorithm, dot, name = key.partition(".")
        if not sep or not dot:
            raise InvalidParameterError(
                f"--param must read ALGORITHM.NAME=VALUE; got {item!r}"
            )
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        params.setdefault(algorithm, {})[name] = value
    return params


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ppdm.experiments.accuracy",
        description="Accuracy vs k with 5 x 2-fold cross-validation (kACTUS protocol).",
    )
    parser.add_argument("--dataset", required=True, choices=sorted(datasets.DATASETS))
    parser.add_argument("--algorithms", required=True, help="comma-separated names")
    parser.add_argument("--k", default="1,5,10,15,20,30", help="comma-separated k")
    parser.add_argument("--qi", default="all", help="'all' or comma-separated names")
    parser.add_argument("--target", default=None, help="class column (dataset default)")
    parser.add_argument("--sensitive", default=None)
    parser.add_argument("--l", type=int, default=1)
    parser.add_argument("--suppression-limit", type=float, default=0.0)
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="ALGORITHM.NAME=VALUE",
        help="algorithm parameter (JSON value), repeatable",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--folds", type=int, default=2)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--discretize", choices=["none", *METHODS], default="none")
    parser.add_argument("--n-bins", type=int, default=5)
    parser.add_argument(
        "--missing",
        choices=list(MISSING),
        default=MISSING[0],
        help="treatment of suppressed/missing cells by the models: 'weka' (as "
        "the kACTUS paper's Weka learners: fractional instances, skip, "
        "mode/mean) or 'zeros' (all-zero one-hot / mean)",
    )
    parser.add_argument(
        "--ranges",
        choices=list(RANGES),
        default=RANGES[0],
        help="how the C4.5 tree reads a released numeric range: its midpoint, "
        "or spread uniformly over the range (fractional instances)",
    )
    parser.add_argument(
        "--sample",
        type=int,
        default=None,
        help="use a seeded stratified sample of this many rows",
    )
    parser.add_argument(
        "--dropna", action="store_true", help="drop rows with a missing value first"
    )
    parser.add_argument(
        "--hierarchies",
        type=Path,
        default=None,
        help="directory of hierarchy files (e.g. hierarchies/adult), for the "
        "algorithms that generalize along them",
    )
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser


def _load_table(args: argparse.Namespace, target: str) -> pd.DataFrame:
    table = datasets.load(args.dataset)
    if target not in table.columns:
        raise InvalidParameterError(
            f"target {target!r} is not a column of {args.dataset}"
        )
    table = table[table[target].notna()]
    if args.dropna:
        table = table.dropna()
    if args.sample is not None and args.sample < len(table):
        from sklearn.model_selection import train_test_split

        table, _ = train_test_split(
            table,
            train_size=args.sample,
            stratify=table[target].astype(str),
            random_state=args.seed,
        )
        table = table.sort_index()
    return table.reset_index(drop=True)


def _hierarchies(directory: Path | None, table: pd.DataFrame) -> dict[str, Any] | None:
    if directory is None:
        return None
    from ppdm.generalization.hierarchies import load_hierarchies

    loaded = load_hierarchies(directory)
    return {name: h for name, h in loaded.items() if name in table.columns}


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    target = args.target or DEFAULT_TARGETS[args.dataset]
    table = _load_table(args, target)
    excluded = {target, args.sensitive}
    if args.qi == "all":
        qi = [c for c in table.columns if c not in excluded]
    else:
        qi = _csv(args.qi)
    result = run_experiment(
        table,
        algorithms=_csv(args.algorithms),
        ks=[int(k) for k in _csv(args.k)],
        quasi_identifiers=qi,
        target=target,
        sensitive_attribute=args.sensitive,
        l=args.l,
        suppression_limit=args.suppression_limit,
        params=_parse_params(args.param),
        seed=args.seed,
        repeats=args.repeats,
        folds=args.folds,
        models=_csv(args.models),
        discretize_method=None if args.discretize == "none" else args.discretize,
        n_bins=args.n_bins,
        hierarchies=_hierarchies(args.hierarchies, table),
        missing=args.missing,
        ranges=args.ranges,
    )
    result.config["dataset"] = args.dataset
    result.config["sample"] = args.sample
    result.config["dropna"] = bool(args.dropna)
    title = f"Accuracy vs k: {args.dataset} ({', '.join(_csv(args.algorithms))})"
    command = "python -m ppdm.experiments.accuracy " + " ".join(
        shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv)
    )
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    notes = (
        f"Command: `{command}`  \n"
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; load average at the end: {load}  \n"
        f"Date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}"
    )
    result.config["command"] = command
    paths = write_outputs(result, args.out, title=title, notes=notes)
    # The command's output for a person at a terminal (the library logs only).
    sys.stdout.write(summary_markdown(result))
    sys.stdout.write("\n".join(f"wrote {p}" for p in paths.values()) + "\n")
    return 1 if result.errors and not len(result.results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
