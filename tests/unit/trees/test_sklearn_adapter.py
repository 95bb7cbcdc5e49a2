"""The scikit-learn adapter: the predicate tree has clf.apply's leaves."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from ppdm.prepare import datasets
from ppdm.trees import (
    Between,
    Equals,
    SklearnInducer,
    ValueSet,
    encode,
    tree_from_sklearn,
)
from ppdm.trees.base import constraint_kinds


@pytest.fixture(scope="module")
def adult_sample() -> pd.DataFrame:
    adult = datasets.load("adult")
    return adult.sample(5000, random_state=2).reset_index(drop=True)


@pytest.mark.parametrize("encoding", ["onehot", "ordinal"])
def test_leaf_membership_equals_clf_apply(adult_sample, encoding):
    X = adult_sample[
        ["age", "workclass", "education", "marital-status", "sex", "hours-per-week"]
    ]
    y = adult_sample["income"]
    inducer = SklearnInducer(encoding=encoding, min_samples_leaf=20).fit(X, y)
    tree = inducer.tree_
    matrix, _ = encode(X, encoding)
    sk_leaf = inducer.estimator_.apply(matrix)
    ours = tree.leaf_ids()
    source = np.array([node.source_id for node in tree.nodes])
    assert np.array_equal(source[ours], sk_leaf)
    # the predicates alone route the ORIGINAL table to the same leaves
    assert np.array_equal(tree.apply(X), ours)
    assert sum(leaf.size for leaf in tree.leaves) == len(X)


def test_one_value_left_counts_as_pinned_several_as_a_value_set():
    X = pd.DataFrame({"colour": ["r", "g", "b"] * 20, "n": np.arange(60) % 7})
    y = np.where(X["colour"] == "r", "yes", "no")
    y[X["colour"].to_numpy() == "g"] = "maybe"
    matrix, features = encode(X, "onehot")
    clf = DecisionTreeClassifier(random_state=0).fit(matrix, y)
    tree = tree_from_sklearn(clf, matrix, features)
    kinds = [constraint_kinds(tree, leaf)["colour"] for leaf in tree.leaves]
    predicates = [leaf.predicate for leaf in tree.leaves]
    assert sorted(kinds) == ["equals", "equals", "equals"]
    assert {p.value for p in predicates if isinstance(p, Equals)} == {"r", "g", "b"}
    # the first split leaves a set of two colours on one side
    first = [child.predicate for child in tree.root.children]
    assert sum(isinstance(p, ValueSet) and len(p.values) == 2 for p in first) == 1


def test_numeric_thresholds_accumulate_into_intervals():
    X = pd.DataFrame({"x": np.arange(40, dtype=float)})
    y = np.where((X["x"] > 9.5) & (X["x"] <= 29.5), "in", "out")
    matrix, features = encode(X)
    clf = DecisionTreeClassifier(random_state=0).fit(matrix, y)
    tree = tree_from_sklearn(clf, matrix, features)
    middle = [leaf for leaf in tree.leaves if leaf.label == "in"]
    assert len(middle) == 1
    # scikit-learn cuts at 9.5 and 29.5; the predicate keeps the largest value
    # each cut sends left (the data's precision), which splits the rows alike
    assert middle[0].predicate == Between("x", 9.0, 29.0)
    assert middle[0].rows.tolist() == list(range(10, 30))


def test_thresholds_carry_the_data_decimals_not_float32_tails():
    rng = np.random.default_rng(0)
    x = np.round(rng.uniform(0, 10, 400), 2)
    y = np.where((x > 2.71) & (x <= 7.13), "in", "out")
    matrix, features = encode(pd.DataFrame({"x": x}))
    clf = DecisionTreeClassifier(random_state=0, max_depth=3).fit(matrix, y)
    tree = tree_from_sklearn(clf, matrix, features)
    ends = {
        end
        for leaf in tree.leaves
        for end in (leaf.predicate.low, leaf.predicate.high)
        if np.isfinite(end)
    }
    assert ends and all(round(end, 2) == end for end in ends)  # no float32 tail
    assert ends <= set(x.tolist())  # each a value of the data
    for leaf in tree.leaves:  # every leaf's rows are exactly its interval's
        inside = (x > leaf.predicate.low) & (x <= leaf.predicate.high)
        assert leaf.rows.tolist() == np.flatnonzero(inside).tolist()


def test_missing_numeric_values_go_where_sklearn_sends_them():
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    x[::9] = np.nan
    y = np.where(np.nan_to_num(x, nan=5.0) > 0, "a", "b")
    X = pd.DataFrame({"x": x})
    inducer = SklearnInducer(min_samples_leaf=5).fit(X, y)
    matrix, _ = encode(X)
    source = np.array([node.source_id for node in inducer.tree_.nodes])
    assert np.array_equal(
        source[inducer.tree_.leaf_ids()], inducer.estimator_.apply(matrix)
    )
    assert np.array_equal(inducer.tree_.apply(X), inducer.tree_.leaf_ids())
