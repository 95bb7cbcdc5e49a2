"""The hold-out protocol and the 5 x 2 CV harness, with a real tiny anonymizer."""

from __future__ import annotations

import json
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest

from ppdm import recipe
from ppdm.algorithms import ALGORITHMS
from ppdm.algorithms.base import Anonymizer
from ppdm.config import default_config
from ppdm.exceptions import InvalidParameterError
from ppdm.experiments import compare as C
from ppdm.experiments.compare import cell as compare_cell
from ppdm.model import AnonymizationSpec, Release
from ppdm.utility import (
    MODELS,
    cross_validate,
    holdout_utility,
    summarize_cv,
)

QI = ("age", "hours", "sex", "city")


class SuppressEverything(Anonymizer):
    """Every quasi-identifier cell becomes the marker: k-anonymous for any k <= n."""

    name: ClassVar[str] = "test-suppress-everything"
    summary: ClassVar[str] = "test only: suppress every quasi-identifier cell"

    def __init__(self) -> None:
        pass

    def _anonymize(self, table, spec, rng) -> Release:
        released = table.assign(
            **{c: spec.suppression_marker for c in spec.quasi_identifiers}
        )
        return Release(
            tables={"release": released.reset_index(drop=True)},
            algorithm=self.name,
            records_in=len(table),
        )


@pytest.fixture()
def table() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 200
    age = rng.integers(18, 80, n)
    hours = rng.integers(10, 70, n)
    sex = rng.choice(["F", "M"], n)
    city = rng.choice(["north", "south", "east"], n)
    score = (
        (age > 40).astype(int)
        + (hours > 45)
        + (city == "north")
        + rng.normal(0, 0.4, n)
    )
    income = np.where(score > 1.2, ">50K", "<=50K")
    return pd.DataFrame(
        {
            "age": age,
            "hours": hours.astype(float),
            "sex": pd.array(sex, dtype="string"),
            "city": pd.array(city, dtype="string"),
            "income": pd.array(income, dtype="string"),
        }
    )


def _suppress_fn(table_qi=QI):
    spec = AnonymizationSpec.of(
        quasi_identifiers=table_qi, sensitive_attribute=None, target="income", k=5
    )
    anonymizer = SuppressEverything()
    return lambda train: anonymizer.anonymize(train, spec, np.random.default_rng(0))


def test_holdout_with_identity_gives_equal_accuracies(table):
    before = table.copy(deep=True)
    result = holdout_utility(table, lambda train: train, target="income", seed=3)
    pd.testing.assert_frame_equal(table, before)
    assert set(result["accuracy"]) == set(MODELS)
    for scores in result["accuracy"].values():
        assert scores["original"] == scores["anonymized"]
        assert scores["difference"] == 0.0
        assert 0.6 < scores["original"] <= 1.0  # the signal is learnable
    assert result["split"] == {
        "train": 140,
        "test": 60,
        "released_train": 140,
        "lost_records": 0,
    }
    assert "training part only" in result["protocol"]
    json.dumps(result, allow_nan=False)


def test_holdout_suppressing_everything_predicts_the_majority(table):
    result = holdout_utility(table, _suppress_fn(), target="income", seed=3)
    # no feature is left: every model falls back to the training majority class
    test_majority = None
    for name, scores in result["accuracy"].items():
        assert scores["anonymized"] < scores["original"], name
        if test_majority is None:
            test_majority = scores["anonymized"]
        assert scores["anonymized"] == pytest.approx(test_majority)
    counts = table["income"].value_counts()
    assert test_majority == pytest.approx(counts.max() / counts.sum(), abs=0.02)


def test_cross_validate_rows_and_determinism(table):
    calls = []

    def anonymize(train):
        calls.append(train.index.to_numpy())
        return _suppress_fn()(train)

    first = cross_validate(table, anonymize, target="income", seed=11)
    assert len(first) == 5 * 2 * len(MODELS)
    assert sorted(first.groupby(["repeat", "fold"]).size().unique()) == [len(MODELS)]
    assert (first["n_train"] + first["n_test"] == len(table)).all()
    # each repetition's two training halves partition the table
    assert len(calls) == 10
    for r in range(5):
        halves = np.concatenate(calls[2 * r : 2 * r + 2])
        assert sorted(halves) == list(table.index)
    second = cross_validate(table, _suppress_fn(), target="income", seed=11)
    timing = ["seconds_anonymize"]
    pd.testing.assert_frame_equal(
        first.drop(columns=timing), second.drop(columns=timing)
    )
    other = cross_validate(table, _suppress_fn(), target="income", seed=12)
    assert not other["accuracy_original"].equals(first["accuracy_original"])

    summary = summarize_cv(first)
    assert list(summary["model"]) == list(MODELS)
    assert (summary["n"] == 10).all()
    assert (summary["mean"] < summary["mean_original"]).all()


def test_cross_validate_rejects_bad_arguments(table):
    with pytest.raises(InvalidParameterError, match="folds"):
        cross_validate(table, lambda t: t, target="income", seed=0, folds=1)
    with pytest.raises(InvalidParameterError, match="models"):
        cross_validate(table, lambda t: t, target="income", seed=0, models=["svm"])
    with pytest.raises(InvalidParameterError, match="target"):
        cross_validate(table, lambda t: t, target="nope", seed=0)


