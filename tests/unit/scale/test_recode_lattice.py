"""lattice-optimal and pbg-ea on a frequency table: the same release as on the rows.

The lattice built from a frequency table (:meth:`GeneralizationLattice.
from_frequencies`) must evaluate and decide every node as the lattice of the
rows; the recoding of a node (:func:`generalized_recoding`) applied to the rows
must be the node's release (:func:`generalized_release`); and the algorithms'
``recode(...).apply(table)`` must be ``anonymize(table).table``, with the same
evidence, for a frequency table combined from partitions and for shuffled rows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdm.algorithms.lattice_optimal import LatticeOptimal, optimal_node
from ppdm.algorithms.pbg_ea import PbgEa
from ppdm.exceptions import InfeasibleConstraintError
from ppdm.generalization.hierarchies import Hierarchy, load_hierarchies
from ppdm.generalization.lattice import (
    GeneralizationLattice,
    generalized_recoding,
    generalized_release,
)
from ppdm.model import AnonymizationSpec
from ppdm.prepare import datasets
from ppdm.privacy import Requirement
from ppdm.scale.frequency import FrequencyTable
from ppdm.scale.recoding import Recoding

REPO = Path(__file__).resolve().parents[3]
ADULT_QIS = ("age", "workclass", "education", "marital-status", "race", "sex",
             "native-country")  # fmt: skip
GERMAN_QIS = ("age", "personal-status-sex", "job", "housing", "foreign-worker",
              "employment-since")  # fmt: skip
INDICES = ("k", "sk", "l", "sl", "glm", "cm", "suppressed")

#: Requirements by name: keyword arguments of ``Requirement.of``.
REQUIREMENTS = {
    "k": {"k": 5},
    "k-distinct-l": {"k": 5, "l": 2},
    "entropy-l": {"k": 3, "l": 1.8, "l_variant": "entropy"},
    "recursive-cl": {"k": 3, "l": 2, "l_variant": "recursive", "c": 3.0},
    "t-closeness": {"k": 3, "t": 0.25},
}


# ------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return datasets.load("adult")


@pytest.fixture(scope="module")
def adult_sample(adult: pd.DataFrame) -> pd.DataFrame:
    return adult.sample(n=5000, random_state=11).reset_index(drop=True)


@pytest.fixture(scope="module")
def german() -> pd.DataFrame:
    return datasets.load("german")


@pytest.fixture(scope="module")
def adult_hierarchies() -> dict[str, Hierarchy]:
    return load_hierarchies(REPO / "hierarchies" / "adult")


@pytest.fixture(scope="module")
def german_hierarchies() -> dict[str, Hierarchy]:
    return load_hierarchies(REPO / "hierarchies" / "german")


def spec_of(qis, sensitive, target, hierarchies, requirement: str, limit: float,
            k: int | None = None) -> AnonymizationSpec:  # fmt: skip
    shorthand = dict(REQUIREMENTS[requirement])
    if k is not None:
        shorthand["k"] = k
    return AnonymizationSpec(
        Requirement.of(qis, sensitive, **shorthand), target, limit, hierarchies
    )


def frequency_columns(spec: AnonymizationSpec) -> list[str]:
    """What the pipeline counts: QIs, the requirement's sensitive attributes, target."""
    columns = [*spec.quasi_identifiers, *spec.requirement.sensitive_attributes]
    if spec.target is not None:
        columns.append(spec.target)
    return list(dict.fromkeys(columns))


def lattices(table, frequencies, spec, sensitive, spread_l=False):
    arguments = {
        "sensitive_attribute": sensitive,
        "target": spec.target,
        "suppression_limit": spec.suppression_limit,
        "spread_l": spread_l,
        "requirement": spec.requirement,
    }
    qis, hs = spec.quasi_identifiers, spec.hierarchies
    return (
        GeneralizationLattice.from_table(table, qis, hs, **arguments),
        GeneralizationLattice.from_frequencies(frequencies, qis, hs, **arguments),
    )


def assert_same_evaluations(rows_eval, freq_eval) -> None:
    np.testing.assert_array_equal(freq_eval.nodes, rows_eval.nodes)
    for index in INDICES:
        np.testing.assert_array_equal(
            getattr(freq_eval, index), getattr(rows_eval, index), err_msg=index
        )


def assert_same_release(table, frequencies, spec, levels) -> None:
    """The node's recoding applied to the rows is the node's release, or both fail."""
    try:
        expected, expected_counts = generalized_release(
            table, spec, spec.hierarchies, levels
        )
    except InfeasibleConstraintError:
        with pytest.raises(InfeasibleConstraintError):
            generalized_recoding(frequencies, spec, spec.hierarchies, levels)
        return
    original, released, kept, counts = generalized_recoding(
        frequencies, spec, spec.hierarchies, levels
    )
    assert counts == expected_counts
    assert not original.duplicated().any()
    recoding = Recoding(spec.quasi_identifiers, original, released, kept,
                        "test", frequencies.n_rows)  # fmt: skip
    pd.testing.assert_frame_equal(recoding.apply(table), expected)


