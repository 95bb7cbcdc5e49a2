"""DMPD's genetic search over feature-set partitionings (private to :mod:`dmpd`).

A partitioning of ``m`` features is a label vector: ``labels[i]`` is the
group of feature ``i`` (``0, 1, ...``) or ``-1`` when the feature is left out.
:func:`canonical` renumbers groups by first appearance, so two vectors that
describe the same partitioning are equal tuples; fitness is memoised by that
tuple.

:class:`Evaluator` measures a partitioning on integer codes computed once:
``PAL`` and ``SAL`` by ``numpy.bincount`` (:mod:`ppdm.privacy._partition_anonymity`),
l-diversity of the projection holding the sensitive attribute by the
requirement's own models, and the wrapper accuracy: ``n_folds``-fold
cross-validation of one classifier per projection, combined by the naive Bayes
rule (equation 1). The per-projection out-of-fold class probabilities are
cached by the projection's feature set, since crossover passes whole groups
from parent to child.

:func:`genetic_search` (single objective: elitist, tournament selection) and
:func:`pareto_search` (SPEA2 environmental selection from DEAP) both take a
``map`` callable for the fitness evaluations: the builtin ``map`` by default,
a Dask or Prefect map from the flow layer.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ppdm import progress
from ppdm.privacy import Requirement
from ppdm.privacy._partition_anonymity import class_minima, set_anonymity_level
from ppdm.privacy.evaluation import EncodedSensitive
from ppdm.utility.views import naive_bayes_combination

__all__ = [
    "Evaluation",
    "Evaluator",
    "SearchResult",
    "canonical",
    "crossover",
    "genetic_search",
    "groups_of",
    "mutate",
    "pareto_search",
    "random_partitioning",
]

Encoding = tuple[int, ...]
MapFn = Callable[..., Iterable[Any]]

#: Projections whose cached out-of-fold probabilities an evaluator keeps.
_CACHE_SIZE = 512


def _dense(keys: np.ndarray) -> tuple[np.ndarray, int]:
    """Keys renumbered ``0..n-1`` (in key order) and ``n``."""
    uniques, dense = np.unique(keys, return_inverse=True)
    return dense.astype(np.int64).reshape(-1), len(uniques)


def canonical(labels: Sequence[int]) -> Encoding:
    """Labels renumbered by first appearance; -1 (left out) kept.

    >>> canonical([3, 3, -1, 0, 3]) == canonical([1, 1, -1, 5, 1])
    True
    >>> canonical([3, 3, -1, 0, 3])
    (0, 0, -1, 1, 0)
    """
    seen: dict[int, int] = {}
    out = []
    for label in labels:
        label = int(label)
        if label < 0:
            out.append(-1)
            continue
        if label not in seen:
            seen[label] = len(seen)
        out.append(seen[label])
    return tuple(out)


def groups_of(encoding: Encoding) -> list[tuple[int, ...]]:
    """Feature indices of each group, in label order.

    >>> groups_of((0, 0, -1, 1, 0))
    [(0, 1, 4), (3,)]
    """
    n_groups = max(encoding, default=-1) + 1
    return [
        tuple(i for i, g in enumerate(encoding) if g == label)
        for label in range(n_groups)
    ]


def random_partitioning(n_features: int, rng: np.random.Generator) -> Encoding:
    """A random partitioning: each feature left out with probability 1/2,
    the others spread over 1..n_features groups uniformly."""
    n_groups = int(rng.integers(1, n_features + 1))
    labels = rng.integers(0, n_groups, n_features)
    labels[rng.random(n_features) < 0.5] = -1
    return canonical(labels)


def crossover(
    first: Encoding, second: Encoding, rng: np.random.Generator
) -> tuple[Encoding, Encoding]:
    """Group-wise crossover: each child inherits whole ancestor sets of one parent.

    An ancestor set is a group of the parent or its left-out set. The first
    child takes a random non-empty choice of the first parent's ancestor sets
    as they are, and the second parent's labels on the features not yet
    placed (its grouping restricted to them); the second child likewise with
    the parents' roles swapped.
    """
    return _inherit(first, second, rng), _inherit(second, first, rng)


def _inherit(donor: Encoding, other: Encoding, rng: np.random.Generator) -> Encoding:
    sets = sorted(set(donor))
    chosen = rng.random(len(sets)) < 0.5
    if not chosen.any():
        chosen[int(rng.integers(len(sets)))] = True
    kept = {s for s, c in zip(sets, chosen, strict=True) if c}
    offset = max(donor, default=0) + 1
    labels = [
        d if d in kept else (o + offset if o >= 0 else -1)
        for d, o in zip(donor, other, strict=True)
    ]
    return canonical(labels)


def mutate(encoding: Encoding, p_mut: float, rng: np.random.Generator) -> Encoding:
    """Each feature moves with probability ``p_mut`` to another random set.

    The targets are the other groups and the left-out set; a partitioning
    with at most one group also offers a new singleton group.
    """
    labels = list(encoding)
    moves = np.flatnonzero(rng.random(len(labels)) < p_mut)
    for i in moves:
        n_groups = max(labels, default=-1) + 1
        targets = [g for g in range(-1, n_groups) if g != labels[i]]
        if n_groups <= 1:
            targets.append(n_groups)
        labels[i] = targets[int(rng.integers(len(targets)))]
    return canonical(labels)


@dataclass(frozen=True)
class Evaluation:
    """What the search knows of one partitioning.

    Attributes
    ----------
    accuracy : float
        Wrapper accuracy (NaN when not computed: PAL below the gate).
    pal : int
        Smallest class of any projection over its quasi-identifiers (a
        projection without one counts as one class of all rows).
    sal : int
        Smallest class of a join of two projections (PAL for one projection).
    diverse : bool
        The projection holding the sensitive attribute meets the
        sensitive-attribute models (l-diversity, t-closeness) over its
        quasi-identifiers, and with two or more projections over its
        quasi-identifiers and the target (the classes of a join on the
        target), or no projection holds it.
    n_groups : int
    """

    accuracy: float
    pal: int
    sal: int
    diverse: bool
    n_groups: int

    @property
    def part_al(self) -> int:
        """PartAL = min(PAL, SAL)."""
        return min(self.pal, self.sal)

    def partially_valid(self, k: int) -> bool:
        return self.pal >= k and self.diverse

    def valid(self, k: int) -> bool:
        return self.partially_valid(k) and self.sal >= k

    def fitness(self, k: int) -> float:
        """The paper's fitness: 0 unless partially valid, else the accuracy."""
        if not self.partially_valid(k) or math.isnan(self.accuracy):
            return 0.0
        return self.accuracy