def _sweep(table, **options):
    """A 2 x 2-fold sweep of the suppressing algorithm on ``table`` at k = 5."""
    config = C.sweep_config(
        default_config("german"),
        list(table.columns),
        quasi_identifiers=QI,
        target="income",
        discretize="mdl",
    )
    return C.plan_comparison(
        config,
        [5],
        algorithms=[SuppressEverything.name],
        table=table,
        models=["decision_tree"],
        repeats=2,
        folds=2,
        **options,
    )


def test_a_sweep_runs_on_the_comparisons_harness(table, monkeypatch):
    monkeypatch.setitem(ALGORITHMS, SuppressEverything.name, SuppressEverything)
    plan = _sweep(table)
    result = C.run_comparison(plan, measure_memory=False)
    rows = result.rows
    assert set(rows["status"]) == {"ok"}
    assert len(rows) == 2 * 2 * 2  # (baseline, k = 5) x repeats x folds
    by_k = rows.groupby("k")["accuracy"].mean()
    assert by_k[5] < by_k[1]  # suppressing every quasi-identifier costs accuracy
    # The same folds as cross_validate (the helper of the hold-out protocol).
    assert [len(s.train) for s in plan.splits] == [100] * 4
    unit = next(c for c in plan.candidates if c.algorithm == SuppressEverything.name)
    split = plan.splits[0]
    made = recipe.anonymize_training_split(
        compare_cell.recipe_of(plan, unit),
        table.iloc[split.train],
        table.iloc[split.test],
    )
    ((_, view),) = made.views  # the one training view of a one-table release
    assert (view[list(QI)] == "*").all().all()


def test_a_sweep_records_how_the_models_read_unknown_cells(table, monkeypatch):
    monkeypatch.setitem(ALGORITHMS, SuppressEverything.name, SuppressEverything)
    weka = C.run_comparison(_sweep(table), measure_memory=False)
    zeros = C.run_comparison(
        _sweep(table, missing="zeros", ranges="uniform"), measure_memory=False
    )
    assert "missing" not in weka.config and "ranges" not in weka.config
    assert (zeros.config["missing"], zeros.config["ranges"]) == ("zeros", "uniform")
    assert weka.config["protocol"] != zeros.config["protocol"]
    with pytest.raises(InvalidParameterError, match="missing must be one of"):
        _sweep(table, missing="mean")


def test_membership_naive_bayes_by_hand():
    from ppdm.utility import MembershipNB

    # one nominal attribute (2 values) and one numeric attribute
    x = np.array([[1.0, 0.0, 1.0], [0.5, 0.5, 2.0], [0.0, 1.0, np.nan]])
    y = np.array(["A", "A", "B"])
    model = MembershipNB(blocks=[("onehot", 0, 2), ("numeric", 2, 3)], n_bins=2)
    model.fit(x, y)
    # numeric edges: the median of the known training values (1, 2) -> 1.5
    np.testing.assert_allclose(model.edges_[1], [1.5])
    # nominal: W_A = (1.5, 0.5), W_B = (0, 1); numeric: A has one row per bin,
    # B none (its value is unknown and ignored); Laplace alpha = 1
    test = np.array([[1.0, 0.0, 5.0], [0.0, 0.0, np.nan]])
    expected_a = np.log(2 / 3) + np.log(2.5 / 4) + np.log(2 / 4)
    expected_b = np.log(1 / 3) + np.log(1 / 3) + np.log(1 / 2)
    np.testing.assert_allclose(
        model.predict_log_joint(test),
        [[expected_a, expected_b], [np.log(2 / 3), np.log(1 / 3)]],
    )
    assert model.predict(test).tolist() == ["A", "A"]


def test_discretize_prepare_fits_on_the_training_part_only(table):
    from ppdm.utility.preprocessing import make_discretize_prepare

    prepare = make_discretize_prepare(["age"], "income")
    train, test = table.iloc[:100], table.iloc[100:]
    shifted = test.assign(age=test["age"] + 1000)  # values the training part never saw
    binned_train, binned_test = prepare(train, shifted)
    categories = list(binned_train["age"].cat.categories)
    assert list(binned_test["age"].cat.categories) == categories
    assert (binned_test["age"] == categories[-1]).all()  # all above every cut
    pd.testing.assert_frame_equal(train, table.iloc[:100])  # inputs untouched


def test_membership_naive_bayes_bins_numbers_over_their_observed_range():
    from ppdm.utility import MembershipNB

    x = np.array([[1.0], [1.5], [3.0], [3.5]])
    y = np.array(["lo", "lo", "hi", "hi"])
    model = MembershipNB(blocks=[("numeric", 0, 1)], ranges=[(0.0, 8.0)], n_bins=4)
    model.fit(x, y)
    np.testing.assert_allclose(model.edges_[0], [2.0, 4.0, 6.0])
    # 0.5 falls in the bin of the "lo" rows, 3.9 in that of the "hi" rows, and
    # 7.0 in a bin no training row reached: the prior decides (a tie -> "hi")
    assert model.predict(np.array([[0.5], [3.9], [7.0]])).tolist() == ["lo", "hi", "hi"]