# ------------------------------------------------ the lattice, on Adult
@pytest.mark.parametrize("requirement", ["k-distinct-l", "entropy-l", "t-closeness"])
def test_adult_lattice_from_frequencies_evaluates_and_decides_as_the_rows(
    adult_sample, adult_hierarchies, requirement
) -> None:
    spec = spec_of(ADULT_QIS, "occupation", "income", adult_hierarchies,
                   requirement, 0.02, k=10)  # fmt: skip
    columns = [*frequency_columns(spec), "occupation"]
    frequencies = FrequencyTable.of(adult_sample, columns)
    assert len(frequencies) < len(adult_sample)
    rows, freq = lattices(adult_sample, frequencies, spec, "occupation")
    assert (freq.n_rows, freq.eta) == (rows.n_rows, rows.eta) == (5000, 100)
    if requirement == "k-distinct-l":  # the requirement-free indices, once
        assert_same_evaluations(rows.evaluate_all(), freq.evaluate_all())
    nodes = rows.nodes()
    # Nodes from the whole lattice, and from its upper part, where the
    # feasible ones are.
    rng = np.random.default_rng(5)
    upper = np.flatnonzero(nodes.sum(axis=1) >= 0.6 * rows.heights.sum())
    picked = np.r_[rng.choice(len(nodes), 20, replace=False),
                   rng.choice(upper, 20, replace=False)]  # fmt: skip
    best = optimal_node(freq).best  # searched on the frequency table
    assert best is not None
    picked = np.r_[picked, rows.index(best.levels)]
    feasible = []
    for node in nodes[picked]:
        decided = rows.decide(node)
        assert freq.decide(node) == decided
        assert freq.evaluate(node) == rows.evaluate(node)
        if decided.feasible:
            feasible.append(decided.levels)
    np.testing.assert_array_equal(freq.loss_bound(nodes), rows.loss_bound(nodes))
    assert feasible, "no feasible node drawn: the release comparison ran on nothing"
    for levels in feasible[:3]:
        assert_same_release(adult_sample, frequencies, spec, levels)


# ------------------------------------ the lattice, on random tables
@st.composite
def random_cases(draw: st.DrawFn) -> dict:
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 90))
    columns, hierarchies = {}, {}
    for q in range(int(rng.integers(1, 4))):
        name = f"q{q}"
        n_values = int(rng.integers(1, 6))
        height = int(rng.integers(1, 4))
        groups = np.arange(n_values)
        levels = [[f"v{i}" for i in range(n_values)]]
        for level in range(1, height):
            groups = rng.integers(0, max(n_values >> level, 1), size=n_values)[groups]
            levels.append([f"L{level}g{g}" for g in groups])
        levels.append(["*"] * n_values)
        hierarchies[name] = Hierarchy.from_rows(
            name, [list(r) for r in zip(*levels)], source=name
        )
        values = np.array(levels[0], dtype=object)[rng.integers(0, n_values, n)]
        values[rng.random(n) < 0.1] = None  # missing is a value of its own
        columns[name] = pd.array(values, dtype="string")
    sensitive = np.array(list("abcde"), dtype=object)[
        np.minimum(rng.geometric(0.5, n) - 1, 4)
    ]
    columns["s"] = pd.array(sensitive, dtype="string")
    columns["y"] = pd.array(np.array(list("pq"))[rng.integers(0, 2, n)], dtype="string")
    table = pd.DataFrame(columns)
    requirement = draw(st.sampled_from(sorted(REQUIREMENTS)))
    shorthand = dict(REQUIREMENTS[requirement])
    shorthand["k"] = draw(st.integers(1, 6))
    limit = draw(st.sampled_from([0.0, 0.05, 0.2, 0.5]))
    qis = tuple(hierarchies)
    spec = AnonymizationSpec(Requirement.of(qis, "s", **shorthand), "y", limit,
                             hierarchies)  # fmt: skip
    return {"table": table, "spec": spec, "spread_l": draw(st.booleans()),
            "order": int(rng.integers(0, 2**31))}  # fmt: skip


@settings(max_examples=35, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=random_cases())
def test_random_lattice_from_frequencies_equals_the_rows(case: dict) -> None:
    table, spec = case["table"], case["spec"]
    # The frequency table of the rows in another order: the same table.
    shuffled = table.sample(frac=1.0, random_state=case["order"])
    frequencies = FrequencyTable.of(shuffled, [*frequency_columns(spec), "s"])
    rows, freq = lattices(table, frequencies, spec, "s", case["spread_l"])
    assert_same_evaluations(rows.evaluate_all(), freq.evaluate_all())
    assert_same_evaluations(rows.evaluate_all(k=2, l=2), freq.evaluate_all(k=2, l=2))
    for node in rows.nodes():
        decided = rows.decide(node)
        assert freq.decide(node) == decided
        if decided.feasible:
            assert_same_release(table, frequencies, spec, decided.levels)


