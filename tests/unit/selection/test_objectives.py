"""HamDist and DistCnt against their pairwise definitions (checks 5 and 6)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from selection_tables import PROPERTY, binary_tables

from ppdm.selection import (
    cm_errors,
    distcnt,
    hamdist,
    hamdist_weights,
    projection_groups,
)
from ppdm.selection._objectives import cm_gains, distcnt_gains


def _subset(data, d: int, label: str) -> list[int]:
    return [j for j in range(d) if data.draw(st.booleans(), label=f"{label} {j}")]


def _pairs(x, y, features):
    p, q = x[y][:, features], x[~y][:, features]
    return p[:, None, :] != q[None, :, :]  # (|E+|, |E-|, |S|)


@PROPERTY
@given(table=binary_tables(), data=st.data())
def test_hamdist_is_the_pairwise_hamming_sum_and_modular(table, data):
    x, y = table
    s = _subset(data, x.shape[1], "S")
    assert hamdist(x, y, s) == int(_pairs(x, y, s).sum())
    singles = [hamdist(x, y, [u]) for u in s]
    assert hamdist(x, y, s) == sum(singles)
    np.testing.assert_array_equal(hamdist_weights(x, y)[s], singles)


@PROPERTY
@given(table=binary_tables(), data=st.data())
def test_distcnt_counts_separated_pairs_monotone_submodular(table, data):
    x, y = table
    d = x.shape[1]
    s = _subset(data, d, "S")
    t = sorted({*s, *_subset(data, d, "T extra")})
    assert distcnt(x, y, s) == int(_pairs(x, y, s).any(axis=2).sum())
    assert distcnt(x, y, s) <= distcnt(x, y, t)
    for u in set(range(d)) - set(t):
        gain_s = distcnt(x, y, [*s, u]) - distcnt(x, y, s)
        gain_t = distcnt(x, y, [*t, u]) - distcnt(x, y, t)
        assert gain_s >= gain_t >= 0


@PROPERTY
@given(table=binary_tables(), data=st.data())
def test_gain_formulas_equal_differences_of_evaluations(table, data):
    x, y = table
    n, d = x.shape
    s = _subset(data, d, "S")
    ids = projection_groups(x, s)
    g = int(ids.max()) + 1
    pos = np.bincount(ids[y], minlength=g)
    neg = np.bincount(ids[~y], minlength=g)
    onehot = np.zeros((g, n), dtype=np.int64)
    onehot[ids, np.arange(n)] = 1
    pos1 = onehot[:, y] @ x[y].astype(np.int64)
    neg1 = onehot[:, ~y] @ x[~y].astype(np.int64)
    got = distcnt_gains(pos, neg, pos1, neg1)
    expected = [distcnt(x, y, [*s, u]) - distcnt(x, y, s) for u in range(d)]
    np.testing.assert_array_equal(got, expected)
    for k in (1, 2, 3):  # k > 1: groups under k count as suppressed
        cm = cm_gains(pos, neg, pos1, neg1, k)
        np.testing.assert_array_equal(
            cm,
            [cm_errors(x, y, s, k) - cm_errors(x, y, [*s, u], k) for u in range(d)],
        )


def test_known_answer():
    x = np.array([[1, 0], [1, 1], [0, 1], [0, 0]], dtype=bool)
    y = np.array([True, True, False, False])
    # feature 0 separates all 4 pairs; feature 1 two of them
    np.testing.assert_array_equal(hamdist_weights(x, y), [4, 2])
    assert distcnt(x, y, [0]) == 4 and distcnt(x, y, [1]) == 2
    assert distcnt(x, y, [0, 1]) == 4 and hamdist(x, y, [0, 1]) == 6


def test_classification_metric_charges_suppressed_rows():
    """Iyengar's CM: a row of a group under k costs 1 whatever its label."""
    x = np.array([[0], [1], [1], [1], [1]], dtype=bool)
    y = np.array([False, True, True, True, True])
    assert cm_errors(x, y, []) == 1  # one group, the negative row is the minority
    assert cm_errors(x, y, [0], 1) == 0  # the negative row alone: its own majority
    assert cm_errors(x, y, [0], 2) == 1  # ... but a group of 1 < 2 is suppressed
    assert cm_errors(x, y, [0], 5) == 5  # every group under 5: all suppressed
