"""One comparison a data owner can trust: every registered algorithm, the same folds.

A data owner's first question is "which algorithm, which k?". This module
answers it with measured evidence: every algorithm of
:data:`ppdm.algorithms.ALGORITHMS` (read when the comparison is planned, so
the comparison grows as algorithms are registered) is run for every k under
the kACTUS paper's 5 x 2-fold cross-validation, on the *same* seeded folds
(:func:`fold_splits`, the splits of :func:`ppdm.utility.cross_validate`). In
each fold the training half alone is prepared (discretized as the release's
discretize step would for that algorithm, cut points fitted on the training
half) and anonymized; the models are trained on what an analyst receives and
tested on the untouched held-out half.

Per algorithm and k it reports accuracy (decision tree, naive Bayes,
logistic regression) mean +- sd over the folds, GLM (NCP) and CM, suppressed
cells, lost records, the achieved k and l of the releases, the anonymization
wall time and the peak memory of one anonymization; between the best two
algorithms at each k, the combined 5 x 2 cv F test
(:func:`ppdm.experiments.significance.combined_5x2cv_f_test`). An algorithm
that refuses the configuration (an unsupported privacy model, a missing
hierarchy, a target it needs) or cannot meet it on a fold (an infeasible k)
is listed with the reason; it never stops the comparison.

The work is cut into independent units, one per (algorithm, k, repeat, fold)
(:func:`evaluate_fold`), plus one memory probe per (algorithm, k)
(:func:`probe_memory`), so that a caller can run them in any executor:
:func:`run_comparison` runs them one after the other (or through any
``map``-like callable), the Prefect flow ``flows/compare.py`` as tasks on a
thread pool or a Dask cluster. :func:`assemble` turns the outcomes into a
:class:`Comparison`; :func:`write_outputs` writes ``comparison.csv``,
``comparison.json``, the folds' rows, the plots, ``comparison.md`` and
``comparison.html``.

References
----------
.. [1] S. Kisilevich, L. Rokach, Y. Elovici and B. Shapira, "Efficient
   Multidimensional Suppression for K-Anonymity", IEEE TKDE 22(3):334-347,
   2010 (5 x 2 CV protocol and the combined F test of their comparisons).
.. [2] E. Alpaydin, "Combined 5 x 2 cv F Test for Comparing Supervised
   Classification Learning Algorithms", Neural Computation 11(8):1885-1892,
   1999.
"""

from __future__ import annotations

import json
import math
import os
import time
import tracemalloc
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold

from ppdm.algorithms import ALGORITHMS, Anonymizer
from ppdm.config import ReleaseConfig
from ppdm.exceptions import AnonymizationError, InvalidParameterError
from ppdm.experiments.significance import (
    FOLDS,
    REPEATS,
    combined_5x2cv_f_test,
    paired_differences,
)
from ppdm.model import AnonymizationSpec, Release
from ppdm.pages import render
from ppdm.privacy.measures import distinct_l_diversity, k_anonymity
from ppdm.release.artifacts import write_json
from ppdm.utility.cross_validation import CV_PROTOCOL
from ppdm.utility.learners import MISSING_TEXT, MODELS
from ppdm.utility.loss import (
    covers_from_hierarchies,
    information_loss,
    release_loss,
)
from ppdm.utility.preprocessing import DiscretizeSettings, FoldDiscretizer
from ppdm.utility.scoring import train_and_score
from ppdm.utility.views import as_training_views

__all__ = [
    "BASELINE",
    "Candidate",
    "Comparison",
    "ComparisonPlan",
    "FoldOutcome",
    "Split",
    "assemble",
    "comparison_from_json",
    "evaluate_fold",
    "fold_splits",
    "load_table",
    "parse_k",
    "plan_comparison",
    "plot_accuracy_vs_k",
    "plot_pareto_fronts",
    "probe_memory",
    "recommendation",
    "render_html",
    "render_overview",
    "render_markdown",
    "run_comparison",
    "significance_tests",
    "summarize",
    "terminal_table",
    "write_outputs",
]

#: Name of the reference rows: the models trained on the (discretized)
#: original training half, no anonymization (reported as k = 1).
BASELINE = "original"

#: Short labels of the learners for narrow tables.
_SHORT = {"decision_tree": "tree", "naive_bayes": "NB", "logistic_regression": "logit"}


# -- the plan ------------------------------------------------------------------
@dataclass(frozen=True)
class Split:
    """One fold of the 5 x 2 design: row positions of its two halves."""

    repeat: int
    fold: int
    train: np.ndarray
    test: np.ndarray


