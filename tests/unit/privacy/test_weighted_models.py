"""Weighted privacy decisions: a frequency table with counts decides as its rows.

``Requirement.accepts_groups(..., weights=)`` on the distinct (group,
sensitive value) combinations, each weighted by its number of rows, must give
the decision of every group that the same call gives on the rows themselves,
for every class model of the registry; and the per-class measures must be
the same floats (the codes are numbered by value, so no sum depends on the
order of the rows).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.exceptions import InvalidParameterError
from ppdm.privacy import (
    CLASS_MODELS,
    PRIVACY_MODELS,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    PrivacyModel,
    RecursiveCLDiversity,
    Requirement,
    TCloseness,
)
from ppdm.privacy.measures import ClassPartition
from ppdm.scale.frequency import FrequencyTable

NOMINAL = ["flu", "cold", "hiv", "cancer", "asthma"]
ORDERED = [1, 2, 3, 5, 8, 13]


def _model(name: str, draw: st.DrawFn) -> PrivacyModel:
    if name == "k-anonymity":
        return KAnonymity(draw(st.integers(1, 6)))
    if name == "distinct-l-diversity":
        return DistinctLDiversity("s", draw(st.integers(1, 4)))
    if name == "entropy-l-diversity":
        l = draw(st.sampled_from([1.0, 1.5, 2.0, 2.5, 3.0]))  # noqa: E741
        return EntropyLDiversity("s", l)
    if name == "recursive-cl-diversity":
        c = draw(st.sampled_from([0.5, 1.0, 2.0, 3.0]))
        return RecursiveCLDiversity("s", c=c, l=draw(st.integers(1, 3)))
    if name == "t-closeness":
        t = draw(st.sampled_from([0.0, 0.1, 0.2, 0.35, 0.5, 1.0]))
        return TCloseness("s", t, draw(st.sampled_from([None, False])))
    raise AssertionError(f"no strategy for class model {name!r}")


@st.composite
def cases(draw: st.DrawFn, name: str | None = None) -> dict:
    n = draw(st.integers(1, 60))
    n_groups = draw(st.integers(1, 6))
    ordered = draw(st.booleans())
    pool = ORDERED if ordered else NOMINAL
    alphabet = pool[: draw(st.integers(1, len(pool)))]
    with_missing = draw(st.booleans()) and not ordered
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    # Skewed draws, so that repeated (group, value) combinations are common.
    groups = rng.integers(0, n_groups, n) * (rng.random(n) < 0.8)
    picks = np.minimum(rng.geometric(0.45, n) - 1, len(alphabet) - 1)
    values = [alphabet[i] for i in picks]
    if with_missing:
        values = [None if rng.random() < 0.15 else v for v in values]
    column = (
        pd.array(values, dtype="Int64") if ordered else pd.array(values, dtype="string")
    )
    table = pd.DataFrame({"g": groups.astype(np.int64), "s": column})
    names = [name] if name else draw(
        st.lists(st.sampled_from(sorted(CLASS_MODELS)), min_size=1, max_size=3,
                 unique=True)
    )  # fmt: skip
    models = tuple(_model(m, draw) for m in names)
    subset = draw(st.lists(st.integers(0, n_groups - 1), max_size=n_groups))
    return {"table": table, "models": models, "n_groups": n_groups,
            "subset": sorted(set(subset))}  # fmt: skip


def rows_decision(requirement: Requirement, table: pd.DataFrame, n_groups: int,
                  subset: list[int] | None = None) -> np.ndarray:  # fmt: skip
    encoded = requirement.encode(table)
    ids = table["g"].to_numpy()
    if subset is None:
        return requirement.accepts_groups(ids, n_groups, encoded)
    rows = np.flatnonzero(np.isin(ids, subset))
    return requirement.accepts_groups(ids[rows], n_groups, encoded, rows=rows)


def frequency_decision(requirement: Requirement, frequencies: pd.DataFrame,
                       counts: np.ndarray, n_groups: int,
                       subset: list[int] | None = None) -> np.ndarray:  # fmt: skip
    encoded = requirement.encode(frequencies, weights=counts)
    ids = frequencies["g"].to_numpy()
    if subset is None:
        return requirement.accepts_groups(ids, n_groups, encoded, weights=counts)
    rows = np.flatnonzero(np.isin(ids, subset))
    return requirement.accepts_groups(
        ids[rows], n_groups, encoded, rows=rows, weights=counts[rows]
    )


def per_class(model: PrivacyModel, requirement: Requirement, table: pd.DataFrame,
              n_groups: int, weights: np.ndarray | None) -> np.ndarray:  # fmt: skip
    encoded = requirement.encode(table, weights=weights)
    ids = table["g"].to_numpy()
    sizes = np.bincount(ids, weights=weights, minlength=n_groups).astype(np.int64)
    counts = [encoded[a].counts(ids, sizes, None, weights) for a in encoded]
    partition = ClassPartition.from_groups(ids, n_groups, counts, weights)
    return model.per_class(partition)


def test_every_registered_model_is_covered() -> None:
    """A class model added to the registry needs a strategy here; the others
    judge whole releases and are never asked about groups."""
    for name, cls in PRIVACY_MODELS.items():
        if name in CLASS_MODELS:
            assert cls.kind == "class"
        else:
            assert cls.kind == "release", name
    requirement = Requirement(("g",), (KAnonymity(2),))
    assert requirement.class_models == (KAnonymity(2),)


@pytest.mark.parametrize("name", sorted(CLASS_MODELS))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_weighted_decisions_equal_the_rows_decisions(name: str, data) -> None:
    case = data.draw(cases(name))
    table, n_groups = case["table"], case["n_groups"]
    requirement = Requirement(("g",), case["models"])
    frequencies = FrequencyTable.of(table, ["g", "s"])
    keys, counts = frequencies.keys, frequencies.counts
    expected = rows_decision(requirement, table, n_groups)
    got = frequency_decision(requirement, keys, counts, n_groups)
    np.testing.assert_array_equal(got, expected)
    # The measures themselves are the same floats, not just the decisions.
    model = case["models"][0]
    np.testing.assert_array_equal(
        per_class(model, requirement, keys, n_groups, counts),
        per_class(model, requirement, table, n_groups, None),
    )
    # Candidate groups drawn from part of the table; the reference
    # distribution stays the whole table's.
    subset = case["subset"]
    np.testing.assert_array_equal(
        frequency_decision(requirement, keys, counts, n_groups, subset),
        rows_decision(requirement, table, n_groups, subset),
    )


@settings(max_examples=80, deadline=None)
@given(case=cases())
def test_combined_requirements_shuffled_rows_and_zero_weights(case: dict) -> None:
    table, n_groups = case["table"], case["n_groups"]
    requirement = Requirement(("g",), case["models"])
    expected = rows_decision(requirement, table, n_groups)
    shuffled = table.sample(frac=1.0, random_state=1).reset_index(drop=True)
    np.testing.assert_array_equal(rows_decision(requirement, shuffled, n_groups),
                                  expected)  # fmt: skip
    frequencies = FrequencyTable.of(shuffled, ["g", "s"])
    keys, counts = frequencies.keys, frequencies.counts
    np.testing.assert_array_equal(
        frequency_decision(requirement, keys, counts, n_groups), expected
    )
    # Rows of weight 0 describe no row: a value only they hold is no value of
    # the table (not a distinct value, not a point of t-closeness's scale).
    ghost_value = 4 if table["s"].dtype == "Int64" else "ghost"
    ghosts = pd.DataFrame({"g": np.arange(n_groups, dtype=np.int64),
                           "s": pd.array([ghost_value] * n_groups,
                                         dtype=table["s"].dtype)})  # fmt: skip
    padded = pd.concat([ghosts, keys], ignore_index=True)
    weights = np.r_[np.zeros(n_groups, dtype=np.int64), counts]
    np.testing.assert_array_equal(
        frequency_decision(requirement, padded, weights, n_groups), expected
    )
    for model in case["models"]:
        np.testing.assert_array_equal(
            per_class(model, requirement, padded, n_groups, weights),
            per_class(model, requirement, table, n_groups, None),
        )


def test_known_answer_weighted_k_l_entropy_and_closeness() -> None:
    # Group 0: 3 x flu + 1 x cold (4 rows); group 1: 2 x cold (2 rows).
    keys = pd.DataFrame({"g": [0, 0, 1], "s": ["flu", "cold", "cold"]})
    counts = np.array([3, 1, 2], dtype=np.int64)
    ids = keys["g"].to_numpy()

    def decide(*models: PrivacyModel) -> list[bool]:
        requirement = Requirement(("g",), models)
        encoded = requirement.encode(keys, weights=counts)
        return requirement.accepts_groups(ids, 2, encoded, weights=counts).tolist()

    assert decide(KAnonymity(3)) == [True, False]  # weighted sizes 4 and 2
    assert decide(KAnonymity(2)) == [True, True]
    assert decide(DistinctLDiversity("s", 2)) == [True, False]
    # exp(H(3/4, 1/4)) = 1.7548...
    assert decide(EntropyLDiversity("s", 1.75)) == [True, False]
    assert decide(EntropyLDiversity("s", 1.76)) == [False, False]
    # Recursive (c, 2): r1 = 3 < c * r2 = c * 1 only for c > 3.
    assert decide(RecursiveCLDiversity("s", c=3.0, l=2)) == [False, False]
    assert decide(RecursiveCLDiversity("s", c=3.5, l=2)) == [True, False]
    # Whole table (weighted): flu 3/6, cold 3/6. Group 0 is 3/4 flu: EMD 1/4;
    # group 1 is all cold: EMD 1/2. Unweighted the whole would be 1/3, 2/3.
    assert decide(TCloseness("s", 0.25)) == [True, False]
    assert decide(TCloseness("s", 0.5)) == [True, True]
    whole = Requirement(("g",), (TCloseness("s", 0.25),)).encode(keys, weights=counts)
    np.testing.assert_allclose(sorted(whole["s"].whole), [0.5, 0.5])


def test_weights_must_be_one_non_negative_integer_per_row() -> None:
    requirement = Requirement(("g",), (KAnonymity(2),))
    keys = pd.DataFrame({"g": [0, 1]})
    encoded = requirement.encode(keys)
    with pytest.raises(InvalidParameterError, match="one entry per row"):
        requirement.accepts_groups(np.array([0, 1]), 2, encoded, weights=np.ones(3))
    with pytest.raises(InvalidParameterError, match="integers >= 0"):
        requirement.accepts_groups(
            np.array([0, 1]), 2, encoded, weights=np.array([1, -1])
        )
    with pytest.raises(InvalidParameterError, match="integers >= 0"):
        requirement.accepts_groups(
            np.array([0, 1]), 2, encoded, weights=np.array([1.5, 2.0])
        )
