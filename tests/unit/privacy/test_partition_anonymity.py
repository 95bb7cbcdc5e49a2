"""Set and partition anonymity: the product formula against actual joins.

SAL is computed without materialising any join; here every pair of random
projections is joined by ``pandas.merge`` on the target and grouped over the
quasi-identifiers and the target, and the smallest class must be the same
number. PartAL must be the smaller of that and the per-table k.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.exceptions import InvalidParameterError
from ppdm.privacy import (
    PRIVACY_MODELS,
    KAnonymity,
    PartitionAnonymity,
    Requirement,
    SetAnonymity,
    model_from_description,
)
from ppdm.privacy._partition_anonymity import (
    class_minima,
    partial_anonymity_level,
    set_anonymity_level,
)
from ppdm.verify import verify_tables

SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=60)


@st.composite
def projections(draw) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """2-4 projections of one random table: disjoint columns plus the target."""
    n = draw(st.integers(2, 30))
    n_features = draw(st.integers(2, 6))
    columns = {}
    for i in range(n_features):
        card = draw(st.integers(1, 4))
        values = draw(st.lists(st.integers(0, card - 1), min_size=n, max_size=n))
        columns[f"f{i}"] = [f"v{v}" for v in values]
    columns["y"] = draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n))
    table = pd.DataFrame(columns)
    qis = [f for f in table.columns[:-1] if draw(st.booleans())]
    w = draw(st.integers(2, min(4, n_features)))
    labels = draw(
        st.lists(st.integers(0, w - 1), min_size=n_features, max_size=n_features)
    )
    tables = {}
    for g in range(w):
        features = [f"f{i}" for i in range(n_features) if labels[i] == g]
        order = np.random.default_rng(g).permutation(n)  # released rows shuffled
        tables[f"projection-{g + 1}"] = (
            table[[*features, "y"]].iloc[order].reset_index(drop=True)
        )
    return tables, qis


def joined_level(tables: dict[str, pd.DataFrame], qis: list[str]) -> int:
    """SAL by actual joins: every pair merged on y, grouped over QI and y."""
    levels = []
    for a, b in combinations(sorted(tables), 2):
        joined = tables[a].merge(tables[b], on="y")
        keys = [q for q in qis if q in joined.columns] + ["y"]
        levels.append(int(joined.groupby(keys).size().min()))
    return min(levels)


def table_level(tables: dict[str, pd.DataFrame], qis: list[str]) -> int:
    levels = []
    for table in tables.values():
        own = [q for q in qis if q in table.columns]
        levels.append(int(table.groupby(own).size().min()) if own else len(table))
    return min(levels)


@SETTINGS
@given(projections())
def test_sal_by_the_product_formula_equals_sal_by_actual_joins(case):
    tables, qis = case
    expected = joined_level(tables, qis)
    result = SetAnonymity(1).check_release(tables, qis)
    assert result.achieved == expected
    assert SetAnonymity(expected).check_release(tables, qis).passed
    failing = SetAnonymity(expected + 1).check_release(tables, qis)
    assert not failing.passed and failing.examples
    worst = failing.examples[0]
    assert worst["size"] == expected
    first, second = worst["tables"].split(" + ")
    assert {first, second} <= set(tables) and "y" in worst  # the pair and the class


@SETTINGS
@given(projections())
def test_partition_anonymity_is_the_smaller_of_table_k_and_join_k(case):
    tables, qis = case
    expected = min(table_level(tables, qis), joined_level(tables, qis))
    result = PartitionAnonymity(1).check_release(tables, qis)
    assert result.achieved == expected
    assert PartitionAnonymity(expected).check_release(tables, qis).passed
    assert not PartitionAnonymity(expected + 1).check_release(tables, qis).passed
    assert partial_anonymity_level(tables, qis) == table_level(tables, qis)


@SETTINGS
@given(projections())
def test_the_minima_formula_on_codes_equals_the_joins(case):
    """What DMPD's search computes on codes is what the verifier measures."""
    tables, qis = case
    minima = []
    for table in tables.values():
        own = [q for q in qis if q in table.columns]
        if own:
            groups = table.groupby(own, sort=False).ngroup().to_numpy()
        else:
            groups = np.zeros(len(table), dtype=np.int64)
        y = pd.Categorical(table["y"], categories=list("abc")).codes.astype(np.int64)
        minima.append(class_minima(groups, int(groups.max()) + 1, y, 3)[0])
    assert set_anonymity_level(minima) == joined_level(tables, qis)


def test_a_failing_join_is_named_in_the_certificate():
    p1 = pd.DataFrame({"age": ["20", "20", "30", "30"], "y": ["+", "-", "+", "-"]})
    p2 = pd.DataFrame({"zip": ["1", "1", "1", "2"], "y": ["+", "-", "-", "+"]})
    req = Requirement(("age", "zip"), (KAnonymity(1), SetAnonymity(2)))
    certificate = verify_tables({"projection-1": p1, "projection-2": p2}, req)
    assert not certificate.passed
    assert all(t.passed for t in certificate.tables)  # no single table shows it
    summary = certificate.summary()
    assert "projection-1 + projection-2" in summary and "SAL=1" in summary


def test_one_table_has_no_join():
    table = pd.DataFrame({"age": ["a", "a", "b"], "y": ["+", "-", "+"]})
    result = SetAnonymity(1).check_release({"release": table}, ["age"])
    assert result.passed and result.achieved == 1 and result.n_classes == 0


@pytest.mark.parametrize("cls", [SetAnonymity, PartitionAnonymity])
def test_models_are_registered_and_round_trip(cls):
    assert PRIVACY_MODELS[cls.name] is cls
    model = cls(7)
    assert model_from_description(model.describe()) == model
    assert model.kind == "release" and model.minimal_class_size == 7
    for bad in (0, 2.5, True, "3"):
        with pytest.raises(InvalidParameterError, match="k"):
            cls(bad)
