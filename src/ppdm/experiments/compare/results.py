"""The results of a comparison: per-fold rows, the summary, the tests, the words.

:func:`assemble` turns the units' :class:`FoldOutcome` into a
:class:`Comparison` (:func:`summarize` per (algorithm, k), the combined
5 x 2 cv F tests of :func:`significance_tests`, the Pareto fronts), and
:func:`recommendation` words it from the numbers alone;
:func:`run_comparison` runs a plan's units through any ``map``.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ppdm.algorithms import ALGORITHMS
from ppdm.experiments.compare.cell import (
    FoldOutcome,
    _jsonable,
    evaluate_fold,
    probe_memory,
)
from ppdm.experiments.compare.grid import BASELINE, ComparisonPlan
from ppdm.experiments.significance import (
    FOLDS,
    REPEATS,
    combined_5x2cv_f_test,
    paired_differences,
)
from ppdm.utility.cross_validation import CV_PROTOCOL
from ppdm.utility.learners import MISSING, MISSING_TEXT, MODELS, RANGES


# -- assembling the outcomes -----------------------------------------------------
@dataclass
class Comparison:
    """The outcome of a comparison.

    Attributes
    ----------
    rows : pandas.DataFrame
        One row per (algorithm, k, repeat, fold, model) (failed folds have one
        row with ``model`` None).
    summary : pandas.DataFrame
        One row per (algorithm, k): see :func:`summarize`.
    tests : list of dict
        The combined 5 x 2 cv F tests (:func:`significance_tests`).
    fronts : dict
        ``{algorithm: {k: {"objectives", "front"}}}`` of the algorithms whose
        evidence holds a Pareto front (first fold).
    config : dict
        The comparison's parameters, protocol text and set-up.
    recommendation : list of str
        Sentences generated from the numbers (:func:`recommendation`).
    """

    rows: pd.DataFrame
    summary: pd.DataFrame
    tests: list[dict[str, Any]]
    fronts: dict[str, dict[int, dict[str, Any]]]
    config: dict[str, Any]
    recommendation: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: config, summary rows, tests, fronts, recommendation."""
        return _jsonable(
            {
                "config": self.config,
                "summary": self.summary.to_dict(orient="records"),
                "tests": self.tests,
                "pareto_fronts": {
                    a: {str(k): v for k, v in by_k.items()}
                    for a, by_k in self.fronts.items()
                },
                "recommendation": self.recommendation,
            }
        )


def summarize(rows: pd.DataFrame, *, models: Sequence[str] = MODELS) -> pd.DataFrame:
    """One row per (algorithm, k): the figures over its folds.

    Columns: ``algorithm``, ``k``, ``status`` (``ok``, ``partial``, ``failed``,
    ``refused``, ``error``), ``folds`` (folds that succeeded), ``folds_total``;
    per model ``acc_<model>`` and ``sd_<model>`` (mean and sample sd of the
    accuracy over the successful folds); ``glm``, ``cm``, ``suppressed_cells``,
    ``lost_records`` (means); ``achieved_k``, ``achieved_l`` (the smallest
    over the folds); ``seconds``, ``seconds_sd`` (anonymization wall time per
    fold); ``peak_mib`` (filled by :func:`assemble`); ``reason`` (the first
    failure's reason).
    """
    out = []
    keys = list(dict.fromkeys(zip(rows["algorithm"], rows["k"])))
    for algorithm, k in keys:
        group = rows[(rows["algorithm"] == algorithm) & (rows["k"] == k)]
        folds = group.drop_duplicates(["repeat", "fold"])
        ok = folds[folds["status"] == "ok"]
        bad = folds[folds["status"] != "ok"]
        if len(bad) == 0:
            status = "ok"
        elif len(ok):
            status = "partial"
        else:
            status = str(bad["status"].iloc[0])
        record: dict[str, Any] = {
            "algorithm": algorithm,
            "k": int(k),
            "status": status,
            "folds": len(ok),
            "folds_total": len(folds),
        }
        good = group[group["status"] == "ok"]
        for model in models:
            values = good.loc[good["model"] == model, "accuracy"].astype(float)
            record[f"acc_{model}"] = float(values.mean()) if len(values) else math.nan
            record[f"sd_{model}"] = float(values.std()) if len(values) > 1 else math.nan
        for column in ("glm", "cm", "suppressed_cells", "lost_records"):
            values = ok[column].astype(float)
            record[column] = float(values.mean()) if len(values) else math.nan
        for column in ("achieved_k", "achieved_l"):
            values = ok[column].astype(float)
            record[column] = float(values.min()) if len(values) else math.nan
        seconds = ok["seconds"].astype(float)
        record["seconds"] = float(seconds.mean()) if len(seconds) else math.nan
        record["seconds_sd"] = float(seconds.std()) if len(seconds) > 1 else math.nan
        record["peak_mib"] = math.nan
        record["reason"] = str(bad["reason"].iloc[0]) if len(bad) else ""
        out.append(record)
    return pd.DataFrame(out)