@dataclass(frozen=True)
class Candidate:
    """One (algorithm, k) of the comparison, or the reason it cannot run.

    Attributes
    ----------
    algorithm : str
        Registry name, or :data:`BASELINE`.
    k : int
    config : ReleaseConfig or None
        The owner's configuration with this algorithm and k (None when
        refused, and for the baseline).
    reason : str
        Empty, or why the algorithm refuses this configuration.
    """

    algorithm: str
    k: int
    config: ReleaseConfig | None = None
    reason: str = ""

    @property
    def refused(self) -> bool:
        return bool(self.reason)


@dataclass(frozen=True)
class ComparisonPlan:
    """Everything the units of a comparison read; built by :func:`plan_comparison`.

    Attributes
    ----------
    config : ReleaseConfig
        The owner's configuration (privacy requirement, roles, discretization,
        seed).
    table : pandas.DataFrame
        The validated table with the columns a release may carry.
    candidates : tuple of Candidate
        Every (algorithm, k), refused ones included, in algorithm then k order.
    splits : tuple of Split
        The folds, the same for every candidate.
    models : tuple of str
    hierarchies : dict or None
        The dataset's hierarchies (given to every algorithm in its spec, and
        read to cost generalized labels).
    sample : int or None
        Rows of the seeded stratified sample, when one was taken.
    """

    config: ReleaseConfig
    table: pd.DataFrame
    candidates: tuple[Candidate, ...]
    splits: tuple[Split, ...]
    models: tuple[str, ...] = MODELS
    hierarchies: dict[str, Any] | None = None
    sample: int | None = None
    params: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def runnable(self) -> list[Candidate]:
        """Candidates that are not refused (the units to run), baseline first."""
        return [c for c in self.candidates if not c.refused]

    @property
    def algorithms(self) -> list[str]:
        """Registry names compared, in order (no baseline)."""
        names = [c.algorithm for c in self.candidates if c.algorithm != BASELINE]
        return list(dict.fromkeys(names))

    @property
    def ks(self) -> list[int]:
        ks = [c.k for c in self.candidates if c.algorithm != BASELINE]
        return sorted(set(ks))

    def units(self) -> list[tuple[Candidate, Split]]:
        """Every (candidate, split) to evaluate."""
        return [(c, s) for c in self.runnable for s in self.splits]


def parse_k(text: str | Iterable[int]) -> list[int]:
    """``"5,10,50"`` (or integers) -> ``[5, 10, 50]``, each an integer >= 2.

    Raises
    ------
    InvalidParameterError
        Naming the value and the allowed range.
    """
    items = text.split(",") if isinstance(text, str) else list(text)
    ks: list[int] = []
    for item in items:
        raw = item.strip() if isinstance(item, str) else item
        if raw == "":
            continue
        try:
            k = int(raw)
            if isinstance(raw, float | bool) or str(k) != str(raw).strip():
                raise ValueError
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"--k: {raw!r} is not an integer; give comma-separated integers "
                ">= 2, e.g. 5,10,50"
            ) from None
        if k < 2:
            raise InvalidParameterError(
                f"--k: k = {k} is out of range; allowed: an integer >= 2 (k = 1 "
                "is the original data, always reported)"
            )
        ks.append(k)
    if not ks:
        raise InvalidParameterError("--k: no k given; e.g. --k 5,10,50")
    return sorted(set(ks))


def fold_splits(
    labels: Sequence[Any] | np.ndarray,
    *,
    seed: int,
    repeats: int = REPEATS,
    folds: int = FOLDS,
) -> tuple[Split, ...]:
    """The folds of :func:`ppdm.utility.cross_validate`, as row positions.

    Repetition ``r`` is a stratified ``folds``-fold split shuffled with the
    ``r``-th state of ``numpy.random.SeedSequence(seed)``; exactly the splits
    ``cross_validate(..., seed=seed)`` makes, so results are comparable with
    the accuracy experiments.

    Examples
    --------
    >>> splits = fold_splits(["a", "b"] * 4, seed=0)
    >>> len(splits), [len(s.train) for s in splits[:2]]
    (10, [4, 4])
    >>> sorted(np.concatenate([splits[0].test, splits[1].test]).tolist())
    [0, 1, 2, 3, 4, 5, 6, 7]
    """
    text = np.asarray(pd.Series(labels).astype(str))
    seeds = np.random.SeedSequence(seed).generate_state(repeats, dtype=np.uint32)
    out = []
    for repeat, split_seed in enumerate(seeds):
        splitter = StratifiedKFold(
            n_splits=folds, shuffle=True, random_state=int(split_seed)
        )
        for fold, (train, test) in enumerate(splitter.split(np.zeros(len(text)), text)):
            out.append(Split(repeat, fold, train, test))
    return tuple(out)


