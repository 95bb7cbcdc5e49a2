"""The measures against a brute-force count over plain Python rows."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.exceptions import InvalidParameterError
from ppdm.privacy.measures import (
    ClassPartition,
    class_sizes,
    distinct_l_diversity,
    entropy_l_diversity,
    equivalence_classes,
    k_anonymity,
    recursive_cl_diversity,
    sensitive_value_ranks,
    t_closeness,
)

QI_VALUES = ["a", "b", "c", "*", "", None]
NOMINAL_SA = ["flu", "cold", "hiv", "*", "", None]
NUMERIC_SA = ["1", "2", "3", "5", "8", "13"]


def brute_classes(rows, qis, sa):
    """Class key -> list of sensitive values, by plain iteration."""
    classes = defaultdict(list)
    for row in rows:
        classes[tuple(row[q] for q in qis)].append(row[sa])
    return classes


def brute_entropy_l(values):
    n = len(values)
    h = -sum(c / n * math.log(c / n) for c in Counter(values).values())
    return math.exp(h)


def brute_recursive_l(values, c):
    r = sorted(Counter(values).values(), reverse=True)
    best = 0
    for ell in range(1, len(r) + 1):
        if r[0] < c * sum(r[ell - 1 :]):
            best = ell
    return best


def brute_emd(class_values, all_values, ordered):
    domain = sorted(set(all_values), key=float) if ordered else list(set(all_values))
    p = [all_values.count(v) / len(all_values) for v in domain]
    q = [class_values.count(v) / len(class_values) for v in domain]
    if not ordered or len(domain) == 1:
        return 0.5 * sum(abs(a - b) for a, b in zip(q, p))
    total, running = 0.0, 0.0
    for a, b in zip(q[:-1], p[:-1]):
        running += a - b
        total += abs(running)
    return total / (len(domain) - 1)


@st.composite
def tables(draw, sa_values=NOMINAL_SA):
    n_qi = draw(st.integers(1, 3))
    n = draw(st.integers(1, 40))
    qis = [f"q{i}" for i in range(n_qi)]
    rows = [
        {
            **{q: draw(st.sampled_from(QI_VALUES)) for q in qis},
            "s": draw(st.sampled_from(sa_values)),
        }
        for _ in range(n)
    ]
    frame = pd.DataFrame(rows, columns=[*qis, "s"], dtype=object)
    return frame, rows, qis


@settings(max_examples=150, deadline=None)
@given(tables(), st.floats(0.5, 4.0))
def test_measures_equal_brute_force(data, c):
    frame, rows, qis = data
    classes = brute_classes(rows, qis, "s")
    assert k_anonymity(frame, qis) == min(len(v) for v in classes.values())
    assert distinct_l_diversity(frame, qis, "s") == min(
        len(set(v)) for v in classes.values()
    )
    assert entropy_l_diversity(frame, qis, "s") == pytest.approx(
        min(brute_entropy_l(v) for v in classes.values()), rel=1e-12
    )
    assert recursive_cl_diversity(frame, qis, "s", c) == min(
        brute_recursive_l(v, c) for v in classes.values()
    )
    all_values = [row["s"] for row in rows]
    assert t_closeness(frame, qis, "s") == pytest.approx(
        max(brute_emd(v, all_values, False) for v in classes.values()), abs=1e-12
    )
    assert sorted(class_sizes(frame, qis)) == sorted(len(v) for v in classes.values())


@settings(max_examples=100, deadline=None)
@given(tables(sa_values=NUMERIC_SA))
def test_ordered_t_closeness_equals_brute_force(data):
    frame, rows, qis = data
    classes = brute_classes(rows, qis, "s")
    all_values = [row["s"] for row in rows]
    expected = max(brute_emd(v, all_values, True) for v in classes.values())
    assert t_closeness(frame, qis, "s") == pytest.approx(expected, abs=1e-12)
    # the same numbers as a numeric column give the same answer
    numeric = frame.assign(s=frame["s"].astype(int))
    assert t_closeness(numeric, qis, "s") == pytest.approx(expected, abs=1e-12)
    nominal = max(brute_emd(v, all_values, False) for v in classes.values())
    assert t_closeness(frame, qis, "s", ordered=False) == pytest.approx(
        nominal, abs=1e-12
    )


def test_ordered_emd_block_boundaries(monkeypatch):
    """Chunked dense blocks give the same EMD as one block."""
    rng = np.random.default_rng(7)
    frame = pd.DataFrame(
        {"q": rng.integers(0, 50, 2000).astype(str), "s": rng.integers(0, 30, 2000)}
    )
    whole = t_closeness(frame, ["q"], "s")
    monkeypatch.setattr("ppdm.privacy.measures._EMD_BLOCK_CELLS", 7 * 30)
    assert t_closeness(frame, ["q"], "s") == pytest.approx(whole, abs=1e-12)


def test_li_li_venkatasubramanian_salary_example():
    """The salary example of Li, Li, Venkatasubramanian (ICDE 2007), sec. 4."""
    salaries = [3, 4, 5, 6, 7, 8, 9, 10, 11]
    groups = ["A", "A", "A", "B", "C", "B", "C", "C", "B"]
    frame = pd.DataFrame({"zip": groups, "salary": [f"{s}000" for s in salaries]})
    counts = ClassPartition.of(frame, ["zip"]).sensitive("salary")
    emd = counts.emd_per_class()
    first = dict(zip(pd.unique(frame["zip"]), emd))
    assert first["A"] == pytest.approx(0.375)
    assert first["B"] == pytest.approx(1 / 6)


def test_missing_and_suppressed_are_classes_of_their_own():
    frame = pd.DataFrame({"q": [None, "*", "*", "", "a", "a"], "s": list("xyzxyx")})
    assert sorted(class_sizes(frame, ["q"])) == [1, 1, 2, 2]
    assert k_anonymity(frame, ["q"]) == 1
    ids, n = equivalence_classes(frame, ["q"])
    assert n == 4 and len(ids) == 6


def test_empty_table():
    frame = pd.DataFrame({"q": pd.Series([], dtype=str), "s": pd.Series([], dtype=str)})
    assert k_anonymity(frame, ["q"]) == 0
    assert distinct_l_diversity(frame, ["q"], "s") == 0
    assert entropy_l_diversity(frame, ["q"], "s") == 0.0
    assert t_closeness(frame, ["q"], "s") == 0.0


def test_recursive_known_answer():
    # counts 5, 3, 1, 1: (2, l) holds for l <= 3 (5 < 2*(1+1)=4 is false at l=3)
    frame = pd.DataFrame({"q": ["a"] * 10, "s": list("xxxxxyyyzw")})
    assert recursive_cl_diversity(frame, ["q"], "s", c=2) == 2
    assert recursive_cl_diversity(frame, ["q"], "s", c=3) == 3
    assert recursive_cl_diversity(frame, ["q"], "s", c=0.5) == 0


def test_sensitive_value_ranks():
    assert list(sensitive_value_ranks(["10", "2", "[3, 5]"])) == [2, 0, 1]
    assert list(sensitive_value_ranks(["< 2", "[2, 4)"])) == [0, 1]
    assert sensitive_value_ranks(["2", "*"]) is None
    assert sensitive_value_ranks(["a", "b"]) is None
    ordinal = pd.CategoricalDtype(["low", "mid", "high"], ordered=True)
    assert list(sensitive_value_ranks(["high", "low"], ordinal)) == [1, 0]


def test_forcing_ordered_on_nominal_values_is_an_error():
    frame = pd.DataFrame({"q": ["a", "a"], "s": ["x", "y"]})
    with pytest.raises(InvalidParameterError, match="numeric order"):
        t_closeness(frame, ["q"], "s", ordered=True)


def test_unknown_columns_are_named():
    frame = pd.DataFrame({"q": ["a"], "s": ["x"]})
    with pytest.raises(InvalidParameterError, match="nope"):
        k_anonymity_partition = ClassPartition.of(frame, ["nope"])  # noqa: F841
    with pytest.raises(InvalidParameterError, match="missing_sa"):
        distinct_l_diversity(frame, ["q"], "missing_sa")