def significance_tests(
    rows: pd.DataFrame, summary: pd.DataFrame, *, models: Sequence[str] = MODELS
) -> list[dict[str, Any]]:
    """The combined 5 x 2 cv F test between the two most accurate algorithms.

    For every k and model, among the algorithms whose ten folds all succeeded,
    the two with the highest mean accuracy are compared on their paired
    per-fold accuracies (same folds). Fewer than two such algorithms, or a
    design other than 5 x 2, gives no test.
    """
    tests = []
    complete = summary[
        (summary["algorithm"] != BASELINE)
        & (summary["status"] == "ok")
        & (summary["folds"] == REPEATS * FOLDS)
    ]
    ok_rows = rows[rows["status"] == "ok"]
    for k in sorted(complete["k"].unique()):
        at_k = complete[complete["k"] == k]
        for model in models:
            ranked = at_k.sort_values(f"acc_{model}", ascending=False, kind="stable")
            if len(ranked) < 2:
                continue
            best, second = ranked["algorithm"].iloc[0], ranked["algorithm"].iloc[1]
            differences = paired_differences(
                ok_rows, best, second, k=int(k), model=model
            )
            if differences.shape != (REPEATS, FOLDS):
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = combined_5x2cv_f_test(differences)
            tests.append(
                {
                    "k": int(k),
                    "model": model,
                    "best": best,
                    "second": second,
                    "mean_difference": result.mean_difference,
                    "statistic": result.statistic,
                    "p_value": result.p_value,
                    "significant": result.significant(0.05),
                    "note": result.note,
                }
            )
    return tests


def _fronts(outcomes: Iterable[FoldOutcome]) -> dict[str, dict[int, dict[str, Any]]]:
    fronts: dict[str, dict[int, dict[str, Any]]] = {}
    for outcome in outcomes:
        if outcome.pareto_front:
            fronts.setdefault(outcome.algorithm, {})[outcome.k] = {
                "objectives": outcome.objectives or [],
                "front": outcome.pareto_front,
            }
    return fronts


def assemble(
    plan: ComparisonPlan,
    outcomes: Iterable[FoldOutcome],
    memory: Mapping[tuple[str, int], float] | None = None,
    *,
    seconds_total: float | None = None,
    runner: str = "sequential",
) -> Comparison:
    """The :class:`Comparison` of a plan's unit outcomes and memory probes."""
    outcomes = list(outcomes)
    refused = [
        FoldOutcome(c.algorithm, c.k, s.repeat, s.fold, "refused", c.reason)
        for c in plan.candidates
        if c.refused
        for s in plan.splits[:1]
    ]
    rows = pd.DataFrame([r for o in outcomes + refused for r in o.rows()])
    order = {name: i for i, name in enumerate([BASELINE, *plan.algorithms])}
    rows["_order"] = rows["algorithm"].map(order)
    rows = (
        rows.sort_values(["_order", "k", "repeat", "fold", "model"], kind="stable")
        .drop(columns="_order")
        .reset_index(drop=True)
    )
    summary = summarize(rows, models=plan.models)
    for (algorithm, k), mib in (memory or {}).items():
        where = (summary["algorithm"] == algorithm) & (summary["k"] == k)
        summary.loc[where, "peak_mib"] = mib
    summary.loc[summary["status"] == "refused", "folds_total"] = 0
    tests = significance_tests(rows, summary, models=plan.models)
    config = plan.config
    repeats = 1 + max(s.repeat for s in plan.splits)
    folds = 1 + max(s.fold for s in plan.splits)
    setup = {
        "dataset": config.dataset,
        "rows": len(plan.table),
        "sample": plan.sample,
        "quasi_identifiers": list(config.quasi_identifiers),
        "sensitive_attribute": config.sensitive_attribute,
        "target": config.target,
        "requirement": [str(m) for m in config.requirement.models],
        "l": int(config.l),
        "suppression_limit": float(config.suppression_limit),
        "discretize": config.discretize.method,
        "seed": int(config.seed),
        "k": plan.ks,
        "algorithms": plan.algorithms,
        "registered": sorted(ALGORITHMS),
        "params": plan.params,
        "models": list(plan.models),
        "repeats": repeats,
        "folds": folds,
        "runner": runner,
        "seconds_total": seconds_total,
        "protocol": CV_PROTOCOL.format(
            repeats=repeats, folds=folds, missing_text=MISSING_TEXT[plan.missing]
        ),
    }
    # Recorded when not the default, so a default comparison's file reads
    # as it always has.
    for key, default in (("missing", MISSING[0]), ("ranges", RANGES[0])):
        if getattr(plan, key) != default:
            setup[key] = getattr(plan, key)
    result = Comparison(
        rows=rows,
        summary=summary,
        tests=tests,
        fronts=_fronts(outcomes),
        config=setup,
    )
    result.recommendation = recommendation(result)
    return result


