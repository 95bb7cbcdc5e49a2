"""Comparators of approx-ac: MCCRT, full-domain optimum, exhaustive references."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdm.algorithms.approx_ac import encode_quasi_identifiers
from ppdm.exceptions import InvalidParameterError
from ppdm.experiments.associative import (
    enumeration_cover,
    mccrt,
    optimal_full_domain,
    optimal_partition,
)
from ppdm.experiments.optimal_suppression import is_k_anonymous
from ppdm.utility.cba import CBAClassifier
from ppdm.utility.cfcm import cfcm, partition_count

FAST = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=40,
    suppress_health_check=[HealthCheck.too_slow],
)


@st.composite
def tables(draw) -> tuple[pd.DataFrame, list[str], int]:
    n = draw(st.integers(6, 40))
    q = draw(st.integers(1, 4))
    data = {}
    for j in range(q):
        card = draw(st.integers(1, 4))
        codes = draw(st.lists(st.integers(0, card - 1), min_size=n, max_size=n))
        data[f"a{j}"] = [f"v{c}" for c in codes]
    data["c"] = draw(st.lists(st.sampled_from(["p", "n"]), min_size=n, max_size=n))
    k = draw(st.integers(2, min(n, 6)))
    return pd.DataFrame(data), [f"a{j}" for j in range(q)], k


def _classes(released: pd.DataFrame, qis: list[str]) -> int:
    return int(released.groupby(qis, dropna=False).size().min())


@FAST
@given(tables())
def test_mccrt_is_k_anonymous_and_stars_in_ascending_ccr_order(case) -> None:
    table, qis, k = case
    result = mccrt(table, qis, "c", k, scope="column")
    assert _classes(result.released, qis) >= k
    # CCR recomputed: accuracy of CBA on the attribute alone.
    for q in qis:
        model = CBAClassifier().fit(table[[q]], table["c"].to_numpy())
        expected = float(np.mean(model.predict(table[[q]]) == table["c"].to_numpy()))
        assert result.ccr[q] == pytest.approx(expected)
    order = list(result.order)
    assert [result.ccr[q] for q in order] == sorted(result.ccr[q] for q in qis)
    # The starred attributes are a prefix of that order, and the table was not
    # k-anonymous before the last one was starred.
    assert list(result.suppressed) == order[: len(result.suppressed)]
    codes = encode_quasi_identifiers(table, qis)
    if result.suppressed:
        before = [j for j, q in enumerate(qis) if q not in result.suppressed[:-1]]
        assert not is_k_anonymous(codes[:, before], k)
    assert result.count == len(result.suppressed) * len(table)


@FAST
@given(tables(), st.sampled_from(["total", "mean"]))
def test_full_domain_optimum_is_the_least_cfcm_over_all_options(case, reading):
    table, qis, k = case
    best = optimal_full_domain(table, qis, "c", k, reading=reading)
    assert _classes(best.released, qis) >= k
    assert best.options_checked == 2 ** len(qis)
    values = []
    for size in range(len(qis) + 1):
        for starred in itertools.combinations(qis, size):
            released = table.copy()
            for q in starred:
                released[q] = "*"
            if _classes(released, qis) >= k:
                values.append(cfcm(table, released, qis, "c", reading=reading))
    assert best.cfcm == pytest.approx(min(values))
    assert best.cfcm == pytest.approx(
        cfcm(table, best.released, qis, "c", reading=reading)
    )


def _partitions(items: list[int]):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in _partitions(rest):
        yield [[first], *part]
        for i in range(len(part)):
            yield [*part[:i], [first, *part[i]], *part[i + 1 :]]


@settings(derandomize=True, database=None, deadline=None, max_examples=40)
@given(st.integers(0, 10_000))
def test_optimal_partition_equals_enumeration_of_all_set_partitions(seed) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8))
    codes = rng.integers(0, int(rng.integers(1, 4)), (n, int(rng.integers(1, 4))))
    k = int(rng.integers(1, n + 1))
    best = min(
        partition_count(
            codes,
            np.repeat(np.arange(len(p)), [len(g) for g in p])[
                np.argsort(np.concatenate(p))
            ],
        )
        for p in _partitions(list(range(n)))
        if min(len(g) for g in p) >= k
    )
    opt, groups = optimal_partition(codes, k)
    assert opt == best
    labels = np.empty(n, dtype=np.int64)
    for g, members in enumerate(groups):
        labels[members] = g
    assert partition_count(codes, labels) == opt
    assert all(len(g) >= k for g in groups)


def test_enumeration_cover_known_answer_and_limits() -> None:
    codes = np.array([[0], [0], [1], [1], [1]])
    # Ratio 0 first: the three 1s (more new tuples), then the two 0s.
    assert [c.tolist() for c in enumeration_cover(codes, 2)] == [[2, 3, 4], [0, 1]]
    with pytest.raises(InvalidParameterError, match="at most"):
        optimal_partition(np.zeros((20, 1), dtype=np.int64), 2)