def load_table(config: ReleaseConfig) -> pd.DataFrame:
    """The table a release of ``config`` anonymizes: ingested, validated, bound.

    As the pipeline's ingest and validate steps: rows that break the dataset's
    contract are left out (above the configured limit the comparison stops, as
    a release would), and only columns a release may carry are kept;
    identifying columns (pseudonyms are row keys, not features) are left out.
    """
    from ppdm.prepare import ingest, validation
    from ppdm.prepare.dataset_folder import load_contract
    from ppdm.prepare.roles import release_bound

    source = config.source
    raw = ingest.load_source(source.kind, source.location, **source.reader_options())
    contract = load_contract(config.schema_dir)
    outcome = validation.validate_table(
        raw,
        contract.schema,
        contract.suite,
        max_rejected_fraction=config.validation.max_rejected_fraction,
        source=source.name or str(source.path or source.url),
    )
    columns = [c for c in config.released_columns if c not in config.pseudonymized]
    return release_bound(outcome.clean, columns).reset_index(drop=True)


def _sample(table: pd.DataFrame, target: str, rows: int, seed: int) -> pd.DataFrame:
    from sklearn.model_selection import train_test_split

    kept, _ = train_test_split(
        table,
        train_size=rows,
        stratify=table[target].astype(str),
        random_state=seed,
    )
    return kept.sort_index().reset_index(drop=True)


def plan_comparison(
    config: ReleaseConfig,
    ks: Sequence[int],
    *,
    algorithms: Sequence[str] | None = None,
    table: pd.DataFrame | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    models: Sequence[str] = MODELS,
    sample: int | None = None,
    repeats: int = REPEATS,
    folds: int = FOLDS,
) -> ComparisonPlan:
    """Every (algorithm, k) of the comparison, the folds and the table.

    Parameters
    ----------
    config : ReleaseConfig
        The owner's configuration; each candidate is
        ``config.with_overrides(algorithm=name, k=k, params=...)``, so an
        algorithm is held to the same requirement (k, l and every other
        privacy model), suppression limit and seed as a release would be.
    ks : sequence of int
    algorithms : sequence of str, optional
        Registry names; default: every registered algorithm, read now.
    table : pandas.DataFrame, optional
        Default: :func:`load_table` of ``config``.
    params : mapping, optional
        ``{algorithm: {parameter: value}}``; the configuration's ``params``
        belong to its ``algorithm`` and apply to it unless given here.
    models : sequence of str, default=MODELS
    sample : int, optional
        Use a seeded stratified sample of this many rows (documented in the
        outputs).
    repeats, folds : int, default=5, 2

    Raises
    ------
    InvalidParameterError
        An unknown algorithm name (listing the registered ones), a bad k or
        sample size.
    """
    ks = parse_k(ks)
    names = list(ALGORITHMS) if algorithms is None else list(algorithms)
    unknown = [n for n in names if n not in ALGORITHMS]
    if unknown:
        raise InvalidParameterError(
            f"--algorithms: {', '.join(map(repr, unknown))} not registered; "
            f"registered: {', '.join(sorted(ALGORITHMS))}"
        )
    if not names:
        raise InvalidParameterError("--algorithms: no algorithm given")
    given = {name: dict(p) for name, p in (params or {}).items()}
    for name in given:
        if name not in ALGORITHMS:
            raise InvalidParameterError(
                f"--param: algorithm {name!r} is not registered; registered: "
                f"{', '.join(sorted(ALGORITHMS))}"
            )
    if table is None:
        table = load_table(config)
    target = config.target
    table = table[table[target].notna()].reset_index(drop=True)
    if sample is not None:
        if isinstance(sample, bool) or int(sample) < 2 * folds * 2:
            raise InvalidParameterError(
                f"--sample: {sample} rows is out of range; allowed: an integer "
                f">= {4 * folds}"
            )
        if sample < len(table):
            table = _sample(table, target, int(sample), config.seed)
        else:
            sample = None
    candidates = [Candidate(BASELINE, 1)]
    chosen: dict[str, dict[str, Any]] = {}
    for name in names:
        own = dict(config.params) if name == config.algorithm else {}
        for label, variant in _variants(name, given.get(name, own)):
            chosen[label] = variant
            for k in ks:
                try:
                    candidate = config.with_overrides(
                        algorithm=name, k=k, params=variant
                    )
                except AnonymizationError as err:
                    reason = _one_line(err).removeprefix("config overrides: ")
                    candidates.append(Candidate(label, k, reason=reason))
                    continue
                candidates.append(Candidate(label, k, candidate))
    hierarchies = None
    if config.hierarchy_dir is not None:
        from ppdm.generalization.hierarchies import load_hierarchies

        loaded = load_hierarchies(config.hierarchy_dir)
        hierarchies = {a: h for a, h in loaded.items() if a in table.columns}
    return ComparisonPlan(
        config=config,
        table=table,
        candidates=tuple(candidates),
        splits=fold_splits(
            table[target], seed=config.seed, repeats=repeats, folds=folds
        ),
        models=tuple(models),
        hierarchies=hierarchies or None,
        sample=sample,
        params=chosen,
    )


