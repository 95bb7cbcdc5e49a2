"""SafePub: a differentially private, truthful full-domain generalization.

Bild, Kuhn and Prasser [1]_ release a table under (epsilon, delta)-differential
privacy without perturbing a single value:

1. every record is kept with probability ``beta`` (random sampling);
2. a full-domain generalization (a node of the hierarchies' lattice) is chosen
   on the sample by a search whose every choice is a draw of the exponential
   mechanism [3]_ over a score of the nodes (classification or loss);
3. the sample is generalized to that node, and every class with fewer than
   ``k`` records is suppressed.

Steps 1 and 3 form a "strongly-safe" k-anonymization preceded by sampling,
which Li, Qardaji and Su [2]_ prove (epsilon_anon, delta)-differentially
private when ``beta = 1 - exp(-epsilon_anon)`` and
``delta >= d(k, beta, epsilon_anon)``, where, with
``gamma = (exp(epsilon) - 1 + beta) / exp(epsilon)`` and
``n_m = ceil(k / gamma - 1)``,

    d(k, beta, epsilon) = max over n >= n_m of P[Binomial(n, beta) > gamma n].

SafePub takes the smallest ``k`` with ``d(k, beta, epsilon_anon) <= delta``
(:func:`derive_parameters`). The theorem needs the generalization to be chosen
independently of the data; the search reads the sample, so it spends a share
``epsilon_search = search_fraction * epsilon`` through the exponential
mechanism, and sequential composition gives (epsilon, delta) in all.

The search (:func:`safepub_search`) starts at the top of the lattice; at each
step it adds the direct specializations of the current pivot to a candidate
set, removes the pivot, and draws the next pivot from the candidates with the
exponential mechanism. The paper's implementation (ARX) then returns the pivot
of best score; that comparison reads the data outside any mechanism, so here
the output is one more exponential-mechanism draw among the pivots, and the
search budget is split evenly over ``steps + 1`` draws.

Classes are formed on every released column (the generalized
quasi-identifiers and every other column as it is): the theorem asks that a
record's whole released tuple be shared by ``k`` records, so a column left
out of the class key could single a record out. Suppressed records are
dropped, not released as a row of markers, since their number and their other
columns would be released outside the guarantee. Nothing the release does
not show is written to the evidence: no sample size, no score.

Score functions and their sensitivities (the largest change one record can
make, derived as in [1]_ for a sample where classes below ``k`` are
suppressed):

``classification``
    Records that carry the majority target value of their group of
    generalized quasi-identifiers, over the kept records. One record changes
    it by at most ``k`` (a class of ``k - 1`` records becoming kept).
``loss``
    Minus the general loss (Iyengar's per-cell loss of every kept cell, 1 per
    quasi-identifier of a suppressed record). At most ``d (k - 1)`` for
    ``k >= 2`` and ``d`` for ``k = 1``, ``d`` quasi-identifiers.

References
----------
.. [1] Bild, R., Kuhn, K.A., Prasser, F.: SafePub: A Truthful Data
   Anonymization Algorithm With Strong Privacy Guarantees. Proceedings on
   Privacy Enhancing Technologies 2018(1) (2018) 67-87.
.. [2] Li, N., Qardaji, W., Su, D.: On Sampling, Anonymization, and
   Differential Privacy, Or, k-Anonymization Meets Differential Privacy.
   In: ASIACCS 2012, 32-33 (extended version arXiv:1101.2604).
.. [3] McSherry, F., Talwar, K.: Mechanism Design via Differential Privacy.
   In: FOCS 2007, 94-103.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ppdm.algorithms.base import Anonymizer
from ppdm.exceptions import InfeasibleConstraintError, InvalidParameterError
from ppdm.generalization.hierarchies import Hierarchy
from ppdm.generalization.lattice import require_hierarchies
from ppdm.model import AnonymizationSpec, Release
from ppdm.privacy.differential import PrivacyCost

__all__ = [
    "SafePub",
    "SafePubParameters",
    "default_delta",
    "delta_for_k",
    "derive_parameters",
    "exponential_mechanism",
    "keyed_generator",
    "safepub_search",
]

_KEYED_LABEL = b"ppdm safepub keyed randomness v1\x00"


# ---------------------------------------------------------------- parameters
def _gamma(epsilon: float, beta: float) -> float:
    power = math.exp(epsilon)
    return (power - 1.0 + beta) / power


def delta_for_k(k: int, beta: float, epsilon: float) -> float:
    """Li, Qardaji and Su's ``d(k, beta, epsilon)`` (module docstring).

    The maximum over ``n >= n_m`` stops where the Chernoff bound
    ``exp(-n (gamma ln(gamma / beta) - (gamma - beta)))``, which bounds every
    later term and decreases in ``n``, falls below the maximum found.
    """
    from scipy.stats import binom

    if not 0 < beta < 1:
        raise InvalidParameterError(f"beta must be in (0, 1); got {beta}")
    gamma = _gamma(epsilon, beta)
    # Rounding towards more terms (n_m down, gamma n down) can only raise delta.
    n_m = max(math.ceil(k / gamma - 1.0 - 1e-12), 1)
    rate = gamma * math.log(gamma / beta) - (gamma - beta)
    best = 0.0
    start, width = n_m, 256
    while True:
        n = np.arange(start, start + width, dtype=np.int64)
        threshold = np.floor(gamma * n * (1 - 1e-12))
        a = binom.sf(threshold, n, beta)  # P[X > floor(gamma n)]
        best = max(best, float(a.max()))
        if math.exp(-(start + width - 1) * rate) < best or best >= 1.0:
            return best
        start, width = start + width, min(width * 2, 1 << 16)


def derive_parameters(epsilon: float, delta: float) -> tuple[float, int]:
    """``(beta, k)`` of an (epsilon, delta) sampling plus k-suppression.

    ``beta = 1 - exp(-epsilon)`` (the largest sampling probability the
    theorem allows for ``epsilon``) and the smallest ``k`` with
    ``d(k, beta, epsilon) <= delta``.

    >>> beta, k = derive_parameters(1.0, 1e-6)
    >>> round(beta, 4), k
    (0.6321, 74)
    """
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InvalidParameterError(f"epsilon must be > 0; got {epsilon}")
    if not 0 < delta < 1:
        raise InvalidParameterError(f"delta must be in (0, 1); got {delta}")
    beta = -math.expm1(-epsilon)
    # d(k) decreases in k: double, then bisect.
    high = 1
    while delta_for_k(high, beta, epsilon) > delta:
        high *= 2
        if high > 1 << 30:
            raise InvalidParameterError(
                f"no k reaches delta {delta} at epsilon {epsilon}"
            )
    low = high // 2  # d(low) > delta, or low = 0
    while high - low > 1:
        middle = (low + high) // 2
        if delta_for_k(middle, beta, epsilon) <= delta:
            high = middle
        else:
            low = middle
    return beta, high


def default_delta(n_rows: int) -> float:
    """``10 ** -(ceil(log10 n) + 1)``: a power of ten at most ``1 / (10 n)``.

    Below ``1 / n`` so that the chance of a complete disclosure stays below
    that of one record among ``n``; a power of ten so that the value recorded
    is legible (Adult's 30,162 rows give 1e-6).
    """
    n = max(int(n_rows), 1)
    return 10.0 ** -(math.ceil(math.log10(n)) + 1)


# -------------------------------------------------------------- randomness
def keyed_generator(rng: np.random.Generator, key: bytes) -> np.random.Generator:
    """A generator seeded by HMAC-SHA256, under ``key``, of bytes drawn from ``rng``.

    ``rng`` is made from the configured seed, which the manifest publishes;
    whoever holds the seed but not the key cannot compute the HMAC, hence
    cannot replay the sample or the search, while the owner, holding both,
    gets byte-identical re-runs.
    """
    material = rng.bytes(32)
    digest = hmac.new(key, _KEYED_LABEL + material, hashlib.sha256).digest()
    return np.random.default_rng(int.from_bytes(digest, "big"))


def exponential_mechanism(
    scores: Sequence[float] | np.ndarray,
    epsilon: float,
    sensitivity: float,
    rng: np.random.Generator,
) -> int:
    """Index drawn with probability proportional to ``exp(eps * s / (2 sens))``."""
    values = np.asarray(scores, dtype=float)
    exponent = epsilon * values / (2.0 * sensitivity)
    weights = np.exp(exponent - exponent.max())  # the shift cancels out
    cumulative = np.cumsum(weights)
    drawn = rng.random() * cumulative[-1]
    return int(min(np.searchsorted(cumulative, drawn, side="right"), len(values) - 1))


# ------------------------------------------------------------------ scoring
def _combine(columns: Sequence[np.ndarray], n: int) -> np.ndarray:
    """Dense ids ``0..`` of the distinct rows of integer ``columns`` (length ``n``).

    Hash-factorized one column at a time, so the combined key never
    overflows whatever the columns' ranges.
    """
    ids = np.zeros(n, dtype=np.int64)
    for column in columns:
        width = int(column.max()) + 1 if len(column) else 1
        ids = pd.factorize(ids * width + column)[0].astype(np.int64)
    return ids


class _SampleScorer:
    """Scores of lattice nodes on the sample, from its distinct tuples.

    The sample is grouped once to its distinct released tuples (leaf code of
    every quasi-identifier, code of every other column), each with its count;
    a node maps the leaf codes to its levels and counts classes over the whole
    tuple.
    """

    def __init__(
        self,
        sample: pd.DataFrame,
        quasi_identifiers: Sequence[str],
        hierarchies: Sequence[Hierarchy],
        target: str | None,
        k: int,
    ) -> None:
        self.hierarchies = tuple(hierarchies)
        self.k = k
        self.d = len(quasi_identifiers)
        others = [c for c in sample.columns if c not in set(quasi_identifiers)]
        columns = [h.encode(sample[q]) for q, h in zip(quasi_identifiers, hierarchies)]
        columns += [
            pd.factorize(sample[c], use_na_sentinel=False)[0].astype(np.int64)
            for c in others
        ]
        ids = _combine(columns, len(sample))
        n = int(ids.max()) + 1 if len(ids) else 0
        first = np.zeros(n, dtype=np.int64)
        first[ids[::-1]] = np.arange(len(ids))[::-1]
        self.count = np.bincount(ids, minlength=n)
        self.leaves = [c[first] for c in columns[: self.d]]
        rest = [c[first] for c in columns[self.d :]]
        self.rest = _combine(rest, n)
        self.n_rest = int(self.rest.max()) + 1 if n else 1
        self.label = rest[others.index(target)] if target is not None else None
        self._codes: dict[tuple[int, int], np.ndarray] = {}

    def codes(self, a: int, level: int) -> np.ndarray:
        """Label code at ``level`` of attribute ``a`` of every distinct tuple."""
        if (a, level) not in self._codes:
            mapping = self.hierarchies[a].level_codes(level)
            self._codes[(a, level)] = mapping[self.leaves[a]]
        return self._codes[(a, level)]

    def _keys(self, levels: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Class ids (whole tuple) and group ids (quasi-identifiers) at ``levels``."""
        groups = _combine(
            [self.codes(a, int(level)) for a, level in enumerate(levels)],
            len(self.count),
        )
        if self.n_rest > 1:
            classes = pd.factorize(groups * self.n_rest + self.rest)[0]
        else:
            classes = groups
        return classes, groups

    def kept(self, levels: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Per distinct tuple: whether its class has at least ``k`` records; groups."""
        classes, groups = self._keys(levels)
        sizes = np.bincount(classes, weights=self.count)
        return sizes[classes] >= self.k, groups

    def score(self, levels: Sequence[int], name: str) -> float:
        kept, groups = self.kept(levels)
        if name == "classification":
            assert self.label is not None
            if not kept.any():
                return 0.0
            n_labels = int(self.label.max()) + 1
            n_groups = int(groups.max()) + 1
            per_pair = np.bincount(
                (groups * n_labels + self.label)[kept],
                weights=self.count[kept],
                minlength=n_groups * n_labels,
            ).reshape(n_groups, n_labels)
            return float(per_pair.max(axis=1).sum())
        loss = np.zeros(len(self.count))
        for a, (h, level) in enumerate(zip(self.hierarchies, levels)):
            loss += h.label_loss(int(level))[self.codes(a, int(level))]
        loss = np.where(kept, loss, float(self.d))
        return -float(loss @ self.count)

    def sensitivity(self, name: str) -> float:
        if name == "classification":
            return float(self.k)
        return float(self.d * max(self.k - 1, 1))


@dataclass(frozen=True)
class SafePubSearch:
    """The chosen node and the pivots the search drew (all outputs of the mechanism)."""

    levels: tuple[int, ...]
    pivots: tuple[tuple[int, ...], ...]
    draws: int
    epsilon_per_draw: float


def safepub_search(
    heights: Sequence[int],
    score: Any,
    *,
    epsilon: float,
    sensitivity: float,
    steps: int,
    rng: np.random.Generator,
) -> SafePubSearch:
    """SafePub's search over the lattice ``0..heights`` (module docstring).

    ``score(levels) -> float`` is evaluated once per node. ``steps + 1``
    draws of the exponential mechanism at ``epsilon / (steps + 1)`` each: one
    per step, then one among the pivots for the output. Fewer draws happen
    when the candidates run out; the budget left is not spent.
    """
    per_draw = epsilon / (steps + 1)
    cache: dict[tuple[int, ...], float] = {}

    def value(node: tuple[int, ...]) -> float:
        if node not in cache:
            cache[node] = score(node)
        return cache[node]

    pivot = tuple(int(h) for h in heights)
    pivots = [pivot]
    been_pivot = {pivot}
    candidates: dict[tuple[int, ...], None] = {}  # insertion-ordered set
    draws = 0
    for _ in range(steps):
        for a in range(len(pivot)):
            if pivot[a] > 0:
                child = pivot[:a] + (pivot[a] - 1,) + pivot[a + 1 :]
                if child not in been_pivot:
                    candidates.setdefault(child)
        candidates.pop(pivot, None)
        if not candidates:
            break
        nodes = list(candidates)
        chosen = exponential_mechanism(
            [value(n) for n in nodes], per_draw, sensitivity, rng
        )
        draws += 1
        pivot = nodes[chosen]
        pivots.append(pivot)
        been_pivot.add(pivot)
    final = exponential_mechanism(
        [value(p) for p in pivots], per_draw, sensitivity, rng
    )
    draws += 1
    return SafePubSearch(pivots[final], tuple(pivots), draws, per_draw)


# ------------------------------------------------------------------ algorithm
@dataclass(frozen=True)
class SafePubParameters:
    """What (epsilon, delta, search_fraction) imply for a table of ``n_rows``."""

    epsilon: float
    delta: float
    delta_default: bool
    epsilon_search: float
    epsilon_anonymization: float
    beta: float
    k: int


def _refuse_unreachable_k(
    name: str, table: pd.DataFrame, qis: Sequence[str], k: int, beta: float
) -> None:
    """Refuse, before any draw, a table no generalization can release.

    A class is a whole released row, so the columns released as they are
    (sensitive attribute, target, insensitive columns) split the rows even when
    every quasi-identifier is generalized to the top of its hierarchy. When not
    one of their combinations holds k rows of an expected sample (beta of its
    rows), every draw would release nothing. The message goes to the data
    owner, who holds the table; nothing is published.
    """
    others = [c for c in table.columns if c not in set(qis)]
    if not others or len(table) == 0:
        largest = len(table)
    else:
        largest = int(
            table.groupby(others, dropna=False, sort=False, observed=True).size().max()
        )
    if largest * beta >= k:
        return
    if others:
        split = ", ".join(
            f"{c} ({table[c].nunique(dropna=False)} values)" for c in others
        )
        cause = (
            f"the columns released as they are, {split}, leave at most {largest} "
            f"of the {len(table)} rows in one class even with every quasi-identifier "
            f"generalized to its top, about {largest * beta:.0f} after sampling "
            f"(beta {beta:.3f})"
        )
        remedy = (
            "drop those columns or make them quasi-identifiers with a hierarchy, "
            "or raise epsilon"
        )
    else:
        cause = f"the {len(table)} rows give about {largest * beta:.0f} after sampling"
        remedy = "raise epsilon, or release a larger table"
    raise InfeasibleConstraintError(
        f"{name}: no release can reach the k = {k} that epsilon and delta imply: "
        f"{cause}; {remedy}"
    )


@dataclass(eq=False, repr=False, kw_only=True)
class SafePub(Anonymizer):
    """(epsilon, delta)-differentially private sampling, generalization, suppression.

    Parameters
    ----------
    epsilon : float, default=1.0
        The whole budget of one release.
    delta : float or None, default=None
        None: :func:`default_delta` of the input's rows (below ``1 / n``).
    search_fraction : float, default=0.1
        Share of ``epsilon`` the search spends (the paper's and ARX's 10 %);
        the rest sets the sampling probability and ``k``.
    steps : int, default=300
        Search steps (exponential-mechanism draws of the next pivot).
    score : {"classification", "loss"}, default="classification"
    randomness : {"os", "keyed"}, default="os"
        ``"os"``: fresh operating-system randomness on every run (nothing in
        the manifest replays it). ``"keyed"``: the generator the pipeline makes
        from the configured seed, keyed by HMAC-SHA256 under ``key``
        (:func:`keyed_generator`): byte-identical re-runs for whoever holds
        the key, and for no one else.
    key : str, default="env:PPDM_AUDIT_KEY"
        Where the key of ``randomness="keyed"`` is (the audit key by default).

    Notes
    -----
    The requirement's k-anonymity is met as well: classes below
    ``max(k derived, k required)`` are suppressed (a larger ``k`` only lowers
    delta). ``spec.suppression_limit`` does not apply: suppression is what
    the guarantee needs, and the release says how many records it holds.
    """

    name: ClassVar[str] = "safepub"

    epsilon: float = 1.0
    delta: float | None = None
    search_fraction: float = 0.1
    steps: int = 300
    score: str = "classification"
    randomness: str = "os"
    key: str = "env:PPDM_AUDIT_KEY"

    def parameters(self, n_rows: int) -> SafePubParameters:
        """The derived beta and k, and the budget split, for ``n_rows`` rows."""
        self.check_params()
        delta = default_delta(n_rows) if self.delta is None else float(self.delta)
        epsilon = float(self.epsilon)
        search = epsilon * float(self.search_fraction)
        beta, k = derive_parameters(epsilon - search, delta)
        return SafePubParameters(
            epsilon, delta, self.delta is None, search, epsilon - search, beta, k
        )

    def privacy_cost(self, n_rows: int) -> PrivacyCost:
        """``(epsilon, delta)`` of one release of ``n_rows`` rows."""
        p = self.parameters(n_rows)
        return PrivacyCost(p.epsilon, p.delta)

    def _generator(self, rng: np.random.Generator) -> tuple[np.random.Generator, str]:
        """The secret generator and a description of its source (never its state)."""
        if self.randomness == "os":
            return (
                np.random.default_rng(secrets.randbits(128)),
                "os: fresh operating-system randomness, not recorded",
            )
        from ppdm.release.keys import key_id, resolve_key

        key = resolve_key(self.key, purpose="the key of safepub's keyed randomness")
        return (
            keyed_generator(rng, key),
            f"keyed: the configured seed under HMAC-SHA256 with key {key_id(key)}",
        )

    def _search(
        self,
        scorer: _SampleScorer,
        heights: Sequence[int],
        p: SafePubParameters,
        rng: np.random.Generator,
    ) -> SafePubSearch:
        """The search with this release's budget and score."""
        return safepub_search(
            heights,
            lambda node: scorer.score(node, self.score),
            epsilon=p.epsilon_search,
            sensitivity=scorer.sensitivity(self.score),
            steps=int(self.steps),
            rng=rng,
        )

    def _anonymize(
        self, table: pd.DataFrame, spec: AnonymizationSpec, rng: np.random.Generator
    ) -> Release:
        hierarchies = require_hierarchies(self.name, spec)
        qis = list(spec.quasi_identifiers)
        chain = [hierarchies[q] for q in qis]
        for q, h in zip(qis, chain):
            h.encode(table[q])  # a value outside its hierarchy: a clear error first
        p = self.parameters(len(table))
        k = max(p.k, spec.requirement.minimal_class_size)
        _refuse_unreachable_k(self.name, table, qis, k, p.beta)
        secret, source = self._generator(rng)
        sample = table[secret.random(len(table)) < p.beta]
        scorer = _SampleScorer(sample, qis, chain, spec.target, k)
        result = self._search(scorer, [h.height for h in chain], p, secret)
        released = sample.copy()
        for q, h, level in zip(qis, chain, result.levels):
            released[q] = h.generalize(sample[q], level)
        sizes = released.groupby(
            list(released.columns), dropna=False, sort=False, observed=True
        )[released.columns[0]].transform("size")
        released = released[sizes.to_numpy() >= k].reset_index(drop=True)
        if released.empty:
            # Emptiness is a function of the private output: saying so spends nothing.
            raise InfeasibleConstraintError(
                f"{self.name}: no class of the sample reaches k = {k} at the "
                f"generalization {dict(zip(qis, result.levels))} drawn by the "
                "private search; raise epsilon or delta, use coarser hierarchies, "
                "or take fewer search steps (steps: 3 keeps the draw near the top "
                "of the lattice)"
            )
        evidence = {
            "guarantee": "(epsilon, delta)-differential privacy",
            "epsilon": p.epsilon,
            "delta": p.delta,
            "delta_default": p.delta_default,
            "epsilon_search": p.epsilon_search,
            "epsilon_anonymization": p.epsilon_anonymization,
            "beta": p.beta,
            "k_derived": p.k,
            "k": k,
            "score": self.score,
            "sensitivity": scorer.sensitivity(self.score),
            "steps": int(self.steps),
            "draws": result.draws,
            "epsilon_per_draw": result.epsilon_per_draw,
            "randomness": source,
            "chosen": {"levels": dict(zip(qis, result.levels))},
            "released_columns": list(released.columns),
        }
        return self._release(released, spec, table, evidence)
