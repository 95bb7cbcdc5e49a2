"""Greedy's invariants (checks 7, 8, 9 and 11 of the implementation notes)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from selection_tables import PROPERTY, binary_tables

from ppdm.exceptions import InvalidParameterError
from ppdm.selection import (
    achieved_containment,
    cm_errors,
    cm_greedy,
    distcnt,
    greedy,
    hamdist,
    hamdist_weights,
    kanonymity_greedy,
    nonprivate_greedy,
    projection_groups,
    sparse_binary_table,
)

OBJECTIVE = {"hamdist": hamdist, "distcnt": distcnt}


def sort_and_scan(x, y, k):
    """Filtered Greedy-HamDist by its modular shortcut (the test oracle)."""
    w = hamdist_weights(x, y)
    chosen: list[int] = []
    for u in sorted(range(x.shape[1]), key=lambda j: (-w[j], j)):
        if w[u] > 0 and achieved_containment(x[:, [*chosen, u]]) >= k:
            chosen.append(u)
    return chosen


@PROPERTY
@given(
    table=binary_tables(),
    k=st.integers(1, 5),
    objective=st.sampled_from(["hamdist", "distcnt"]),
)
def test_filtered_greedy_invariants(table, k, objective):
    x, y = table
    n, d = x.shape
    if k > n:
        return
    result = greedy(x, y, k, objective=objective)
    f = OBJECTIVE[objective]
    s = result.selected
    assert achieved_containment(x[:, s]) >= k
    assert all(g > 0 for g in result.gains)
    assert result.trace == [f(x, y, s[: i + 1]) for i in range(len(s))]
    assert all(a < b for a, b in zip(result.trace, result.trace[1:]))
    assert result.ac_trace == [
        achieved_containment(x[:, s[: i + 1]]) for i in range(len(s))
    ]
    # maximal: no unused feature has a positive gain and keeps AC >= k
    value = f(x, y, s)
    for u in set(range(d)) - set(s):
        if achieved_containment(x[:, [*s, u]]) >= k:
            assert f(x, y, [*s, u]) - value <= 0, u
    # a feature with 0 < supp < k is never selected
    support = x.sum(axis=0)
    assert not any(0 < support[u] < k for u in s)


@PROPERTY
@given(table=binary_tables(), k=st.integers(1, 5))
def test_filtered_hamdist_equals_sort_and_scan(table, k):
    x, y = table
    if k > len(x):
        return
    assert greedy(x, y, k, objective="hamdist").selected == sort_and_scan(x, y, k)


@PROPERTY
@given(table=binary_tables())
def test_k_one_keeps_every_separating_feature(table):
    x, y = table
    w = hamdist_weights(x, y)
    got = greedy(x, y, 1, objective="hamdist").selected
    assert sorted(got) == [u for u in range(x.shape[1]) if w[u] > 0]


@PROPERTY
@given(
    table=binary_tables(),
    k=st.integers(2, 5),
    objective=st.sampled_from(["hamdist", "distcnt"]),
)
def test_literal_stops_at_the_first_violation(table, k, objective):
    x, y = table
    if k > len(x):
        return
    result = greedy(x, y, k, objective=objective, stopping="literal")
    s = result.selected
    assert achieved_containment(x[:, s]) >= k
    if result.stopped == "constraint":
        assert achieved_containment(x[:, [*s, result.rejected]]) < k
        f = OBJECTIVE[objective]
        gain = f(x, y, [*s, result.rejected]) - f(x, y, s)
        assert gain > 0
    assert all(g > 0 for g in result.gains)


@PROPERTY
@given(table=binary_tables(), k=st.integers(1, 4), data=st.data())
def test_selection_ignores_row_order(table, k, data):
    x, y = table
    if k > len(x):
        return
    order = np.asarray(data.draw(st.permutations(range(len(x))), label="order"))
    for objective in ("hamdist", "distcnt"):
        first = greedy(x, y, k, objective=objective)
        again = greedy(x, y, k, objective=objective)
        shuffled = greedy(x[order], y[order], k, objective=objective)
        assert first == again
        assert first.selected == shuffled.selected and first.trace == shuffled.trace


@PROPERTY
@given(table=binary_tables(), k=st.integers(1, 4))
def test_baselines_keep_their_constraints(table, k):
    x, y = table
    if k > len(x):
        return
    plain = kanonymity_greedy(x, y, k)
    ids = projection_groups(x, plain.selected)
    assert np.bincount(ids).min() >= k
    for charged in (1, k):  # nothing suppressed (the default), or groups under k
        cm = greedy(x, y, k, objective="cm", cm_suppressed_below=charged)
        assert achieved_containment(x[:, cm.selected]) >= k
        assert cm.trace == [
            cm_errors(x, y, [], charged)
            - cm_errors(x, y, cm.selected[: i + 1], charged)
            for i in range(len(cm.selected))
        ]
    free = nonprivate_greedy(x, y, max_features=2)
    assert len(free.selected) <= 2


def test_containment_keeps_a_feature_that_k_anonymity_refuses():
    # rows: {a}, {a,b}, {a,b}, {}, {}; at k = 2 the {a} row hides among the
    # three rows having a, although its class under (a, b) has one row
    x = np.array([[1, 0], [1, 1], [1, 1], [0, 0], [0, 0]], dtype=bool)
    y = np.array([True, False, False, False, True])
    assert greedy(x, y, 2).selected == [1, 0]
    assert kanonymity_greedy(x, y, 2).selected == [1]
    assert distcnt(x, y, [1, 0]) > distcnt(x, y, [1])


def test_bad_options_are_refused():
    x, y = sparse_binary_table(20, 4, seed=0)
    for kwargs in ({"objective": "x"}, {"constraint": "x"}, {"stopping": "x"}):
        with pytest.raises(InvalidParameterError, match=next(iter(kwargs))):
            greedy(x, y, 2, **kwargs)
    with pytest.raises(InvalidParameterError, match="k"):
        greedy(x, y, 0)


def test_cm_greedy_known_answer():
    """A hand-checked table (k = 2) where charging small groups changes CM Greedy.

    Rows (a, b; label): (1,0;-) (1,1;+) (1,0;+) (1,1;-) (0,0;+) (1,1;-);
    3 errors with no feature. Feature a isolates the positive row (0,0): that
    row is no longer misclassified (old gain 1) but its group of 1 < k is
    suppressed (gain 0). Feature b splits 3/3 into groups of 3 with one
    minority row each: gain 1. So CM Greedy takes b; then a would leave
    (0,0) alone again and costs 1 more: it stops with [b]. Containment holds
    throughout (supp(a) = 5, supp(b) = 3).
    """
    x = np.array([[1, 0], [1, 1], [1, 0], [1, 1], [0, 0], [1, 1]], dtype=bool)
    y = np.array([False, True, True, False, True, False])
    assert cm_errors(x, y, [], 2) == 3
    assert cm_errors(x, y, [0], 1) == 2 and cm_errors(x, y, [0], 2) == 3
    assert cm_errors(x, y, [1], 2) == 2 and cm_errors(x, y, [1, 0], 2) == 3
    result = cm_greedy(x, y, 2, suppress_small_groups=True)
    assert result.selected == [1] and result.gains == [1]
    # the project's reading (nothing suppressed under containment): a and b
    # both gain 1, the lower index wins, and b then gains 0, so it stops
    default = cm_greedy(x, y, 2)
    assert default.selected == [0] and default.gains == [1]
    assert greedy(x, y, 1, objective="cm").selected == [0]
    # a table where every useful split leaves a row alone selects nothing
    x2 = np.array([[0, 0], [0, 1], [0, 1], [1, 1], [0, 1]], dtype=bool)
    y2 = np.array([False, True, True, True, True])
    assert cm_greedy(x2, y2, 2, suppress_small_groups=True).selected == []
    assert greedy(x2, y2, 1, objective="cm").selected == [1]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4))
def test_cm_without_suppression_never_grows_when_a_feature_is_added(seed, k):
    """The decision for CM Greedy: -CM never decreases, so every gain is >= 0."""
    rng = np.random.default_rng(seed)
    x = rng.random((30, 6)) < 0.4
    y = rng.random(30) < 0.5
    result = cm_greedy(x, y, k)
    assert all(g > 0 for g in result.gains)
    for d in range(x.shape[1]):
        for chosen in ([], result.selected):
            assert cm_errors(x, y, [*chosen, d]) <= cm_errors(x, y, chosen)
