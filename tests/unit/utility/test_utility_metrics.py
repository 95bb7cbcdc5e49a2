"""Balanced accuracy, ROC AUC and the majority-class rule: known answers,
scikit-learn as the reference, and the report's flags and verdict line."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

from ppdm.algorithms import get_algorithm
from ppdm.config import load_config
from ppdm.experiments import compare as C
from ppdm.experiments.compare import cell as compare_cell
from ppdm.experiments.compare import grid as compare_grid
from ppdm.generalization.hierarchies import load_hierarchies
from ppdm.model import AnonymizationSpec
from ppdm.prepare import datasets
from ppdm.utility import holdout_utility
from ppdm.utility.metrics import (
    balanced_accuracy,
    balanced_accuracy_interval,
    class_scores,
    macro_roc_auc,
    roc_auc_interval,
    zero_rule,
)
from ppdm.utility.preprocessing import Binning
from ppdm.utility.report import (
    accuracy_markdown,
    build_utility,
    readable_label,
    release_verdict,
    render_report_html,
    utility_report,
)
from ppdm.utility.scoring import train_and_score

ROOT = Path(__file__).resolve().parents[3]


def test_balanced_accuracy_by_hand_and_by_scikit_learn():
    y_true = ["a", "a", "a", "a", "b", "b"]
    y_pred = ["a", "a", "a", "b", "b", "a"]
    # recall of a: 3/4, of b: 1/2
    assert balanced_accuracy(y_true, y_pred) == pytest.approx(0.625)
    assert balanced_accuracy(y_true, y_pred) == pytest.approx(
        balanced_accuracy_score(y_true, y_pred)
    )
    # a constant prediction scores 1 / classes, whatever its plain accuracy
    assert balanced_accuracy(y_true, ["a"] * 6) == pytest.approx(0.5)


def test_binary_auc_by_hand_and_by_scikit_learn():
    y = ["a", "a", "b", "b"]
    proba = np.array([[0.9, 0.1], [0.4, 0.6], [0.6, 0.4], [0.2, 0.8]])
    # positives (b) score 0.4, 0.8; negatives 0.1, 0.6: 3 of 4 pairs ordered
    assert macro_roc_auc(y, proba, ["a", "b"]) == pytest.approx(0.75)
    assert macro_roc_auc(y, proba, ["a", "b"]) == pytest.approx(
        roc_auc_score(y, proba[:, 1])
    )
    # Hanley & McNeil: A = 0.75, two positives, two negatives
    q1, q2 = 0.75 / 1.25, 2 * 0.75**2 / 1.75
    se = math.sqrt((0.75 * 0.25 + (q1 - 0.75**2) + (q2 - 0.75**2)) / 4)
    low, high = roc_auc_interval(y, proba, ["a", "b"])
    assert low == pytest.approx(max(0.0, 0.75 - 1.959964 * se), abs=1e-5)
    assert high == 1.0


def test_macro_one_vs_rest_auc_equals_scikit_learn():
    rng = np.random.default_rng(3)
    y = rng.choice(["x", "y", "z"], 60)
    proba = rng.dirichlet([1, 1, 1], 60)
    expected = roc_auc_score(y, proba, multi_class="ovr", average="macro")
    assert macro_roc_auc(y, proba, ["x", "y", "z"]) == pytest.approx(expected)
    # a class the model never saw scores 0 for every row
    two = macro_roc_auc(
        ["x", "x", "y", "z"], np.array([[1.0], [1.0], [0.0], [0.0]]), ["x"]
    )
    # x vs rest: perfect (1.0); y and z vs rest: all scores 0, ties: 0.5 each
    assert two == pytest.approx((1.0 + 0.5 + 0.5) / 3)


def test_zero_rule_and_class_scores_known_answers():
    rule = zero_rule(["a", "a", "a", "b"], ["a", "b", "b", "b", "a"])
    assert rule["class"] == "a"
    assert rule["accuracy"] == pytest.approx(0.4)
    assert rule["balanced_accuracy"] == pytest.approx(0.5)
    assert rule["roc_auc"] == pytest.approx(0.5)
    low, high = rule["accuracy_ci95"]
    assert low < 0.4 < high
    scores = class_scores(
        ["a", "b", "b"],
        ["a", "b", "a"],
        np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]]),
        ["a", "b"],
    )
    assert scores["accuracy"] == pytest.approx(2 / 3)
    assert scores["balanced_accuracy"] == pytest.approx((1 + 0.5) / 2)
    assert scores["roc_auc"] == pytest.approx(1.0)
    low, high = balanced_accuracy_interval(["a", "b", "b"], ["a", "b", "a"])
    assert 0.0 <= low < 0.75 < high <= 1.0


def _people(n: int = 300, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    city = rng.choice(["north", "south", "east"], n)
    score = (age > 50) + (city == "north") + rng.normal(0, 0.3, n)
    # a skewed target: the majority class is about 70 %
    income = np.where(score > 0.8, "high", "low")
    return pd.DataFrame(
        {
            "age": age,
            "city": city,
            "disease": rng.choice(["flu", "cold", "none"], n),
            "income": income,
        }
    )


SPEC = AnonymizationSpec.of(("age", "city"), "disease", "income", k=5, l=2)


def test_holdout_scores_against_scikit_learn_on_the_same_rows():
    table = _people()
    result = holdout_utility(table, lambda train: train, target="income", seed=1)
    rule = result["zero_r"]
    # the rule's figures are those of scikit-learn on the same test rows
    train = table.sample(frac=1.0, random_state=0)  # the classes, any order
    assert rule["class"] == train["income"].value_counts().idxmax()
    n_test = result["split"]["test"]
    assert rule["accuracy"] * n_test == pytest.approx(round(rule["accuracy"] * n_test))
    for entry in result["accuracy"].values():
        for side in ("original", "anonymized"):
            assert 0.5 <= entry[f"{side}_roc_auc"] <= 1.0
            low, high = entry[f"{side}_balanced_accuracy_ci95"]
            assert low <= entry[f"{side}_balanced_accuracy"] <= high
        # the identity release: the release side is the baseline
        assert entry["anonymized_roc_auc"] == entry["original_roc_auc"]
        assert entry["difference"] == 0.0


def _suppress_all(train: pd.DataFrame) -> pd.DataFrame:
    return train.assign(age="*", city="*")


def test_suppressing_everything_is_flagged_never_shown_as_no_loss():
    table = _people().drop(columns=["disease"])  # nothing left to learn from
    holdout = holdout_utility(table, _suppress_all, target="income", seed=1)
    for entry in holdout["accuracy"].values():
        # both fall back to the majority class: no better than ZeroR
        assert entry["anonymized"] == pytest.approx(holdout["zero_r"]["accuracy"])
        assert entry["anonymized_balanced_accuracy"] == pytest.approx(0.5)
        assert entry["no_better_than_zero_r"] == {"original": False, "anonymized": True}
    released = _suppress_all(table)
    spec = AnonymizationSpec.of(("age", "city"), None, "income", k=5)
    utility = build_utility(table, {"release": released}, spec, holdout, {})
    verdict = utility["verdict"]
    assert verdict["quasi_identifiers"] == {"age": 0.0, "city": 0.0}
    assert "every quasi-identifier is suppressed" in verdict["warnings"][0]
    page = render_report_html(utility, title="t")
    assert "no better than always predicting the majority class" in page
    assert "not that nothing was lost" in page
    markdown = accuracy_markdown(utility)
    assert "NO BETTER" in markdown and "every quasi-identifier" in markdown


def test_verdict_shares_dropped_columns_and_target_sensitive_only():
    table = _people(n=10)
    released = table.astype({"age": object})
    released.loc[:3, "age"] = "*"  # 4 of 10 suppressed
    released = released.iloc[:8]  # 2 records dropped
    verdict = release_verdict(table, {"release": released}, SPEC)
    assert verdict["quasi_identifiers"]["age"] == pytest.approx(4 / 10)
    assert verdict["quasi_identifiers"]["city"] == pytest.approx(8 / 10)
    assert verdict["dropped"] == [] and verdict["warnings"] == []
    only = {"p1": table[["disease", "income"]]}
    verdict = release_verdict(table, only, SPEC)
    assert verdict["dropped"] == ["age", "city"]
    assert any("only the target and the sensitive" in w for w in verdict["warnings"])
    assert "Dropped columns: age, city." in verdict["line"]


def test_two_algorithms_on_one_table_show_the_same_original_baseline():
    config = load_config(ROOT / "configs" / "german.yaml")
    table = compare_grid._sample(
        datasets.load("german")[list(config.released_columns)].reset_index(drop=True),
        "credit",
        300,
        0,
    )
    hierarchies = load_hierarchies(ROOT / "hierarchies" / "german")
    spec = AnonymizationSpec.of(
        tuple(config.quasi_identifiers),
        None,
        "credit",
        k=5,
        suppression_limit=0.05,
        hierarchies=hierarchies,
    )
    figures = {}
    for name in ("mondrian", "lattice-optimal"):
        algorithm = get_algorithm(name)
        utility, _ = utility_report(
            table,
            {"release": table},
            algorithm=algorithm,
            spec=spec,
            discretize_settings=config.discretize,
            seed=config.seed,
            models=("decision_tree", "naive_bayes"),
        )
        figures[name] = {
            model: {k: v for k, v in entry.items() if k.startswith("original")}
            for model, entry in utility["holdout"]["accuracy"].items()
        }
        figures[name]["zero_r"] = utility["holdout"]["zero_r"]
    assert figures["mondrian"] == figures["lattice-optimal"]
    # `ppdm compare`: its one baseline per fold is the discretized original
    # training half, whatever the algorithms compared
    plan = C.plan_comparison(
        config, [5], algorithms=["mondrian", "lattice-optimal"], table=table
    )
    split = plan.splits[0]
    baseline = next(c for c in plan.candidates if c.algorithm == C.BASELINE)
    got = C.evaluate_fold(plan, baseline, split).accuracy
    prepare = Binning.of(config.discretize).prepare_for(
        table, config.quasi_identifiers, config.target
    )
    train, test = prepare(table.iloc[split.train], table.iloc[split.test])
    expected = train_and_score(
        train,
        train,
        test,
        target="credit",
        seed=config.seed,
        models=plan.models,
        with_original=False,
        covers=compare_cell._covers(plan),
    )
    assert got == {m: expected[m]["anonymized"] for m in plan.models}
    assert [c.algorithm for c in plan.candidates].count(C.BASELINE) == 1


@pytest.mark.parametrize(
    "label, shown",
    [
        ("[7.1507000000000005, 8.13055)", "[7.1507, 8.13055)"),
        ("[51.7710300674662, 55.78150252811609)", "[51.77103007, 55.78150253)"),
        ("(-inf, 23.5)", "< 23.5"),
        ("[39.5, inf)", ">= 39.5"),
        ("(-inf, 28]", "<= 28"),
        ("{married|single}", "{married|single}"),
        ("*", "*"),
    ],
)
def test_readable_labels_on_the_page(label, shown):
    assert readable_label(label) == shown


def test_no_released_number_on_the_page_carries_a_float_tail():
    table = _people(n=40)
    released = table.astype({"age": object})
    released["age"] = [
        "[7.1507000000000005, 8.13055)" if i % 2 else "(-inf, 23.5)" for i in range(40)
    ]
    utility = build_utility(table, {"release": released}, SPEC, None, {})
    utility["record"] = {
        "verdict": "passed",
        "sample": {"release": released.head(5).astype(str).to_dict(orient="split")},
    }
    page = render_report_html(utility, title="t")
    assert "7.1507000000000005" not in page and "-inf" not in page
    assert "&lt; 23.5" in page and "[7.1507, 8.13055)" in page
