"""The lattice evaluator against a direct pandas computation, and the front metrics."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm import datasets, measures
from ppdm.hierarchies import Hierarchy, load_hierarchies
from ppdm.lattice import (
    GeneralizationLattice,
    convergence_error,
    nondominated_boxes,
    pareto_mask,
    representation_ratio,
)

REPO = Path(__file__).resolve().parents[2]


# --------------------------------------------------------- random inputs
def random_case(seed: int) -> dict:
    """A small random table with random hierarchies (rows kept as plain lists)."""
    rng = np.random.default_rng(seed)
    n_qis = int(rng.integers(1, 4))
    rows_by_qi: dict[str, list[list[str]]] = {}
    columns: dict[str, object] = {}
    n = int(rng.integers(1, 70))
    for q in range(n_qis):
        name = f"q{q}"
        n_values = int(rng.integers(1, 7))
        height = int(rng.integers(1, 4))
        groups = np.arange(n_values)
        levels = [[f"{name}v{i}" for i in range(n_values)]]
        for level in range(1, height):
            parents = rng.integers(
                0, max(len(set(groups.tolist())) - 1, 1), size=n_values
            )
            groups = parents[groups] if level > 1 else parents
            levels.append([f"{name}L{level}g{g}" for g in groups])
        levels.append(["*"] * n_values)
        rows_by_qi[name] = [list(r) for r in zip(*levels)]
        values = np.array(levels[0], dtype=object)[rng.integers(0, n_values, size=n)]
        values[rng.random(n) < 0.1] = None
        columns[name] = pd.array(values, dtype="string")
    sens = np.array(["s0", "s1", "s2", "s3"], dtype=object)[rng.integers(0, 4, size=n)]
    sens[rng.random(n) < 0.1] = None
    columns["sens"] = pd.array(sens, dtype="string")
    columns["y"] = pd.array(
        np.array(["a", "b"])[rng.integers(0, 2, size=n)], dtype="string"
    )
    table = pd.DataFrame(columns)
    hierarchies = {
        q: Hierarchy.from_rows(q, rows, source=f"{q}.csv")
        for q, rows in rows_by_qi.items()
    }
    limit = float(rng.choice([0.0, 0.05, 0.2, 0.5]))
    return {
        "table": table,
        "rows": rows_by_qi,
        "hierarchies": hierarchies,
        "limit": limit,
    }


def reference(
    case: dict, node: tuple[int, ...], *, k: int | None = None, l: int | None = None
) -> dict:
    """Generalize with pandas from the raw rows, then measure with ppdm.measures."""
    table, rows_by_qi = case["table"], case["rows"]
    qis = list(rows_by_qi)
    n = len(table)
    eta = math.floor(case["limit"] * n + 1e-9)
    generalized = pd.DataFrame(index=table.index)
    loss = np.zeros(n)
    for q, level in zip(qis, node):
        rows = rows_by_qi[q]
        height = len(rows[0]) - 1
        label = {r[0]: r[level] for r in rows}
        under = pd.Series([r[level] for r in rows]).value_counts()
        denominator = max(len(rows) - 1, 1)
        cells, cell_loss = [], []
        for value in table[q].astype(object):
            if pd.isna(value):
                cells.append("*" if level == height else "")
                cell_loss.append(1.0 if level == height else 0.0)
            else:
                cells.append(label[value])
                cell_loss.append(
                    1.0 if level == height else (under[label[value]] - 1) / denominator
                )
        generalized[q] = cells
        loss += np.array(cell_loss)
    generalized["sens"] = table["sens"]
    generalized["y"] = table["y"]
    ids, n_classes = measures.equivalence_classes(generalized, qis)
    sizes = np.bincount(ids, minlength=n_classes)
    if k is None and l is None:
        threshold = 0
        for j in range(1, int(sizes.max()) if n else 0):
            if sizes[sizes <= j].sum() <= eta:
                threshold = j
        suppress = sizes[ids] <= threshold
    else:
        distinct = generalized.groupby(ids)["sens"].nunique(dropna=False).to_numpy()
        suppress = (sizes[ids] < (k or 1)) | (distinct[ids] < (l or 1))
    kept = generalized[~suppress]
    n_suppressed = int(suppress.sum())
    majority = 0
    if len(kept):
        labels = pd.crosstab(ids[~suppress], kept["y"].to_numpy(dtype=object))
        majority = int(labels.max(axis=1).sum())
    return {
        "k": measures.k_anonymity(kept, qis),
        "l": measures.distinct_l_diversity(kept, qis, "sens") if len(kept) else 0,
        "sk": int(sizes[ids][~suppress].sum()),
        "glm": float(loss[~suppress].sum()) + len(qis) * n_suppressed,
        "cm": (len(kept) - majority + n_suppressed) / n,
        "suppressed": n_suppressed,
        "feasible": n_suppressed <= eta,
    }


def lattice_of(case: dict, spread_l: bool = False) -> GeneralizationLattice:
    return GeneralizationLattice.from_table(
        case["table"], list(case["rows"]), case["hierarchies"],
        sensitive_attribute="sens", target="y", suppression_limit=case["limit"],
        spread_l=spread_l,
    )  # fmt: skip


def assert_matches(metrics, expected: dict) -> None:
    for name in ("k", "l", "sk", "suppressed"):
        assert getattr(metrics, name) == expected[name], name
    assert metrics.glm == pytest.approx(expected["glm"], abs=1e-9)
    assert metrics.cm == pytest.approx(expected["cm"], abs=1e-12)


# ----------------------------------------------------------------- tests
@given(st.integers(0, 2**32 - 1))
@settings(max_examples=30, deadline=None)
def test_node_metrics_equal_a_direct_pandas_computation(seed: int) -> None:
    case = random_case(seed)
    lattice = lattice_of(case)
    rng = np.random.default_rng(seed)
    for node in lattice.nodes()[rng.permutation(lattice.size)[:6]]:
        assert_matches(lattice.evaluate(node), reference(case, tuple(node)))
        k = int(rng.integers(1, 5))
        l = int(rng.integers(1, 4))
        required = lattice.evaluate(node, k=k, l=l)
        expected = reference(case, tuple(node), k=k, l=l)
        assert_matches(required, expected)
        assert required.feasible == expected["feasible"]


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=40, deadline=None)
def test_exhaustive_walk_equals_node_by_node_evaluation(seed: int) -> None:
    case = random_case(seed)
    lattice = lattice_of(case)
    lattice.chunk_rows = 7  # force many chunks
    everything = lattice.evaluate_all()
    for row, node in enumerate(everything.nodes):
        one = lattice.evaluate(node)
        assert (
            everything.k[row],
            everything.l[row],
            everything.sk[row],
            everything.suppressed[row],
        ) == (one.k, one.l, one.sk, one.suppressed)
        assert everything.glm[row] == one.glm  # exact integer sums: bit-equal
        assert everything.cm[row] == pytest.approx(one.cm, abs=1e-12)
    required = lattice.evaluate_all(k=2, l=2)
    for row, node in enumerate(required.nodes):
        one = lattice.evaluate(node, k=2, l=2)
        assert (required.k[row], required.l[row], required.suppressed[row]) == (
            one.k,
            one.l,
            one.suppressed,
        )
        assert required.glm[row] == one.glm


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=15, deadline=None)
def test_spread_l_equals_sum_of_squared_value_counts(seed: int) -> None:
    case = random_case(seed)
    lattice = lattice_of(case, spread_l=True)
    for node in lattice.nodes()[:5]:
        metrics = lattice.evaluate(node)
        expected = reference(case, tuple(node))
        table = case["table"]
        generalized = pd.DataFrame(
            {
                q: case["hierarchies"][q].generalize(table[q], lvl)
                for q, lvl in zip(case["rows"], node)
            }
        )
        ids, _ = measures.equivalence_classes(generalized, list(case["rows"]))
        sizes = np.bincount(ids)
        kept = sizes[ids] > 0
        if expected["suppressed"]:
            threshold_rows = np.sort(sizes[ids])
            kept = sizes[ids] > threshold_rows[expected["suppressed"] - 1]
        counts = pd.DataFrame(
            {"c": ids[kept], "s": table["sens"][kept].fillna("<NA>")}
        ).value_counts()
        assert metrics.sl == int((counts**2).sum())


def test_adult_exhaustive_agrees_with_single_nodes_and_has_17920_nodes() -> None:
    adult = datasets.load("adult", "train").iloc[:6000]
    qis = ["age", "workclass", "education", "marital-status", "race", "sex",
           "native-country", "income"]  # fmt: skip
    lattice = GeneralizationLattice.from_table(
        adult, qis, load_hierarchies(REPO / "hierarchies" / "adult"),
        sensitive_attribute="occupation", suppression_limit=0.01,
    )  # fmt: skip
    assert lattice.size == 17_920
    everything = lattice.evaluate_all()
    rng = np.random.default_rng(7)
    for row in rng.choice(lattice.size, 25, replace=False):
        one = lattice.evaluate(everything.nodes[row])
        assert (one.k, one.l, one.glm, one.suppressed) == (
            everything.k[row], everything.l[row], everything.glm[row],
            everything.suppressed[row],
        )  # fmt: skip
    top = lattice.evaluate(lattice.heights)
    assert top.k == len(adult) and top.glm == pytest.approx(len(adult) * len(qis))
    assert (everything.suppressed <= lattice.eta).all()


def test_loss_bound_is_a_lower_bound_and_exact_without_suppression() -> None:
    case = random_case(3)
    lattice = lattice_of(case)
    everything = lattice.evaluate_all()
    bound = lattice.loss_bound(everything.nodes)
    assert (bound <= everything.glm + 1e-9).all()
    none_suppressed = everything.suppressed == 0
    assert np.allclose(bound[none_suppressed], everything.glm[none_suppressed])


def test_node_outside_the_lattice_is_rejected() -> None:
    lattice = lattice_of(random_case(1))
    with pytest.raises(ValueError, match="outside the lattice"):
        lattice.evaluate(lattice.heights + 1)


# ------------------------------------------------------------ fronts
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6)),
        min_size=1,
        max_size=40,
    )
)
@settings(max_examples=80, deadline=None)
def test_pareto_mask_equals_the_definition(points: list[tuple[int, int, int]]) -> None:
    values = np.array(points, dtype=float)
    senses = [1, 1, -1]
    oriented = values * senses
    expected = [
        not any((o >= p).all() and (o > p).any() for o in oriented) for p in oriented
    ]
    assert pareto_mask(values, senses).tolist() == expected


def test_convergence_error_and_representation_ratio_known_answers() -> None:
    front = np.array([[2.0, 10.0], [4.0, 20.0], [8.0, 40.0]])  # (k max, GLM min)
    senses = [1, -1]
    assert convergence_error(front, front) == 0.0
    off = np.array([[2.0, 12.0]])
    assert convergence_error(off, front) == pytest.approx(2.0 / 40.0)
    assert representation_ratio(front[:2], front, senses, [1, 1]) == pytest.approx(
        2 / 3
    )
    assert representation_ratio(front, front, senses, [1, 1]) == 1.0
    # Coarse boxes: (2,10) and (4,20) fall in different boxes of eps (4, 100)
    # -> floor: (0,0) and (1,0): (1,0) dominates (0,0); (8,40) -> (2,0) dominates both.
    assert nondominated_boxes(front, senses, [4, 100]) == {(2.0, -0.0)}
