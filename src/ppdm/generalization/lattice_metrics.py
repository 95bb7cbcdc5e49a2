"""The indices of lattice nodes, computed from their class tables.

:class:`NodeMetrics` (one node) and :class:`LatticeEvaluation` (every node)
hold the indices of :mod:`ppdm.generalization.lattice` (k, S_k, l, S_l, GLM,
CM, suppressed rows); :func:`batch_metrics` computes them for the classes of
many nodes at once by segment reductions, suppressing by bounds, by a given
set of kept classes, or by Dewri et al.'s threshold within the budget.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class NodeMetrics:
    """Quality indices of one lattice node (see the module table).

    ``feasible`` says whether the node meets the requirement it was evaluated
    with within the suppression budget; ``over_budget`` whether the rows of
    the classes the requirement rejects alone exceed that budget. For
    k-anonymity and distinct l-diversity the rejected rows can only grow
    towards the bottom of the lattice, so an ``over_budget`` node proves every
    node below it infeasible; for the other monotone models only when the
    budget is zero (see :func:`ppdm.algorithms.lattice_optimal.optimal_node`).
    A node can be infeasible without being over budget: when the suppressed
    rows must be dropped and the rest then fails t-closeness.

    ``infeasible_below`` says the node proves every node below it infeasible
    whatever the models: the rows of its classes that fail the requirement's
    bounds (fewer rows than any model accepts, or fewer distinct sensitive
    values) exceed the budget, and a subclass of such a class fails them too.
    """

    levels: tuple[int, ...]
    k: int
    sk: int
    l: int
    sl: int
    glm: float
    cm: float
    suppressed: int
    feasible: bool = True
    over_budget: bool = False
    infeasible_below: bool = False

    def value(self, name: str) -> float:
        """The index called ``name`` (a key of :data:`OBJECTIVES`)."""
        return float(getattr(self, name))

    def as_dict(self, attributes: Sequence[str]) -> dict[str, Any]:
        """JSON-ready record: levels by attribute and every index."""
        return {
            "levels": dict(zip(attributes, self.levels)),
            "k": self.k,
            "l": self.l,
            "S_k": self.sk,
            "S_l": self.sl,
            "GLM": self.glm,
            "CM": None if math.isnan(self.cm) else self.cm,
            "suppressed": self.suppressed,
        }


@dataclass(frozen=True)
class LatticeEvaluation:
    """Every node's indices, one array per index, rows in lattice-index order."""

    nodes: np.ndarray
    k: np.ndarray
    sk: np.ndarray
    l: np.ndarray
    sl: np.ndarray
    glm: np.ndarray
    cm: np.ndarray
    suppressed: np.ndarray

    def values(self, objectives: Sequence[str]) -> np.ndarray:
        """Index values, shape (n_nodes, len(objectives))."""
        return np.column_stack([getattr(self, name) for name in objectives]).astype(
            float
        )


@dataclass(frozen=True)
class _Batch:
    """Equivalence classes of one or more nodes, concatenated node by node.

    Node ``i`` owns the classes ``start[i]:start[i + 1]``. A class is stored by
    its fixed-radix key (the codes are decoded from it when an attribute is
    generalized, which is cheaper than carrying one column per attribute).
    """

    key: np.ndarray  # int64 combination of the label codes (see _multipliers)
    loss: np.ndarray  # per row of the class, integer GLM numerator (see _loss_scale)
    count: np.ndarray  # rows
    mask: np.ndarray | None  # bit set of the sensitive values present
    target: tuple[np.ndarray, ...] | None  # rows per class label
    start: np.ndarray  # (n_nodes + 1,) class offsets
    pair_group: np.ndarray | None = None  # (class, sensitive value) pairs, for S_l
    pair_value: np.ndarray | None = None
    pair_count: np.ndarray | None = None


def lattice_evaluation(
    nodes: np.ndarray, out: dict[str, np.ndarray]
) -> LatticeEvaluation:
    return LatticeEvaluation(
        nodes=nodes,
        k=out["k"].astype(np.int64),
        sk=out["sk"].astype(np.int64),
        l=out["l"].astype(np.int64),
        sl=out["sl"].astype(np.int64),
        glm=out["glm"],
        cm=out["cm"],
        suppressed=out["suppressed"].astype(np.int64),
    )


