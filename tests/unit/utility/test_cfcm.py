"""CFCM and COUNT (check 3 of the approx-ac notes), against brute force."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdm.algorithms.approx_ac import ApproxAC, encode_quasi_identifiers
from ppdm.exceptions import InvalidParameterError
from ppdm.model import AnonymizationSpec
from ppdm.utility.cfcm import (
    cfcm,
    cfcm_report,
    count_suppressed,
    frequency_pairs,
    partition_count,
)

FAST = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)


@st.composite
def tables(draw) -> tuple[pd.DataFrame, list[str]]:
    n = draw(st.integers(4, 40))
    q = draw(st.integers(1, 3))
    data = {}
    for j in range(q):
        card = draw(st.integers(1, 4))
        data[f"a{j}"] = draw(st.lists(st.integers(0, card - 1), min_size=n, max_size=n))
    data["c"] = draw(st.lists(st.sampled_from(["p", "n", "u"]), min_size=n, max_size=n))
    return pd.DataFrame(data), [f"a{j}" for j in range(q)]


def brute_pairs(table, qis, target, minsup):
    n = len(table)
    out = set()
    for q in qis:
        for v in table[q].unique():
            for c in table[target].unique():
                freq = sum(
                    1
                    for i in range(n)
                    if table[q].iloc[i] == v and table[target].iloc[i] == c
                )
                if freq / n >= minsup:
                    out.add((q, str(v), str(c), freq))
    return out


@FAST
@given(tables(), st.sampled_from([0.05, 0.1, 0.2, 0.3, 0.5]))
def test_frequency_pairs_equal_a_brute_force_count(case, minsup) -> None:
    table, qis = case
    found = {
        (p.attribute, p.value, p.target_class, p.frequency)
        for p in frequency_pairs(table, qis, "c", minsup=minsup)
    }
    assert found == brute_pairs(table, qis, "c", minsup)


@FAST
@given(tables(), st.integers(2, 4), st.sampled_from([0.1, 0.3]))
def test_cfcm_bounds_on_releases(case, k, minsup) -> None:
    table, qis = case
    k = min(k, len(table))
    spec = AnonymizationSpec.of(tuple(qis), None, "c", k=k)
    released = (
        ApproxAC().anonymize(table, spec, np.random.default_rng(0)).tables["release"]
    )
    result = cfcm_report(table, released, qis, "c", minsup=minsup)
    assert 0.0 <= result.total <= 1.0 and 0.0 <= result.mean <= 1.0
    assert result.raw <= result.count
    # Definition 9: suppressed cells lying on a tuple that supports a pair.
    pairs = {(p.attribute, p.value, p.target_class) for p in result.pairs}
    on_pairs = sum(
        1
        for q in qis
        for i in range(len(table))
        if released[q].iloc[i] == "*"
        and (q, str(table[q].iloc[i]), str(table["c"].iloc[i])) in pairs
    )
    assert result.raw == on_pairs
    assert result.count == count_suppressed(released, qis)
    # No suppression, no loss.
    assert cfcm(table, table, qis, "c", minsup=minsup) == 0.0


def test_known_answers_in_both_readings() -> None:
    d = pd.DataFrame(
        {"a": ["x", "x", "x", "y", "y", "y"], "c": ["p", "p", "n", "n", "n", "n"]}
    )
    r = d.assign(a=["*", "x", "x", "*", "*", "y"])
    # Pairs at minsup 1/3: (x, p): 2, (y, n): 3. Lost: 1 of (x, p), 2 of (y, n).
    result = cfcm_report(d, r, ["a"], "c", minsup=1 / 3)
    assert [(p.value, p.target_class, p.frequency) for p in result.pairs] == [
        ("x", "p", 2),
        ("y", "n", 3),
    ]
    assert result.raw == 3 and result.count == 3
    assert result.total == pytest.approx(3 / 5)
    assert result.mean == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert cfcm(d, r, ["a"], "c", minsup=1 / 3, reading="mean") == result.mean
    # A missing column counts as suppressed throughout.
    assert count_suppressed(d.drop(columns="a"), ["a"]) == 6
    # No frequency pair: CFCM is 0 by decision.
    assert cfcm(d, r, ["a"], "c", minsup=1.0) == 0.0


def test_partition_count_is_the_sum_of_size_times_varying_attributes() -> None:
    rng = np.random.default_rng(4)
    for _ in range(30):
        codes = rng.integers(0, 3, (20, 3))
        labels = rng.integers(0, 4, 20)
        expected = 0
        for g in np.unique(labels):
            rows = codes[labels == g]
            expected += len(rows) * int((rows.min(0) != rows.max(0)).sum())
        assert partition_count(codes, labels) == expected
    table = pd.DataFrame({"a": ["x", "y"], "b": [1, 1]})
    assert partition_count(encode_quasi_identifiers(table, ["a", "b"]), [0, 0]) == 2


def test_bad_arguments_name_the_parameter() -> None:
    d = pd.DataFrame({"a": ["x"], "c": ["p"]})
    with pytest.raises(InvalidParameterError, match="minsup"):
        frequency_pairs(d, ["a"], "c", minsup=0.0)
    with pytest.raises(InvalidParameterError, match="reading"):
        cfcm(d, d, ["a"], "c", reading="max")
