"""Several training views: DMPD's naive Bayes combination, by hand and by property."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ppdm.algorithms.base import Anonymizer
from ppdm.exceptions import InvalidParameterError
from ppdm.model import AnonymizationSpec, Release
from ppdm.utility import (
    as_training_views,
    cross_validate,
    holdout_utility,
    naive_bayes_combination,
    render_report_html,
    utility_report,
)
from ppdm.utility.c45_learner import C45Learner
from ppdm.utility.learners import MembershipNB
from ppdm.utility.scoring import predict_views, train_and_score

# (a, b, y, count): view 1 holds a, view 2 holds b. a = p: 7 yes, 3 no;
# a = q: 3 yes, 11 no; b the same by symmetry; 10 yes and 14 no in all.
COUNTS = [
    ("p", "r", "yes", 5),
    ("p", "r", "no", 1),
    ("p", "s", "yes", 2),
    ("p", "s", "no", 2),
    ("q", "r", "yes", 2),
    ("q", "r", "no", 2),
    ("q", "s", "yes", 1),
    ("q", "s", "no", 9),
]
TEST_ROWS = [("p", "r", "yes"), ("p", "s", "no"), ("q", "r", "yes"), ("q", "s", "no")]


def _frame(rows) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "a": pd.array([r[0] for r in rows], dtype="string"),
            "b": pd.array([r[1] for r in rows], dtype="string"),
            "y": pd.array([r[2] for r in rows], dtype="string"),
        }
    )


@pytest.fixture()
def train() -> pd.DataFrame:
    return _frame([(a, b, y) for a, b, y, n in COUNTS for _ in range(n)])


@pytest.fixture()
def test_rows() -> pd.DataFrame:
    return _frame(TEST_ROWS)


def _projections(table: pd.DataFrame) -> list[pd.DataFrame]:
    return [table[["a", "y"]], table[["b", "y"]]]


def _combine_by_hand(p_yes_1, p_yes_2, prior_yes):
    """DMPD eq. 1 with two views, in fractions: P(yes | x) after normalizing."""
    yes = p_yes_1 * p_yes_2 / prior_yes
    no = (1 - p_yes_1) * (1 - p_yes_2) / (1 - prior_yes)
    return yes / (yes + no)


PRIOR_YES = Fraction(10, 24)


def test_two_projections_naive_bayes_by_hand(train, test_rows):
    # Per view, categorical naive Bayes with Laplace alpha = 1 on one attribute:
    # P(p | yes) = (7 + 1) / (10 + 2), P(p | no) = (3 + 1) / (14 + 2).
    likelihood = {
        ("p", "yes"): Fraction(8, 12),
        ("q", "yes"): Fraction(4, 12),
        ("p", "no"): Fraction(4, 16),
        ("q", "no"): Fraction(12, 16),
    }

    def posterior_yes(value):  # the same table serves b, with r / s for p / q
        value = {"r": "p", "s": "q"}.get(value, value)
        yes = PRIOR_YES * likelihood[(value, "yes")]
        no = (1 - PRIOR_YES) * likelihood[(value, "no")]
        return yes / (yes + no)

    prediction = predict_views(
        train,
        _projections(train),
        test_rows,
        target="y",
        model="naive_bayes",
        seed=0,
    )
    assert prediction.classes.tolist() == ["no", "yes"]
    np.testing.assert_allclose(prediction.prior, [14 / 24, 10 / 24])
    expected = [
        float(_combine_by_hand(posterior_yes(a), posterior_yes(b), PRIOR_YES))
        for a, b, _ in TEST_ROWS
    ]
    np.testing.assert_allclose(prediction.combined[:, 1], expected, rtol=1e-12)
    np.testing.assert_allclose(
        prediction.per_view["view 1"][:, 1],
        [float(posterior_yes(a)) for a, _, _ in TEST_ROWS],
        rtol=1e-12,
    )
    # (p, r): 0.849 yes; (q, s): no; the mixed rows lean to "no"
    assert prediction.predict().tolist() == ["yes", "no", "no", "no"]


def test_two_projections_c45_with_laplace_leaves_by_hand(train, test_rows):
    # Each view's tree splits on its one attribute; Laplace-corrected leaves:
    # a = p holds 7 yes of 10 -> (7 + 1) / (10 + 2); a = q: (3 + 1) / (14 + 2).
    leaf_yes = {"p": Fraction(8, 12), "q": Fraction(4, 16)}
    leaf_yes.update({"r": leaf_yes["p"], "s": leaf_yes["q"]})
    prediction = predict_views(
        train,
        _projections(train),
        test_rows,
        target="y",
        model="decision_tree",
        seed=0,
    )
    expected = [
        float(_combine_by_hand(leaf_yes[a], leaf_yes[b], PRIOR_YES))
        for a, b, _ in TEST_ROWS
    ]
    np.testing.assert_allclose(prediction.combined[:, 1], expected, rtol=1e-12)
    # (p, r): 2/3 * 2/3 / (10/24) = 1.0667 against 1/3 * 1/3 / (14/24) = 0.1905
    assert expected[0] == pytest.approx(1.0667 / (1.0667 + 0.1905), abs=1e-3)
    # the accuracy train_and_score reports is that of these predictions
    scores = train_and_score(
        train,
        _projections(train),
        test_rows,
        target="y",
        seed=0,
        models=["decision_tree"],
    )["decision_tree"]
    labels = np.array([y for _, _, y in TEST_ROWS])
    assert scores["anonymized"] == pytest.approx(
        np.mean(prediction.predict() == labels)
    )
    assert set(scores["per_view"]) == {"view 1", "view 2"}


def test_c45_laplace_leaves_and_unchanged_prediction(train):
    x = np.column_stack([train["a"] == "p", train["a"] == "q"]).astype(float)
    y = train["y"].to_numpy()
    plain = C45Learner(blocks=[("onehot", 0, 2)]).fit(x, y)
    laplace = C45Learner(blocks=[("onehot", 0, 2)], laplace=True).fit(x, y)
    probe = np.array([[1.0, 0.0], [0.0, 1.0]])
    # classes_ = ["no", "yes"]
    np.testing.assert_allclose(plain.predict_proba(probe)[:, 1], [7 / 10, 3 / 14])
    np.testing.assert_allclose(laplace.predict_proba(probe)[:, 1], [8 / 12, 4 / 16])
    assert plain.predict(probe).tolist() == laplace.predict(probe).tolist()
    with pytest.raises(InvalidParameterError, match="laplace"):
        C45Learner(laplace="yes").fit(x, y)


def test_membership_nb_probabilities_are_the_normalized_joint():
    rng = np.random.default_rng(4)
    x = rng.random((50, 3))
    y = np.where(x[:, 0] > 0.5, "u", "v")
    model = MembershipNB(blocks=[("onehot", 0, 2), ("numeric", 2, 3)]).fit(x, y)
    joint = model.predict_log_joint(x)
    expected = np.exp(joint) / np.exp(joint).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(model.predict_proba(x), expected, rtol=1e-10)
    assert (
        model.classes_[model.predict_proba(x).argmax(axis=1)] == model.predict(x)
    ).all()


probability_rows = arrays(
    float,
    (5, 3),
    elements=st.floats(0.01, 1.0, allow_nan=False),
).map(lambda a: a / a.sum(axis=1, keepdims=True))


@settings(max_examples=60, deadline=None)
@given(
    views=st.lists(probability_rows, min_size=1, max_size=4),
    prior=arrays(float, 3, elements=st.floats(0.05, 1.0)).map(lambda p: p / p.sum()),
)
def test_combination_is_the_product_over_the_prior_power(views, prior):
    combined = naive_bayes_combination(views, prior)
    # independent computation in plain products
    raw = np.prod(np.stack(views), axis=0) / prior ** (len(views) - 1)
    np.testing.assert_allclose(
        combined, raw / raw.sum(axis=1, keepdims=True), rtol=1e-9
    )
    np.testing.assert_allclose(combined.sum(axis=1), 1.0)
    # the order of the views does not matter
    np.testing.assert_allclose(
        naive_bayes_combination(views[::-1], prior), combined, rtol=1e-9
    )
    if len(views) == 1:  # one view: its own probabilities
        np.testing.assert_allclose(combined, views[0], rtol=1e-9)


def test_combination_rejects_bad_input():
    with pytest.raises(InvalidParameterError, match="at least one view"):
        naive_bayes_combination([], np.array([0.5, 0.5]))
    with pytest.raises(InvalidParameterError, match="prior"):
        naive_bayes_combination([np.array([[0.5, 0.5]])], np.array([1.0, 0.0]))
    with pytest.raises(InvalidParameterError, match="shape"):
        naive_bayes_combination(
            [np.array([[0.5, 0.5]]), np.array([[0.2, 0.3, 0.5]])], np.array([0.5, 0.5])
        )


def test_training_views_from_each_kind_of_result(train):
    one = as_training_views(train)
    assert [name for name, _ in one] == ["release"]
    release = Release(
        tables={"z": train[["b", "y"]], "a": train[["a", "y"]]}, algorithm="t"
    )
    assert [name for name, _ in as_training_views(release)] == ["a", "z"]

    class Reversed:
        def training_views(self, release):
            return [release.tables["z"], release.tables["a"]]

    named = as_training_views(release, algorithm=Reversed())
    assert [name for name, _ in named] == ["z", "a"]
    assert [name for name, _ in as_training_views(_projections(train))] == [
        "view 1",
        "view 2",
    ]
    with pytest.raises(InvalidParameterError, match="DataFrame"):
        as_training_views("release.csv")
    with pytest.raises(InvalidParameterError, match="no training view"):
        as_training_views([])


class TwoProjections(Anonymizer):
    """Test only: the first quasi-identifier in one projection, the rest in another."""

    name: ClassVar[str] = "test-two-projections"
    summary: ClassVar[str] = "test only: two projections, each with the target"
    releases: ClassVar[str] = "projections"

    def __init__(self) -> None:
        pass

    def _anonymize(self, table, spec, rng) -> Release:
        qi = list(spec.quasi_identifiers)
        tables = {
            "p1": table[[qi[0], spec.target]].reset_index(drop=True),
            "p2": table[[*qi[1:], spec.target]].reset_index(drop=True),
        }
        return Release(
            tables=tables,
            algorithm=self.name,
            suppression_marker=spec.suppression_marker,
            records_in=len(table),
        )


@pytest.fixture()
def people() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 300
    age = rng.integers(18, 80, n)
    city = rng.choice(["north", "south", "east"], n)
    score = (age > 45) + (city == "north") + rng.normal(0, 0.5, n)
    return pd.DataFrame(
        {
            "age": age,
            "city": pd.array(city, dtype="string"),
            "sex": pd.array(rng.choice(["F", "M"], n), dtype="string"),
            "income": pd.array(np.where(score > 0.9, "hi", "lo"), dtype="string"),
        }
    )


def _spec() -> AnonymizationSpec:
    return AnonymizationSpec.of(("age", "city"), None, "income", k=2)


def test_holdout_and_cross_validation_on_a_two_projection_release(people):
    algorithm = TwoProjections()

    def anonymize(train):
        release = algorithm.anonymize(train, _spec(), np.random.default_rng(0))
        return algorithm.training_views(release)

    holdout = holdout_utility(people, anonymize, target="income", seed=1)
    assert holdout["views"] == ["view 1", "view 2"]
    assert holdout["split"]["released_train_per_view"] == {"view 1": 210, "view 2": 210}
    for scores in holdout["accuracy"].values():
        assert set(scores["per_view"]) == {"view 1", "view 2"}
        assert 0.5 < scores["anonymized"] <= 1.0
        low, high = scores["anonymized_ci95"]
        assert low <= scores["anonymized"] <= high
    assert "naive Bayes rule of DMPD" in holdout["protocol"]
    json.dumps(holdout, allow_nan=False)

    rows = cross_validate(people, anonymize, target="income", seed=2, repeats=1)
    assert len(rows) == 2 * 3 and rows["accuracy"].between(0.5, 1.0).all()
    assert (rows["n_released"] == rows["n_train"]).all()


def test_utility_report_of_a_two_projection_release(people):
    algorithm = TwoProjections()
    spec = _spec()
    release = algorithm.anonymize(people, spec, np.random.default_rng(0))
    released = {
        name: frame.astype(str) for name, frame in release.tables.items()
    }  # as read back from the candidate CSVs
    utility, page = utility_report(
        people,
        released,
        algorithm=algorithm,
        spec=spec,
        discretize_settings={"method": "mdl", "n_bins": 5, "columns": None},
        test_size=0.3,
        seed=0,
        evidence={},
        risk=None,
        covers=None,
    )
    json.dumps(utility, allow_nan=False)
    assert set(utility["tables"]) == {"p1", "p2"}
    assert utility["tables"]["p1"]["quasi_identifiers"] == ["age"]
    assert utility["tables"]["p2"]["quasi_identifiers"] == ["city"]
    assert utility["release"]["released_in"] == {"age": ["p1"], "city": ["p2"]}
    assert utility["holdout"]["views"] == ["p1", "p2"]
    # the age column is binned on the training split before the algorithm runs
    assert list(utility["holdout"]["preprocessing"]["cut_points"]) == ["age"]
    for heading in ("Training views (2)", "whole release", "Cut points fitted"):
        assert heading in page
    assert page == render_report_html(
        utility, title="test-two-projections: 2-anonymity"
    )
