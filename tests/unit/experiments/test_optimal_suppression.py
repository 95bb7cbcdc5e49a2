"""The exact suppression optimum against brute force, and approx-ac against it."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from ppdm.algorithms.approx_ac import (
    approx_ac_partition,
    approximation_bound,
    encode_quasi_identifiers,
)
from ppdm.exceptions import InfeasibleConstraintError, InvalidParameterError
from ppdm.experiments.associative import mccrt, optimal_partition
from ppdm.experiments.optimal_suppression import (
    is_k_anonymous_release,
    optimal_suppression,
)
from ppdm.utility.cfcm import cfcm_report, supporting_cells


def _brute_force(codes: np.ndarray, k: int, weights: np.ndarray) -> float:
    """Least cost over every star pattern of every tuple (no partition model)."""
    n, q = codes.shape
    patterns = [np.array(p, dtype=bool) for p in itertools.product([0, 1], repeat=q)]
    best = np.inf
    for choice in itertools.product(range(len(patterns)), repeat=n):
        stars = np.array([patterns[c] for c in choice]).reshape(n, q)
        cost = float((stars * weights).sum())
        if cost < best and is_k_anonymous_release(codes, stars, k):
            best = cost
    return best


def _random_table(rng: np.random.Generator, n_max: int, q_max: int):
    n = int(rng.integers(3, n_max + 1))
    q = int(rng.integers(1, q_max + 1))
    k = int(rng.integers(2, min(4, n) + 1))
    codes = rng.integers(0, int(rng.integers(2, 4)), (n, q))
    return codes, k


@pytest.mark.parametrize("seed", range(6))
def test_milp_equals_brute_force_over_every_suppression(seed) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(5):
        codes, k = _random_table(rng, 6, 2)
        for weights in (
            np.ones(codes.shape),
            rng.integers(0, 3, codes.shape).astype(float),
        ):
            best = _brute_force(codes, k, weights)
            # Per distinct row, per tuple, and without the free-cells
            # restricted solve: three models, one optimum.
            for chunk, free_first in ((None, True), (1, True), (None, False)):
                other = optimal_suppression(
                    codes, k, weights=weights, chunk=chunk, free_first=free_first
                )
                assert other.optimal and other.value == best
            res = optimal_suppression(codes, k, weights=weights)
            assert res.value == res.lower_bound == best
            assert is_k_anonymous_release(codes, res.stars, k)
            assert (res.stars * weights).sum() == res.value


@pytest.mark.parametrize("seed", range(4))
def test_milp_equals_the_partition_dynamic_programme(seed) -> None:
    rng = np.random.default_rng(100 + seed)
    for _ in range(10):
        codes, k = _random_table(rng, 10, 3)
        opt, _ = optimal_partition(codes, k)
        res = optimal_suppression(codes, k)
        assert res.optimal and res.value == opt


@pytest.mark.parametrize("mode", ["exact", "ball"])
def test_approx_ac_count_is_between_the_optimum_and_its_bound(mode) -> None:
    # Tables up to 40 rows: beyond the reach of the brute force, not the MILP.
    rng = np.random.default_rng(7)
    worst = 1.0
    for _ in range(12):
        codes, k = _random_table(rng, 40, 4)
        if mode == "exact" and len(np.unique(codes, axis=0)) > 12:
            codes = codes[:12]
            k = min(k, 12)
        res = optimal_suppression(codes, k)
        assert res.optimal
        count = approx_ac_partition(codes, k, mode=mode).count
        assert count >= res.value
        if res.value == 0:
            assert count == 0
        else:
            assert count <= approximation_bound(k, mode) * res.value
            worst = max(worst, count / res.value)
    # The bound is loose: the measured ratio is far below it.
    assert worst < 3.0


def test_time_limited_solve_brackets_the_optimum() -> None:
    # 150 x 6, 3 values, k = 3: HiGHS proves the optimum 244 in about 6 s
    # (too long for a unit test, so it is a known answer here); one second is
    # not enough, and what it returns must still bracket 244.
    codes = np.random.default_rng(3).integers(0, 3, (150, 6))
    short = optimal_suppression(codes, 3, time_limit=1)
    assert short.lower_bound <= 244
    assert short.lower_bound > 0  # the per-tuple bound alone is positive
    if short.value is not None:
        assert short.value >= 244
        assert is_k_anonymous_release(codes, short.stars, 3)
        assert short.stars.sum() == short.value
    assert short.optimal == (short.value == short.lower_bound == 244)


def test_known_answer_and_errors() -> None:
    codes = np.array([[0, 0], [0, 0], [0, 1], [1, 1], [1, 1], [1, 0]])
    res = optimal_suppression(codes, 3)
    assert (res.value, res.optimal) == (6, True)
    assert res.stars.sum(axis=0).tolist() == [0, 6]
    # Weighting the second column 10x moves the stars to the first: the
    # released rows become (*, 0) x 3 and (*, 1) x 3.
    heavy = np.array([[1.0, 10.0]] * 6)
    res = optimal_suppression(codes, 3, weights=heavy)
    assert res.value == 6 and res.stars.sum(axis=0).tolist() == [6, 0]
    with pytest.raises(InfeasibleConstraintError):
        optimal_suppression(codes, 7)
    with pytest.raises(InvalidParameterError):
        optimal_suppression(codes, 2, weights=-heavy)


def _frame(codes: np.ndarray, labels: np.ndarray) -> tuple[pd.DataFrame, list[str]]:
    qis = [f"a{j}" for j in range(codes.shape[1])]
    table = pd.DataFrame({q: [f"v{c}" for c in codes[:, j]] for j, q in enumerate(qis)})
    table["c"] = np.where(labels, "p", "n")
    return table, qis


@pytest.mark.parametrize("seed", range(5))
def test_mccrt_on_tuples_is_k_anonymous_and_never_below_the_optimum(seed) -> None:
    rng = np.random.default_rng(200 + seed)
    codes, k = _random_table(rng, 30, 3)
    table, qis = _frame(codes, rng.random(len(codes)) < 0.5)
    result = mccrt(table, qis, "c", k, scope="tuples")
    released = result.released[qis].astype(str).agg("|".join, axis=1)
    assert released.value_counts().min() >= k
    assert list(result.suppressed) == list(result.order[: len(result.suppressed)])
    stars = (result.released[qis] == "*").to_numpy(dtype=bool)
    assert stars.sum() == result.count
    # Cells are only starred, never changed.
    kept = result.released[qis].to_numpy()[~stars]
    assert (kept == table[qis].to_numpy()[~stars]).all()
    assert result.count >= optimal_suppression(codes, k).value


def test_mccrt_on_tuples_stars_only_the_short_tuples() -> None:
    # Only the lone row ("z", "q") is short of k = 2; it differs from every
    # other row on both attributes, so it ends all-star and takes the one
    # tuple the class of three can spare: 4 stars, the optimum. Whole columns
    # need both columns starred: 12.
    table = pd.DataFrame(
        {
            "a0": ["x", "y", "x", "y", "y", "z"],
            "a1": ["p", "p", "p", "p", "p", "q"],
            "c": ["n", "n", "p", "p", "n", "p"],
        }
    )
    codes = encode_quasi_identifiers(table, ["a0", "a1"])
    result = mccrt(table, ["a0", "a1"], "c", 2, scope="tuples")
    whole = mccrt(table, ["a0", "a1"], "c", 2)
    assert result.count == 4 and whole.count == 12
    assert optimal_suppression(codes, 2).value == 4
    rep = cfcm_report(table, result.released, ["a0", "a1"], "c", minsup=0.3)
    assert rep.count == 4


@pytest.mark.parametrize("seed", range(3))
def test_cfcm_optimum_is_the_weighted_optimum_on_supporting_cells(seed) -> None:
    rng = np.random.default_rng(300 + seed)
    codes, k = _random_table(rng, 25, 3)
    table, qis = _frame(codes, rng.random(len(codes)) < 0.7)
    cells = supporting_cells(table, qis, "c", minsup=0.2)
    res = optimal_suppression(codes, k, weights=cells.astype(float))
    assert res.optimal
    # The weighted optimum's release has exactly that raw CFCM ...
    released = table.copy()
    for j, q in enumerate(qis):
        released[q] = np.where(res.stars[:, j], "*", table[q].to_numpy())
    rep = cfcm_report(table, released, qis, "c", minsup=0.2)
    assert rep.raw == res.value
    assert cells.sum() == sum(p.frequency for p in rep.pairs)
    # ... and no other k-anonymous release does better: approx-ac's and
    # MCCRT's are at least as costly (Lemma 1's direction: raw CFCM <= COUNT).
    for other in (
        mccrt(table, qis, "c", k, minsup=0.2, scope="tuples").released,
        mccrt(table, qis, "c", k, minsup=0.2).released,
    ):
        assert cfcm_report(table, other, qis, "c", minsup=0.2).raw >= res.value
    assert res.value <= optimal_suppression(codes, k).value


def test_mccrt_refuses_an_unknown_scope() -> None:
    table = pd.DataFrame({"a": ["x", "x"], "c": ["p", "n"]})
    with pytest.raises(InvalidParameterError, match="scope"):
        mccrt(table, ["a"], "c", 2, scope="rows")
