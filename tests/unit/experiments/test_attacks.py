"""Linkage and homogeneity attacks: hand-computed answers, a plain double loop, a
property of Mondrian releases, and releases made as the pipeline makes them."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.algorithms.mondrian import Mondrian
from ppdm.config import default_config
from ppdm.exceptions import InvalidParameterError
from ppdm.experiments import attacks
from ppdm.experiments.attacks import (
    ATTACK_COLUMNS,
    attack_release,
    coverage_matrix,
    linkage_attack,
    release_for_attack,
    run_attacks,
    shipped_params,
)
from ppdm.model import AnonymizationSpec

# -- a release computed by hand ---------------------------------------------------
# Two classes of four rows. Class A: age in [20, 35], zip 13053 or 13068;
# class B: age in [30, 39], any zip. B is homogeneous in the disease.
HAND_RELEASED = pd.DataFrame(
    {
        "age": ["[20, 35]"] * 4 + ["[30, 39]"] * 4,
        "zip": ["{13053|13068}"] * 4 + ["*"] * 4,
        "disease": ["flu", "flu", "flu", "cancer", "hiv", "hiv", "hiv", "hiv"],
    }
)
HAND_ORIGINAL = pd.DataFrame(
    {
        "age": [22, 25, 32, 35, 30, 33, 36, 39],
        "zip": ["13053", "13068", "13053", "13068", "14850", "13053", "14853", "13068"],
    }
)
# Candidates by hand: A covers ages 20-35 with zip 13053/13068, B ages 30-39.
# Row 0 (22, 13053): A only -> 4; row 2 (32, 13053): A and B -> 8; row 4
# (30, 14850): B only (zip) -> 4; row 5 (33, 13053): A and B -> 8; row 7
# (39, 13068): B only (39 > 35) -> 4.
HAND_CANDIDATES = [4, 4, 8, 8, 4, 8, 4, 4]


def _hand_attack():
    return linkage_attack(
        HAND_RELEASED,
        HAND_ORIGINAL,
        np.arange(8),
        ["age", "zip"],
        sensitive_attribute="disease",
    )


def test_hand_made_release_rates():
    attack = _hand_attack()
    assert attack.candidates.tolist() == HAND_CANDIDATES
    assert attack.true_covered.all()
    assert attack.success.tolist() == [1 / c for c in HAND_CANDIDATES]
    # (5 x 1/4 + 3 x 1/8) / 8
    assert attack.rate == pytest.approx(0.203125)
    assert attack.max_success == 0.25


def test_hand_made_release_homogeneity():
    attack = _hand_attack()
    # Only the B-only targets (rows 4, 6, 7) see one disease among their
    # candidates, and it is theirs.
    assert attack.homogeneous.tolist() == [False] * 4 + [True, False, True, True]
    assert attack.summary()["homogeneity"] == pytest.approx(3 / 8)
    # A only: flu 3 of 4; A and B: hiv 4 of 8; B only: hiv 4 of 4.
    assert attack.confidence.tolist() == [0.75, 0.75, 0.5, 0.5, 1.0, 0.5, 1.0, 1.0]
    assert attack.summary()["confidence_mean"] == pytest.approx(0.75)
    # Majority guess: flu for A-only targets (right for rows 0, 1), hiv for
    # the others (wrong for rows 2 and 3, right for rows 4-7).
    assert attack.majority_success.tolist() == [1, 1, 0, 0, 1, 1, 1, 1]


def test_a_class_below_k_is_caught():
    # The second row is alone in its class: its target is re-identified surely.
    released = pd.DataFrame({"age": ["[20, 29]", "35", "[20, 29]", "[20, 29]"]})
    known = pd.DataFrame({"age": [21, 35, 28, 20]})
    attack = linkage_attack(released, known, [0, 1, 2, 3], ["age"])
    assert attack.candidates.tolist() == [3, 1, 3, 3]
    assert attack.max_success == 1.0
    assert attack.rate == pytest.approx((3 * (1 / 3) + 1) / 4)


def test_a_record_that_does_not_cover_its_own_values_scores_zero():
    # A mean written for the class (30.5) covers neither 30 nor 31.
    released = pd.DataFrame({"age": ["30.5", "30.5", "*"]})
    known = pd.DataFrame({"age": [30, 31]})
    attack = linkage_attack(released, known, [0, 1], ["age"])
    assert attack.candidates.tolist() == [1, 1]  # the suppressed row
    assert attack.true_covered.tolist() == [False, False]
    assert attack.success.tolist() == [0.0, 0.0]


def test_a_quasi_identifier_the_release_lacks_covers_everything():
    released = pd.DataFrame({"sex": ["F", "F", "M"]})
    known = pd.DataFrame({"sex": ["F", "M"], "zip": ["1", "2"]})
    attack = linkage_attack(released, known, [0, 2], ["sex", "zip"])
    assert attack.candidates.tolist() == [2, 1]


def test_no_sensitive_attribute_gives_no_homogeneity():
    attack = linkage_attack(HAND_RELEASED, HAND_ORIGINAL, np.arange(8), ["age", "zip"])
    assert not attack.homogeneous.any()
    assert math.isnan(attack.summary()["homogeneity"])


def test_coverage_rules():
    cells = [
        "[20, 30)",  # half-open interval
        "< 21.5",  # open lower end
        "{[17, 21.5)|>= 30.5}",  # a set of intervals (binned values)
        "{|US}",  # a set with a missing member
        "Married",  # a hierarchy label
        "37",  # a number written as text
        "*",
        "",
    ]
    values = [20, 30, 21.5, 17, 40, None, "US", "Married-civ-spouse", 37.0]
    matrix = coverage_matrix(
        cells, values, labels={"Married": ("Married-civ-spouse", "Married-AF")}
    )
    expected = [
        [1, 0, 1, 0, 0, 0, 0, 0, 0],
        [1, 0, 0, 1, 0, 0, 0, 0, 0],
        [1, 0, 0, 1, 1, 0, 0, 0, 1],
        [0, 0, 0, 0, 0, 1, 1, 0, 0],
        [0, 0, 0, 0, 0, 0, 0, 1, 0],
        [0, 0, 0, 0, 0, 0, 0, 0, 1],
        [1] * 9,
        [0, 0, 0, 0, 0, 1, 0, 0, 0],
    ]
    assert matrix.astype(int).tolist() == expected


def test_bad_inputs_name_what_is_wrong():
    with pytest.raises(InvalidParameterError, match="zip"):
        linkage_attack(HAND_RELEASED, HAND_ORIGINAL[["age"]], range(8), ["age", "zip"])
    with pytest.raises(InvalidParameterError, match="one released row per target"):
        linkage_attack(HAND_RELEASED, HAND_ORIGINAL, [0, 1], ["age"])
    with pytest.raises(InvalidParameterError, match=r"\[0, 7\]"):
        linkage_attack(HAND_RELEASED, HAND_ORIGINAL, np.arange(8) + 1, ["age"])
    with pytest.raises(InvalidParameterError, match="salary"):
        linkage_attack(
            HAND_RELEASED,
            HAND_ORIGINAL,
            range(8),
            ["age"],
            sensitive_attribute="salary",
        )


# -- cross-check against a plain double loop --------------------------------------
LABELS = {"ab": ("a", "b"), "cd": ("c", "d")}
LETTERS = ("a", "b", "c", "d", "e")


def _cell_text(spec: tuple) -> str:
    """Render a cell description in the release grammar (by hand)."""
    kind = spec[0]
    if kind == "star":
        return "*"
    if kind == "missing":
        return ""
    if kind == "interval":
        _, low, high, low_closed, high_closed = spec
        return f"{'[' if low_closed else '('}{low}, {high}{']' if high_closed else ')'}"
    if kind == "set":
        return "{" + "|".join(sorted(spec[1])) + "}"
    return str(spec[1])  # "value" or "label"


def _covers_by_hand(spec: tuple, value: object) -> bool:
    """Does a described cell cover an original value? Plain Python, no parsing."""
    kind = spec[0]
    missing = value is None
    if kind == "star":
        return True
    if kind == "missing":
        return missing
    if missing:
        return kind == "set" and "" in spec[1]
    if kind == "interval":
        _, low, high, low_closed, high_closed = spec
        above = value >= low if low_closed else value > low
        below = value <= high if high_closed else value < high
        return above and below
    if kind == "set":
        return str(value) in spec[1]
    if kind == "label":
        return str(value) in LABELS[spec[1]]
    return str(value) == str(spec[1])


def _numeric_cell():
    interval = st.tuples(
        st.integers(0, 9), st.integers(0, 9), st.booleans(), st.booleans()
    ).map(lambda t: ("interval", min(t[0], t[1]), max(t[0], t[1]), t[2], t[3]))
    return st.one_of(
        interval,
        st.integers(0, 9).map(lambda v: ("value", v)),
        st.just(("star",)),
        st.just(("missing",)),
    )


def _category_cell():
    members = st.sets(st.sampled_from([*LETTERS, ""]), min_size=2, max_size=4)
    return st.one_of(
        st.sampled_from(LETTERS).map(lambda v: ("value", v)),
        members.map(lambda m: ("set", frozenset(m))),
        st.sampled_from(sorted(LABELS)).map(lambda v: ("label", v)),
        st.just(("star",)),
        st.just(("missing",)),
    )


@st.composite
def _attack_case(draw):
    n_rows = draw(st.integers(1, 14))
    # A few distinct released tuples repeated, so classes have several rows.
    n_tuples = draw(st.integers(1, min(n_rows, 5)))
    tuples = draw(
        st.lists(
            st.tuples(_numeric_cell(), _category_cell()),
            min_size=n_tuples,
            max_size=n_tuples,
        )
    )
    which = draw(
        st.lists(st.integers(0, n_tuples - 1), min_size=n_rows, max_size=n_rows)
    )
    specs = [tuples[i] for i in which]
    sensitive = draw(st.lists(st.sampled_from("xyz"), min_size=n_rows, max_size=n_rows))
    n_targets = draw(st.integers(1, 10))
    known = draw(
        st.lists(
            st.tuples(
                st.one_of(st.none(), st.integers(-1, 10)),
                st.one_of(st.none(), st.sampled_from(LETTERS)),
            ),
            min_size=n_targets,
            max_size=n_targets,
        )
    )
    true_rows = draw(
        st.lists(st.integers(0, n_rows - 1), min_size=n_targets, max_size=n_targets)
    )
    return specs, sensitive, known, true_rows


@settings(max_examples=150, deadline=None)
@given(_attack_case())
def test_vectorized_counts_match_a_double_loop(case):
    specs, sensitive, known, true_rows = case
    released = pd.DataFrame(
        {
            "n": [_cell_text(s[0]) for s in specs],
            "c": [_cell_text(s[1]) for s in specs],
            "s": sensitive,
        }
    )
    frame = pd.DataFrame(
        {
            "n": pd.array([v for v, _ in known], dtype="Int64"),
            "c": pd.Series([c for _, c in known], dtype=object),
        }
    )
    attack = linkage_attack(
        released,
        frame,
        true_rows,
        ["n", "c"],
        sensitive_attribute="s",
        covers={"c": LABELS},
    )
    values = dict(zip(attack.sensitive_values, range(len(attack.sensitive_values))))
    for t, (number, category) in enumerate(known):
        count = 0
        per_value = [0] * len(values)
        for row, (n_spec, c_spec) in enumerate(specs):
            if _covers_by_hand(n_spec, number) and _covers_by_hand(c_spec, category):
                count += 1
                per_value[values[sensitive[row]]] += 1
        own = specs[true_rows[t]]
        covered = _covers_by_hand(own[0], number) and _covers_by_hand(own[1], category)
        assert attack.candidates[t] == count
        assert attack.sensitive_counts[t].tolist() == per_value
        assert bool(attack.true_covered[t]) == covered
        assert attack.success[t] == (1 / count if covered else 0.0)


# -- a property of Mondrian releases ----------------------------------------------
@st.composite
def _table(draw):
    n = draw(st.integers(4, 60))
    ages = draw(st.lists(st.integers(17, 40), min_size=n, max_size=n))
    cities = draw(st.lists(st.sampled_from("pqrst"), min_size=n, max_size=n))
    # Cycling keeps every group of consecutive sensitive values diverse enough
    # for the requirement to be feasible.
    offset = draw(st.integers(0, 2))
    illness = [("flu", "hiv", "cold")[(i + offset) % 3] for i in range(n)]
    k = draw(st.integers(2, max(2, n // 2)))
    with_l = draw(st.booleans())
    table = pd.DataFrame({"age": ages, "city": cities, "illness": illness})
    return table, k, with_l


@settings(max_examples=60, deadline=None)
@given(_table())
def test_mondrian_releases_meet_one_over_k(case):
    table, k, with_l = case
    spec = AnonymizationSpec.of(
        ("age", "city"), "illness" if with_l else None, None, k=k, l=2 if with_l else 1
    )
    release = Mondrian().anonymize(table, spec, np.random.default_rng(0))
    released = release.tables["release"]
    attack = linkage_attack(
        released,
        table[["age", "city"]],
        np.arange(len(table)),  # Mondrian keeps the input's row order
        ["age", "city"],
        sensitive_attribute="illness",
    )
    assert attack.true_covered.all()
    assert attack.max_success <= 1 / k + 1e-12
    assert attack.rate <= 1 / k + 1e-12
    if with_l:
        # Every candidate set holds the target's own class and its two values.
        assert not attack.homogeneous.any()


# -- releases made as the pipeline makes them -------------------------------------
@pytest.mark.parametrize("algorithm", ["mondrian", "kactus", "lattice-optimal"])
def test_release_for_attack_keeps_the_ground_truth(algorithm):
    config = default_config("german").with_overrides(
        algorithm=algorithm, params={}, k=10
    )
    made = release_for_attack(config)
    original, released, rows = made.original, made.released, made.rows
    assert len(rows) == len(released) <= len(original)
    assert len(np.unique(rows)) == len(rows)
    # Columns the algorithm does not touch are the original rows' values.
    for column in (config.target, config.sensitive_attribute, "credit-amount"):
        assert released[column].tolist() == original[column].iloc[rows].tolist()
    assert "__ppdm_attack_row__" not in released.columns
    # Only what the roles let leave reaches the algorithm (e.g. no dropped column).
    assert set(released.columns) <= set(config.released_columns)
    # Each released record covers its own person's original values.
    attack = linkage_attack(
        released,
        original.iloc[rows][config.quasi_identifiers].reset_index(drop=True),
        np.arange(len(rows)),
        config.quasi_identifiers,
        covers=made.covers,
    )
    assert attack.true_covered.all()


def test_blocks_of_classes_do_not_change_the_counts(monkeypatch):
    made = release_for_attack(default_config("german").with_overrides(k=5))
    whole = attack_release(made, sample=300, seed=1)
    monkeypatch.setattr(attacks, "_BLOCK_CELLS", 7)  # many blocks of classes
    blocked = attack_release(made, sample=300, seed=1)
    assert blocked.candidates.tolist() == whole.candidates.tolist()
    assert blocked.sensitive_counts.tolist() == whole.sensitive_counts.tolist()
    assert blocked.true_covered.tolist() == whole.true_covered.tolist()


def test_discretized_input_reaches_binned_algorithms_only():
    base = default_config("german")
    binned = release_for_attack(base.with_overrides(algorithm="mondrian", k=5))
    raw = release_for_attack(
        base.with_overrides(algorithm="lattice-optimal", params={}, k=5)
    )
    interval = re.compile(r"^[\[(].*,.*[\])]$")
    assert binned.released["age"].map(lambda v: bool(interval.match(v))).all()
    assert binned.covers is None
    assert raw.covers is not None and "age" in raw.covers


def test_attack_release_samples_released_people():
    made = release_for_attack(default_config("german").with_overrides(k=5))
    sampled = attack_release(made, sample=100, seed=3)
    assert sampled.n_targets == 100
    again = attack_release(made, sample=100, seed=3)
    assert sampled.success.tolist() == again.success.tolist()
    assert attack_release(made, sample=5000).n_targets == len(made.released)
    with pytest.raises(InvalidParameterError, match="sample"):
        attack_release(made, sample=0)


def test_run_attacks_table():
    frame = run_attacks(["german"], ["mondrian", "pbg-ea"], [5, 50], sample=200)
    assert list(frame.columns) == list(ATTACK_COLUMNS)
    assert len(frame) == 4
    assert frame["passed"].all()
    assert (frame["rate_max"] <= frame["inv_k"] + 1e-12).all()
    assert (frame["targets"] == frame["rows_released"].clip(upper=200)).all()
    assert (frame["l"] == default_config("german").l).all()


def test_shipped_params_come_from_a_configuration_of_the_algorithm():
    assert shipped_params("adult", "pbg-ea")["objectives"] == "k-l-glm"
    assert shipped_params("german", "pbg-ea") == {}
    assert shipped_params("adult", "mondrian") == dict(default_config("adult").params)
