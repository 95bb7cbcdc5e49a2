"""The lattice evaluator against a direct pandas computation, and the front metrics."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from model_oracle import plain, plain_accepts

from ppdm.exceptions import InfeasibleConstraintError, InvalidParameterError
from ppdm.generalization.hierarchies import Hierarchy, load_hierarchies
from ppdm.generalization.lattice import (
    GeneralizationLattice,
    generalized_release,
)
from ppdm.generalization.pareto import (
    convergence_error,
    nondominated_boxes,
    pareto_mask,
    representation_ratio,
)
from ppdm.model import AnonymizationSpec
from ppdm.prepare import datasets
from ppdm.privacy import (
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    RecursiveCLDiversity,
    Requirement,
    TCloseness,
    measures,
)
from ppdm.verify import verify_tables

REPO = Path(__file__).resolve().parents[3]


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


def _generalize(case: dict, node: tuple[int, ...]) -> tuple[pd.DataFrame, np.ndarray]:
    """The table at ``node``, generalized from the raw hierarchy rows, and each
    row's GLM (Iyengar's loss of its labels)."""
    table, rows_by_qi = case["table"], case["rows"]
    qis = list(rows_by_qi)
    n = len(table)
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
    for column in table.columns:
        if column not in qis:
            generalized[column] = table[column]
    return generalized, loss


def reference(
    case: dict, node: tuple[int, ...], *, k: int | None = None, l: int | None = None
) -> dict:
    """Generalize with pandas from the raw rows, then measure with ppdm.privacy.measures."""
    table, qis = case["table"], list(case["rows"])
    n = len(table)
    eta = math.floor(case["limit"] * n + 1e-9)
    generalized, loss = _generalize(case, node)
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


# ------------------------------------------------- requirement, exactly
def reference_decision(case: dict, node: tuple[int, ...], requirement) -> dict:
    """What a node releases under ``requirement``, class by class in Python.

    Classes a model rejects are suppressed; the suppressed rows, merged with a
    class whose labels are all ``*``, are kept as one class if the models
    accept it, else dropped, and the remaining classes are asked again
    against the remaining rows, until nothing changes.
    """
    table, qis = case["table"], list(case["rows"])
    n = len(table)
    eta = math.floor(case["limit"] * n + 1e-9)
    generalized, loss = _generalize(case, node)
    values = {
        a: [plain(v) for v in table[a].astype(object)]
        for a in requirement.sensitive_attributes
    }
    classes: dict[tuple, list[int]] = {}
    for row, key in enumerate(zip(*(generalized[q] for q in qis))):
        classes.setdefault(key, []).append(row)
    everyone = list(range(n))

    def accepts(rows: list[int], whole: list[int]) -> bool:
        return plain_accepts(requirement.models, rows, whole, values.__getitem__)

    suppressed = {c for c, rows in classes.items() if not accepts(rows, everyone)}
    rejected = sum(len(classes[c]) for c in suppressed)
    marker = ("*",) * len(qis)
    while True:
        gone = {r for c in suppressed for r in classes[c]}
        if len(gone) > eta:
            feasible, keep = False, False
            break
        if not gone:
            feasible, keep = True, True
            break
        pool = sorted(gone) + (
            classes.get(marker, []) if marker not in suppressed else []
        )
        if accepts(pool, everyone):
            feasible, keep = True, True
            break
        remaining = [r for r in everyone if r not in gone]
        more = {
            c
            for c in classes
            if c not in suppressed and not accepts(classes[c], remaining)
        }
        if not remaining or not more:
            feasible, keep = bool(remaining), False
            break
        suppressed |= more
    kept = [c for c in classes if c not in suppressed]
    kept_rows = [r for c in kept for r in classes[c]]
    tracked = requirement.sensitive_attribute or "sens"  # the lattice's l index
    sens = [plain(v) for v in table[tracked].astype(object)]
    return {
        "feasible": feasible,
        "over_budget": rejected > eta,
        "keep": keep,
        "suppressed": len(gone),
        "glm": float(loss[kept_rows].sum()) + len(qis) * len(gone),
        "k": min((len(classes[c]) for c in kept), default=0),
        "l": min((len({sens[r] for r in classes[c]}) for c in kept), default=0),
    }


def with_score(case: dict, seed: int) -> dict:
    """The case with a numeric sensitive column ``score`` (ordered t-closeness)."""
    rng = np.random.default_rng(seed + 1)
    table = case["table"].copy()
    table["score"] = rng.integers(0, 5, size=len(table))
    return {**case, "table": table}


REQUIREMENTS = {
    "entropy": lambda qis: Requirement(
        qis, (KAnonymity(2), EntropyLDiversity("sens", 1.8))
    ),
    "recursive": lambda qis: Requirement(
        qis, (KAnonymity(1), RecursiveCLDiversity("sens", c=2.0, l=2))
    ),
    "t-closeness": lambda qis: Requirement(
        qis, (KAnonymity(2), TCloseness("sens", 0.2))
    ),
    "ordered t": lambda qis: Requirement(
        qis, (KAnonymity(1), TCloseness("score", 0.15))
    ),
    "entropy and ordered t": lambda qis: Requirement(
        qis,
        (KAnonymity(2), EntropyLDiversity("sens", 1.5), TCloseness("score", 0.3)),
    ),
}


def requirement_lattice(case: dict, requirement) -> GeneralizationLattice:
    return GeneralizationLattice.from_table(
        case["table"], list(case["rows"]), case["hierarchies"],
        sensitive_attribute=requirement.sensitive_attribute, target="y",
        suppression_limit=case["limit"], requirement=requirement,
    )  # fmt: skip


@given(st.integers(0, 2**32 - 1), st.sampled_from(sorted(REQUIREMENTS)))
@settings(max_examples=40, deadline=None)
def test_decide_equals_a_class_by_class_reference_and_releases_pass_the_verifier(
    seed: int, name: str
) -> None:
    case = with_score(random_case(seed), seed)
    qis = tuple(case["rows"])
    requirement = REQUIREMENTS[name](qis)
    lattice = requirement_lattice(case, requirement)
    assert not lattice.decided_by_bounds
    spec = AnonymizationSpec(requirement, "y", case["limit"], case["hierarchies"])
    for node in lattice.nodes():
        metrics = lattice.decide(node)
        expected = reference_decision(case, tuple(node), requirement)
        assert metrics.feasible == expected["feasible"], tuple(node)
        assert metrics.over_budget == expected["over_budget"], tuple(node)
        if expected["over_budget"]:
            continue
        assert (metrics.suppressed, metrics.k, metrics.l) == (
            expected["suppressed"], expected["k"], expected["l"],
        )  # fmt: skip
        assert metrics.glm == pytest.approx(expected["glm"], abs=1e-9)
        if not expected["feasible"]:
            continue
        released, counts = generalized_release(
            case["table"], spec, case["hierarchies"], node
        )
        assert verify_tables({"release": released}, requirement).passed
        assert (
            counts["suppressed" if expected["keep"] else "dropped"]
            == (expected["suppressed"])
        )
        assert len(released) == len(case["table"]) - counts["dropped"]


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=25, deadline=None)
def test_decide_by_bounds_is_the_bit_mask_evaluation(seed: int) -> None:
    case = random_case(seed)
    qis = tuple(case["rows"])
    requirement = Requirement(qis, (KAnonymity(2), DistinctLDiversity("sens", 2)))
    lattice = requirement_lattice(case, requirement)
    assert lattice.decided_by_bounds and lattice.requirement_bounds == (2, 2)
    spec = AnonymizationSpec(requirement, "y", case["limit"], case["hierarchies"])
    for node in lattice.nodes():
        metrics = lattice.decide(node)
        assert metrics == lattice.evaluate(node, k=2, l=2)
        expected = reference_decision(case, tuple(node), requirement)
        assert (metrics.feasible, metrics.suppressed) == (
            expected["feasible"], expected["suppressed"],
        )  # fmt: skip
        if metrics.feasible:
            released, _ = generalized_release(
                case["table"], spec, case["hierarchies"], node
            )
            assert verify_tables({"release": released}, requirement).passed


def test_a_second_distinct_l_attribute_is_decided_by_the_models() -> None:
    case = with_score(random_case(11), 11)
    qis = tuple(case["rows"])
    requirement = Requirement(
        qis,
        (KAnonymity(2), DistinctLDiversity("sens", 2), DistinctLDiversity("score", 2)),
    )
    lattice = requirement_lattice(case, requirement)
    # The bit masks track "sens" only: "score" must be asked of the models.
    assert requirement.decided_by_bounds and not lattice.decided_by_bounds
    for node in lattice.nodes():
        expected = reference_decision(case, tuple(node), requirement)
        assert lattice.decide(node).feasible == expected["feasible"]


def test_suppressed_rows_join_the_class_released_as_all_stars() -> None:
    # At level 1, a and b become "A", c and d become "*": the class "A" (2 rows)
    # fails k=3, and its suppressed rows are released as "*", i.e. in the class
    # "*" (3 rows), making one class of 5 that meets k=3: nothing is dropped.
    table = pd.DataFrame({
        "zip": pd.array(["a", "b", "c", "c", "d"], dtype="string"),
        "dx": pd.array(["x", "y", "x", "y", "z"], dtype="string"),
    })  # fmt: skip
    hierarchy = Hierarchy.from_rows(
        "zip",
        [["a", "A", "*"], ["b", "A", "*"], ["c", "*", "*"], ["d", "*", "*"]],
        source="zip.csv",
    )
    requirement = Requirement(("zip",), (KAnonymity(3),))
    lattice = GeneralizationLattice.from_table(
        table, ["zip"], {"zip": hierarchy}, suppression_limit=0.4,
        requirement=requirement,
    )  # fmt: skip
    spec = AnonymizationSpec(requirement, None, 0.4, {"zip": hierarchy})
    released, counts = generalized_release(table, spec, {"zip": hierarchy}, (1,))
    assert released["zip"].tolist() == ["*"] * 5
    assert counts == {"suppressed": 2, "dropped": 0}
    assert verify_tables({"release": released}, requirement).passed
    assert lattice.decide((1,)).feasible and lattice.decide((1,)).suppressed == 2
    # Under entropy 2-diversity, "A" = {x, y} passes, "*" = {x, y, z} passes.
    entropy = Requirement(("zip",), (EntropyLDiversity("dx", 2.0),))
    spec = AnonymizationSpec(entropy, None, 0.0, {"zip": hierarchy})
    released, counts = generalized_release(table, spec, {"zip": hierarchy}, (1,))
    assert released["zip"].tolist() == ["A", "A", "*", "*", "*"]
    assert counts == {"suppressed": 0, "dropped": 0}


def test_dropping_the_suppressed_rows_can_break_t_closeness_elsewhere() -> None:
    # Node 0: classes a = {x, y}, b = {x, y}, c = {z}; t = 0.35. The table is
    # x 2/5, y 2/5, z 1/5: a and b are at EMD 0.2, c at 0.8 and is suppressed.
    # Released alone, c's class {z} still fails, so it is dropped; against
    # the remaining table (x 1/2, y 1/2) a and b are at distance 0: released.
    table = pd.DataFrame({
        "zip": pd.array(["a", "a", "b", "b", "c"], dtype="string"),
        "dx": pd.array(["x", "y", "x", "y", "z"], dtype="string"),
    })  # fmt: skip
    hierarchy = Hierarchy.from_rows(
        "zip", [["a", "*"], ["b", "*"], ["c", "*"]], source="zip.csv"
    )
    requirement = Requirement(("zip",), (TCloseness("dx", 0.35),))
    spec = AnonymizationSpec(requirement, None, 0.2, {"zip": hierarchy})
    released, counts = generalized_release(table, spec, {"zip": hierarchy}, (0,))
    assert released["zip"].tolist() == ["a", "a", "b", "b"]
    assert counts == {"suppressed": 0, "dropped": 1}
    assert verify_tables({"release": released}, requirement).passed
    # A cascade: a = {x, y}, b = {x, z, z}, c = {x}; t = 0.35; the table is
    # x 1/2, y 1/6, z 1/3. a and b are at 1/3, c at 1/2: c is suppressed, and
    # {x} alone fails, so c would be dropped; against the remaining table
    # (x 2/5, y 1/5, z 2/5) a is at 0.4 and fails in turn. Suppressing a as
    # well, the suppressed rows {x, y, x} are at 1/3 of the whole table: they
    # are released as one class and nothing is dropped.
    cascade = pd.DataFrame({
        "zip": pd.array(["a", "a", "b", "b", "b", "c"], dtype="string"),
        "dx": pd.array(["x", "y", "x", "z", "z", "x"], dtype="string"),
    })  # fmt: skip
    requirement = Requirement(("zip",), (TCloseness("dx", 0.35),))
    lattice = GeneralizationLattice.from_table(
        cascade, ["zip"], {"zip": hierarchy}, sensitive_attribute="dx",
        suppression_limit=0.5, requirement=requirement,
    )  # fmt: skip
    spec = AnonymizationSpec(requirement, None, 0.5, {"zip": hierarchy})
    released, counts = generalized_release(cascade, spec, {"zip": hierarchy}, (0,))
    assert released["zip"].tolist() == ["*", "*", "b", "b", "b", "*"]
    assert counts == {"suppressed": 3, "dropped": 0}
    assert verify_tables({"release": released}, requirement).passed
    metrics = lattice.decide((0,))
    assert metrics.feasible and metrics.suppressed == 3 and not metrics.over_budget
    # Within a budget of 2 rows the cascade does not fit: infeasible, though
    # the rows first rejected (c) fit, so the node proves nothing below it.
    tight = GeneralizationLattice.from_table(
        cascade, ["zip"], {"zip": hierarchy}, sensitive_attribute="dx",
        suppression_limit=0.34, requirement=requirement,
    )  # fmt: skip
    metrics = tight.decide((0,))
    assert not metrics.feasible and not metrics.over_budget


def test_nothing_left_to_release_is_infeasible() -> None:
    # Every class ({x, x}; {x, x, y}: exp(H) = 1.89) and the whole table fail
    # entropy 2-diversity.
    table = pd.DataFrame({
        "zip": pd.array(["a", "a", "b", "b", "b"], dtype="string"),
        "dx": pd.array(["x", "x", "x", "x", "y"], dtype="string"),
    })  # fmt: skip
    hierarchy = Hierarchy.from_rows("zip", [["a", "*"], ["b", "*"]], source="z.csv")
    requirement = Requirement(("zip",), (EntropyLDiversity("dx", 2.0),))
    lattice = GeneralizationLattice.from_table(
        table, ["zip"], {"zip": hierarchy}, suppression_limit=1.0,
        requirement=requirement,
    )  # fmt: skip
    assert not lattice.decide((0,)).feasible and not lattice.decide((1,)).feasible
    spec = AnonymizationSpec(requirement, None, 1.0, {"zip": hierarchy})
    with pytest.raises(InfeasibleConstraintError, match="nothing"):
        generalized_release(table, spec, {"zip": hierarchy}, (1,))
    plain = GeneralizationLattice.from_table(table, ["zip"], {"zip": hierarchy})
    with pytest.raises(InvalidParameterError, match="without a requirement"):
        plain.decide((0,))


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
