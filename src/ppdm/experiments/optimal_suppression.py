"""Exact least-cost k-anonymous cell suppression, as an integer program.

The reference optimum of approx-ac (:mod:`ppdm.algorithms.approx_ac`): the
least number of suppressed quasi-identifier cells (``OPT_COUNT``), or the least
weighted number (with a weight of 1 on the cells that support a frequency pair
and 0 elsewhere this is the raw CFCM, :mod:`ppdm.utility.cfcm`), over **every**
cell suppression of the table that is k-anonymous -- not only the whole-column
ones. Any k-anonymous suppression splits the tuples into classes of identical
released rows, each of at least ``k`` tuples, and starring exactly the
non-constant attributes of each class costs no more; so this is also the
least ``COUNT`` over partitions into groups of at least ``k`` tuples, the
``OPT_COUNT`` of the paper's bound.

Formulation (solved by HiGHS through :func:`scipy.optimize.milp`). Tuples are
compressed to distinct rows ``i`` (codes and weights) with multiplicities
``w_i``. A *class* is a released row: a kept-attribute set ``S`` and the
values ``v`` on ``S``; only classes whose compatible tuples number at least
``k`` can be used. Variables: ``x[i, c] >= 0`` integer, the copies of row
``i`` released as class ``c`` (cost per copy: the weights of ``i`` on the
attributes outside ``S``), and ``y[c]`` binary, class ``c`` used.

- ``sum over c of x[i, c] = w_i`` (every tuple is released once);
- ``sum over i of x[i, c] >= k * y[c]`` (a used class has ``k`` tuples);
- ``x[i, c] <= w_i * y[c]`` (only used classes take tuples; this per-row
  link, rather than one big-M row per class, is what makes the linear
  relaxation bite).

The model has ``m * 2^q`` candidate pairs at most (fewer after dropping the
classes with fewer than ``k`` compatible tuples), so it is for a handful of
quasi-identifiers. When the time limit stops HiGHS before optimality, the
result holds its best release (an upper bound) and its dual bound (a valid
lower bound); the per-tuple bound -- each tuple's cheapest class with ``k``
compatible tuples -- is a lower bound that needs no solve and is kept when
it is higher.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from ppdm.exceptions import InfeasibleConstraintError, InvalidParameterError

__all__ = [
    "SuppressionOptimum",
    "is_k_anonymous",
    "is_k_anonymous_release",
    "optimal_suppression",
    "require_k_within_rows",
]

#: Largest quasi-identifier count the model is built for (2^q kept sets).
MAX_QUASI_IDENTIFIERS = 12


@dataclass(frozen=True)
class SuppressionOptimum:
    """What the solver proved.

    Attributes
    ----------
    value : int or None
        Cost of the best release found (an upper bound on the optimum);
        ``None`` when none was found in time.
    lower_bound : int
        A proven lower bound on the optimum (equals ``value`` when optimal).
    optimal : bool
    stars : numpy.ndarray of bool, shape (n, q), or None
        The best release: which cells of each tuple are suppressed.
    pairs, classes : int
        Size of the model: (row, class) variables and class variables.
    seconds : float
    status : str
        HiGHS's message.
    """

    value: int | None
    lower_bound: int
    optimal: bool
    stars: np.ndarray | None
    pairs: int
    classes: int
    seconds: float
    status: str

    @property
    def gap(self) -> float:
        """``(value - lower_bound) / value`` (0 when optimal or both are 0)."""
        if self.value is None:
            return float("inf")
        return (self.value - self.lower_bound) / self.value if self.value else 0.0


def require_k_within_rows(k: int, n_rows: int) -> None:
    """Refuse a ``k`` no class of an ``n_rows``-row table can reach (or below 1).

    Raises
    ------
    InfeasibleConstraintError
    """
    if not 1 <= k <= n_rows:
        raise InfeasibleConstraintError(f"k must be in [1, n_rows={n_rows}]; got {k}")


def is_k_anonymous(codes: np.ndarray, k: int) -> bool:
    """True when every combination of code rows occurs at least ``k`` times."""
    codes = np.asarray(codes)
    if len(codes) == 0:
        return True
    if codes.shape[1] == 0:
        return len(codes) >= k
    _, counts = np.unique(codes, axis=0, return_counts=True)
    return bool(counts.min() >= k)


def is_k_anonymous_release(codes: np.ndarray, stars: np.ndarray, k: int) -> bool:
    """True when every released row (codes with stars) occurs ``>= k`` times."""
    return is_k_anonymous(np.where(stars, -2, np.asarray(codes, dtype=np.int64)), k)


def _classes(
    rows: np.ndarray, mult: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every usable (row, class): row index, class index, kept mask of the class."""
    m, q = rows.shape
    row_ids, class_ids, masks = [], [], []
    n_classes = 0
    for mask in range(1 << q):
        kept = [j for j in range(q) if mask >> j & 1]
        if kept:
            _, inv = np.unique(rows[:, kept], axis=0, return_inverse=True)
            inv = inv.reshape(-1)
        else:
            inv = np.zeros(m, dtype=np.int64)
        potential = np.bincount(inv, weights=mult)
        usable = potential[inv] >= k
        if not usable.any():
            continue
        local = np.unique(inv[usable])
        renumber = np.full(len(potential), -1, dtype=np.int64)
        renumber[local] = np.arange(len(local)) + n_classes
        idx = np.flatnonzero(usable)
        row_ids.append(idx)
        class_ids.append(renumber[inv[idx]])
        masks.append(np.full(len(local), mask, dtype=np.int64))
        n_classes += len(local)
    return (
        np.concatenate(row_ids),
        np.concatenate(class_ids),
        np.concatenate(masks),
    )