@dataclass
class Evaluator:
    """Measures partitionings on precomputed codes (picklable for a parallel map).

    Parameters
    ----------
    codes : numpy.ndarray of int64, shape (n_rows, n_features)
        Feature codes ``0..cardinality-1``.
    cardinalities : numpy.ndarray of int64
    is_qi : numpy.ndarray of bool
    y : numpy.ndarray of int64
        Target codes ``0..n_classes-1``.
    n_classes : int
    folds : numpy.ndarray of int64
        Fold of each row for the wrapper, ``0..n_folds-1``.
    inducer : {"decision_tree", "naive_bayes"}
    accuracy_gate : int
        Accuracy is computed only for PAL >= this (the search's k; 1 in the
        Pareto mode, where every partitioning needs its accuracy).
    sensitive_index : int
        Feature index of the sensitive attribute, -1 without one.
    class_requirement : Requirement or None
        Sensitive-attribute models the projection holding the sensitive
        attribute must meet, over its quasi-identifiers and, with two or more
        projections, the target (None: only k, checked by PAL).
    encoded : mapping, optional
        :meth:`Requirement.encode` of the table, for ``class_requirement``.
    min_leaf : int
        ``min_samples_leaf`` of the wrapper's trees.
    random_state : int
        Seed of the wrapper's trees (drawn from the release's generator).
    """

    codes: np.ndarray
    cardinalities: np.ndarray
    is_qi: np.ndarray
    y: np.ndarray
    n_classes: int
    folds: np.ndarray
    inducer: str
    accuracy_gate: int
    sensitive_index: int = -1
    class_requirement: Requirement | None = None
    encoded: Mapping[str, EncodedSensitive] | None = None
    min_leaf: int = 2
    random_state: int = 0
    _cache: OrderedDict = field(default_factory=OrderedDict, repr=False)

    @property
    def n_rows(self) -> int:
        return len(self.y)

    def __call__(self, encoding: Encoding) -> Evaluation:
        groups = groups_of(encoding)
        pal, minima, diverse = self.anonymity(groups)
        sal = set_anonymity_level(minima)
        sal = pal if sal is None else min(sal, self.n_rows)
        accuracy = math.nan
        if pal >= self.accuracy_gate and diverse:
            accuracy = self.accuracy(groups)
        return Evaluation(accuracy, pal, sal, diverse, len(groups))

    # -- anonymity ------------------------------------------------------------
    def group_ids(self, features: Sequence[int]) -> tuple[np.ndarray, int]:
        """Dense ids of the rows' value combinations over ``features``."""
        if not len(features):
            return np.zeros(self.n_rows, dtype=np.int64), 1
        ids = np.zeros(self.n_rows, dtype=np.int64)
        span = 1
        for f in features:
            card = int(self.cardinalities[f])
            if span * card > 2**62 // max(card, 1):
                _, ids = np.unique(ids, return_inverse=True)
                span = int(ids.max()) + 1
            ids = ids * card + self.codes[:, f]
            span *= card
        if span <= 4 * self.n_rows:
            present = np.bincount(ids, minlength=span) > 0
            remap = np.cumsum(present) - 1
            return remap[ids], int(present.sum())
        uniques, dense = np.unique(ids, return_inverse=True)
        return dense.astype(np.int64), len(uniques)

    def anonymity(
        self, groups: Sequence[Sequence[int]]
    ) -> tuple[int, list[np.ndarray], bool]:
        """(PAL, per-projection class minima for SAL, diversity) of ``groups``."""
        pal = self.n_rows
        minima = []
        diverse = True
        for features in groups:
            qis = [f for f in features if self.is_qi[f]]
            ids, n_groups = self.group_ids(qis)
            if qis:
                pal = min(pal, int(np.bincount(ids, minlength=n_groups).min()))
            minima.append(class_minima(ids, n_groups, self.y, self.n_classes)[0])
            if (
                self.class_requirement is not None
                and self.sensitive_index in features
                and diverse
            ):
                check_ids, n_check = ids, n_groups
                if len(groups) > 1:
                    # Projections are joined on the target: the class an
                    # attacker sees holds this projection's rows of one
                    # (quasi-identifiers, target) group, whatever the other
                    # projection adds; the sensitive models must hold there.
                    check_ids, n_check = _dense(ids * self.n_classes + self.y)
                diverse = bool(
                    self.class_requirement.accepts_groups(
                        check_ids, n_check, self.encoded or {}
                    ).all()
                )
        return pal, minima, diverse

    # -- wrapper accuracy -------------------------------------------------------
    def accuracy(self, groups: Sequence[Sequence[int]]) -> float:
        """Mean accuracy over the folds of the projections' combined classifier."""
        n_folds = int(self.folds.max()) + 1
        if not groups:
            correct = np.zeros(self.n_rows, dtype=bool)
            for f in range(n_folds):
                train, test = self.folds != f, self.folds == f
                majority = np.bincount(self.y[train], minlength=self.n_classes).argmax()
                correct[test] = self.y[test] == majority
        else:
            probabilities = [self.out_of_fold(tuple(g)) for g in groups]
            combined = np.empty((self.n_rows, self.n_classes))
            for f in range(n_folds):
                train, test = self.folds != f, self.folds == f
                prior = (np.bincount(self.y[train], minlength=self.n_classes) + 1.0) / (
                    int(train.sum()) + self.n_classes
                )
                combined[test] = naive_bayes_combination(
                    [p[test] for p in probabilities], prior
                )
            correct = combined.argmax(axis=1) == self.y
        return float(np.mean([correct[self.folds == f].mean() for f in range(n_folds)]))

    def out_of_fold(self, features: tuple[int, ...]) -> np.ndarray:
        """P(c | x_G) of each row from the classifier trained on the other folds."""
        cached = self._cache.get(features)
        if cached is not None:
            self._cache.move_to_end(features)
            return cached
        proba = np.empty((self.n_rows, self.n_classes))
        for f in range(int(self.folds.max()) + 1):
            train, test = self.folds != f, self.folds == f
            if self.inducer == "naive_bayes":
                proba[test] = self._naive_bayes(features, train, test)
            else:
                proba[test] = self._tree(features, train, test)
        self._cache[features] = proba
        if len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return proba

    def _naive_bayes(
        self, features: tuple[int, ...], train: np.ndarray, test: np.ndarray
    ) -> np.ndarray:
        c = self.n_classes
        y = self.y[train]
        class_counts = np.bincount(y, minlength=c).astype(float)
        scores = np.log((class_counts + 1.0) / (len(y) + c))[None, :].repeat(
            int(test.sum()), 0
        )
        for f in features:
            card = int(self.cardinalities[f])
            counts = np.bincount(
                self.codes[train, f] * c + y, minlength=card * c
            ).reshape(card, c)
            log_p = np.log((counts + 1.0) / (class_counts + card))
            scores += log_p[self.codes[test, f]]
        scores -= scores.max(axis=1, keepdims=True)
        proba = np.exp(scores)
        return proba / proba.sum(axis=1, keepdims=True)

    def _tree(
        self, features: tuple[int, ...], train: np.ndarray, test: np.ndarray
    ) -> np.ndarray:
        from sklearn.tree import DecisionTreeClassifier  # only when a tree is asked

        c = self.n_classes
        x = self.codes[:, list(features)].astype(np.float32)
        tree = DecisionTreeClassifier(
            criterion="entropy",
            min_samples_leaf=self.min_leaf,
            random_state=self.random_state,
        ).fit(x[train], self.y[train])
        n_nodes = tree.tree_.node_count
        leaves = tree.apply(x[train])
        counts = np.bincount(leaves * c + self.y[train], minlength=n_nodes * c).reshape(
            n_nodes, c
        )
        laplace = (counts + 1.0) / (counts.sum(axis=1, keepdims=True) + c)
        return laplace[tree.apply(x[test])]


