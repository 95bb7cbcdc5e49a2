"""DMPD: encoding, operators, fitness on codes, and releases the verifier accepts."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.algorithms import ALGORITHMS, get_algorithm
from ppdm.algorithms._dmpd_search import (
    canonical,
    crossover,
    genetic_search,
    groups_of,
    mutate,
    pareto_front,
)
from ppdm.algorithms.dmpd import Dmpd, _all_partitionings, _bell_space, feature_codes
from ppdm.config import default_config
from ppdm.exceptions import InfeasibleConstraintError
from ppdm.model import AnonymizationSpec
from ppdm.privacy import KAnonymity, Requirement, SetAnonymity
from ppdm.privacy._partition_anonymity import partial_anonymity_level
from ppdm.release.artifacts import canonical_json, table_to_csv_bytes
from ppdm.verify import verify_tables

SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=40)
labels = st.lists(st.integers(-1, 4), min_size=1, max_size=9)


@SETTINGS
@given(labels, st.permutations(range(-1, 5)))
def test_two_label_vectors_of_one_partitioning_encode_equal(vector, renaming):
    """Renaming the groups (never the left-out label) changes nothing."""
    names = [g for g in renaming if g >= 0]
    renamed = [-1 if v < 0 else names[v] + 10 for v in vector]
    assert canonical(vector) == canonical(renamed)
    assert hash(canonical(vector)) == hash(canonical(renamed))
    groups = {frozenset(g) for g in groups_of(canonical(vector))}
    expected = {
        frozenset(i for i, v in enumerate(vector) if v == label)
        for label in set(vector) - {-1}
    }
    assert groups == expected


def test_enumeration_counts_the_bell_numbers():
    for m in range(6):
        encodings = list(_all_partitionings(m))
        assert len(encodings) == len(set(encodings)) == _bell_space(m)
        assert all(canonical(e) == e for e in encodings)
    assert [_bell_space(m) for m in range(5)] == [1, 2, 5, 15, 52]


@SETTINGS
@given(
    labels.flatmap(
        lambda v: st.tuples(
            st.just(v), st.lists(st.integers(-1, 4), min_size=len(v), max_size=len(v))
        )
    ),
    st.integers(0, 2**32 - 1),
)
def test_group_wise_crossover_passes_whole_ancestor_sets(parents, seed):
    a, b = canonical(parents[0]), canonical(parents[1])
    rng = np.random.default_rng(seed)
    for child, donor, other in zip(crossover(a, b, rng), (a, b), (b, a), strict=True):
        assert canonical(child) == child
        sets = {s: {i for i, g in enumerate(donor) if g == s} for s in set(donor)}
        inherited = [
            s
            for s, members in sets.items()
            if all((child[i] < 0) == (s < 0) for i in members)
            and len({child[i] for i in members}) == 1
        ]
        assert inherited  # at least one ancestor set of the donor, whole
        # features outside the inherited sets are grouped as in the other parent
        placed = set().union(*(sets[s] for s in inherited))
        rest = [i for i in range(len(a)) if i not in placed]
        for i in rest:
            for j in rest:
                if other[i] >= 0 and other[i] == other[j]:
                    assert child[i] == child[j]
            if other[i] < 0:
                assert child[i] < 0


def test_mutation_moves_features_and_splits_a_single_group():
    rng = np.random.default_rng(0)
    assert mutate((0, 0, 0), 0.0, rng) == (0, 0, 0)
    moved = {mutate((0,) * 6, 0.2, np.random.default_rng(s)) for s in range(20)}
    assert any(max(m) >= 1 for m in moved)  # a new singleton group appears
    assert any(min(m) < 0 for m in moved)  # or a feature is left out
    assert all(canonical(m) == m for m in moved)


def table_with(n: int = 120, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.choice(["a", "b", "c", "d"], n)
    zip_ = rng.choice(["x", "y", "z"], n)
    sex = rng.choice(["F", "M"], n)
    noise = rng.choice(["u", "v", "w", "t", "s"], n)
    y = np.where((age == "a") | (sex == "F"), "p", "n")
    y = np.where(rng.random(n) < 0.1, np.where(y == "p", "n", "p"), y)
    return pd.DataFrame(
        {
            "age": age,
            "zip": zip_,
            "sex": sex,
            "noise": noise,
            "purpose": rng.choice(["car", "tv", "edu"], n),
            "y": y,
        }
    )


def spec_of(table, k, l=1, qis=("age", "zip", "sex")) -> AnonymizationSpec:
    spec = AnonymizationSpec.of(qis, "purpose" if l > 1 else None, "y", k=k, l=l)
    requirement = Dmpd().adapt_requirement(spec.requirement, target="y")
    return AnonymizationSpec(requirement, "y")


def test_adapt_requirement_adds_set_anonymity_at_k():
    spec = AnonymizationSpec.of(("age",), None, "y", k=7)
    adapted = Dmpd().adapt_requirement(spec.requirement, target="y")
    assert adapted.release_models == (SetAnonymity(7),)
    assert Dmpd().adapt_requirement(adapted, target="y") == adapted
    config = default_config("german").with_overrides(algorithm="dmpd", k=10)
    assert SetAnonymity(10) in config.requirement.models
    assert ALGORITHMS["dmpd"] is Dmpd


@pytest.mark.parametrize("mode", ["single", "pareto"])
@pytest.mark.parametrize("inducer", ["decision_tree", "naive_bayes"])
def test_release_is_verified_and_carries_the_search_figures(mode, inducer):
    table = table_with()
    spec = spec_of(table, k=8, l=2)
    release = Dmpd(generations=4, population=8, mode=mode, inducer=inducer).anonymize(
        table, spec, np.random.default_rng(1)
    )
    certificate = verify_tables(dict(release.tables), spec.requirement)
    assert certificate.passed, certificate.summary()
    evidence = release.evidence
    features = [f for cols in evidence["projections"].values() for f in cols]
    assert sorted(features + evidence["excluded"]) == sorted(table.columns[:-1])
    for name, frame in release.tables.items():
        assert list(frame.columns) == [*evidence["projections"][name], "y"]
        assert len(frame) == len(table) and frame.index.equals(
            pd.RangeIndex(len(table))
        )
        # same multiset of rows, rows shuffled
        original = table[list(frame.columns)].value_counts().sort_index()
        assert frame.value_counts().sort_index().equals(original)
    levels = SetAnonymity(1).check_release(dict(release.tables), spec.quasi_identifiers)
    assert evidence["sal"] == levels.achieved
    assert evidence["pal"] == min(
        partial_anonymity_level(dict(release.tables), spec.quasi_identifiers),
        len(table),
    )
    assert evidence["part_al"] >= 8 and 0 < evidence["wrapper_accuracy"] <= 1
    if mode == "pareto":
        front = evidence["pareto_front"]
        assert sum(e["chosen"] for e in front) == 1
        points = [(e["accuracy"], e["k"]) for e in front]
        for a, k in points:  # nobody on the front dominates another member
            assert not any(
                a2 >= a and k2 >= k and (a2, k2) != (a, k) for a2, k2 in points
            )


@settings(derandomize=True, database=None, deadline=None, max_examples=25)
@given(
    st.integers(20, 80),
    st.integers(0, 2**16),
    st.integers(2, 12),
    st.sampled_from([1, 2]),
    st.sampled_from(["single", "pareto"]),
)
def test_every_release_of_random_inputs_passes_the_verifier(n, seed, k, l, mode):
    table = table_with(n, seed)
    spec = spec_of(table, k=k, l=l)
    try:
        release = Dmpd(generations=2, population=6, mode=mode, n_folds=2).anonymize(
            table, spec, np.random.default_rng(seed)
        )
    except InfeasibleConstraintError:
        return
    certificate = verify_tables(dict(release.tables), spec.requirement)
    assert certificate.passed, certificate.summary()


def test_same_seed_same_bytes_and_another_seed_other_shuffles():
    table = table_with(200)
    spec = spec_of(table, k=10)

    def run(seed):
        release = Dmpd(generations=5, population=10).anonymize(
            table, spec, np.random.default_rng(seed)
        )
        data = {n: table_to_csv_bytes(t) for n, t in release.tables.items()}
        return data, canonical_json(dict(release.evidence))

    assert run(5) == run(5)
    assert run(5)[0] != run(6)[0]


def test_the_genetic_search_runs_through_the_map_seam():
    """Eight features: more partitionings than the budget, so the GA runs."""
    rng = np.random.default_rng(0)
    table = table_with(150)
    for i in range(4):
        table.insert(0, f"extra{i}", rng.choice(list("abc"), len(table)))
    spec = spec_of(table, k=10)
    algorithm = Dmpd(generations=3, population=10)
    evaluator, features = algorithm.evaluator(table, spec, rng)
    assert _bell_space(len(features)) > 10 * 4
    calls = []

    def recording_map(fn, items):
        calls.append(len(items))
        return [fn(item) for item in items]

    result = genetic_search(
        evaluator,
        len(features),
        10,
        rng,
        generations=3,
        population=10,
        p_cross=0.8,
        p_mut=0.1,
        map=recording_map,
    )
    assert sum(calls) == len(result.evaluated) and len(calls) == 4
    assert result.requested == 10 + 3 * 10
    empty = tuple([-1] * len(features))
    assert empty in result.evaluated  # the empty partitioning starts the search
    majority = (table["y"] == table["y"].mode()[0]).mean()
    assert result.evaluated[empty].accuracy == pytest.approx(majority, abs=0.03)
    # elitism: the final population holds the best fitness ever evaluated
    best = max(e.fitness(10) for e in result.evaluated.values())
    assert max(result.evaluated[e].fitness(10) for e in result.population) == best


def test_fitness_is_zero_below_pal_k_and_the_front_is_non_dominated():
    table = table_with(150)
    spec = spec_of(table, k=10)
    evaluator, features = Dmpd().evaluator(table, spec, np.random.default_rng(0))
    all_qis = tuple(0 if f in ("age", "zip", "sex") else -1 for f in features)
    evaluation = evaluator(all_qis)
    assert evaluation.pal < 10 and evaluation.fitness(10) == 0.0
    assert math.isnan(evaluation.accuracy)
    evaluated = {e: evaluator(e) for e in list(_all_partitionings(len(features)))[:300]}
    front = pareto_front(evaluated)
    assert front and all(not math.isnan(ev.accuracy) for _, ev in front)


def test_fig_8_releases_nothing_with_a_clear_error():
    """Every feature a quasi-identifier with unique values (the paper's Fig. 8)."""
    table = pd.DataFrame(
        {
            "a1": list("adgj"),
            "a2": list("behk"),
            "a3": list("cfil"),
            "y": ["y1", "y2", "y3", "y4"],
        }
    )
    spec = AnonymizationSpec(
        Requirement(("a1", "a2", "a3"), (KAnonymity(2), SetAnonymity(2))), "y"
    )
    with pytest.raises(InfeasibleConstraintError) as error:
        get_algorithm("dmpd").anonymize(table, spec, np.random.default_rng(0))
    message = str(error.value)
    assert "k=2" in message and "nothing is released" in message
    assert "'a1': 1" in message


def test_release_evidence_is_json():
    table = table_with(100)
    release = Dmpd(generations=2, population=6, mode="pareto").anonymize(
        table, spec_of(table, k=5), np.random.default_rng(0)
    )
    assert json.loads(json.dumps(dict(release.evidence))) == dict(release.evidence)


def test_the_report_shows_the_front_as_a_plot_and_a_table(tmp_path):
    from ppdm.utility.report import build_utility, render_report_html

    table = table_with(100)
    spec = spec_of(table, k=5)
    release = Dmpd(generations=2, population=6, mode="pareto").anonymize(
        table, spec, np.random.default_rng(0)
    )
    utility = build_utility(table, dict(release.tables), spec, None, release.evidence)
    assert utility["pareto_front"] == release.evidence["pareto_front"]
    html = render_report_html(utility, title="dmpd", plots_dir=tmp_path)
    assert "Pareto front" in html and "accuracy" in html
    assert (tmp_path / "pareto.png").stat().st_size > 0
    for entry in release.evidence["pareto_front"]:
        assert str(entry["k"]) in html


# The counter-example of issue #31: every projection alone is 2-anonymous and
# distinct 2-diverse, the join is set 2-anonymous, yet every class of the join
# on the target holds one sensitive value, since dx follows from (age, y).
JOIN_P1 = pd.DataFrame(
    {"age": ["a"] * 4 + ["b"] * 4, "dx": ["x", "z"] * 4, "y": ["0", "1"] * 4}
)
JOIN_P2 = pd.DataFrame({"zip": ["u"] * 4 + ["v"] * 4, "y": ["0", "1"] * 4})


def _join_requirement() -> Requirement:
    return Requirement.of(("age", "zip"), "dx", k=2, l=2, extra=[SetAnonymity(2)])


def test_verifier_checks_l_diversity_over_the_join_classes():
    requirement = _join_requirement()
    tables = {"projection-1": JOIN_P1, "projection-2": JOIN_P2}
    # per table the old check passes: each age class holds x and z
    alone = verify_tables({"projection-1": JOIN_P1}, requirement)
    assert alone.passed and alone.tables[0].measures["distinct_l"] == 2
    assert SetAnonymity(2).check_release(tables, ["age", "zip"]).passed
    certificate = verify_tables(tables, requirement)
    assert not certificate.passed
    first = certificate.table("projection-1")
    assert first.join_columns == ("y",)
    assert first.measures["distinct_l"] == 1 and first.measures["k"] == 4
    (failed,) = [r for r in first.results if not r.passed]
    assert failed.requirement["model"] == "distinct-l-diversity"
    # every (age, y) class of the join holds one value
    assert failed.n_violating_classes == JOIN_P1.groupby(["age", "y"]).ngroups == 4
    assert "age: a, y: 0" in certificate.summary()
    assert "joining the released tables on y" in first.to_dict()["notes"][-1]
    # the projection without the sensitive attribute is not joined for it
    assert certificate.table("projection-2").join_columns == ()


def test_search_refuses_the_counter_example_partitioning():
    table = pd.concat([JOIN_P1, JOIN_P2[["zip"]]], axis=1)[["age", "zip", "dx", "y"]]
    requirement = Dmpd().adapt_requirement(_join_requirement(), target="y")
    spec = AnonymizationSpec(requirement, "y")
    algorithm = Dmpd(generations=2, population=4)
    evaluator, features = algorithm.evaluator(table, spec, np.random.default_rng(0))
    age, zip_, dx = (features.index(f) for f in ("age", "zip", "dx"))
    # alone, the projection is judged on its age classes: x and z in each
    assert evaluator.anonymity([(age, dx)])[2] is True
    # with a second projection to join on y, on its (age, y) classes: one value
    assert evaluator.anonymity([(age, dx), (zip_,)])[2] is False
    release = algorithm.anonymize(table, spec, np.random.default_rng(0))
    certificate = verify_tables(dict(release.tables), requirement)
    assert certificate.passed, certificate.summary()


def test_a_mostly_zero_number_keeps_its_values_for_the_wrapper():
    """Quantile bins merged capital-gain (92% zeros) into one code; by value it predicts."""
    rng = np.random.default_rng(4)
    n = 600
    gain = np.where(rng.random(n) < 0.92, 0, rng.integers(1, 20_000, n))
    y = np.where(gain > 5000, "rich", "poor")
    table = pd.DataFrame(
        {"age": rng.choice(["a", "b"], n), "gain": gain, "noise": rng.random(n), "y": y}
    )
    codes, card = feature_codes(table["gain"], exact=False)
    assert card == table["gain"].nunique()
    # numeric order kept, so a tree splits the codes where it would split the numbers
    order = np.argsort(table["gain"].to_numpy(), kind="stable")
    assert (np.diff(codes[order]) >= 0).all()
    spec = AnonymizationSpec(
        Dmpd().adapt_requirement(Requirement.of(("age",), k=5), target="y"), "y"
    )
    evaluator, features = Dmpd(n_folds=3).evaluator(
        table, spec, np.random.default_rng(0)
    )
    majority = (y == "poor").mean()
    alone = evaluator.accuracy([(features.index("gain"),)])
    assert alone > majority + 0.5 * (1 - majority)