def test_frequencies_counts_weigh_every_index() -> None:
    """Known answer: two combinations of 3 and 1 rows are 4 rows, not 2."""
    h = Hierarchy.from_rows("q", [["a", "*"], ["b", "*"]], source="q")
    frequencies = FrequencyTable.of(
        pd.DataFrame(
            {
                "q": ["a", "a", "a", "b"],
                "s": ["x", "y", "x", "x"],
                "y": ["p", "p", "p", "q"],
            }
        ),  # fmt: skip
        ["q", "s", "y"],
    )
    assert len(frequencies) == 4 - 1
    spec = AnonymizationSpec.of(("q",), "s", "y", k=2, l=2, suppression_limit=0.25,
                                hierarchies={"q": h})  # fmt: skip
    lattice = GeneralizationLattice.from_frequencies(
        frequencies, ("q",), {"q": h}, sensitive_attribute="s", target="y",
        suppression_limit=0.25, requirement=spec.requirement,
    )  # fmt: skip
    assert (lattice.n_rows, lattice.eta) == (4, 1)
    bottom = lattice.decide((0,))  # class a: 3 rows, x and y; class b: 1 row
    assert (bottom.k, bottom.l, bottom.suppressed, bottom.feasible) == (3, 2, 1, True)
    assert bottom.sk == 9 and bottom.cm == pytest.approx((0 + 1) / 4)
    top = lattice.decide((1,))
    assert (top.k, top.sk, top.suppressed) == (4, 16, 0)
    original, released, kept, counts = generalized_recoding(
        frequencies, spec, spec.hierarchies, (0,)
    )
    assert original["q"].tolist() == ["a", "b"]
    # b's one row alone is not 2-anonymous: it is dropped, not released as *.
    assert released["q"].tolist() == ["a", "*"] and kept.tolist() == [True, False]
    assert counts == {"suppressed": 0, "dropped": 1}


# ------------------------------------------------------- the algorithms
ALGORITHMS = {
    "lattice-optimal": LatticeOptimal,
    # The defaults (local search from a random initial population), and the
    # paper's evolutionary search, which draws much more from rng.
    "pbg-ea": PbgEa,
    "pbg-ea-evolutionary": lambda: PbgEa(
        refine="none", generations=8, population=12, objectives="k-l-glm"
    ),  # fmt: skip
}
CASES = [
    (algorithm, dataset, requirement)
    for algorithm in ALGORITHMS
    for dataset in ("adult", "german")
    for requirement in ("k", "k-distinct-l", "entropy-l", "t-closeness")
    if not (algorithm == "pbg-ea-evolutionary" and requirement == "k")
]


@pytest.fixture(scope="module")
def data(adult_sample, german, adult_hierarchies, german_hierarchies) -> dict:
    return {
        "adult": (adult_sample, ADULT_QIS, "occupation", "income", adult_hierarchies),
        "german": (german, GERMAN_QIS, "purpose", "credit", german_hierarchies),
    }


@pytest.fixture(scope="module")
def anonymized() -> dict:
    """In-memory releases, made once per case and shared by the tests."""
    return {}


def case_of(data, anonymized, algorithm, dataset, requirement):
    table, qis, sensitive, target, hierarchies = data[dataset]
    k = 10 if dataset == "adult" else None
    spec = spec_of(qis, sensitive, target, hierarchies, requirement, 0.02, k=k)
    key = (algorithm, dataset, requirement)
    if key not in anonymized:
        rng = np.random.default_rng(2024)
        release = ALGORITHMS[algorithm]().anonymize(table, spec, rng)
        anonymized[key] = (release, rng.bit_generator.state)
    release, state = anonymized[key]
    return table, spec, release, state


@pytest.mark.parametrize(("algorithm", "dataset", "requirement"), CASES)
def test_recoding_applied_to_the_rows_is_the_release(
    data, anonymized, algorithm, dataset, requirement
) -> None:
    table, spec, release, state = case_of(data, anonymized, algorithm, dataset,
                                          requirement)  # fmt: skip
    frequencies = FrequencyTable.of(table, frequency_columns(spec))
    rng = np.random.default_rng(2024)
    recoding = ALGORITHMS[algorithm]().recode(frequencies, spec, rng)
    # The same draws from rng, the same node, the same account of the run.
    assert rng.bit_generator.state == state
    assert dict(recoding.evidence) == release.evidence
    assert recoding.algorithm == release.algorithm
    assert dict(recoding.params) == release.params
    assert recoding.records_in == release.records_in == len(table)
    released = recoding.apply(table)
    pd.testing.assert_frame_equal(released, release.table)
    assert recoding.rows_released(_counts_of(recoding, table)) == len(release.table)