@dataclass
class SearchResult:
    """What a search evaluated.

    Attributes
    ----------
    evaluated : dict
        Every partitioning evaluated, by canonical encoding, in evaluation order.
    population : list of tuple
        The final population (single mode) or archive (Pareto mode).
    requested : int
        Fitness requests, memo hits included.
    generations : int
    """

    evaluated: dict[Encoding, Evaluation]
    population: list[Encoding]
    requested: int
    generations: int

    @property
    def memo_share(self) -> float:
        """Share of fitness requests answered from the memo."""
        if not self.requested:
            return 0.0
        return 1.0 - len(self.evaluated) / self.requested


class _Memo:
    """Fitness by canonical encoding; new encodings go through ``map``."""

    def __init__(self, evaluator: Callable[[Encoding], Evaluation], map_fn: MapFn):
        self.evaluator = evaluator
        self.map_fn = map_fn
        self.evaluated: dict[Encoding, Evaluation] = {}
        self.requested = 0

    def __call__(self, encodings: Sequence[Encoding]) -> list[Evaluation]:
        self.requested += len(encodings)
        new = list(dict.fromkeys(e for e in encodings if e not in self.evaluated))
        if new:
            for encoding, result in zip(
                new, self.map_fn(self.evaluator, new), strict=True
            ):
                self.evaluated[encoding] = result
        return [self.evaluated[e] for e in encodings]


