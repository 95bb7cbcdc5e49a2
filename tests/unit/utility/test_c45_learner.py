"""The harness's C4.5 learner against Quinlan's and Weka's published answers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.exceptions import InvalidParameterError
from ppdm.utility._c45_splits import range_left_weights
from ppdm.utility.c45_learner import C45Learner
from ppdm.utility.features import CellFeaturizer

# Quinlan's weather data (C4.5, Table 1-1; Weka's weather.numeric.arff)
WEATHER = pd.DataFrame(
    [
        ("sunny", 85, 85, "FALSE", "no"),
        ("sunny", 80, 90, "TRUE", "no"),
        ("overcast", 83, 86, "FALSE", "yes"),
        ("rainy", 70, 96, "FALSE", "yes"),
        ("rainy", 68, 80, "FALSE", "yes"),
        ("rainy", 65, 70, "TRUE", "no"),
        ("overcast", 64, 65, "TRUE", "yes"),
        ("sunny", 72, 95, "FALSE", "no"),
        ("sunny", 69, 70, "FALSE", "yes"),
        ("rainy", 75, 80, "FALSE", "yes"),
        ("sunny", 75, 70, "TRUE", "yes"),
        ("overcast", 72, 90, "TRUE", "yes"),
        ("overcast", 81, 75, "FALSE", "yes"),
        ("rainy", 71, 91, "TRUE", "no"),
    ],
    columns=["outlook", "temperature", "humidity", "windy", "play"],
).astype({"outlook": "string", "windy": "string", "play": "string"})


def _featurize(table: pd.DataFrame, *others: pd.DataFrame):
    featurizer = CellFeaturizer(exclude=["play"]).fit(table)
    return featurizer, [featurizer.transform(t) for t in (table, *others)]


def _block(featurizer: CellFeaturizer, name: str) -> int:
    starts = {spec.name: i for i, spec in enumerate(featurizer.specs_)}
    return starts[name]


def test_weather_tree_is_wekas_j48_tree():
    # Weka 3's J48 on weather.numeric (default options) prints:
    #   outlook = sunny: humidity <= 75: yes (2.0) / humidity > 75: no (3.0)
    #   outlook = overcast: yes (4.0)
    #   outlook = rainy: windy = TRUE: no (2.0) / windy = FALSE: yes (3.0)
    featurizer, (x,) = _featurize(WEATHER)
    learner = C45Learner(blocks=featurizer.blocks_).fit(x, WEATHER["play"].to_numpy())
    assert learner.n_leaves_ == 5
    root = learner.tree_
    assert root.block == _block(featurizer, "outlook")
    outlook = featurizer.specs_[root.block].domain
    sunny = root.children[outlook.index("sunny")]
    assert sunny.block == _block(featurizer, "humidity")
    assert sunny.threshold == 75.0  # J48's split point, not the node's 70
    assert [c.distribution.tolist() for c in sunny.children] == [[0, 2], [3, 0]]
    overcast = root.children[outlook.index("overcast")]
    assert overcast.is_leaf and overcast.distribution.tolist() == [0, 4]
    rainy = root.children[outlook.index("rainy")]
    assert rainy.block == _block(featurizer, "windy")
    probe = pd.DataFrame(
        [
            ("sunny", 70, 75, "FALSE"),
            ("sunny", 70, 76, "FALSE"),
            ("rainy", 70, 99, "TRUE"),
            ("rainy", 70, 99, "FALSE"),
            ("overcast", 99, 99, "TRUE"),
        ],
        columns=["outlook", "temperature", "humidity", "windy"],
    ).astype({"outlook": "string", "windy": "string"})
    assert learner.predict(featurizer.transform(probe)).tolist() == [
        "yes",
        "no",
        "no",
        "yes",
        "yes",
    ]


def test_gain_with_an_unknown_value_is_quinlans():
    # C4.5 book, section 3.1: outlook of one overcast case unknown. On the 13
    # known cases info = 0.961, info_outlook = 0.747, gain = 13/14 * 0.214 =
    # 0.199; split info over 5, 3, 5 and 1 unknown = 1.809.
    table = WEATHER.copy()
    table.loc[11, "outlook"] = pd.NA
    featurizer, (x,) = _featurize(table)
    scores = C45Learner(blocks=featurizer.blocks_).split_scores(
        x, table["play"].to_numpy()
    )
    gain, split_info = scores[_block(featurizer, "outlook")]
    assert gain == pytest.approx(0.199, abs=5e-4)
    assert split_info == pytest.approx(1.809, abs=5e-4)
    # the same numbers from the definitions, computed here independently
    known = table.dropna(subset=["outlook"])

    def info(labels: pd.Series) -> float:
        p = labels.value_counts(normalize=True)
        return float(-(p * np.log2(p)).sum())

    expected = (len(known) / len(table)) * (
        info(known["play"])
        - sum(
            len(group) / len(known) * info(group["play"])
            for _, group in known.groupby("outlook")
        )
    )
    assert gain == pytest.approx(expected, abs=1e-12)


def test_unknown_test_value_mixes_the_branches_by_training_weight():
    # one attribute decides the class; 70 % of the known values are 0
    x = np.array([[0.0]] * 70 + [[1.0]] * 30)
    y = np.array(["A"] * 70 + ["B"] * 30)
    learner = C45Learner().fit(x, y)
    proba = learner.predict_proba(np.array([[np.nan], [0.0], [1.0]]))
    np.testing.assert_allclose(proba, [[0.7, 0.3], [1.0, 0.0], [0.0, 1.0]])


def test_unknown_training_values_are_split_by_known_frequencies():
    # 100 instances with x unknown, all of class C: 0.7 of their weight goes
    # to the x = 0 leaf, 0.3 to the x = 1 leaf
    x = np.array([[0.0]] * 140 + [[1.0]] * 60 + [[np.nan]] * 100)
    y = np.array(["A"] * 140 + ["B"] * 60 + ["C"] * 100)
    learner = C45Learner().fit(x, y)
    low, high = learner.tree_.children
    np.testing.assert_allclose(low.distribution, [140, 0, 70])
    np.testing.assert_allclose(high.distribution, [0, 60, 30])
    proba = learner.predict_proba(np.array([[0.0], [1.0]]))
    np.testing.assert_allclose(proba, [[2 / 3, 0, 1 / 3], [0, 2 / 3, 1 / 3]])


def test_value_set_sends_half_an_instance_to_each_member():
    # 20 rows {a|b}: 10 of weight go to a, 10 to b
    x = np.array([[1.0, 0.0]] * 40 + [[0.0, 1.0]] * 40 + [[0.5, 0.5]] * 20)
    y = np.array(["p"] * 40 + ["q"] * 40 + ["r"] * 20)
    learner = C45Learner(blocks=[("onehot", 0, 2)]).fit(x, y)
    a, b = learner.tree_.children
    np.testing.assert_allclose(a.distribution, [40, 0, 10])
    np.testing.assert_allclose(b.distribution, [0, 40, 10])


def test_known_means_class_is_not_learned():
    # the kACTUS artefact: a value known only in one class's rows. C4.5 sees
    # the known rows alone and finds no signal in "known".
    rng = np.random.default_rng(0)
    n = 2000
    rich = rng.random(n) < 0.25
    noise = rng.integers(0, 3, n).astype(float)
    x = np.where(rich, noise, np.nan)[:, None]
    y = np.where(rich, ">50K", "<=50K")
    learner = C45Learner().fit(x, y)
    test = rng.integers(0, 3, 500).astype(float)[:, None]  # every value known
    assert (learner.predict(test) == "<=50K").all()


def test_a_branch_without_training_weight_predicts_its_parent():
    x = np.array([[1.0, 0.0, 0.0]] * 30 + [[0.0, 1.0, 0.0]] * 10)
    y = np.array(["a"] * 28 + ["b"] * 2 + ["b"] * 9 + ["a"])
    learner = C45Learner(blocks=[("onehot", 0, 3)], confidence=None).fit(x, y)
    assert len(learner.tree_.children) == 3
    assert learner.tree_.children[2].weight == 0
    parent = learner.tree_.distribution / learner.tree_.weight
    np.testing.assert_allclose(
        learner.predict_proba(np.array([[0.0, 0.0, 1.0]]))[0], parent
    )


def test_pruning_removes_a_split_that_does_not_pay():
    # four branches of 5, majorities 3/2: 8 training errors against 10 as a
    # leaf, but the pessimistic estimate at 0.25 is higher for the subtree
    # (12.89 vs 11.98), so C4.5 replaces it by a leaf
    x = np.repeat(np.eye(4), 5, axis=0)
    y = np.array((list("aaabb") * 2) + (list("bbbaa") * 2))
    blocks = [("onehot", 0, 4)]
    assert C45Learner(blocks=blocks).fit(x, y).n_leaves_ == 1
    assert C45Learner(blocks=blocks, confidence=None).fit(x, y).n_leaves_ == 4


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(20, 120),
    seed=st.integers(0, 10_000),
    unknown_share=st.floats(0.0, 0.6),
)
def test_training_weight_is_conserved_and_probabilities_sum_to_one(
    n, seed, unknown_share
):
    rng = np.random.default_rng(seed)
    nominal = np.eye(3)[rng.integers(0, 3, n)]
    numeric = rng.normal(size=n)
    nominal[rng.random(n) < unknown_share] = 0.0
    numeric[rng.random(n) < unknown_share] = np.nan
    x = np.column_stack([numeric, nominal])
    y = rng.choice(["p", "q", "r"], n)
    learner = C45Learner(
        blocks=[("numeric", 0, 1), ("onehot", 1, 4)], confidence=None, min_obj=1
    ).fit(x, y)

    def leaves(node):
        if node.is_leaf:
            yield node
        for child in node.children:
            yield from leaves(child)

    total = sum(leaf.weight for leaf in leaves(learner.tree_))
    # every instance's unit weight ends in the leaves (up to the weight floor)
    assert total == pytest.approx(n, abs=1e-3)
    proba = learner.predict_proba(x)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert ((proba >= 0) & (proba <= 1 + 1e-12)).all()


def test_bad_arguments_are_named():
    with pytest.raises(InvalidParameterError, match="min_obj"):
        C45Learner(min_obj=0).fit(np.zeros((4, 1)), np.array(list("abab")))
    with pytest.raises(InvalidParameterError, match="confidence"):
        C45Learner(confidence=1.5).fit(np.zeros((4, 1)), np.array(list("abab")))
    with pytest.raises(InvalidParameterError, match="one row per label"):
        C45Learner().fit(np.zeros((4, 1)), np.array(list("aba")))


def test_log2_threshold_penalty_is_applied():
    # two numeric candidates with the same class separation; the one with
    # more distinct values (more thresholds) pays log2(#thresholds) / n more
    y = np.array(["a"] * 10 + ["b"] * 10)
    few = np.array([0.0] * 10 + [1.0] * 10)
    many = np.concatenate([np.arange(10.0), np.arange(10.0) + 100])
    scores = C45Learner().split_scores(np.column_stack([few, many]), y)
    # thresholds admissible with min split 2: 1 for "few"; for "many", the
    # positions leaving >= 2 on each side: 17 (left sizes 2..18)
    assert scores[0][0] - scores[1][0] == pytest.approx(
        (math.log2(17) - math.log2(1)) / 20
    )


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_points=st.integers(0, 30),
    n_ranges=st.integers(1, 30),
)
def test_range_weights_left_of_each_threshold_match_row_by_row(
    seed, n_points, n_ranges
):
    rng = np.random.default_rng(seed)
    point_values = rng.integers(0, 20, n_points).astype(float)
    starts = rng.integers(0, 20, n_ranges).astype(float)
    ends = starts + rng.integers(1, 10, n_ranges)
    low = np.concatenate([point_values, starts])
    high = np.concatenate([point_values, ends])
    spans = high > low
    class_weights = (
        np.eye(2)[rng.integers(0, 2, len(low))] * rng.uniform(0.1, 1, len(low))[:, None]
    )
    candidates, left = range_left_weights(low, high, spans, class_weights)
    for t, got in zip(candidates, left):
        expected = np.zeros(2)
        for a, b, w in zip(low, high, class_weights):
            share = float(a <= t) if a == b else min(max((t - a) / (b - a), 0.0), 1.0)
            expected += share * w
        np.testing.assert_allclose(got, expected, atol=1e-9)


def test_a_released_range_is_spread_over_the_threshold():
    # 40 A at 2, 40 B at 8, and 20 C released as [0, 10]: whatever threshold
    # t C4.5 picks, t / 10 of each range's weight goes left
    x_low = np.array([2.0] * 40 + [8.0] * 40 + [0.0] * 20)
    x_high = np.array([2.0] * 40 + [8.0] * 40 + [10.0] * 20)
    y = np.array(["A"] * 40 + ["B"] * 40 + ["C"] * 20)
    learner = C45Learner(blocks=[("interval", 0, 2)], confidence=None).fit(
        np.column_stack([x_low, x_high]), y
    )
    root = learner.tree_
    t = root.threshold
    left, right = root.children
    assert 2.0 <= t < 8.0
    np.testing.assert_allclose(left.distribution, [40, 0, 20 * t / 10])
    np.testing.assert_allclose(right.distribution, [0, 40, 20 * (10 - t) / 10])
    # a test value is a point: it follows its side (above 8 only the ranges'
    # mass remains, so 9 would be C)
    assert learner.predict(np.array([[1.0, 1.0], [5.0, 5.0]])).tolist() == ["A", "B"]


def test_bounds_view_reads_values_ranges_sets_and_suppression():
    original = pd.DataFrame({"age": [20, 40, 30], "sex": ["F", "M", "F"]})
    released = pd.DataFrame(
        {"age": ["[20, 30]", "*", "40", "{21|27}"], "sex": ["F", "M", "F", "M"]}
    )
    featurizer = CellFeaturizer(numeric_ranges="bounds").fit(original)
    assert featurizer.blocks_[0] == ("interval", 0, 2)
    x = featurizer.transform(released).toarray()
    np.testing.assert_array_equal(x[[0, 2, 3], :2], [[20, 30], [40, 40], [21, 27]])
    assert np.isnan(x[1, :2]).all()
    np.testing.assert_array_equal(
        featurizer.transform(original).toarray()[:, 0], [20, 40, 30]
    )


def test_numbers_without_ranges_give_the_same_tree_in_both_views():
    table = WEATHER.copy()
    y = table["play"].to_numpy()
    trees = []
    for view in ("midpoint", "bounds"):
        featurizer = CellFeaturizer(exclude=["play"], numeric_ranges=view).fit(table)
        learner = C45Learner(blocks=featurizer.blocks_).fit(
            featurizer.transform(table), y
        )
        trees.append((learner.n_leaves_, learner.predict(featurizer.transform(table))))
    assert trees[0][0] == trees[1][0] == 5
    np.testing.assert_array_equal(trees[0][1], trees[1][1])


def test_range_reading_changes_nothing_without_ranges_and_rejects_unknown_names():
    from ppdm.utility import train_and_score

    rng = np.random.default_rng(3)
    n = 600
    age = rng.integers(18, 80, n)
    kind = rng.choice(["p", "q", "r"], n)
    label = np.where((age > 45) ^ (kind == "q") ^ (rng.random(n) < 0.1), "hi", "lo")
    table = pd.DataFrame(
        {"age": age, "kind": pd.array(kind, dtype="string"), "label": label}
    )
    train, test = table.iloc[:400], table.iloc[400:]
    scores = {
        ranges: train_and_score(
            train,
            train,
            test,
            target="label",
            seed=0,
            models=["decision_tree"],
            ranges=ranges,
        )["decision_tree"]["anonymized"]
        for ranges in ("midpoint", "uniform")
    }
    assert scores["midpoint"] == scores["uniform"] > 0.8
    with pytest.raises(InvalidParameterError, match="ranges"):
        train_and_score(train, train, test, target="label", seed=0, ranges="spread")
