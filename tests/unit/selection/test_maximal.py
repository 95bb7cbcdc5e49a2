"""Maximal against brute force over every subset (checks 9 and 10)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from selection_tables import PROPERTY, binary_tables

from ppdm.selection import (
    SearchBudgetExceeded,
    achieved_containment,
    hamdist_weights,
    maximal,
    maximal_sets_exact,
    maximal_sets_frequent,
    sparse_binary_table,
)


def _smallest_class(x: np.ndarray) -> int:
    """Smallest class of identical rows, counted from the definition."""
    counts: dict[tuple[bool, ...], int] = {}
    for row in x:
        counts[tuple(row)] = counts.get(tuple(row), 0) + 1
    return min(counts.values())


def brute_force_maximal(
    x: np.ndarray, k: int, constraint: str = "containment"
) -> set[tuple[int, ...]]:
    d = x.shape[1]
    measure = achieved_containment if constraint == "containment" else _smallest_class
    feasible = {
        s
        for size in range(d + 1)
        for s in combinations(range(d), size)
        if measure(x[:, list(s)]) >= k
    }
    return {s for s in feasible if not any(set(s) < set(t) for t in feasible)}


@PROPERTY
@given(
    table=binary_tables(max_rows=16, max_features=6),
    k=st.integers(1, 4),
    r=st.integers(1, 4),
)
def test_exact_mode_equals_brute_force(table, k, r):
    x, y = table
    if k > len(x):
        return
    sets, _ = maximal_sets_exact(x, k)
    expected = brute_force_maximal(x, k)
    assert set(sets) == expected and len(sets) == len(expected)
    result = maximal(x, y, k, r=r)
    w = hamdist_weights(x, y)
    ranked = sorted(expected, key=lambda s: (-len(s), s))[:r]
    assert [tuple(t) for t in result.top] == ranked
    best = max(int(w[list(s)].sum()) for s in ranked)
    assert tuple(result.selected) in ranked
    assert int(w[result.selected].sum()) == best
    support = x.sum(axis=0)
    assert not any(0 < support[u] < k for u in result.selected)
    assert result.mode == "exact" and not result.fallback


@PROPERTY
@given(table=binary_tables(max_rows=16, max_features=6), k=st.integers(1, 4))
def test_frequent_mode_is_within_the_exact_sets(table, k):
    x, y = table
    if k > len(x):
        return
    exact = brute_force_maximal(x, k)
    for s in maximal_sets_frequent(x, k):
        assert any(set(s) <= set(t) for t in exact)


def test_budget_falls_back_to_frequent_mode():
    x, y = sparse_binary_table(300, 30, density=0.2, seed=2)
    result = maximal(x, y, 3, budget=5)
    assert result.fallback and result.mode == "frequent" and result.nodes == 5
    assert achieved_containment(x[:, result.selected]) >= 3
    again = maximal(x, y, 3, budget=5)
    assert again == result


@PROPERTY
@given(
    table=binary_tables(max_rows=16, max_features=6),
    k=st.integers(1, 4),
    r=st.integers(1, 4),
)
def test_exact_mode_under_k_anonymity_equals_brute_force(table, k, r):
    """Ordinary k-anonymity is downward closed too: the same search finds its sets."""
    x, y = table
    if k > len(x):
        return
    sets, _ = maximal_sets_exact(x, k, constraint="k-anonymity")
    expected = brute_force_maximal(x, k, "k-anonymity")
    assert set(sets) == expected and len(sets) == len(expected)
    result = maximal(x, y, k, r=r, constraint="k-anonymity")
    ranked = sorted(expected, key=lambda s: (-len(s), s))[:r]
    assert tuple(result.selected) in ranked
    assert _smallest_class(x[:, result.selected]) >= k


def test_budget_under_k_anonymity_keeps_the_maximal_sets_found():
    x, y = sparse_binary_table(300, 30, density=0.2, seed=2)
    with pytest.raises(SearchBudgetExceeded) as exceeded:
        maximal_sets_exact(x, 3, budget=40, constraint="k-anonymity")
    found = exceeded.value.found
    result = maximal(x, y, 3, budget=40, constraint="k-anonymity")
    assert result.fallback and result.mode == "partial" and result.nodes == 40
    assert found and tuple(result.selected) in found
    assert _smallest_class(x[:, result.selected]) >= 3
    # every kept set is maximal: no feature can join it and keep the classes >= 3
    for u in set(range(30)) - set(result.selected):
        assert _smallest_class(x[:, [*result.selected, u]]) < 3
    tiny = maximal(x, y, 3, budget=1, constraint="k-anonymity")
    assert tiny.mode == "partial" and _smallest_class(x[:, tiny.selected]) >= 3
    for u in set(range(30)) - set(tiny.selected):
        assert _smallest_class(x[:, [*tiny.selected, u]]) < 3