def _counts_of(recoding: Recoding, table: pd.DataFrame) -> np.ndarray:
    return np.bincount(recoding.positions(table), minlength=len(recoding.original))


@pytest.mark.parametrize(
    ("algorithm", "dataset", "requirement", "n_parts"),
    [
        ("lattice-optimal", "adult", "entropy-l", 3),
        ("lattice-optimal", "german", "t-closeness", 5),
        ("pbg-ea", "adult", "k-distinct-l", 4),
        ("pbg-ea", "german", "entropy-l", 3),
        ("pbg-ea-evolutionary", "adult", "t-closeness", 5),
    ],
)
def test_combined_partitions_and_shuffled_rows_give_the_release(
    data, anonymized, algorithm, dataset, requirement, n_parts
) -> None:
    table, spec, release, state = case_of(data, anonymized, algorithm, dataset,
                                          requirement)  # fmt: skip
    columns = frequency_columns(spec)
    shuffled = table.sample(frac=1.0, random_state=n_parts).reset_index(drop=True)
    cuts = np.sort(np.random.default_rng(n_parts).choice(
        np.arange(1, len(shuffled)), n_parts - 1, replace=False))  # fmt: skip
    parts = np.split(np.arange(len(shuffled)), cuts)
    combined = FrequencyTable.combine(
        FrequencyTable.of(shuffled.iloc[p], columns) for p in parts
    )
    pd.testing.assert_frame_equal(
        combined.frame, FrequencyTable.of(table, columns).frame
    )
    rng = np.random.default_rng(2024)
    recoding = ALGORITHMS[algorithm]().recode(combined, spec, rng)
    assert rng.bit_generator.state == state
    assert dict(recoding.evidence) == release.evidence
    # Partition by partition, in the shuffled order: the release's rows.
    pieces = pd.concat([recoding.apply(shuffled.iloc[p]) for p in parts],
                       ignore_index=True)  # fmt: skip
    pd.testing.assert_frame_equal(pieces, recoding.apply(shuffled))
    pd.testing.assert_frame_equal(_sorted(pieces), _sorted(release.table))
    # The in-memory algorithm on the shuffled rows releases the same rows.
    again = ALGORITHMS[algorithm]().anonymize(
        shuffled, spec, np.random.default_rng(2024)
    )
    assert again.evidence == release.evidence
    pd.testing.assert_frame_equal(again.table, pieces)


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(list(frame.columns), kind="mergesort").reset_index(
        drop=True
    )


@pytest.mark.parametrize(
    "algorithm", [pytest.param("lattice-optimal", marks=pytest.mark.slow), "pbg-ea"]
)
def test_full_adult_recoding_is_the_release(adult, adult_hierarchies, algorithm):
    spec = spec_of(ADULT_QIS, "occupation", "income", adult_hierarchies,
                   "t-closeness" if algorithm == "pbg-ea" else "entropy-l",
                   0.01, k=10)  # fmt: skip
    rng = np.random.default_rng(0)
    release = ALGORITHMS[algorithm]().anonymize(adult, spec, rng)
    frequencies = FrequencyTable.of(adult, frequency_columns(spec))
    other = np.random.default_rng(0)
    recoding = ALGORITHMS[algorithm]().recode(frequencies, spec, other)
    assert other.bit_generator.state == rng.bit_generator.state
    assert dict(recoding.evidence) == release.evidence
    pd.testing.assert_frame_equal(recoding.apply(adult), release.table)


def test_algorithms_declare_the_frequency_path() -> None:
    assert LatticeOptimal.frequency_table and PbgEa.frequency_table
    assert LatticeOptimal.capabilities()["frequency_table"] is True
    assert PbgEa.capabilities()["frequency_table"] is True


def test_infeasible_on_the_frequency_table_as_on_the_rows(german, german_hierarchies):
    spec = AnonymizationSpec(
        # Even the whole table is not entropy 9-diverse in purpose.
        Requirement.of(GERMAN_QIS, "purpose", k=5, l=9.0, l_variant="entropy"),
        "credit",
        0.0,
        german_hierarchies,
    )
    frequencies = FrequencyTable.of(german, frequency_columns(spec))
    for make in (LatticeOptimal, PbgEa):
        with pytest.raises(InfeasibleConstraintError) as rows_error:
            make().anonymize(german, spec, np.random.default_rng(1))
        with pytest.raises(InfeasibleConstraintError) as freq_error:
            make().recode(frequencies, spec, np.random.default_rng(1))
        assert str(freq_error.value) == str(rows_error.value)
