"""The CBA classifier (check 8 of the approx-ac notes), against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdm.exceptions import InvalidParameterError
from ppdm.utility.cba import CBAClassifier
from ppdm.utility.features import CellFeaturizer
from ppdm.utility.learners import MODELS, check_models, feature_view, make_model

FAST = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=50,
    suppress_health_check=[HealthCheck.too_slow],
)


@st.composite
def data(draw) -> tuple[pd.DataFrame, np.ndarray]:
    n = draw(st.integers(5, 40))
    q = draw(st.integers(1, 3))
    x = {}
    for j in range(q):
        card = draw(st.integers(1, 3))
        x[f"a{j}"] = [
            f"v{c}" if c < card else "*"
            for c in draw(st.lists(st.integers(0, card), min_size=n, max_size=n))
        ]
    y = np.array(
        draw(st.lists(st.sampled_from(["p", "n", "u"]), min_size=n, max_size=n))
    )
    return pd.DataFrame(x), y


def brute_rules(x: pd.DataFrame, y: np.ndarray, minsup: float, minconf: float):
    """Every class association rule, with support and confidence, by counting."""
    n = len(y)
    cols = list(x.columns)
    out = {}
    for size in range(1, len(cols) + 1):
        for attrs in itertools.combinations(range(len(cols)), size):
            values = [sorted(v for v in x[cols[a]].unique() if v != "*") for a in attrs]
            for combo in itertools.product(*values):
                match = np.ones(n, dtype=bool)
                for a, v in zip(attrs, combo):
                    match &= (x[cols[a]] == v).to_numpy()
                for c in np.unique(y):
                    count = int((match & (y == c)).sum())
                    if count == 0 or count / n < minsup:
                        continue
                    conf = count / match.sum()
                    if conf >= minconf:
                        lhs = tuple((cols[a], v) for a, v in zip(attrs, combo))
                        out[(lhs, c)] = (count / n, conf)
    return out


@FAST
@given(data(), st.sampled_from([0.1, 0.2, 0.3]), st.sampled_from([0.0, 0.5, 0.8]))
def test_rules_are_every_class_association_rule_in_cba_order(case, minsup, minconf):
    x, y = case
    model = CBAClassifier(minsup=minsup, minconf=minconf).fit(x, y)
    expected = brute_rules(x, y, minsup, minconf)
    found = {(r.lhs, r.target_class): (r.support, r.confidence) for r in model.rules_}
    assert found.keys() == expected.keys()
    for key, (sup, conf) in expected.items():
        assert found[key] == pytest.approx((sup, conf))
        assert sup >= minsup and conf >= minconf
    # Order: confidence desc, support desc, then fewer literals first.
    keys = [(-r.confidence, -r.support, len(r.lhs)) for r in model.rules_]
    assert keys == sorted(keys)
    # fpgrowth mines the same rules in the same order.
    other = CBAClassifier(minsup=minsup, minconf=minconf, miner="fpgrowth").fit(x, y)
    assert other.rules_ == model.rules_


@FAST
@given(data())
def test_first_matching_rule_fires_else_the_default_class(case):
    x, y = case
    model = CBAClassifier(minsup=0.1, minconf=0.5).fit(x, y)
    fired = model.decision_rules(x)
    predicted = model.predict(x)
    proba = model.predict_proba(x)
    unmatched = []
    for i in range(len(x)):
        row = x.iloc[i]
        first = next(
            (
                j
                for j, r in enumerate(model.rules_)
                if all(row[a] == v for a, v in r.lhs)
            ),
            -1,
        )
        assert fired[i] == first
        if first >= 0:
            assert predicted[i] == model.rules_[first].target_class
        else:
            assert predicted[i] == model.default_class_
            unmatched.append(y[i])
    # Default: majority of the unmatched training rows (else of all rows).
    pool = unmatched if unmatched else list(y)
    labels, counts = np.unique(pool, return_counts=True)
    assert model.default_class_ == labels[np.argmax(counts)]
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert (model.classes_[np.argmax(proba, axis=1)] == predicted).all()


def test_known_order_and_default() -> None:
    x = pd.DataFrame({"a": ["u", "u", "u", "v", "v", "w"], "b": list("ssstts")})
    y = np.array(["p", "p", "n", "n", "n", "p"])
    model = CBAClassifier(minsup=0.3, minconf=0.6).fit(x, y)
    rules = [(r.lhs, r.target_class, r.count) for r in model.rules_]
    # Confidence 1 first: (a=v) and (b=t) and (a=v, b=t), all count 2, in
    # generation order (one literal before two, attribute a before b).
    assert rules[:3] == [
        ((("a", "v"),), "n", 2),
        ((("b", "t"),), "n", 2),
        ((("a", "v"), ("b", "t")), "n", 2),
    ]
    # Nothing matches a row of unseen values: the default class.
    test = pd.DataFrame({"a": ["z"], "b": ["z"]})
    assert model.predict(test).tolist() == [model.default_class_]


def test_feature_matrix_input_matches_the_dataframe() -> None:
    rng = np.random.default_rng(2)
    x = pd.DataFrame(
        {
            "a": rng.choice(["r", "s", "t"], 80),
            "b": rng.choice(["u", "v"], 80),
        }
    )
    y = np.where((x["a"] == "r") | (x["b"] == "u"), "yes", "no")
    featurizer = CellFeaturizer().fit(x)
    matrix = featurizer.transform(x)
    on_frame = CBAClassifier(minsup=0.1).fit(x, y)
    on_matrix = CBAClassifier(minsup=0.1, blocks=featurizer.blocks_).fit(matrix, y)
    assert len(on_frame.rules_) == len(on_matrix.rules_)
    assert (on_frame.predict(x) == on_matrix.predict(matrix)).all()
    # A suppressed cell satisfies no literal in either form.
    released = x.assign(a="*")
    assert (
        on_frame.predict(released) == on_matrix.predict(featurizer.transform(released))
    ).all()


def test_harness_knows_cba_but_does_not_run_it_by_default() -> None:
    assert "cba" not in MODELS
    assert check_models(["cba", "decision_tree"]) == ("cba", "decision_tree")
    assert isinstance(make_model("cba", 0, [("onehot", 0, 2)]), CBAClassifier)
    assert feature_view("cba", "weka", "midpoint")[0] is not None


def test_bad_parameters_name_themselves() -> None:
    x, y = pd.DataFrame({"a": ["u", "v"]}), np.array(["p", "n"])
    for params, name in (
        ({"minsup": 0.0}, "minsup"),
        ({"minconf": 1.5}, "minconf"),
        ({"max_length": 0}, "max_length"),
        ({"miner": "eclat"}, "miner"),
    ):
        with pytest.raises(InvalidParameterError, match=name):
            CBAClassifier(**params).fit(x, y)