def _initial(
    n_features: int, population: int, rng: np.random.Generator
) -> list[Encoding]:
    empty = tuple([-1] * n_features)
    return [empty] + [
        random_partitioning(n_features, rng) for _ in range(population - 1)
    ]


def _offspring(
    pool: Sequence[Encoding],
    keys: Sequence[float],
    size: int,
    p_cross: float,
    p_mut: float,
    rng: np.random.Generator,
) -> list[Encoding]:
    """``size`` children of parents picked by binary tournament on ``keys``
    (higher wins, ties to the first drawn)."""

    def parent() -> Encoding:
        i, j = rng.integers(0, len(pool), 2)
        return pool[i] if keys[i] >= keys[j] else pool[j]

    children: list[Encoding] = []
    while len(children) < size:
        a, b = parent(), parent()
        if rng.random() < p_cross:
            a, b = crossover(a, b, rng)
        children.extend([mutate(a, p_mut, rng), mutate(b, p_mut, rng)])
    return children[:size]


def genetic_search(
    evaluator: Callable[[Encoding], Evaluation],
    n_features: int,
    k: int,
    rng: np.random.Generator,
    *,
    generations: int,
    population: int,
    p_cross: float,
    p_mut: float,
    map: MapFn = map,  # noqa: A002 - the seam's name
) -> SearchResult:
    """Single-objective search: fitness 0 below PAL k, else the wrapper accuracy.

    Binary tournament selection (by fitness, from ``rng``), group-wise
    crossover and mutation; elitist replacement keeps the best ``population``
    distinct partitionings of parents and offspring (ties: parents first).
    The empty partitioning is in the initial population.
    """
    memo = _Memo(evaluator, map)
    current = list(dict.fromkeys(_initial(n_features, population, rng)))
    scores = [e.fitness(k) for e in memo(current)]
    for generation in range(generations):
        progress.report(generation / generations, f"dmpd: generation {generation + 1}")
        children = _offspring(current, scores, population, p_cross, p_mut, rng)
        child_scores = [e.fitness(k) for e in memo(children)]
        pool = dict(zip(current, scores, strict=True))
        for child, score in zip(children, child_scores, strict=True):
            pool.setdefault(child, score)
        ranked = sorted(pool.items(), key=lambda item: -item[1])[:population]
        current = [encoding for encoding, _ in ranked]
        scores = [score for _, score in ranked]
    return SearchResult(memo.evaluated, current, memo.requested, generations)