def optimal_suppression(
    codes: np.ndarray,
    k: int,
    *,
    weights: np.ndarray | None = None,
    time_limit: float = 60.0,
    free_first: bool = True,
    chunk: int | None = None,
) -> SuppressionOptimum:
    """Least (weighted) number of stars making ``codes`` k-anonymous.

    Parameters
    ----------
    codes : numpy.ndarray of int, shape (n, q)
        Quasi-identifier codes (equal codes = equal values).
    k : int
    weights : numpy.ndarray of float, shape (n, q), optional
        Cost of starring each cell (non-negative); all 1 (COUNT) by default.
        Integer weights give an integer optimum.
    time_limit : float, default=60
        Seconds HiGHS may spend; past it the result holds bounds.
    free_first : bool, default=True
        With some zero weights, first solve (a quarter of the time) the
        restricted problem where every zero-weight cell is starred: its model
        is far smaller (rows that differ only on free cells merge) and its
        optimum is a release of the full problem, often the best one found.
        The lower bound always comes from the full problem.
    chunk : int, optional
        Split the copies of each distinct row into variables of at most
        ``chunk`` copies (1: one per tuple). Same optimum, larger model, a
        tighter linear relaxation (a better lower bound under the time limit)
        when rows repeat many times.

    Returns
    -------
    SuppressionOptimum

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.array([[0, 0], [0, 0], [0, 1], [1, 1], [1, 1], [1, 0]])
    >>> res = optimal_suppression(codes, 3)
    >>> res.value, res.lower_bound, res.optimal
    (6, 6, True)
    """
    start = time.perf_counter()
    codes = np.asarray(codes, dtype=np.int64)
    free = None if weights is None else np.asarray(weights, dtype=float) == 0
    if not free_first or free is None or not free.any() or codes.ndim != 2:
        return _solve(codes, k, weights, time_limit, chunk)
    # A free cell becomes a value no real cell has (codes are >= -1), so the
    # restricted model sees exactly the rows the free stars leave.
    restricted = _solve(np.where(free, -2, codes), k, weights, time_limit / 4, chunk)
    full = _solve(codes, k, weights, time_limit - (time.perf_counter() - start), chunk)
    if restricted.stars is None or (
        full.value is not None and full.value <= restricted.value
    ):
        return full
    stars = restricted.stars | free
    value = restricted.value  # the free stars cost nothing
    return SuppressionOptimum(
        value=value,
        lower_bound=min(full.lower_bound, value),
        optimal=full.lower_bound >= value,
        stars=stars,
        pairs=full.pairs,
        classes=full.classes,
        seconds=time.perf_counter() - start,
        status=full.status,
    )


