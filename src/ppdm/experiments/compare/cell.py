"""One unit of a comparison: an (algorithm, k) on one fold, and its memory probe.

:func:`evaluate_fold` prepares and anonymizes one training half with the
release's recipe (:mod:`ppdm.recipe`: the discretization fitted on that half,
raw numbers for the algorithms that take them), trains the models on what an
analyst receives and tests them on the untouched held-out half;
:func:`probe_memory` measures the peak memory of one anonymization.
"""

from __future__ import annotations

import math
import tracemalloc
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import AnonymizationError
from ppdm.experiments.compare.grid import (
    BASELINE,
    ComparisonPlan,
    GridCandidate,
    Split,
    _one_line,
)
from ppdm.model import AnonymizationSpec, Release
from ppdm.privacy.measures import distinct_l_diversity, k_anonymity
from ppdm.recipe import (
    Recipe,
    anonymize_table,
    anonymize_training_split,
    split_preparation,
)
from ppdm.utility.loss import (
    covers_from_hierarchies,
    information_loss,
    release_loss,
)
from ppdm.utility.preprocessing import Binning
from ppdm.utility.scoring import train_and_score


# -- one unit: (algorithm, k, repeat, fold) -----------------------------------
@dataclass(frozen=True)
class FoldOutcome:
    """What one (algorithm, k) achieved on one fold.

    ``status`` is ``"ok"``, ``"failed"`` (the algorithm raised one of the
    project's errors, e.g. an infeasible k on this training half) or
    ``"error"`` (any other exception: a defect, reported, never hidden).
    """

    algorithm: str
    k: int
    repeat: int
    fold: int
    status: str
    reason: str = ""
    accuracy: dict[str, float] = field(default_factory=dict)
    seconds: float = math.nan
    glm: float = math.nan
    cm: float = math.nan
    suppressed_cells: float = math.nan
    lost_records: float = math.nan
    achieved_k: float = math.nan
    achieved_l: float = math.nan
    n_train: int = 0
    n_released: int = 0
    n_tables: int = 0
    pareto_front: list[dict[str, Any]] | None = None
    objectives: list[str] | None = None

    def rows(self) -> list[dict[str, Any]]:
        """One row per model (one row with ``model`` None when not ok)."""
        common = {
            k: v
            for k, v in asdict(self).items()
            if k not in ("accuracy", "pareto_front", "objectives")
        }
        if not self.accuracy:
            return [{**common, "model": None, "accuracy": math.nan}]
        return [
            {**common, "model": model, "accuracy": value}
            for model, value in self.accuracy.items()
        ]


def recipe_of(plan: ComparisonPlan, candidate: GridCandidate) -> Recipe:
    """The recipe of a runnable candidate: a fresh algorithm, the plan's
    hierarchies, the configured binning and seed (one per unit of work)."""
    assert candidate.config is not None
    return Recipe.of_config(candidate.config, hierarchies=plan.hierarchies)