def _objectives_fitness() -> type:
    """DEAP's fitness of accuracy and log-scaled PartAL, both maximised.

    Made on first use: importing DEAP is not free, and a command that only
    lists the algorithms should not pay for it.
    """
    from deap import base

    return type("_Objectives", (base.Fitness,), {"weights": (1.0, 1.0)})


@dataclass
class _Member:
    encoding: Encoding
    fitness: Any


def _objectives(evaluation: Evaluation, n_rows: int) -> tuple[float, float]:
    """(accuracy, log PartAL / log n) in [0, 1]; 0 for a partitioning that
    breaks the other class models."""
    accuracy = 0.0 if math.isnan(evaluation.accuracy) else evaluation.accuracy
    level = evaluation.part_al if evaluation.diverse else 0
    scaled = math.log(max(level, 1)) / math.log(max(n_rows, 2))
    return accuracy, scaled


def pareto_search(
    evaluator: Callable[[Encoding], Evaluation],
    n_features: int,
    n_rows: int,
    rng: np.random.Generator,
    *,
    generations: int,
    population: int,
    p_cross: float,
    p_mut: float,
    map: MapFn = map,  # noqa: A002 - the seam's name
) -> SearchResult:
    """SPEA2-style search for the front of accuracy vs PartAL.

    The archive (``population`` members) is DEAP's ``selSPEA2`` over the
    population and the archive: strength, raw fitness and the k-th nearest
    neighbour density, truncation keeping the front spread. Mates are chosen
    by binary tournament on the non-domination rank of archive members
    (``tools.sortNondominated``) with ``rng``.
    """
    from deap import tools

    objectives = _objectives_fitness()
    memo = _Memo(evaluator, map)

    def members(encodings: Sequence[Encoding]) -> list[_Member]:
        out = []
        for encoding, evaluation in zip(encodings, memo(encodings), strict=True):
            fitness = objectives()
            fitness.values = _objectives(evaluation, n_rows)
            out.append(_Member(encoding, fitness))
        return out

    current = members(list(dict.fromkeys(_initial(n_features, population, rng))))
    archive: list[_Member] = []
    for generation in range(generations + 1):
        union = list({m.encoding: m for m in [*archive, *current]}.values())
        archive = tools.selSPEA2(union, min(population, len(union)))
        if generation == generations:
            break
        progress.report(generation / generations, f"dmpd: generation {generation + 1}")
        fronts = tools.sortNondominated(archive, len(archive))
        rank = {id(m): r for r, front in enumerate(fronts) for m in front}
        keys = [-rank[id(m)] for m in archive]
        pool = [m.encoding for m in archive]
        current = members(_offspring(pool, keys, population, p_cross, p_mut, rng))
    return SearchResult(
        memo.evaluated, [m.encoding for m in archive], memo.requested, generations
    )


def pareto_front(
    evaluated: Mapping[Encoding, Evaluation],
) -> list[tuple[Encoding, Evaluation]]:
    """Non-dominated evaluated partitionings in (accuracy, PartAL), by PartAL.

    Partitionings that break a class model beyond k (l-diversity) are left
    out; of several with the same objectives the first evaluated is kept.
    """
    items = [
        (e, ev)
        for e, ev in evaluated.items()
        if ev.diverse and not math.isnan(ev.accuracy)
    ]
    if not items:
        return []
    points = np.array([(ev.accuracy, ev.part_al) for _, ev in items], dtype=float)
    keep = []
    seen: set[tuple[float, float]] = set()
    for i, point in enumerate(points):
        dominated = ((points >= point).all(axis=1) & (points > point).any(axis=1)).any()
        key = (float(point[0]), float(point[1]))
        if not dominated and key not in seen:
            seen.add(key)
            keep.append(items[i])
    keep.sort(key=lambda item: (item[1].part_al, -item[1].accuracy))
    return keep