def _solve(
    codes: np.ndarray,
    k: int,
    weights: np.ndarray | None,
    time_limit: float,
    chunk: int | None = None,
) -> SuppressionOptimum:
    """One HiGHS solve of the model (the module docstring)."""
    start = time.perf_counter()
    codes = np.asarray(codes, dtype=np.int64)
    if codes.ndim != 2:
        raise InvalidParameterError(f"codes must be 2-D; got shape {codes.shape}")
    n, q = codes.shape
    if q > MAX_QUASI_IDENTIFIERS:
        raise InvalidParameterError(
            f"the exact model takes at most {MAX_QUASI_IDENTIFIERS} "
            f"quasi-identifiers; got {q}"
        )
    require_k_within_rows(k, n)
    w = np.ones((n, q)) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (n, q) or (w < 0).any():
        raise InvalidParameterError(
            f"weights must be non-negative with shape {(n, q)}; got {w.shape}"
        )
    # Distinct rows: tuples equal on codes and weights are interchangeable.
    keyed = np.column_stack([codes.astype(float), w])
    uniq, first, inverse = np.unique(
        keyed, axis=0, return_index=True, return_inverse=True
    )
    inverse = inverse.reshape(-1)
    counts = np.bincount(inverse, minlength=len(uniq))
    # Rows of many copies weaken the relaxation (a few copies can enter a
    # class opened to the fraction copies / w_i); splitting each row into
    # chunks of at most ``chunk`` copies tightens it at the price of size.
    piece = max(int(chunk), 1) if chunk else int(counts.max(initial=1))
    pieces = -(-counts // piece)
    origin = np.repeat(np.arange(len(uniq)), pieces)
    part = np.arange(len(origin)) - np.repeat(np.cumsum(pieces) - pieces, pieces)
    mult = np.minimum(counts[origin] - part * piece, piece).astype(float)
    rows = codes[first][origin]
    row_w = w[first][origin]
    m = len(rows)

    pair_row, pair_class, class_mask = _classes(rows, mult, k)
    n_pairs, n_cls = len(pair_row), len(class_mask)
    starred = ~((class_mask[pair_class, None] >> np.arange(q)) & 1).astype(bool)
    pair_cost = (row_w[pair_row] * starred).sum(axis=1)

    # Per-tuple bound: each row's cheapest usable class (no solve needed).
    cheapest = np.full(m, np.inf)
    np.minimum.at(cheapest, pair_row, pair_cost)
    trivial = float((mult * cheapest).sum())

    cost = np.r_[pair_cost, np.zeros(n_cls)]
    p = np.arange(n_pairs)
    assign = sp.csr_matrix(
        (np.ones(n_pairs), (pair_row, p)), shape=(m, n_pairs + n_cls)
    )
    size = sp.csr_matrix(
        (
            np.r_[np.ones(n_pairs), -float(k) * np.ones(n_cls)],
            (np.r_[pair_class, np.arange(n_cls)], np.r_[p, n_pairs + np.arange(n_cls)]),
        ),
        shape=(n_cls, n_pairs + n_cls),
    )
    link = sp.csr_matrix(
        (
            np.r_[np.ones(n_pairs), -mult[pair_row]],
            (np.r_[p, p], np.r_[p, n_pairs + pair_class]),
        ),
        shape=(n_pairs, n_pairs + n_cls),
    )
    constraints = [
        LinearConstraint(assign, mult, mult),
        LinearConstraint(size, 0.0, np.inf),
        LinearConstraint(link, -np.inf, 0.0),
    ]
    upper = np.r_[mult[pair_row], np.ones(n_cls)]
    remaining = max(time_limit - (time.perf_counter() - start), 1.0)
    res = milp(
        cost,
        integrality=np.ones(n_pairs + n_cls),
        bounds=Bounds(np.zeros(n_pairs + n_cls), upper),
        constraints=constraints,
        options={"time_limit": remaining, "mip_rel_gap": 0.0, "disp": False},
    )
    integral = bool(np.allclose(w, np.round(w)))

    def whole(x: float, up: bool) -> float:
        # Integer costs: round the bound the safe way (a dual bound of
        # 2.0000001 proves 3 only after the tolerance is taken off).
        if not integral:
            return x
        return float(np.ceil(x - 1e-6)) if up else float(np.round(x))

    stars = None
    value = None
    if res.x is not None:
        x = np.round(res.x[:n_pairs]).astype(np.int64)
        stars = np.zeros((n, q), dtype=bool)
        # Hand each distinct row's tuples (ascending ids) to its classes.
        members = [
            np.flatnonzero(inverse == origin[i])[int(part[i]) * piece :][: int(mult[i])]
            for i in range(m)
        ]
        used = np.zeros(m, dtype=np.int64)
        for j in np.flatnonzero(x):
            i = pair_row[j]
            ids = members[i][used[i] : used[i] + x[j]]
            stars[ids] = starred[j]
            used[i] += x[j]
        value = whole(float((stars * w).sum()), up=False)
    dual = getattr(res, "mip_dual_bound", None)
    bound = trivial
    if dual is not None and np.isfinite(dual):
        bound = max(bound, dual)
    if res.status == 0 and value is not None:
        bound = value
    bound = whole(bound, up=True)
    if value is not None:
        bound = min(bound, value)
    cast = int if integral else float
    return SuppressionOptimum(
        value=None if value is None else cast(value),
        lower_bound=cast(bound),
        optimal=value is not None and bound >= value,
        stars=stars,
        pairs=n_pairs,
        classes=n_cls,
        seconds=time.perf_counter() - start,
        status=str(res.message),
    )