def _baseline_halves(
    plan: ComparisonPlan, split: Split
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The halves of a fold binned as configured (the baseline's, for every
    algorithm), cut points fitted on the training half."""
    config = plan.config
    train = plan.table.iloc[split.train]
    test = plan.table.iloc[split.test]
    prepare = Binning.of(config.discretize).prepare_for(
        plan.table, config.quasi_identifiers, config.target
    )
    return prepare(train, test) if prepare is not None else (train, test)


def _covers(plan: ComparisonPlan) -> dict[str, Any] | None:
    return covers_from_hierarchies(plan.hierarchies) if plan.hierarchies else None


def _release_figures(
    raw_train: pd.DataFrame, release: Release, spec: AnonymizationSpec, covers: Any
) -> dict[str, Any]:
    """GLM, CM, suppressed cells, lost records, achieved k and l of a release.

    Information loss is measured against the raw (not discretized) training
    half for every algorithm, so binned and raw-input algorithms pay for their
    intervals on the same scale. A release of several tables is charged as
    :func:`ppdm.utility.loss.release_loss` does (each quasi-identifier at its
    best table); its CM, k and l are those of its tables' best CM and weakest
    k and l.
    """
    per_table = {
        name: information_loss(raw_train, table, spec, covers=covers)
        for name, table in release.tables.items()
    }
    whole = release_loss(per_table, spec.quasi_identifiers, len(raw_train))
    cms = [
        t["classification_metric"]
        for t in per_table.values()
        if "classification_metric" in t
    ]
    ks, ls = [], []
    sensitive = spec.sensitive_attribute
    for table in release.tables.values():
        qi = [q for q in spec.quasi_identifiers if q in table.columns]
        if not qi or not len(table):
            continue
        ks.append(k_anonymity(table, qi))
        if sensitive is not None and sensitive in table.columns:
            ls.append(distinct_l_diversity(table, qi, sensitive))
    return {
        "glm": float(whole["ncp"]["mean"]),
        "cm": float(min(cms)) if cms else math.nan,
        "suppressed_cells": float(whole["suppressed_cells"]),
        "lost_records": float(whole["lost_records"]),
        "achieved_k": float(min(ks)) if ks else math.nan,
        "achieved_l": float(min(ls)) if ls else math.nan,
        "n_released": int(min((len(t) for t in release.tables.values()), default=0)),
        "n_tables": len(release.tables),
    }


def evaluate_fold(
    plan: ComparisonPlan, candidate: GridCandidate, split: Split
) -> FoldOutcome:
    """Anonymize one training half with one (algorithm, k) and measure it.

    The baseline candidate trains on the prepared original training half.
    Never raises for an algorithm's failure: the outcome says what happened.
    """
    head = {
        "algorithm": candidate.algorithm,
        "k": candidate.k,
        "repeat": split.repeat,
        "fold": split.fold,
    }
    config = plan.config
    covers = _covers(plan)
    common = {
        "target": config.target,
        "seed": config.seed,
        "models": plan.models,
        "marker": config.requirement.suppression_marker,
        "with_original": False,
        "covers": covers,
        "missing": plan.missing,
        "ranges": plan.ranges,
    }
    if candidate.algorithm == BASELINE:
        train, test = _baseline_halves(plan, split)
        scores = train_and_score(train, train, test, **common)
        return FoldOutcome(
            **head,
            status="ok",
            accuracy={m: float(scores[m]["anonymized"]) for m in plan.models},
            seconds=0.0,
            n_train=len(train),
            n_released=len(train),
            n_tables=1,
        )
    if candidate.refused:
        return FoldOutcome(**head, status="refused", reason=candidate.reason)
    try:
        recipe = recipe_of(plan, candidate)
        raw = plan.table.iloc[split.train]
        made = anonymize_training_split(recipe, raw, plan.table.iloc[split.test])
        release, seconds, train = made.release, made.seconds, made.train
        scores = train_and_score(train, made.views, made.test, **common)
        figures = _release_figures(raw, release, recipe.spec, covers)
    except AnonymizationError as err:
        return FoldOutcome(**head, status="failed", reason=_one_line(err))
    except Exception as err:  # noqa: BLE001 - a defect is reported, not hidden
        return FoldOutcome(
            **head, status="error", reason=f"{type(err).__name__}: {_one_line(err)}"
        )
    evidence = release.evidence or {}
    front = evidence.get("pareto_front")
    first = split.repeat == 0 and split.fold == 0
    return FoldOutcome(
        **head,
        status="ok",
        accuracy={m: float(scores[m]["anonymized"]) for m in plan.models},
        seconds=seconds,
        n_train=len(train),
        pareto_front=_jsonable(front) if first and front else None,
        objectives=list(evidence.get("objectives") or []) if first and front else None,
        **figures,
    )


def probe_memory(plan: ComparisonPlan, candidate: GridCandidate) -> float:
    """Peak memory (MiB) of anonymizing the first training half, by tracemalloc.

    Run apart from the timed folds (tracing slows allocation-heavy code) and
    one probe at a time: tracemalloc counts every thread's allocations, so
    concurrent work would be charged to the probe. NaN when the algorithm
    fails on that half, or for the baseline and refused candidates.
    """
    if candidate.refused or candidate.algorithm == BASELINE:
        return math.nan
    split = plan.splits[0]
    try:
        recipe = recipe_of(plan, candidate)
        prepare = split_preparation(recipe, plan.table)
        train, test = plan.table.iloc[split.train], plan.table.iloc[split.test]
        if prepare is not None:
            train, _ = prepare(train, test)
        train = train.copy()
        already = tracemalloc.is_tracing()
        if not already:
            tracemalloc.start()
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        try:
            anonymize_table(recipe, train)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            if not already:
                tracemalloc.stop()
    except Exception:  # noqa: BLE001 - the fold units report the failure
        return math.nan
    return (peak - base) / 2**20


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        as_float = float(value)
        return as_float if math.isfinite(as_float) else None
    return value
