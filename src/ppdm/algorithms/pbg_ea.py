"""PBG-EA: property based generalizations found by an evolutionary lattice search.

Every node of the full-domain generalization lattice is measured on several
properties (privacy indices such as k, l, S_k, S_l to maximise; losses GLM, CM
to minimise). The search keeps an archive of non-dominated nodes, at most one
per box of the index space (box-dominance, Algorithm 1 of the paper), and
generates candidates with a SPEA2-style evolutionary algorithm (Algorithm 2).
The release is one node of the archive, chosen by a policy among the nodes
that meet every privacy model of the requirement; the whole archive is
reported as the Pareto front.

What the release enforces: the search measures nodes on its own indices, but
the node released must satisfy ``spec.requirement``. A member qualifies when
its indices reach the requirement's bounds (``k >= minimal_class_size`` and,
with a sensitive attribute, ``l >= minimal_distinct_values``), which for
k-anonymity and distinct l-diversity is the whole requirement; for entropy or
recursive (c, l)-diversity and t-closeness the models then decide the
qualified members exactly, best first
(:meth:`ppdm.generalization.lattice.GeneralizationLattice.decide`), and the first they accept
is released. The released table (:func:`ppdm.generalization.lattice_release.generalized_release`)
suppresses exactly the classes the models reject and passes the verifier.

An optional archive-driven local search (``refine="local"``, the default of
:class:`PbgEa`) follows the evolutionary phase: it evaluates the untried
lattice neighbours of archive members, skipping those that an archive member
already dominates by the bounds that monotonicity along generalization gives,
until the archive stops changing or an evaluation budget is spent. On Adult
it finds the whole front with fewer evaluations than the paper's 25 x 100
(benchmarks/results/pbg_ea.md); ``refine="none"`` is the paper's algorithm.

References
----------
.. [1] Dewri, R., Ray, I., Ray, I., Whitley, D.: On the Identification of
   Property Based Generalizations in Microdata Anonymization. In: Foresti, S.,
   Jajodia, S. (eds.) Data and Applications Security and Privacy XXIV (DBSec
   2010), LNCS 6166, Springer (2010) 81-96. doi:10.1007/978-3-642-13739-6_6
.. [2] Zitzler, E., Laumanns, M., Thiele, L.: SPEA2: Improving the Strength
   Pareto Evolutionary Algorithm. In: Evolutionary Methods for Design,
   Optimization and Control with Applications to Industrial Problems (2002)
   95-100.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ppdm import progress
from ppdm.algorithm_registry import PBG_REFINEMENTS, eps_vector
from ppdm.algorithms.full_domain import FullDomainAnonymizer, LatticeBuilder
from ppdm.exceptions import InfeasibleConstraintError, InvalidParameterError
from ppdm.generalization.hierarchies import Hierarchy
from ppdm.generalization.lattice import (
    OBJECTIVES,
    GeneralizationLattice,
    NodeMetrics,
    require_hierarchies,
)
from ppdm.model import AnonymizationSpec

__all__ = ["BoxArchive", "PbgEa", "PbgResult", "parse_objectives", "pbg_search"]

#: Indices that (almost) never decrease along generalization: merging classes
#: only grows them. On the Adult lattice k and S_k never decrease along any of
#: its 96,896 edges, l along 32 and GLM along 53 (where a coarser node needs
#: less suppression). CM is not monotone and never bounds anything.
MONOTONE = frozenset({"k", "sk", "l", "sl", "glm"})
#: Generations of the evolutionary phase when ``generations`` is not given: the
#: paper's 100 alone; none before the local search, which then starts from the
#: initial population (random nodes plus the bottom and top of the lattice).
#: On Adult and German, generations before it cost evaluations and found
#: nothing the local search misses (benchmarks/results/pbg_ea.md).
DEFAULT_GENERATIONS = {"none": 100, "local": 0}


def parse_objectives(objectives: str) -> tuple[str, ...]:
    """``"k-l-glm"`` -> ``("k", "l", "glm")``, each a key of ``OBJECTIVES``."""
    names = tuple(objectives.split("-"))
    unknown = [n for n in names if n not in OBJECTIVES]
    if unknown or len(set(names)) != len(names):
        raise InvalidParameterError(
            f"objectives {objectives!r}: indices must be distinct names from "
            f"{sorted(OBJECTIVES)} joined by '-'"
        )
    return names


class BoxArchive:
    """Archive of representative non-dominated nodes under box-dominance.

    Algorithm 1 of Dewri et al.: a candidate removes every member it
    box-dominates, and enters only if no member box-dominates it and its box
    is empty. Boxes are ``floor(index / eps)`` per index.

    Parameters
    ----------
    senses : sequence of int
        +1 for an index to maximise, -1 to minimise.
    eps : sequence of float
        Discretisation vector (box side per index), all > 0.

    Examples
    --------
    >>> archive = BoxArchive([1, -1], [1.0, 1.0])
    >>> archive.update((0,), [2, 5.0]), archive.update((1,), [3, 5.5])
    (True, True)
    >>> archive.update((2,), [3, 4.0]), sorted(archive.nodes)
    (True, [(2,)])
    """

    def __init__(self, senses: Sequence[int], eps: Sequence[float]) -> None:
        self.senses = np.asarray(senses, dtype=float)
        self.eps = np.asarray(eps, dtype=float)
        self.nodes: list[tuple[int, ...]] = []
        self._values = np.empty((0, len(self.senses)))
        self._boxes = np.empty((0, len(self.senses)))

    def __len__(self) -> int:
        return len(self.nodes)

    def box(self, values: Sequence[float]) -> np.ndarray:
        """Box of an index vector, oriented so that larger is better."""
        return np.floor(np.asarray(values, dtype=float) / self.eps) * self.senses

    @property
    def values(self) -> np.ndarray:
        """Index values of the members (raw, not oriented), one row each."""
        return self._values * self.senses

    def covers(self, oriented: np.ndarray) -> bool:
        """Whether a member is at least as good as ``oriented`` in every index.

        ``oriented`` is an index vector times the senses (larger is better). A
        candidate whose values are no better than that is never admitted:
        its box is the member's or box-dominated by it.
        """
        return bool((self._values >= oriented).all(axis=1).any())

    def update(self, node: tuple[int, ...], values: Sequence[float]) -> bool:
        """Offer a node; return whether it entered the archive."""
        value = np.asarray(values, dtype=float) * self.senses
        box = self.box(values)
        if self.nodes:
            same = (self._boxes == box).all(axis=1)
            box_ge = (box >= self._boxes).all(axis=1) & (box > self._boxes).any(axis=1)
            val_ge = (value >= self._values).all(axis=1) & (value > self._values).any(
                axis=1
            )
            dominated_by_candidate = np.where(same, val_ge, box_ge)
            keep = ~dominated_by_candidate
            if not keep.all():
                self.nodes = [n for n, k in zip(self.nodes, keep) if k]
                self._values, self._boxes = self._values[keep], self._boxes[keep]
                same = same[keep]
            box_le = (self._boxes >= box).all(axis=1) & (self._boxes > box).any(axis=1)
            val_le = (self._values >= value).all(axis=1) & (self._values > value).any(
                axis=1
            )
            if np.where(same, val_le, box_le).any() or same.any():
                return False
        self.nodes.append(tuple(node))
        self._values = np.vstack([self._values, value])
        self._boxes = np.vstack([self._boxes, box])
        return True


@dataclass(frozen=True)
class PbgResult:
    """Outcome of :func:`pbg_search`.

    Attributes
    ----------
    archive : list of NodeMetrics
        The final archive (representative minimal PBGs found).
    evaluated : dict
        Every node evaluated, by levels (memoised evaluations).
    objectives : tuple of str
    eps : tuple of float
    """

    archive: list[NodeMetrics]
    evaluated: dict[tuple[int, ...], NodeMetrics]
    objectives: tuple[str, ...]
    eps: tuple[float, ...]

    @property
    def unique_evaluations(self) -> int:
        """Distinct nodes evaluated (the paper's cost measure)."""
        return len(self.evaluated)


class _Evaluations:
    """Memoised node evaluations, with the arrays the local search bounds use.

    ``limit`` caps the number of distinct nodes evaluated (the budget).
    """

    def __init__(
        self, lattice: GeneralizationLattice, names: tuple[str, ...], limit: int
    ) -> None:
        self.lattice = lattice
        self.names = names
        self.limit = limit
        self.senses = np.array([OBJECTIVES[n] for n in names], dtype=float)
        self.memo: dict[tuple[int, ...], NodeMetrics] = {}
        size = min(limit, lattice.size)
        self.nodes = np.empty((size, len(lattice.heights)), dtype=np.int64)
        self.oriented = np.empty((size, len(names)))

    @property
    def spent(self) -> bool:
        return len(self.memo) >= self.limit

    def __contains__(self, node: tuple[int, ...]) -> bool:
        return node in self.memo

    def values(self, node: tuple[int, ...]) -> np.ndarray:
        """Raw index values of a node, evaluating it once (ignores the limit)."""
        if node not in self.memo:
            metrics = self.lattice.evaluate(node)
            row = len(self.memo)
            self.memo[node] = metrics
            if row < len(self.nodes):
                self.nodes[row] = node
                self.oriented[row] = self._raw(metrics) * self.senses
        return self._raw(self.memo[node])

    def _raw(self, metrics: NodeMetrics) -> np.ndarray:
        return np.array([metrics.value(n) for n in self.names])


def _dominance(values: np.ndarray) -> np.ndarray:
    """``d[i, j]``: row i dominates row j (values oriented, larger is better)."""
    ge = (values[:, None, :] >= values[None, :, :]).all(axis=2)
    gt = (values[:, None, :] > values[None, :, :]).any(axis=2)
    return ge & gt


def pbg_search(
    lattice: GeneralizationLattice,
    objectives: Sequence[str],
    rng: np.random.Generator,
    *,
    population: int = 25,
    generations: int | None = None,
    p_cross: float = 0.8,
    p_mut: float | None = None,
    eps: float | Sequence[float] = 1.0,
    selection: str = "union",
    refine: str = "none",
    budget: int | None = None,
) -> PbgResult:
    """Run PBG-EA (Algorithm 2 of Dewri et al.) on a lattice.

    Parameters
    ----------
    lattice : GeneralizationLattice
    objectives : sequence of str
        Keys of :data:`ppdm.generalization.lattice.OBJECTIVES`.
    rng : numpy.random.Generator
        Source of every random choice.
    population : int, default=25
    generations : int, optional
        Generations of the evolutionary phase; default
        ``DEFAULT_GENERATIONS[refine]`` (the paper's 100 without refinement).
    p_cross : float, default=0.8
        Probability that a selected pair is recombined by single-point crossover.
    p_mut : float, optional
        Per-attribute probability of a +-1 level step; default 1 / number of QIs.
    eps : float or sequence of float, default=1.0
        Discretisation vector of the box archive.
    selection : {"union", "archive"}, default="union"
        Tournament pool: population and archive (the paper), or the archive
        only (stronger archive pressure: every parent is a current minimal PBG).
    refine : {"none", "local"}, default="none"
        ``"none"``: the paper's algorithm. ``"local"``: after the generations,
        an archive-driven Pareto local search (see :func:`_local_search`)
        until the archive is stable or the budget is spent.
    budget : int, optional
        Most distinct nodes to evaluate. Offspring beyond it are not evaluated
        and the search stops; None (the paper) leaves the run unbounded.

    Returns
    -------
    PbgResult
    """
    if refine not in PBG_REFINEMENTS:
        raise InvalidParameterError(
            f"refine must be one of {PBG_REFINEMENTS}; got {refine!r}"
        )
    if generations is None:
        generations = DEFAULT_GENERATIONS[refine]
    names = tuple(objectives)
    senses = np.array([OBJECTIVES[n] for n in names], dtype=float)
    eps_vector = np.broadcast_to(np.asarray(eps, dtype=float), senses.shape).copy()
    heights = lattice.heights
    s = len(heights)
    mutation = 1.0 / s if p_mut is None else p_mut
    archive = BoxArchive(senses, eps_vector)
    store = _Evaluations(lattice, names, lattice.size if budget is None else budget)
    memo = store.memo
    evaluate = store.values

    def offer(nodes: np.ndarray) -> None:
        for row in nodes:
            node = tuple(int(v) for v in row)
            if budget is None or node in store or not store.spent:
                archive.update(node, evaluate(node))

    current = rng.integers(0, heights + 1, size=(population, s))
    current[0] = 0
    if population > 1:
        current[1] = heights
    offer(current)
    for generation in range(generations):
        if budget is not None and store.spent:
            break
        # Fitness over population + archive (SPEA2-like): the summed dominance
        # counts of the nodes that dominate a node; 0 = non-dominated.
        pool: dict[tuple[int, ...], None] = {}
        if selection == "union":
            for row in current:
                pool[tuple(int(v) for v in row)] = None
        for node in archive.nodes:
            pool[node] = None
        candidates = np.array(list(pool), dtype=np.int64)
        oriented = np.array([evaluate(tuple(n)) for n in pool]) * senses
        dominates = _dominance(oriented)
        fitness = dominates.astype(np.int64).T @ dominates.sum(axis=1)
        # Binary tournament selection.
        pairs = rng.integers(0, len(candidates), size=(population, 2))
        winner = np.where(
            fitness[pairs[:, 1]] < fitness[pairs[:, 0]], pairs[:, 1], pairs[:, 0]
        )
        selected = candidates[winner].copy()
        # Single-point crossover of consecutive pairs.
        n_pairs = population // 2
        cross = rng.random(n_pairs) < p_cross
        points = rng.integers(1, max(s, 2), size=n_pairs)
        tail = np.arange(s)[None, :] >= points[:, None]
        swap = tail & cross[:, None]
        first, second = selected[0 : 2 * n_pairs : 2], selected[1 : 2 * n_pairs : 2]
        selected[0 : 2 * n_pairs : 2] = np.where(swap, second, first)
        selected[1 : 2 * n_pairs : 2] = np.where(swap, first, second)
        # One-step mutation, clamped to the hierarchies.
        mutate = rng.random((population, s)) < mutation
        step = np.where(rng.random((population, s)) < 0.5, -1, 1)
        current = np.clip(selected + mutate * step, 0, heights)
        offer(current)
        progress.report(
            (generation + 1) / generations, f"generation {generation + 1}/{generations}"
        )
    if refine == "local":
        _local_search(archive, store)
    members = [memo[node] for node in archive.nodes]
    members.sort(
        key=lambda m: tuple(m.value(n) * -OBJECTIVES[n] for n in names) + m.levels
    )
    return PbgResult(members, memo, names, tuple(float(e) for e in eps_vector))


def _local_search(archive: BoxArchive, store: _Evaluations) -> None:
    """Archive-driven Pareto local search with dominance pruning.

    Members are expanded oldest first (the longest survivors are the likeliest
    true minimal PBGs): first their one-step neighbours (one attribute one
    level up or down); once every member has had those, their swap
    neighbours (one attribute up, another down: the same privacy for less
    loss is often two steps away, where one-step moves only raise or lower
    both); last their double steps (two levels up or down, on one attribute
    or two), which reach front nodes whose one-step neighbours are all
    dominated. A new member goes through the cheap neighbourhoods first. A
    member's expansion stops when a neighbour removes it from the archive.

    A neighbour is skipped unevaluated when an archive member is at
    least as good as its optimistic index vector: a privacy index is at most
    its smallest value over the evaluated generalizations of the node, a loss
    at least its largest value over the evaluated specializations, and GLM at
    least :meth:`GeneralizationLattice.loss_bound` (exact, no suppression).
    Such a node could not enter the archive. The bounds assume the indices in
    :data:`MONOTONE` never decrease along generalization; where they do (rare,
    see there) a front node can be missed, never a budget exceeded.

    References
    ----------
    .. [1] Paquete, L., Chiarandini, M., Stuetzle, T.: Pareto Local Optimum Sets
       in the Biobjective Traveling Salesman Problem: An Experimental Study. In:
       Gandibleux, X. et al. (eds.) Metaheuristics for Multiobjective
       Optimisation, LNEMS 535, Springer (2004) 177-199 (Pareto local search).
    """
    lattice, names = store.lattice, store.names
    heights = lattice.heights
    s = len(heights)
    eye = np.eye(s, dtype=np.int64)
    moves = {
        "step": np.vstack([eye, -eye]),
        "swap": np.array(
            [eye[i] - eye[j] for i in range(s) for j in range(s) if i != j]
        ),
        "double": np.array(
            [
                sign * (eye[i] + eye[j])
                for i in range(s)
                for j in range(i, s)
                for sign in (1, -1)
            ]
        ),
    }
    gain = store.senses > 0
    monotone = np.array([n in MONOTONE for n in names])
    from_above = monotone & gain  # privacy: bounded by generalizations
    from_below = monotone & ~gain  # loss: bounded by specializations
    glm = np.array([n == "glm" for n in names])
    # GLM without suppression is a sum over attributes of a per-level total,
    # so one call on the axis nodes gives every node's bound.
    axis_nodes = np.zeros((int(heights.sum()) + 1, s), dtype=np.int64)
    offsets = np.concatenate([[1], 1 + np.cumsum(heights)[:-1]])
    for a in range(s):
        axis_nodes[offsets[a] : offsets[a] + heights[a], a] = np.arange(
            1, heights[a] + 1
        )
    axis_bound = lattice.loss_bound(axis_nodes)
    bottom = axis_bound[0]
    level_bound = [
        np.concatenate(
            [[0.0], axis_bound[offsets[a] : offsets[a] + heights[a]] - bottom]
        )
        for a in range(s)
    ]

    def hopeless(candidate: np.ndarray) -> bool:
        n = len(store.memo)
        nodes, oriented = store.nodes[:n], store.oriented[:n]
        best = np.full(len(names), np.inf)
        above = (nodes >= candidate).all(axis=1)
        if above.any():
            best[from_above] = oriented[above][:, from_above].min(axis=0)
        below = (nodes <= candidate).all(axis=1)
        if below.any():
            best[from_below] = oriented[below][:, from_below].min(axis=0)
        loss = bottom + sum(level_bound[a][candidate[a]] for a in range(s))
        best[glm] = np.minimum(best[glm], -loss)
        return archive.covers(best)

    expanded: dict[str, set[tuple[int, ...]]] = {kind: set() for kind in moves}

    def next_member() -> tuple[str, tuple[int, ...]] | None:
        for kind, done in expanded.items():
            for member in archive.nodes:
                if member not in done:
                    return kind, member
        return None

    while not store.spent and (chosen := next_member()) is not None:
        kind, node = chosen
        expanded[kind].add(node)
        neighbours = np.asarray(node) + moves[kind]
        inside = ((neighbours >= 0) & (neighbours <= heights)).all(axis=1)
        for row in neighbours[inside]:
            candidate = tuple(int(v) for v in row)
            if candidate in store or hopeless(row):
                continue
            if store.spent:
                return
            archive.update(candidate, store.values(candidate))
            if node not in archive.nodes:
                break
    progress.report(1.0, f"local search: {len(store.memo)} nodes evaluated")


@dataclass(eq=False, repr=False, kw_only=True)
class PbgEa(FullDomainAnonymizer):
    """Property based generalization by an evolutionary search (PBG-EA).

    Parameters
    ----------
    objectives : str, default="k-glm"
        Quality indices joined by ``-``: privacy ``k``, ``l``, ``sk`` (S_k),
        ``sl`` (S_l), maximised; losses ``glm``, ``cm``, minimised.
    population : int, default=25
    generations : int or None, default=None
        None means 100 (the paper's) with ``refine="none"`` and 0 with
        ``refine="local"`` (the local search starts from the initial
        population; see ``DEFAULT_GENERATIONS``).
    p_cross : float, default=0.8
    p_mut : float or None, default=None
        None means 1 / number of quasi-identifiers (the paper's setting).
    eps : float or list of float, default=1.0
        Box size per objective (one number for all).
    policy : {"min-glm", "min-cm"}, default="min-glm"
        Which archive node to release: the least GLM (or CM) among the nodes
        that meet the requirement (``k`` and ``l`` at least its bounds and,
        for models not decided by those bounds, accepted by every model).
    selection : {"union", "archive"}, default="union"
        Tournament pool: population and archive (the paper), or the archive
        only (more archive pressure; see benchmarks/results/pbg_ea.md).
    refine : {"local", "none"}, default="local"
        ``"local"``: after the evolutionary phase, an archive-driven Pareto
        local search over lattice neighbours with dominance pruning (see
        :func:`pbg_search`); on Adult it finds the whole front (RR 1) with
        fewer evaluations than the paper's search. ``"none"`` with the other
        defaults is exactly the paper's algorithm (25 x 100, p_cross 0.8,
        p_mut 1 / number of quasi-identifiers).
    budget : int or None, default=None
        Most distinct lattice nodes to evaluate; None for no cap.

    Notes
    -----
    Hierarchies come from ``spec.hierarchies``; the suppression budget is
    ``floor(spec.suppression_limit * n_rows)`` rows. The node's indices follow
    the paper (maximal suppression within the budget); the released table
    suppresses only the classes some privacy model of ``spec.requirement``
    rejects. Suppressed rows have every quasi-identifier ``*`` and form one
    class when every model accepts it; otherwise they are dropped (and the
    rest is checked again, for t-closeness). The released table passes
    :func:`ppdm.verify.verify_tables`.

    The search depends on the frequency table of (quasi-identifiers,
    sensitive attributes, target) alone: :meth:`recode` evaluates the same
    nodes on it (:meth:`GeneralizationLattice.from_frequencies`), draws the
    same numbers from ``rng`` and chooses the same node, so
    ``recode(FrequencyTable.of(table, ...), spec, rng).apply(table)`` is
    ``anonymize(table, spec, rng).table``, with the same evidence.

    References
    ----------
    .. [1] Dewri, R., Ray, I., Ray, I., Whitley, D.: On the Identification of
       Property Based Generalizations in Microdata Anonymization. In: Data and
       Applications Security and Privacy XXIV (DBSec 2010), LNCS 6166,
       Springer (2010) 81-96.

    Examples
    --------
    >>> from ppdm.generalization.hierarchies import Hierarchy
    >>> table = pd.DataFrame({"sex": list("FFMMMF") * 3, "zip": list("abaabb") * 3})
    >>> hs = {c: Hierarchy.from_rows(c, [[v, "*"] for v in sorted(set(table[c]))],
    ...                               source=c) for c in table}
    >>> spec = AnonymizationSpec.of(("sex", "zip"), None, None, k=3, hierarchies=hs)
    >>> release = PbgEa(generations=5).anonymize(table, spec, np.random.default_rng(0))
    >>> release.evidence["chosen"]["levels"]
    {'sex': 0, 'zip': 0}
    """

    name: ClassVar[str] = "pbg-ea"

    objectives: str = "k-glm"
    population: int = 25
    generations: int | None = None
    p_cross: float = 0.8
    p_mut: float | None = None
    eps: float | list[float] = 1.0
    policy: str = "min-glm"
    selection: str = "union"
    refine: str = "local"
    budget: int | None = None

    def _search(
        self,
        build: LatticeBuilder,
        spec: AnonymizationSpec,
        rng: np.random.Generator,
    ) -> tuple[dict[str, Hierarchy], NodeMetrics, dict[str, Any]]:
        """The search and the chosen node; both paths draw the same numbers from ``rng``."""
        names = parse_objectives(self.objectives)
        eps = eps_vector(self.eps, len(names), self.name)
        hierarchies = require_hierarchies(self.name, spec)
        if ({"l", "sl"} & set(names)) and spec.sensitive_attribute is None:
            raise InvalidParameterError(
                f"{self.name}: objectives {self.objectives!r} need a "
                "sensitive_attribute"
            )
        if ("cm" in names or self.policy == "min-cm") and spec.target is None:
            raise InvalidParameterError(
                f"{self.name}: objectives {self.objectives!r} / policy "
                f"{self.policy!r} need a target"
            )
        lattice = build(hierarchies, spread_l="sl" in names)
        result = pbg_search(
            lattice,
            names,
            rng,
            population=self.population,
            generations=self.generations,
            p_cross=self.p_cross,
            p_mut=self.p_mut,
            eps=eps,
            selection=self.selection,
            refine=self.refine,
            budget=self.budget,
        )
        chosen = self._choose(result.archive, spec, lattice)
        attributes = lattice.attributes
        front = []
        for member in result.archive:
            record = member.as_dict(attributes)
            record["chosen"] = member.levels == chosen.levels
            front.append(record)
        evidence = {
            "objectives": list(names),
            "eps": eps,
            "policy": self.policy,
            "refine": self.refine,
            "pareto_front": front,
            "chosen": chosen.as_dict(attributes),
            "unique_evaluations": result.unique_evaluations,
            "lattice_size": lattice.size,
            "evaluated_fraction": result.unique_evaluations / lattice.size,
            "suppression_budget": lattice.eta,
        }
        return hierarchies, chosen, evidence

    def _choose(
        self,
        archive: list[NodeMetrics],
        spec: AnonymizationSpec,
        lattice: GeneralizationLattice,
    ) -> NodeMetrics:
        """The policy's best archive member that meets every privacy model."""
        needed_k, needed_l = lattice.requirement_bounds
        if lattice.sensitive_attribute is None:
            needed_l = 0
        qualified = [m for m in archive if m.k >= needed_k and m.l >= needed_l]
        if not qualified:
            best_k = max((m.k for m in archive), default=0)
            best_l = max((m.l for m in archive), default=0)
            raise InfeasibleConstraintError(
                f"{self.name}: no node of the archive ({len(archive)} nodes) reaches "
                f"k>={needed_k} and l>={needed_l} within the suppression limit "
                f"{spec.suppression_limit}; best achieved k={best_k}, l={best_l}"
            )
        loss = "glm" if self.policy == "min-glm" else "cm"
        qualified.sort(key=lambda m: (m.value(loss), sum(m.levels), m.levels))
        if lattice.decided_by_bounds:
            return qualified[0]
        for member in qualified:
            if lattice.decide(member.levels).feasible:
                return member
        raise InfeasibleConstraintError(
            f"{self.name}: {len(qualified)} node(s) of the archive reach the bounds "
            f"k>={needed_k} and l>={needed_l}, but none meets {spec.requirement} "
            f"within the suppression limit {spec.suppression_limit}"
        )