def batch_metrics(
    batch: _Batch,
    k: int | None,
    l: int | None,
    kept: np.ndarray | None = None,
    *,
    n_rows: int,
    n_attributes: int,
    scale: int,
    eta: int,
) -> dict[str, np.ndarray]:
    """Indices of every node of a batch, by segment reductions.

    The kept classes are ``kept`` when given, else those meeting the
    bounds ``k``/``l``, else those above Dewri et al.'s threshold.
    """
    count = batch.count
    starts = batch.start[:-1]
    n_nodes = len(starts)
    if len(count) == 0:  # an empty table: nothing to measure or suppress
        zeros = np.zeros(n_nodes, dtype=np.int64)
        nan = np.full(n_nodes, np.nan)
        return {
            "k": zeros,
            "sk": zeros,
            "l": zeros,
            "sl": zeros,
            "glm": zeros.astype(float),
            "cm": nan,
            "suppressed": zeros,
        }
    seg = np.repeat(np.arange(n_nodes), np.diff(batch.start))
    distinct = None
    if batch.mask is not None:
        distinct = np.bitwise_count(batch.mask).astype(np.int64)
    elif batch.pair_group is not None:
        distinct = np.bincount(batch.pair_group, minlength=len(count))
    if kept is not None:
        kept = np.asarray(kept, dtype=bool)
    elif k is None and l is None:
        kept = count > _thresholds(count, seg, starts, eta)[seg]
    else:
        kept = count >= (k or 1)
        if l is not None and l > 1 and distinct is not None:
            kept &= distinct >= l
    kept_count = np.where(kept, count, 0)
    kept_rows = np.add.reduceat(kept_count, starts)
    suppressed = n_rows - kept_rows
    big = np.iinfo(np.int64).max
    k_value = np.minimum.reduceat(np.where(kept, count, big), starts)
    k_value[k_value == big] = 0
    glm_numerator = np.add.reduceat(kept_count * batch.loss, starts)
    s = n_attributes
    glm = (glm_numerator + s * scale * suppressed) / scale
    cm = np.full(n_nodes, np.nan)
    if batch.target is not None and n_rows:
        majority = batch.target[0]
        for column in batch.target[1:]:
            majority = np.maximum(majority, column)
        minority = np.add.reduceat(np.where(kept, count - majority, 0), starts)
        cm = (minority + suppressed) / n_rows
    l_value = np.zeros(n_nodes, dtype=np.int64)
    if distinct is not None:
        l_value = np.minimum.reduceat(np.where(kept, distinct, big), starts)
        l_value[l_value == big] = 0
    sl = np.zeros(n_nodes, dtype=np.int64)
    if batch.pair_group is not None:
        weight = np.where(kept[batch.pair_group], batch.pair_count**2, 0)
        sl = np.bincount(seg[batch.pair_group], weights=weight, minlength=n_nodes)
    return {
        "k": k_value,
        "sk": np.add.reduceat(kept_count * kept_count, starts),
        "l": l_value,
        "sl": sl.astype(np.int64),
        "glm": glm,
        "cm": cm,
        "suppressed": suppressed,
    }


def _thresholds(
    count: np.ndarray, seg: np.ndarray, starts: np.ndarray, eta: int
) -> np.ndarray:
    """Per node, the largest class size j whose E_1..E_j fit the budget.

    Never every class: the node's largest classes are always kept.
    """
    n_nodes = len(starts)
    threshold = np.zeros(n_nodes, dtype=np.int64)
    if eta <= 0:
        return threshold
    small = count <= eta
    width = eta + 1
    if n_nodes * width <= 4 * len(count) + 1024:
        # Dense rows-by-size table per node: cheaper than sorting.
        rows = np.bincount(
            seg[small] * width + count[small],
            weights=count[small],
            minlength=n_nodes * width,
        ).reshape(n_nodes, width)
        threshold = (np.cumsum(rows, axis=1) <= eta).sum(axis=1) - 1
    else:
        ordered = np.sort(seg[small] * width + count[small])
        node, size = ordered // width, ordered % width
        cumulative = np.cumsum(size)
        first = np.r_[True, node[1:] != node[:-1]]
        offset = np.maximum.accumulate(np.where(first, cumulative - size, 0))
        within = cumulative - offset
        run_end = np.r_[(node[1:] != node[:-1]) | (size[1:] != size[:-1]), True]
        valid = run_end & (within <= eta)
        np.maximum.at(threshold, node[valid], size[valid])
    largest = np.maximum.reduceat(count, starts)
    return np.minimum(threshold, largest - 1)
