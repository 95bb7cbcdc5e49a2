"""The grid of a comparison: every (algorithm, k), the folds and the table.

:func:`plan_comparison` reads the owner's configuration, the registered
algorithms and the k values into a :class:`ComparisonPlan`: one
:class:`GridCandidate` per (algorithm, k) (a refused one carries the reason) and
the seeded 5 x 2 folds (:func:`fold_splits`) every candidate shares.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold

from ppdm.algorithms import ALGORITHMS
from ppdm.config import ReleaseConfig
from ppdm.exceptions import AnonymizationError, InvalidParameterError
from ppdm.experiments.significance import (
    FOLDS,
    REPEATS,
)
from ppdm.utility.learners import MISSING, MODELS, RANGES, check_missing

#: Name of the reference rows: the models trained on the (discretized)
#: original training half, no anonymization (reported as k = 1).
BASELINE = "original"


# -- the plan ------------------------------------------------------------------
@dataclass(frozen=True)
class Split:
    """One fold of the 5 x 2 design: row positions of its two halves."""

    repeat: int
    fold: int
    train: np.ndarray
    test: np.ndarray


@dataclass(frozen=True)
class GridCandidate:
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
    candidates : tuple of GridCandidate
        Every (algorithm, k), refused ones included, in algorithm then k order.
    splits : tuple of Split
        The folds, the same for every candidate.
    models : tuple of str
    hierarchies : dict or None
        The dataset's hierarchies (given to every algorithm in its spec, and
        read to cost generalized labels).
    sample : int or None
        Rows of the seeded stratified sample, when one was taken.
    params : dict
        ``{row label: parameters}`` of every algorithm row.
    missing : {"weka", "zeros", "indicator"}, default="weka"
        How the models read unknown cells (:data:`ppdm.utility.MISSING`).
    ranges : {"midpoint", "uniform"}, default="midpoint"
        How the C4.5 tree reads a released numeric range
        (:data:`ppdm.utility.RANGES`).
    """

    config: ReleaseConfig
    table: pd.DataFrame
    candidates: tuple[GridCandidate, ...]
    splits: tuple[Split, ...]
    models: tuple[str, ...] = MODELS
    hierarchies: dict[str, Any] | None = None
    sample: int | None = None
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    missing: str = MISSING[0]
    ranges: str = RANGES[0]

    @property
    def runnable(self) -> list[GridCandidate]:
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

    def units(self) -> list[tuple[GridCandidate, Split]]:
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
    its, and with the sweeps recorded under ``benchmarks/results/``.

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
    missing: str = MISSING[0],
    ranges: str = RANGES[0],
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
    missing : {"weka", "zeros", "indicator"}, default="weka"
    ranges : {"midpoint", "uniform"}, default="midpoint"
        How the models read unknown cells and released numeric ranges
        (:func:`ppdm.utility.scoring.train_and_score`).

    Raises
    ------
    InvalidParameterError
        An unknown algorithm name (listing the registered ones), a bad k or
        sample size.
    """
    ks = parse_k(ks)
    check_missing(missing)
    if ranges not in RANGES:
        raise InvalidParameterError(
            f"ranges must be one of {list(RANGES)}; got {ranges!r}"
        )
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
    candidates = [GridCandidate(BASELINE, 1)]
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
                    candidates.append(GridCandidate(label, k, reason=reason))
                    continue
                candidates.append(GridCandidate(label, k, candidate))
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
        missing=missing,
        ranges=ranges,
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


def _registry_name(candidate: GridCandidate) -> str:
    """The registered algorithm behind a candidate's label."""
    return (
        candidate.config.algorithm
        if candidate.config is not None
        else candidate.algorithm
    )


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return text or type(err).__name__


def sweep_config(
    config: ReleaseConfig,
    columns: Sequence[str],
    *,
    quasi_identifiers: Sequence[str],
    target: str,
    sensitive_attribute: str | None = None,
    l: int = 1,  # noqa: E741 - the literature's name
    suppression_limit: float = 0.0,
    discretize: str = "none",
    n_bins: int = 5,
    seed: int = 0,
) -> ReleaseConfig:
    """A configuration for an experiment on a table's columns, as papers set one.

    The papers' accuracy-against-k experiments name the quasi-identifiers,
    target and sensitive attribute of a table outright; every other of
    ``columns`` gets the role ``drop`` (a ``table`` given to
    :func:`plan_comparison` keeps them in the training halves, as the papers
    do, as columns no privacy model reads). ``config`` gives the rest
    (dataset, source, hierarchies, the requirement's other settings).

    Examples
    --------
    >>> from ppdm.config import default_config
    >>> config = sweep_config(default_config("german"), ["age", "job", "credit"],
    ...                       quasi_identifiers=["age"], target="credit")
    >>> config.quasi_identifiers, config.sensitive_attribute, config.columns["job"]
    (['age'], None, 'drop')

    Raises
    ------
    ConfigError
        The set-up is not a valid configuration (e.g. a column named twice).
    """
    from ppdm.config import parse_config

    roles = {column: "drop" for column in columns}
    roles.update({column: "quasi_identifier" for column in quasi_identifiers})
    roles[target] = "target"
    data = config.model_dump(by_alias=True, exclude_none=True)
    data.pop("sensitive_attribute", None)
    if sensitive_attribute is not None:
        roles[sensitive_attribute] = "sensitive"
        data["sensitive_attribute"] = sensitive_attribute
    data.update(
        columns=roles,
        quasi_identifiers=list(quasi_identifiers),
        target=target,
        l=l,
        suppression_limit=suppression_limit,
        discretize={"method": discretize, "n_bins": n_bins},
        seed=seed,
    )
    return parse_config(data, origin="experiment")
