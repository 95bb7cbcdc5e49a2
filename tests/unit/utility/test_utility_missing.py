"""Suppressed cells as missing values, the way the kACTUS paper's learners did.

Kisilevich, Rokach, Elovici & Shapira, "Efficient Multidimensional
Suppression for K-Anonymity", IEEE TKDE 22(3):334-347, 2010, train Weka's
J48, NaiveBayes and Logistic on releases whose suppressed cells are missing
values. These tests pin the emulation (fractional instances, skipping,
mode/mean replacement) and the artefact it must avoid: a release in which a
value is known only in a class-skewed subset of rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.exceptions import InvalidParameterError
from ppdm.utility import (
    MISSING,
    BlockImputer,
    cross_validate,
    make_model,
    train_and_score,
)
from ppdm.utility.features import CellFeaturizer
from ppdm.utility.learners import UnknownIndicator


def _skewed_release(n: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Original table and a release where ``noise`` is known only for ">50K".

    ``signal`` predicts the class moderately; ``noise`` and ``level`` are
    independent of it. The release keeps ``noise`` and ``level`` only in the
    rows of the minority class (as kACTUS keeps a quasi-identifier only on the
    tree paths that test it), so "value known" means ">50K" in the release
    and nothing in the test data, where every value is known.
    """
    rng = np.random.default_rng(seed)
    signal = rng.choice(["a", "b", "c"], n)
    rich = np.where(signal == "a", rng.random(n) < 0.55, rng.random(n) < 0.12)
    income = np.where(rich, ">50K", "<=50K")
    original = pd.DataFrame(
        {
            "signal": pd.array(signal, dtype="string"),
            "noise": pd.array(rng.choice(["p", "q", "r"], n), dtype="string"),
            "level": rng.integers(0, 100, n),
            "income": pd.array(income, dtype="string"),
        }
    )
    released = original.astype({"level": "string"}).astype(object)
    hidden = ~rich
    released.loc[hidden, "noise"] = "*"
    released.loc[hidden, "level"] = "*"
    return original, released


@pytest.mark.parametrize("model", ["decision_tree", "naive_bayes"])
def test_weka_treatment_does_not_learn_known_means_class(model):
    original, released = _skewed_release(3000, seed=1)
    test, _ = _skewed_release(3000, seed=2)
    majority = (test["income"] == "<=50K").mean()
    scores = {
        missing: train_and_score(
            original,
            released,
            test,
            target="income",
            seed=0,
            models=[model],
            missing=missing,
        )[model]
        for missing in MISSING
    }
    weka = scores["weka"]
    # trained on the release, as good as the majority rule at least, and
    # close to the same model trained on the original
    assert weka["anonymized"] >= majority - 0.01
    assert weka["anonymized"] >= weka["original"] - 0.03
    if model == "decision_tree":
        # the all-zero encoding falls into the trap: "known => >50K"
        assert scores["zeros"]["anonymized"] < majority - 0.2


def test_zeros_logistic_regression_learns_the_artefact_and_weka_does_less():
    original, released = _skewed_release(3000, seed=3)
    test, _ = _skewed_release(3000, seed=4)
    result = {
        missing: train_and_score(
            original,
            released,
            test,
            target="income",
            seed=0,
            models=["logistic_regression"],
            missing=missing,
        )["logistic_regression"]["anonymized"]
        for missing in MISSING
    }
    assert result["weka"] > result["zeros"]


def test_block_imputer_uses_mode_for_one_hot_and_mean_for_numbers():
    blocks = [("numeric", 0, 1), ("onehot", 1, 4)]
    x = np.array(
        [
            [1.0, 0, 1, 0],
            [3.0, 0, 1, 0],
            [np.nan, 1, 0, 0],
            [5.0, 0, 0, 0],  # unknown nominal
            [np.nan, 0, 0, 0],
        ]
    )
    out = BlockImputer(blocks=blocks).fit(x).transform(x)
    np.testing.assert_allclose(out[:, 0], [1, 3, 3, 5, 3])
    np.testing.assert_allclose(out[3, 1:], [0, 1, 0])
    np.testing.assert_allclose(out[4, 1:], [0, 1, 0])
    np.testing.assert_allclose(out[:3, 1:], x[:3, 1:])


def test_ranges_spread_over_bins_so_naive_bayes_keeps_the_majority():
    # German credit under Mondrian: integer attributes released as their full
    # range. With the range read as its midpoint (a bin no value falls in),
    # Laplace smoothing pushed every prediction to the minority class.
    rng = np.random.default_rng(9)
    n = 600
    columns = {f"v{i}": rng.integers(1, 5, n) for i in range(6)}
    credit = np.where(rng.random(n) < 0.7, "good", "bad")
    # one attribute released as is, so that the release still varies (a
    # constant release would be answered by the majority rule directly)
    colour = pd.array(rng.choice(["x", "y"], n), dtype="string")
    original = pd.DataFrame(
        {**columns, "colour": colour, "credit": pd.array(credit, dtype="string")}
    )
    released = original.astype(object)
    for name in columns:
        released[name] = "[1, 4]"
    test = original.sample(frac=1.0, random_state=1)
    score = train_and_score(
        original, released, test, target="credit", seed=0, models=["naive_bayes"]
    )["naive_bayes"]["anonymized"]
    assert score >= (test["credit"] == "good").mean() - 0.02