#: Budgets a differentially private algorithm is compared at, when its
#: parameters do not fix epsilon: one row per budget, labelled
#: ``"<name> epsilon=<value>"``, next to the k-anonymity algorithms.
DP_EPSILONS = (0.5, 1.0, 2.0)


def _variants(name: str, params: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``(label, params)`` of each row of ``name``: one, or one per budget."""
    cls = ALGORITHMS[name]
    if (
        "epsilon" in params
        or "epsilon" not in cls._param_names()
        or cls().privacy_cost(1000) is None
    ):
        return [(name, dict(params))]
    return [(f"{name} epsilon={e:g}", {**params, "epsilon": e}) for e in DP_EPSILONS]


def _registry_name(candidate: Candidate) -> str:
    """The registered algorithm behind a candidate's label."""
    return (
        candidate.config.algorithm
        if candidate.config is not None
        else candidate.algorithm
    )


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return text or type(err).__name__


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


def _discretizer(
    plan: ComparisonPlan, algorithm: type[Anonymizer] | None
) -> FoldDiscretizer | None:
    """The fold preparation the release's discretize step would make."""
    settings = DiscretizeSettings.of(plan.config.discretize)
    if algorithm is not None and (
        algorithm.uses_hierarchies or algorithm.numeric_input == "raw"
    ):
        return None  # it generalizes raw values itself
    config = plan.config
    return settings.prepare_for(plan.table, config.quasi_identifiers, config.target)


def _spec(plan: ComparisonPlan, candidate: Candidate) -> AnonymizationSpec:
    assert candidate.config is not None
    return AnonymizationSpec(
        requirement=candidate.config.requirement,
        target=candidate.config.target,
        suppression_limit=candidate.config.suppression_limit,
        hierarchies=plan.hierarchies,
    )


def _halves(
    plan: ComparisonPlan, algorithm: type[Anonymizer] | None, split: Split
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(raw training half, prepared training half, prepared test half)."""
    raw = plan.table.iloc[split.train]
    test = plan.table.iloc[split.test]
    prepare = _discretizer(plan, algorithm)
    if prepare is None:
        return raw, raw, test
    train, test = prepare(raw, test)
    return raw, train, test


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
    plan: ComparisonPlan, candidate: Candidate, split: Split
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
    }
    if candidate.algorithm == BASELINE:
        _, train, test = _halves(plan, None, split)
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
        cls = ALGORITHMS[_registry_name(candidate)]
        raw, train, test = _halves(plan, cls, split)
        assert candidate.config is not None
        anonymizer = candidate.config.build_algorithm()
        spec = _spec(plan, candidate)
        started = time.perf_counter()
        release = anonymizer.anonymize(
            train.copy(), spec, np.random.default_rng(config.seed)
        )
        seconds = time.perf_counter() - started
        views = as_training_views(release, algorithm=anonymizer)
        scores = train_and_score(train, views, test, **common)
        figures = _release_figures(raw, release, spec, covers)
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


def probe_memory(plan: ComparisonPlan, candidate: Candidate) -> float:
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
        cls = ALGORITHMS[_registry_name(candidate)]
        _, train, _ = _halves(plan, cls, split)
        assert candidate.config is not None
        anonymizer = candidate.config.build_algorithm()
        spec = _spec(plan, candidate)
        train = train.copy()
        already = tracemalloc.is_tracing()
        if not already:
            tracemalloc.start()
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        try:
            anonymizer.anonymize(train, spec, np.random.default_rng(plan.config.seed))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            if not already:
                tracemalloc.stop()
    except Exception:  # noqa: BLE001 - the fold units report the failure
        return math.nan
    return (peak - base) / 2**20


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
            repeats=repeats, folds=folds, missing_text=MISSING_TEXT["weka"]
        ),
    }
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


if __name__ == "__main__":
    raise SystemExit(main())
