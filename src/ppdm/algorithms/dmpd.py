"""DMPD: k-anonymity by feature-set partitioning (data mining privacy by decomposition).

No value is altered. The features (every column but the target) are split
into disjoint groups ``G_1..G_w``, some left out; each group is released as
one projection (its features plus the target), rows shuffled independently,
no row identifier. A genetic algorithm picks the partitioning so that

- every projection is k-anonymous over the quasi-identifiers it holds
  (partial anonymity, ``PAL >= k``; the verifier checks it per table with
  the plain :class:`~ppdm.privacy.KAnonymity`), and
- joining two projections on the target cannot break it either (set
  anonymity, ``SAL >= k``; :class:`~ppdm.privacy.SetAnonymity`, which
  :meth:`Dmpd.adapt_requirement` adds to the configuration's requirement so
  the manifest, the certificate and ``ppdm verify`` carry it).

The fitness is the paper's: 0 when ``PAL < k``, else the ``n_folds``-fold
cross-validated accuracy of one classifier per projection combined by the
naive Bayes rule (equation 1, :func:`ppdm.utility.views.naive_bayes_combination`).
After the search the evaluated partitionings are walked best first and the
first with ``SAL >= k`` is released.

Beyond the paper: the sensitive attribute is a feature like the others (the
search may leave it out, as it may any feature); the projection that holds
it must meet the requirement's sensitive-attribute models (distinct, entropy
or recursive l-diversity, t-closeness) over the classes an attacker sees:
with two or more projections, joined on the target, those of (that
projection's quasi-identifiers, target), since the sensitive values of a
join class are those of one such group whatever the other projection adds;
with one projection, its quasi-identifier classes. The verifier checks the
same classes (:func:`ppdm.verify.certificate.join_columns`). Projections
without it carry no sensitive value to protect.

Speed. Every feature is coded once as integers; PAL and SAL are
``numpy.bincount`` counts (SAL by the product formula, never a join); the
wrapper's classifiers are fast stand-ins for the paper's: a scikit-learn
entropy tree on the codes with Laplace-corrected leaf frequencies
(``inducer="decision_tree"``, for C4.5) or a categorical naive Bayes by
counting (``"naive_bayes"``); the out-of-fold class probabilities of a
projection are cached by its feature set (crossover passes whole groups), and
fitness is memoised by the canonical encoding. The released projections are
then scored by the utility report's own C4.5-like learner. When the whole
space of partitionings (``B(m+1)`` for ``m`` features, Bell numbers) is no
larger than the search's budget (``population x (generations + 1)``) it is
enumerated instead: the exact optimum at lower cost.

References
----------
.. [1] N. Matatov, L. Rokach and O. Maimon, "Privacy-preserving data mining:
   A feature set partitioning approach", Information Sciences
   180(14):2696-2720, 2010.
.. [2] L. Rokach, "Genetic algorithm-based feature set partitioning for
   classification problems", Pattern Recognition 41(5):1676-1700, 2008.
.. [3] E. Zitzler, M. Laumanns and L. Thiele, "SPEA2: Improving the Strength
   Pareto Evolutionary Algorithm", TIK-Report 103, ETH Zurich, 2001.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ppdm import parallel
from ppdm.algorithms._dmpd_search import (
    Encoding,
    Evaluation,
    Evaluator,
    SearchResult,
    genetic_search,
    groups_of,
    pareto_front,
    pareto_search,
)
from ppdm.algorithms.base import Anonymizer
from ppdm.exceptions import InfeasibleConstraintError
from ppdm.model import AnonymizationSpec, Release, attribute_kind
from ppdm.privacy import (
    Requirement,
)

__all__ = ["Dmpd", "dmpd_search", "feature_codes"]


def feature_codes(column: pd.Series, *, exact: bool) -> tuple[np.ndarray, int]:
    """Integer codes ``0..card-1`` of a column, one per value; missing values get one.

    Quasi-identifiers (``exact``) are coded as released, their classes
    counted on the codes. Other numeric columns are coded by value in
    numeric order, so the wrapper's tree splits them where C4.5 would split
    the raw numbers (the paper keeps them numeric): quantile bins merged
    Adult's capital-gain and capital-loss (92% and 95% zeros) into one code,
    and the search then kept or dropped its strongest predictors by chance.
    Ordered categories keep their order.
    """
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy().astype(np.int64)
        card = len(column.cat.categories)
        codes = np.where(codes < 0, card, codes)
        return _compact(codes)
    values = column
    if not exact and attribute_kind(column).value == "numeric":
        values = pd.to_numeric(column, errors="coerce").astype(float)
    codes, _ = pd.factorize(values, sort=True, use_na_sentinel=False)
    return _compact(codes.astype(np.int64))


def _compact(codes: np.ndarray) -> tuple[np.ndarray, int]:
    present = np.bincount(codes) > 0
    remap = np.cumsum(present) - 1
    return remap[codes].astype(np.int64), max(int(present.sum()), 1)


def _bell_space(n_features: int) -> int:
    """Partitionings of any subset of ``n`` features: the Bell number B(n+1)."""
    row = [1]
    for _ in range(n_features + 1):
        nxt = [row[-1]]
        for value in row:
            nxt.append(nxt[-1] + value)
        row = nxt
    return row[0]


def _all_partitionings(n_features: int) -> Iterator[Encoding]:
    """Every canonical encoding (restricted growth strings with -1)."""

    def grow(prefix: list[int], top: int) -> Iterator[Encoding]:
        if len(prefix) == n_features:
            yield tuple(prefix)
            return
        for label in range(-1, top + 2):
            yield from grow([*prefix, label], max(top, label))

    yield from grow([], -1)


def dmpd_search(
    evaluator: Evaluator,
    n_features: int,
    k: int,
    rng: np.random.Generator,
    *,
    mode: str = "single",
    generations: int = 100,
    population: int = 50,
    p_cross: float = 0.8,
    p_mut: float = 0.1,
    map: Callable[..., Iterable[Any]] = map,  # noqa: A002 - the seam's name
) -> SearchResult:
    """Search the partitionings; ``map`` runs the fitness evaluations.

    ``map(evaluator, encodings)`` must return the evaluations in order: the
    builtin by default; a Dask or Prefect map when the flow layer passes one
    (the evaluator is a plain picklable object).
    """
    if _bell_space(n_features) <= population * (generations + 1):
        encodings = list(_all_partitionings(n_features))
        evaluated = dict(zip(encodings, map(evaluator, encodings), strict=True))
        return SearchResult(evaluated, encodings, len(encodings), 0)
    # The two searches share the genetic settings; their third argument is
    # what a member is measured against: the k its fitness needs (single),
    # or the rows PartAL is scaled by (pareto).
    search, bound = (
        (pareto_search, evaluator.n_rows) if mode == "pareto" else (genetic_search, k)
    )
    return search(
        evaluator,
        n_features,
        bound,
        rng,
        generations=generations,
        population=population,
        p_cross=p_cross,
        p_mut=p_mut,
        map=map,
    )


@dataclass(eq=False, repr=False, kw_only=True)
class Dmpd(Anonymizer):
    """Feature-set partitioning for k-anonymity (Matatov, Rokach & Maimon 2010).

    Parameters
    ----------
    generations : int, default=100
        Generations of the genetic search (the paper's default; more did
        not help, Section 5.7).
    population : int, default=50
        Partitionings per generation (and archive size in the Pareto mode).
    p_cross : float, default=0.8
        Probability that two parents are recombined by group-wise crossover.
    p_mut : float, default=0.1
        Probability that each feature of a child moves to another group.
    n_folds : int, default=3
        Folds of the wrapper's cross-validation.
    inducer : {"decision_tree", "naive_bayes"}, default="decision_tree"
        Classifier per projection in the wrapper (see the module docstring).
    mode : {"single", "pareto"}, default="single"
        ``"single"``: the paper's search (fitness 0 below PAL k). ``"pareto"``:
        SPEA2-style search for the front of accuracy vs PartAL; the release
        is the most accurate front member with PartAL >= k, and the front goes
        into the evidence (and the utility report) so an owner can choose k.

    Notes
    -----
    Every column of the input but the target is a feature; numeric
    quasi-identifiers should arrive binned (the pipeline's discretize step:
    MDL in the shipped configurations), since a projection holding a raw
    numeric quasi-identifier rarely reaches k. Non-quasi-identifier numeric
    features are released as they are. A table on which no feature alone
    is k-anonymous (every feature a quasi-identifier with a value held by
    fewer than k rows, the paper's Fig. 8) has no valid non-empty
    partitioning: nothing is released and
    :class:`~ppdm.exceptions.InfeasibleConstraintError` says why.

    Examples
    --------
    >>> table = pd.DataFrame({
    ...     "age": list("aabbcc") * 4, "zip": list("xyxyxy") * 4,
    ...     "job": list("uuvvww") * 4, "y": list("pnpnnp") * 4})
    >>> spec = AnonymizationSpec.of(("age", "zip"), None, "y", k=4)
    >>> release = Dmpd(generations=2, population=4).anonymize(
    ...     table, spec, np.random.default_rng(0))
    >>> sorted(release.tables), release.evidence["part_al"] >= 4
    (['projection-1', 'projection-2'], True)
    """

    name: ClassVar[str] = "dmpd"

    generations: int = 100
    population: int = 50
    p_cross: float = 0.8
    p_mut: float = 0.1
    n_folds: int = 3
    inducer: str = "decision_tree"
    mode: str = "single"

    # -- the algorithm ---------------------------------------------------------
    def search_k(self, requirement: Requirement) -> int:
        """The k the partitioning must reach: of k-anonymity or a release model."""
        return max(
            [int(requirement.k)]
            + [int(m.k) for m in requirement.release_models if hasattr(m, "k")]
        )

    def evaluator(
        self, table: pd.DataFrame, spec: AnonymizationSpec, rng: np.random.Generator
    ) -> tuple[Evaluator, list[str]]:
        """The fitness evaluator of ``table`` and the feature names it codes."""
        target = spec.target
        assert target is not None
        features = [c for c in table.columns if c != target]
        qis = set(spec.quasi_identifiers)
        columns = [feature_codes(table[f], exact=f in qis) for f in features]
        codes = (
            np.column_stack([c for c, _ in columns])
            if columns
            else np.zeros((len(table), 0), dtype=np.int64)
        )
        y, n_classes = feature_codes(table[target], exact=True)
        folds = _stratified_folds(y, self.n_folds, rng)
        requirement = spec.requirement
        sensitive = [m for m in requirement.class_models if m.uses_sensitive_attribute]
        class_requirement = None
        encoded = None
        sensitive_index = -1
        if sensitive and spec.sensitive_attribute in features:
            # k is PAL's (over the quasi-identifiers alone); the sensitive
            # models are checked over (quasi-identifiers, target) when the
            # projections can be joined (Evaluator.anonymity).
            class_requirement = Requirement(spec.quasi_identifiers, tuple(sensitive))
            encoded = class_requirement.encode(table)
            sensitive_index = features.index(spec.sensitive_attribute)
        k = self.search_k(requirement)
        n_train = len(table) * (self.n_folds - 1) // self.n_folds
        evaluator = Evaluator(
            codes=codes,
            cardinalities=np.array([c for _, c in columns], dtype=np.int64),
            is_qi=np.array([f in qis for f in features], dtype=bool),
            y=y,
            n_classes=n_classes,
            folds=folds,
            inducer=self.inducer,
            accuracy_gate=1 if self.mode == "pareto" else k,
            sensitive_index=sensitive_index,
            class_requirement=class_requirement,
            encoded=encoded,
            min_leaf=max(2, n_train // 500),
            random_state=int(rng.integers(2**31 - 1)),
        )
        return evaluator, features

    def _anonymize(
        self, table: pd.DataFrame, spec: AnonymizationSpec, rng: np.random.Generator
    ) -> Release:
        k = self.search_k(spec.requirement)
        evaluator, features = self.evaluator(table, spec, rng)
        result = dmpd_search(
            evaluator,
            len(features),
            k,
            rng,
            mode=self.mode,
            generations=self.generations,
            population=self.population,
            p_cross=self.p_cross,
            p_mut=self.p_mut,
            map=parallel.map_in_order,
        )
        chosen, evaluation = self._choose(result, k)
        if chosen is None:
            chosen, evaluation = self._best_single_feature(evaluator, features, k)
        groups = groups_of(chosen)
        tables: dict[str, pd.DataFrame] = {}
        for number, group in enumerate(groups, start=1):
            columns = [features[i] for i in group] + [spec.target]
            order = rng.permutation(len(table))
            tables[f"projection-{number}"] = (
                table[columns].iloc[order].reset_index(drop=True)
            )
        evidence = self._evidence(result, chosen, evaluation, features, k)
        return self._release_tables(tables, spec, table, evidence)

    def _choose(
        self, result: SearchResult, k: int
    ) -> tuple[Encoding | None, Evaluation | None]:
        """The best evaluated valid non-empty partitioning (SAL >= k too)."""
        ranked = sorted(
            (
                (e, ev)
                for e, ev in result.evaluated.items()
                if max(e, default=-1) >= 0 and not math.isnan(ev.accuracy)
            ),
            key=lambda item: (-item[1].accuracy, -item[1].part_al),
        )
        for encoding, evaluation in ranked:
            if evaluation.valid(k):
                return encoding, evaluation
        return None, None

    def _best_single_feature(
        self, evaluator: Evaluator, features: list[str], k: int
    ) -> tuple[Encoding, Evaluation]:
        """The best one-feature partitioning, or why none is valid.

        Any valid non-empty partitioning contains a feature that is valid
        alone (fewer quasi-identifiers only merge classes), so when no
        feature alone is valid the only valid partitioning is the empty one.
        """
        best: tuple[Encoding, Evaluation] | None = None
        smallest: list[tuple[int, str]] = []
        for i, name in enumerate(features):
            encoding = tuple(0 if j == i else -1 for j in range(len(features)))
            pal, _, diverse = evaluator.anonymity([(i,)])
            smallest.append((pal, name))
            if pal < k or not diverse:
                continue
            evaluation = evaluator(encoding)
            if best is None or evaluation.accuracy > best[1].accuracy:
                best = (encoding, evaluation)
        if best is None:
            detail = ", ".join(f"{name!r}: {pal}" for pal, name in sorted(smallest)[:5])
            raise InfeasibleConstraintError(
                f"{self.name}: k={k} cannot be met by any non-empty partitioning: "
                f"every feature alone has a class below k (smallest classes: "
                f"{detail}); the only valid partitioning is the empty one, so "
                "nothing is released"
            )
        return best

    def _evidence(
        self,
        result: SearchResult,
        chosen: Encoding,
        evaluation: Evaluation,
        features: list[str],
        k: int,
    ) -> dict[str, Any]:
        groups = groups_of(chosen)
        evidence: dict[str, Any] = {
            "k": k,
            "mode": self.mode,
            "inducer": self.inducer,
            "projections": {
                f"projection-{n}": [features[i] for i in g]
                for n, g in enumerate(groups, start=1)
            },
            "excluded": [f for f, g in zip(features, chosen, strict=True) if g < 0],
            "wrapper_accuracy": round(evaluation.accuracy, 6),
            "pal": evaluation.pal,
            "sal": evaluation.sal,
            "part_al": evaluation.part_al,
            "search": "exhaustive" if result.generations == 0 else "genetic",
            "evaluations": {
                "requested": result.requested,
                "computed": len(result.evaluated),
                "memo_share": round(result.memo_share, 6),
            },
        }
        if self.mode == "pareto":
            evidence["pareto_front"] = [
                {
                    "k": ev.part_al,
                    "accuracy": round(ev.accuracy, 6),
                    "projections": [[features[i] for i in g] for g in groups_of(e)],
                    "chosen": e == chosen,
                }
                for e, ev in pareto_front(result.evaluated)
            ]
        return evidence


def _stratified_folds(
    y: np.ndarray, n_folds: int, rng: np.random.Generator
) -> np.ndarray:
    """Fold of each row: every class dealt round-robin over a random order."""
    folds = np.empty(len(y), dtype=np.int64)
    order = rng.permutation(len(y))
    ranked = order[np.argsort(y[order], kind="stable")]
    folds[ranked] = np.arange(len(y)) % n_folds
    return folds