def test_bins_view_of_cells():
    original = pd.DataFrame({"age": [0, 100], "c": ["x", "y"]})
    featurizer = CellFeaturizer(numeric_bins=4).fit(original)
    assert featurizer.blocks_ == [("bins", 0, 4), ("onehot", 4, 6)]
    released = pd.DataFrame(
        {"age": ["[0, 50]", "60", "*", "{10|80}", "< 25"], "c": "*"}
    )
    out = featurizer.transform(released).toarray()[:, :4]
    np.testing.assert_allclose(
        out,
        [
            [0.5, 0.5, 0, 0],
            [0, 0, 1, 0],
            [0, 0, 0, 0],
            [0.5, 0, 0, 0.5],
            [1, 0, 0, 0],
        ],
    )
    np.testing.assert_allclose(
        featurizer.transform(original).toarray()[:, :4], [[1, 0, 0, 0], [0, 0, 0, 1]]
    )


@settings(max_examples=40, deadline=None)
@given(
    low=st.floats(-50, 150, allow_nan=False),
    width=st.floats(0, 200, allow_nan=False),
)
def test_bin_memberships_of_a_range_sum_to_one(low, width):
    original = pd.DataFrame({"age": [0.0, 100.0]})
    featurizer = CellFeaturizer(numeric_bins=7).fit(original)
    cell = f"[{low!r}, {low + width!r}]"
    row = featurizer.transform(pd.DataFrame({"age": [cell]})).toarray()[0]
    assert row.sum() == pytest.approx(1.0)
    assert (row >= 0).all()


def test_missing_option_is_validated():
    with pytest.raises(InvalidParameterError):
        make_model("decision_tree", 0, missing="mice")
    original, released = _skewed_release(60, seed=0)
    with pytest.raises(InvalidParameterError):
        cross_validate(original, lambda t: t, target="income", seed=0, missing="zero")
    with pytest.raises(InvalidParameterError):
        CellFeaturizer(numeric_bins=0).fit(original)


# -- the missing-value indicator ("indicator") ----------------------------------------


def test_a_suppressed_cell_gets_the_indicator_and_an_all_zero_block():
    original = pd.DataFrame({"sex": ["F", "M", "F", "M"], "age": [20, 40, 30, 50]})
    released = pd.DataFrame(
        {"sex": ["F", "*", "F", "M"], "age": ["[20, 30]", "40", "*", "50"]}
    )
    featurizer = CellFeaturizer().fit(original)
    x = featurizer.transform(released)
    step = UnknownIndicator(blocks=featurizer.blocks_, attributes=["sex", "age"])
    out = step.fit(x).transform(x)
    assert sp.issparse(out)  # the features stay sparse
    mean = (25 + 40 + 50) / 3  # of the known training ages (a range: its midpoint)
    np.testing.assert_allclose(
        out.toarray(),
        [
            [1, 0, 25, 0, 0],
            [0, 0, 40, 1, 0],  # "*" sex: its one-hot block all zero, indicator 1
            [1, 0, mean, 0, 1],  # "*" age: the training mean, indicator 1
            [0, 1, 50, 0, 0],
        ],
    )
    assert step.get_feature_names_out(featurizer.feature_names_).tolist() == [
        "sex=F",
        "sex=M",
        "age",
        "sex suppressed",
        "age suppressed",
    ]
    # Test rows: the indicators fitted on the training rows, their mean kept.
    test = pd.DataFrame({"sex": ["M", None], "age": [np.nan, 35.0]})
    np.testing.assert_allclose(
        step.transform(featurizer.transform(test)).toarray(),
        [[0, 1, mean, 0, 1], [0, 0, 35, 1, 0]],
    )
    # An attribute never unknown in training gets no indicator.
    known = released.assign(age=["20", "40", "30", "50"])
    only_sex = step.fit(featurizer.transform(known))
    assert only_sex.get_feature_names_out(featurizer.feature_names_).tolist()[3:] == [
        "sex suppressed"
    ]


def test_naive_bayes_weighs_an_unknown_cell_by_its_rate_in_the_class():
    blocks = [("onehot", 0, 2)]
    x = np.array([[0, 0], [0, 0], [1, 0], [0, 0], [0, 1]], dtype=float)
    y = np.array(["a", "a", "a", "b", "b"])
    nb = make_model("naive_bayes", 0, blocks, missing="indicator").fit(x, y)
    skip = make_model("naive_bayes", 0, blocks, missing="weka").fit(x, y)
    # P(unknown | a) = (2 + 1) / (3 + 2), P(unknown | b) = (1 + 1) / (2 + 2)
    np.testing.assert_allclose(np.exp(nb.log_unknown_[0]), [0.6, 0.5])
    unknown, known = np.zeros((1, 2)), np.array([[1.0, 0.0]])
    np.testing.assert_allclose(
        nb.predict_log_joint(unknown),
        skip.predict_log_joint(unknown) + np.log([[0.6, 0.5]]),
    )
    # a known cell reads P(v | c) of the known cells, as without the indicator
    np.testing.assert_allclose(
        nb.predict_log_joint(known), skip.predict_log_joint(known)
    )


def test_logistic_regression_reads_the_indicator_columns():
    original, released = _skewed_release(400, seed=5)
    featurizer = CellFeaturizer(exclude=["income"]).fit(original)
    x = featurizer.transform(released)
    model = make_model(
        "logistic_regression", 0, featurizer.blocks_, missing="indicator"
    ).fit(x, released["income"].astype(str).to_numpy())
    coefficients = model.pipeline_.named_steps["model"].coef_
    # noise and level are suppressed in training: two indicators more
    assert coefficients.shape[1] == x.shape[1] + 2
    assert model.predict_proba(featurizer.transform(original)).shape == (400, 2)