def run_comparison(
    plan: ComparisonPlan,
    *,
    map_fn: Callable[..., Iterable[Any]] = map,
    measure_memory: bool = True,
) -> Comparison:
    """Run every unit of ``plan`` (through ``map_fn``), then the memory probes.

    ``map_fn(function, units)`` may run the units in any order and in
    parallel (each unit is independent and seeded on its own); the memory
    probes always run one at a time, after the units.
    """
    started = time.perf_counter()
    units = plan.units()
    outcomes = list(map_fn(lambda unit: evaluate_fold(plan, *unit), units))
    memory = {}
    if measure_memory:
        for candidate in plan.runnable:
            if candidate.algorithm != BASELINE:
                memory[(candidate.algorithm, candidate.k)] = probe_memory(
                    plan, candidate
                )
    return assemble(plan, outcomes, memory, seconds_total=time.perf_counter() - started)


# -- the words ---------------------------------------------------------------------
def _pct(value: float) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{100 * value:.1f}%"


def recommendation(result: Comparison) -> list[str]:
    """Short, plain sentences drawn from the numbers (nothing else).

    Which algorithm is most accurate at each k (first model: the decision
    tree), whether the lead over the second is significant by the combined
    5 x 2 cv F test, which has the least information loss, what raising k
    costs, and which algorithms could not take part and why.
    """
    summary = result.summary
    models = list(result.config.get("models") or MODELS)
    model = models[0]
    column = f"acc_{model}"
    sentences: list[str] = []
    measured = summary[
        (summary["algorithm"] != BASELINE) & summary["status"].isin(["ok", "partial"])
    ]
    baseline = summary[summary["algorithm"] == BASELINE]
    if measured.empty:
        sentences.append(
            "No algorithm produced a release under this configuration; see the "
            "reasons below."
        )
    winners: dict[str, int] = {}
    for k in sorted(measured["k"].unique()):
        at_k = measured[measured["k"] == k].sort_values(column, ascending=False)
        best = at_k.iloc[0]
        winners[best["algorithm"]] = winners.get(best["algorithm"], 0) + 1
        text = (
            f"k={k}: {best['algorithm']} is the most accurate ({model.replace('_', ' ')} "
            f"{_pct(best[column])} ± {_pct(best[f'sd_{model}'])})"
        )
        test = next(
            (t for t in result.tests if t["k"] == k and t["model"] == model), None
        )
        if test is not None:
            verdict = (
                "significantly better"
                if test["significant"]
                else "not significantly different"
            )
            text += (
                f"; against {test['second']} it is {verdict} (combined 5x2cv F test, "
                f"p = {test['p_value']:.3g})"
            )
        elif len(at_k) > 1:
            text += "; no test (an algorithm lacks some folds)"
        least = at_k.sort_values("glm").iloc[0]
        text += (
            f". Least information loss: {least['algorithm']} (GLM {least['glm']:.3f})."
        )
        sentences.append(text)
    if winners:
        most = max(winners.values())
        tops = [a for a, n in winners.items() if n == most]
        who = _names(tops) + (" are each" if len(tops) > 1 else " is")
        sentences.append(
            f"Overall, {who} the most accurate at {most} of "
            f"{len(set(measured['k']))} k values."
        )
        primary = [t for t in result.tests if t["model"] == model]
        if primary and not any(t["significant"] for t in primary):
            glm = summary.set_index(["algorithm", "k"])["glm"]
            picks = []
            for t in primary:
                pair = [t["best"], t["second"]]
                lower = min(pair, key=lambda a: glm.get((a, t["k"]), math.inf))
                picks.append(f"k={t['k']}: {lower}")
            sentences.append(
                f"No lead in {model.replace('_', ' ')} accuracy is significant at any "
                "k (combined 5x2cv F test, alpha = 0.05): the two most accurate "
                "algorithms are statistically tied at each k, so prefer the one that "
                f"loses less information ({'; '.join(picks)}), or the faster one."
            )
        elif primary:
            won = [t for t in primary if t["significant"]]
            sentences.append(
                "Significant leads: "
                + "; ".join(
                    f"{t['best']} over {t['second']} at k={t['k']} "
                    f"(p = {t['p_value']:.3g})"
                    for t in won
                )
                + "."
            )
        ks = sorted(measured["k"].unique())
        if len(ks) > 1:
            first = measured[measured["k"] == ks[0]][column].max()
            last = measured[measured["k"] == ks[-1]][column].max()
            text = (
                f"Raising k from {ks[0]} to {ks[-1]} moves the best accuracy from "
                f"{_pct(first)} to {_pct(last)}"
            )
            if len(baseline):
                text += f" (original data: {_pct(baseline[column].iloc[0])})"
            sentences.append(text + ".")
    problems = summary[
        summary["status"].isin(["refused", "failed", "error", "partial"])
    ]
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for row in problems.itertuples():
        what = {
            "refused": "refuses this configuration",
            "failed": "could not meet it on any fold",
            "error": "stopped with an error",
            "partial": f"succeeded on {row.folds} of {row.folds_total} folds",
        }[row.status]
        reason = str(row.reason).removeprefix("config overrides: ")
        grouped.setdefault((str(row.algorithm), what, reason), []).append(str(row.k))
    for (algorithm, what, reason), ks_of in grouped.items():
        sentences.append(f"{algorithm} (k={', '.join(ks_of)}) {what}: {reason}")
    return sentences


def _names(names: Sequence[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
