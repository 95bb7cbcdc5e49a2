"""The comparison of every registered algorithm on the same 5 x 2 folds."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ppdm.algorithms import ALGORITHMS, Anonymizer
from ppdm.config import load_config
from ppdm.exceptions import InvalidParameterError
from ppdm.experiments import compare as C
from ppdm.experiments.compare import cell as compare_cell
from ppdm.experiments.compare import grid as compare_grid
from ppdm.model import AnonymizationSpec, Release
from ppdm.prepare import datasets
from ppdm.privacy.measures import k_anonymity
from ppdm.utility.cross_validation import cross_validate
from ppdm.utility.preprocessing import Binning

ROOT = Path(__file__).resolve().parents[3]
GERMAN = ROOT / "configs" / "german.yaml"


class SuppressAll(Anonymizer):
    """Test-only: suppresses every quasi-identifier cell; k-anonymity only."""

    name: ClassVar[str] = "suppress-all"
    summary: ClassVar[str] = "Test-only: every quasi-identifier suppressed"

    def __init__(self) -> None:
        pass

    def _anonymize(
        self, table: pd.DataFrame, spec: AnonymizationSpec, rng: np.random.Generator
    ) -> Release:
        released = table.copy()
        for column in spec.quasi_identifiers:
            released[column] = spec.suppression_marker
        return self._release(released, spec, table, {})


class Broken(Anonymizer):
    """Test-only: a defect (any exception) in the algorithm body."""

    name: ClassVar[str] = "broken"
    summary: ClassVar[str] = "Test-only: raises"
    supported_models: ClassVar[frozenset[str]] = frozenset(
        {"k-anonymity", "distinct-l-diversity"}
    )

    def __init__(self) -> None:
        pass

    def _anonymize(self, table: Any, spec: Any, rng: Any) -> Release:
        raise ZeroDivisionError("a defect")


@pytest.fixture(scope="module")
def german_table() -> pd.DataFrame:
    config = load_config(GERMAN)
    table = datasets.load("german")
    return table[[c for c in config.released_columns]].reset_index(drop=True)


@pytest.fixture
def config():
    return load_config(GERMAN)


def _sample(table: pd.DataFrame, n: int = 240) -> pd.DataFrame:
    return compare_grid._sample(table, "credit", n, 0)


def test_fold_splits_are_those_of_cross_validate(config, german_table):
    # cross-check: the comparison's fold units reproduce cross_validate's
    # accuracies fold by fold (same splits, same preparation, same learners)
    table = _sample(german_table)
    plan = C.plan_comparison(config, [5], algorithms=["mondrian"], table=table)
    candidate = next(c for c in plan.candidates if c.algorithm == "mondrian")
    anonymizer = candidate.config.build_algorithm()
    spec = compare_cell.recipe_of(plan, candidate).spec

    def anonymize(train):
        release = anonymizer.anonymize(train, spec, np.random.default_rng(config.seed))
        return anonymizer.training_views(release)

    prepare = Binning.of(config.discretize).prepare_for(
        table, config.quasi_identifiers, config.target
    )
    expected = cross_validate(
        table,
        anonymize,
        target=config.target,
        seed=config.seed,
        prepare=prepare,
        with_original=False,
        covers=compare_cell._covers(plan),
    )
    got = pd.DataFrame(
        [r for s in plan.splits for r in C.evaluate_fold(plan, candidate, s).rows()]
    )
    merged = expected.merge(got, on=["repeat", "fold", "model"], suffixes=("", "_c"))
    assert len(merged) == len(expected) == 30
    np.testing.assert_array_equal(merged["accuracy"], merged["accuracy_c"])
    np.testing.assert_array_equal(merged["n_train"], merged["n_train_c"])


def test_folds_partition_the_table_and_are_stratified():
    labels = np.array(["good"] * 70 + ["bad"] * 30)
    splits = C.fold_splits(labels, seed=3)
    assert [(s.repeat, s.fold) for s in splits] == [
        (r, f) for r in range(5) for f in range(2)
    ]
    for first, second in zip(splits[0::2], splits[1::2]):
        assert np.array_equal(np.sort(first.train), np.sort(second.test))
        assert sorted(np.concatenate([first.train, first.test])) == list(range(100))
        assert (labels[first.test] == "bad").sum() == 15
    assert not np.array_equal(splits[0].test, splits[2].test)  # repeats differ
    again = C.fold_splits(labels, seed=3)
    assert all(np.array_equal(a.test, b.test) for a, b in zip(splits, again))


def test_registry_is_read_and_a_toy_algorithm_appears(config, toy_algorithms):
    table = _sample(datasets.load("german")[list(config.released_columns)])
    plan = C.plan_comparison(config, [5, 10], table=table)
    # a differentially private algorithm has one row per budget
    registered = [a.split(" epsilon=")[0] for a in plan.algorithms]
    assert list(dict.fromkeys(registered)) == list(ALGORITHMS)
    assert [a for a in plan.algorithms if a.startswith("safepub")] == [
        f"safepub epsilon={e:g}" for e in C.DP_EPSILONS
    ]
    assert "two-projections" in plan.algorithms
    plan = C.plan_comparison(
        config, [5], algorithms=["mondrian", "two-projections"], table=table
    )
    result = C.run_comparison(plan)
    toy = result.summary[result.summary["algorithm"] == "two-projections"].iloc[0]
    assert toy["status"] == "ok" and toy["folds"] == 10
    assert toy["achieved_k"] >= 5 and toy["achieved_l"] >= 2
    # a release of two projections is scored through its two views
    rows = result.rows[result.rows["algorithm"] == "two-projections"]
    assert set(rows["n_tables"]) == {2}
    assert "two-projections" in C.terminal_table(result)


def test_refusal_failure_and_defect_are_listed_not_raised(
    config, german_table, monkeypatch
):
    monkeypatch.setitem(ALGORITHMS, "suppress-all", SuppressAll)
    monkeypatch.setitem(ALGORITHMS, "broken", Broken)
    table = _sample(german_table, 200)
    # k = 150 is more than a training half holds: infeasible on every fold
    plan = C.plan_comparison(
        config, [5, 150], algorithms=["mondrian", "suppress-all", "broken"], table=table
    )
    refused = [c for c in plan.candidates if c.refused]
    assert {c.algorithm for c in refused} == {"suppress-all"}
    assert "distinct-l-diversity" in refused[0].reason
    result = C.run_comparison(plan, measure_memory=False)
    summary = result.summary.set_index(["algorithm", "k"])
    assert summary.loc[("suppress-all", 5), "status"] == "refused"
    assert summary.loc[("broken", 5), "status"] == "error"
    assert "ZeroDivisionError: a defect" in summary.loc[("broken", 5), "reason"]
    assert summary.loc[("mondrian", 150), "status"] == "failed"
    assert "150" in summary.loc[("mondrian", 150), "reason"]
    assert summary.loc[("mondrian", 5), "status"] == "ok"
    text = " ".join(result.recommendation)
    assert "suppress-all (k=5, 150) refuses this configuration" in text
    assert "broken (k=5) stopped with an error" in text


def test_figures_against_independent_computation(config, german_table):
    table = _sample(german_table, 300)
    plan = C.plan_comparison(config, [5, 10], algorithms=["mondrian"], table=table)
    result = C.run_comparison(plan)
    rows = result.rows
    for (algorithm, k), group in rows[rows["status"] == "ok"].groupby(
        ["algorithm", "k"]
    ):
        line = result.summary[
            (result.summary["algorithm"] == algorithm) & (result.summary["k"] == k)
        ].iloc[0]
        for model in plan.models:
            values = group.loc[group["model"] == model, "accuracy"]
            assert line[f"acc_{model}"] == pytest.approx(values.mean())
            assert line[f"sd_{model}"] == pytest.approx(values.std(ddof=1))
        if algorithm == "mondrian":
            assert line["achieved_k"] >= k and line["achieved_l"] >= 2
            assert 0.0 < line["glm"] <= 1.0
            assert line["peak_mib"] > 0
    # every algorithm ran on the same training halves
    sizes = rows.drop_duplicates(["algorithm", "k", "repeat", "fold"]).pivot_table(
        index=["repeat", "fold"], columns=["algorithm", "k"], values="n_train"
    )
    assert (sizes.nunique(axis=1) == 1).all()


def test_f_test_matches_alpaydin_formula(config, german_table, monkeypatch):
    monkeypatch.setitem(ALGORITHMS, "suppress-all", SuppressAll)
    config = config.with_overrides(l=1, sensitive_attribute=None)
    table = _sample(german_table, 300)
    plan = C.plan_comparison(
        config, [5], algorithms=["mondrian", "suppress-all"], table=table
    )
    result = C.run_comparison(plan, measure_memory=False)
    assert len(result.tests) == len(plan.models)
    for test in result.tests:
        ok = result.rows[(result.rows["status"] == "ok") & (result.rows["k"] == 5)]
        grid = {
            name: ok[(ok["algorithm"] == name) & (ok["model"] == test["model"])]
            .sort_values(["repeat", "fold"])["accuracy"]
            .to_numpy()
            .reshape(5, 2)
            for name in (test["best"], test["second"])
        }
        p = grid[test["best"]] - grid[test["second"]]
        s2 = ((p - p.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
        assert p.mean() >= 0  # best is the more accurate on average
        if s2.sum() > 0:
            f = (p**2).sum() / (2 * s2.sum())
            assert test["statistic"] == pytest.approx(f)
            assert test["p_value"] == pytest.approx(stats.f.sf(f, 10, 5))
    # an all-suppressed release must not beat mondrian's decision tree
    tree = next(t for t in result.tests if t["model"] == "decision_tree")
    assert {tree["best"], tree["second"]} == {"mondrian", "suppress-all"}
    summary = result.summary.set_index("algorithm")
    assert summary.loc["suppress-all", "glm"] == pytest.approx(1.0)


def test_unknown_names_and_bad_k_are_refused(config):
    with pytest.raises(InvalidParameterError, match="registered"):
        C.plan_comparison(config, [5], algorithms=["nope"], table=pd.DataFrame())
    for bad, match in (("1", "out of range"), ("five", "not an integer"), ("", "no k")):
        with pytest.raises(InvalidParameterError, match=match):
            C.parse_k(bad)
    assert C.parse_k("10, 5,10") == [5, 10]


@pytest.mark.slow  # every output file of a whole comparison: about 15 s
def test_outputs_written(config, german_table, tmp_path, toy_algorithms):
    table = _sample(german_table, 200)
    plan = C.plan_comparison(
        config, [5, 8], algorithms=["mondrian", "two-projections"], table=table
    )
    result = C.run_comparison(plan, measure_memory=False)
    paths = C.write_outputs(result, tmp_path / "out", title="t", notes="n")
    for key in ("csv", "json", "folds", "plot", "markdown", "html"):
        assert paths[key].exists()
    document = json.loads(paths["json"].read_text())
    names = {row["algorithm"] for row in document["summary"]}
    assert names == {"original", "mondrian", "two-projections"}
    assert document["config"]["k"] == [5, 8]
    assert document["recommendation"] == result.recommendation
    csv = pd.read_csv(paths["csv"])
    assert len(csv) == 5
    assert paths["plot"].read_bytes()[:4] == b"\x89PNG"
    page = paths["html"].read_text()
    assert page.startswith("<!DOCTYPE html>") and "two-projections" in page
    assert "![Accuracy vs k](accuracy_vs_k.png)" in paths["markdown"].read_text()


def test_pareto_front_collected_and_plotted(config, german_table):
    table = _sample(german_table, 200)
    plan = C.plan_comparison(config, [5], algorithms=["pbg-ea"], table=table)
    outcome = C.evaluate_fold(plan, plan.runnable[1], plan.splits[0])
    assert outcome.status == "ok" and outcome.pareto_front
    later = C.evaluate_fold(plan, plan.runnable[1], plan.splits[1])
    assert later.pareto_front is None  # the first fold's front only
    result = C.assemble(plan, [outcome, later])
    assert set(result.fronts) == {"pbg-ea"}
    assert C.plot_pareto_fronts(result)[:4] == b"\x89PNG"
    chosen = [e for e in result.fronts["pbg-ea"][5]["front"] if e.get("chosen")]
    assert len(chosen) >= 1


def test_peak_memory_is_traced_allocation(config, german_table):
    table = _sample(german_table, 200)
    plan = C.plan_comparison(config, [5], algorithms=["mondrian"], table=table)
    mib = C.probe_memory(plan, plan.runnable[1])
    # at least the copy of the training half it releases, far below a GiB
    half = plan.table.iloc[plan.splits[0].train].memory_usage(deep=True).sum()
    assert half / 2**20 / 4 < mib < 1024
    assert math.isnan(C.probe_memory(plan, plan.runnable[0]))  # baseline
    assert k_anonymity(table, list(config.quasi_identifiers)) < 5  # needs work


def test_overview_page_merges_comparisons_and_peers(config, german_table, tmp_path):
    table = _sample(german_table, 200)
    plan = C.plan_comparison(config, [5], algorithms=["mondrian"], table=table)
    result = C.run_comparison(plan, measure_memory=False)
    directory = tmp_path / "results" / "compare-german"
    C.write_outputs(result, directory, notes="Command: `ppdm compare ...`")
    peer = result.summary[result.summary["algorithm"] == "mondrian"].assign(
        algorithm="anonypy-mondrian"
    )
    (directory / "peers").mkdir()
    (directory / "peers" / "peers.json").write_text(
        json.dumps(
            compare_cell._jsonable(
                {
                    "summary": peer.to_dict(orient="records"),
                    "versions": {"anonypy": "0.2.1"},
                    "command": "bench_peers.py",
                    "checks": [{"algorithm": "anonypy-mondrian", "k": 5, "ms": 1.5}],
                }
            )
        )
    )
    docs = tmp_path / "docs"
    assert C.main(["docs", str(directory), "--out", str(docs / "compare")]) == 0
    markdown = (docs / "compare.md").read_text()
    assert "anonypy-mondrian" in markdown and "| mondrian | 5 |" in markdown
    assert "](../results/compare-german/accuracy_vs_k.png)" in markdown
    for sentence in result.recommendation:
        assert sentence in markdown
    page = (docs / "compare.html").read_text()
    assert page.count("data:image/png;base64,") == 1


def test_safepub_is_compared_at_each_budget(monkeypatch):
    """German with its quasi-identifiers and target only (whole-row classes)."""
    monkeypatch.setenv("PPDM_COMPARE_KEY", "compare-test-key-0123456789abcdef")
    config = load_config(ROOT / "configs" / "german-safepub.yaml")
    table = datasets.load("german")[list(config.released_columns)]
    params = {"safepub": {"randomness": "keyed", "key": "env:PPDM_COMPARE_KEY"}}
    plan = C.plan_comparison(
        config, [5], algorithms=["safepub"], table=table, params=params, repeats=1
    )
    result = C.run_comparison(plan, measure_memory=False)
    summary = result.summary.set_index("algorithm")
    for e in C.DP_EPSILONS:
        row = summary.loc[f"safepub epsilon={e:g}"]
        # a training half of 500 rows: a release, or "no class reaches k"
        assert row["status"] in ("ok", "failed"), row["reason"]
        if row["status"] == "ok":
            assert row["achieved_k"] >= 5
        else:
            assert "reaches k" in row["reason"]
    assert (summary["status"] == "ok").any()


def test_grid_docstring_examples():
    # fold_splits and sweep_config show what they make; the examples must hold
    import doctest

    result = doctest.testmod(compare_grid, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 2
    assert result.failed == 0
