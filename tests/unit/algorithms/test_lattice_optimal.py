"""lattice-optimal: the pruned search returns the brute-force optimum."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm import datasets, measures
from ppdm.algorithms import ALGORITHMS
from ppdm.algorithms.lattice_optimal import LatticeOptimal, optimal_node
from ppdm.exceptions import InfeasibleConstraintError, InvalidParameterError
from ppdm.hierarchies import Hierarchy, load_hierarchies
from ppdm.lattice import GeneralizationLattice
from ppdm.model import AnonymizationSpec

REPO = Path(__file__).resolve().parents[3]
QIS = ("age", "duration", "personal-status-sex", "job", "housing")


@pytest.fixture(scope="module")
def german() -> pd.DataFrame:
    return datasets.load("german")


@pytest.fixture(scope="module")
def hierarchies() -> dict[str, Hierarchy]:
    return load_hierarchies(REPO / "hierarchies" / "german")


def brute_force(lattice: GeneralizationLattice, k: int, l: int, loss: str = "glm"):
    """Scan every node with the requirement; least loss, then level sum, then order."""
    everything = lattice.evaluate_all(k=k, l=l)
    feasible = np.flatnonzero(everything.suppressed <= lattice.eta)
    if not feasible.size:
        return None
    values = getattr(everything, loss)
    level_sum = everything.nodes.sum(axis=1)
    best = min(feasible, key=lambda i: (values[i], level_sum[i], i))
    return tuple(int(v) for v in everything.nodes[best]), float(values[best])


def random_table(seed: int) -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 120))
    columns, hierarchies = {}, {}
    for q in range(int(rng.integers(1, 5))):
        name = f"q{q}"
        n_values = int(rng.integers(2, 8))
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
        columns[name] = pd.array(
            np.array(levels[0])[rng.integers(0, n_values, n)], dtype="string"
        )
    columns["s"] = pd.array(
        np.array(list("abcd"))[rng.integers(0, 4, n)], dtype="string"
    )
    columns["y"] = pd.array(np.array(list("pq"))[rng.integers(0, 2, n)], dtype="string")
    return pd.DataFrame(columns), hierarchies


@given(
    st.integers(0, 2**32 - 1),
    st.integers(1, 6),
    st.integers(1, 3),
    st.sampled_from([0.0, 0.05, 0.2]),
    st.sampled_from(["glm", "cm"]),
)
@settings(max_examples=80, deadline=None)
def test_optimum_equals_brute_force_on_random_lattices(seed, k, l, limit, loss) -> None:
    table, hierarchies = random_table(seed)
    qis = [c for c in table.columns if c.startswith("q")]
    lattice = GeneralizationLattice.from_table(
        table, qis, hierarchies, sensitive_attribute="s", target="y",
        suppression_limit=limit,
    )  # fmt: skip
    expected = brute_force(lattice, k, l, loss)
    result = optimal_node(lattice, k=k, l=l, loss=loss)
    if expected is None:
        assert result.best is None
        return
    assert result.best is not None
    assert (result.best.levels, result.best.value(loss)) == expected
    assert result.evaluations <= lattice.size


@pytest.mark.parametrize("k, l, limit", [(5, 1, 0.02), (10, 2, 0.0), (3, 3, 0.05)])
def test_german_optimum_equals_brute_force(german, hierarchies, k, l, limit) -> None:
    lattice = GeneralizationLattice.from_table(
        german, QIS, hierarchies, sensitive_attribute="purpose", suppression_limit=limit
    )
    result = optimal_node(lattice, k=k, l=l)
    assert (result.best.levels, result.best.glm) == brute_force(lattice, k, l)
    assert result.evaluations < lattice.size  # the pruning does prune


def test_release_meets_the_requirement_and_is_reproducible(german, hierarchies) -> None:
    spec = AnonymizationSpec.of(
        QIS,
        "purpose",
        "credit",
        k=5,
        l=2,
        suppression_limit=0.02,
        hierarchies=hierarchies,
    )
    before = german.copy()
    first = LatticeOptimal().anonymize(german, spec, np.random.default_rng(0))
    second = LatticeOptimal().anonymize(german, spec, np.random.default_rng(9))
    table = first.table
    assert measures.k_anonymity(table, list(QIS)) >= 5
    assert measures.distinct_l_diversity(table, list(QIS), "purpose") >= 2
    assert table.to_csv(index=False) == second.table.to_csv(index=False)
    assert json.dumps(first.evidence, sort_keys=True) == json.dumps(
        second.evidence, sort_keys=True
    )
    pd.testing.assert_frame_equal(german, before)
    evidence = first.evidence
    assert evidence["chosen"]["suppressed"] <= evidence["suppression_budget"]
    assert first.records_in - len(table) == evidence["dropped"]
    assert ALGORITHMS["lattice-optimal"] is LatticeOptimal


def test_infeasible_requirement_raises(german, hierarchies) -> None:
    spec = AnonymizationSpec.of(
        QIS, "purpose", None, k=5, l=11, hierarchies=hierarchies
    )
    with pytest.raises(InfeasibleConstraintError, match="11 distinct values"):
        LatticeOptimal().anonymize(german, spec, np.random.default_rng(0))


def test_missing_hierarchy_and_bad_loss(german, hierarchies) -> None:
    partial = {q: h for q, h in hierarchies.items() if q != "housing"}
    spec = AnonymizationSpec.of(QIS, None, None, k=2, hierarchies=partial)
    with pytest.raises(InvalidParameterError, match="'housing'"):
        LatticeOptimal().anonymize(german, spec, np.random.default_rng(0))
    full = AnonymizationSpec.of(QIS, None, None, k=2, hierarchies=hierarchies)
    with pytest.raises(InvalidParameterError, match="loss"):
        LatticeOptimal(loss="dm").anonymize(german, full, np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="target"):
        LatticeOptimal(loss="cm").anonymize(german, full, np.random.default_rng(0))
