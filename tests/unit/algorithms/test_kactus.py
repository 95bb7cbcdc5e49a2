"""kACTUS: the paper's worked example, properties on random tables, options."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdm.algorithms import ALGORITHMS, get_algorithm
from ppdm.algorithms.kactus import Kactus, anonymize_tree
from ppdm.exceptions import InfeasibleConstraintError, InvalidParameterError
from ppdm.measures import k_anonymity
from ppdm.model import AnonymizationSpec
from ppdm.trees import Equals, Interval, PredicateTree, TreeNode

# -- the paper's worked example (Kisilevich et al. 2010, Figs. 1-4, k = 100) ----------

QI = ["marital-status", "education", "occupation", "workclass", "race", "sex", "age"]

# (paper node number, attribute, value, leaf size or None for an internal node, children)
FIG1 = (
    0,
    None,
    None,
    None,
    [
        (
            1,
            "marital-status",
            "Married-civ-spouse",
            None,
            [
                (2, "education", "11th", 271, []),
                (3, "education", "Masters", 713, []),
                (4, "education", "9th", 158, []),
                (5, "education", "HS-grad", 3436, []),
                (
                    6,
                    "education",
                    "Some-college",
                    None,
                    [
                        (7, "occupation", "Handlers-cleaners", 69, []),
                        (
                            8,
                            "occupation",
                            "Exec-managerial",
                            None,
                            [
                                (
                                    9,
                                    "workclass",
                                    "Private",
                                    None,
                                    [
                                        (10, "race", "Black", 6, []),
                                        (11, "race", "White", 190, []),
                                        (12, "race", "Asian-Pac-Islander", 3, []),
                                        (13, "race", "Other", 1, []),
                                        (14, "race", "Amer-Indian-Eskimo", 2, []),
                                    ],
                                ),
                                (15, "workclass", "Self-emp-not-inc", 39, []),
                                (16, "workclass", "State-gov", 8, []),
                                (17, "workclass", "Federal-gov", 16, []),
                                (18, "workclass", "Local-gov", 23, []),
                                (
                                    19,
                                    "workclass",
                                    "Self-emp-inc",
                                    None,
                                    [
                                        (20, "sex", "Male", 42, []),
                                        (21, "sex", "Female", 4, []),
                                    ],
                                ),
                                (22, "workclass", "Without-pay", 0, []),
                            ],
                        ),
                    ],
                ),
            ],
        ),
        (23, "marital-status", "Married-AF-spouse", 16, []),
    ],
)


def _worked_example() -> tuple[pd.DataFrame, PredicateTree, dict[int, TreeNode]]:
    """Fig. 1 built by hand, with synthetic rows matching every leaf's path."""
    rng = np.random.default_rng(7)
    records: list[dict] = []
    by_number: dict[int, TreeNode] = {}

    def build(spec, path: dict) -> TreeNode:
        number, attribute, value, size, children = spec
        path = {**path, attribute: value} if attribute else path
        predicate = Equals(attribute, value) if attribute else None
        if not children:
            start = len(records)
            for _ in range(size):
                row = {q: rng.choice(["u", "v", "w"]) for q in QI[:-1]}
                row["age"] = int(rng.integers(17, 90))
                row.update(path)
                records.append(row)
            node = TreeNode(predicate, rows=np.arange(start, len(records)))
        else:
            kids = [build(child, path) for child in children]
            node = TreeNode(
                predicate,
                children=kids,
                rows=np.concatenate([kid.rows for kid in kids]),
            )
        by_number[number] = node
        return node

    root = build(FIG1, {})
    table = pd.DataFrame.from_records(records)
    table["income"] = np.where(np.arange(len(table)) % 3 == 0, ">50K", "<=50K")
    table["hours"] = np.arange(len(table))
    return table, PredicateTree(root, len(table)), by_number


def test_worked_example_lending_and_pruning_match_figures_1_to_4():
    table, tree, node = _worked_example()
    result = anonymize_tree(table, tree, QI, 100, np.random.default_rng(0))
    stats = {s["node"]: s for s in result.node_stats}

    # Node 9: only node 11 (190) complies; its siblings hold 6+3+1+2 = 12, so 88
    # instances of node 11 are lent and 102 are released.
    n9 = stats[node[9].id]
    assert (n9["complying_children"], n9["non_complying"]) == (1, 12)
    assert (n9["lent"], n9["released"], n9["holds"]) == (88, 102, 100)
    from_11 = result.group == result.group_nodes.index(node[11].id)
    assert from_11.sum() == 102
    released_11 = result.table[from_11]
    assert set(result.positions[from_11]) <= set(node[11].rows.tolist())
    # revealed: the path's values (marital, education, occupation, workclass, race)
    assert released_11[
        ["marital-status", "education", "occupation", "workclass", "race"]
    ].drop_duplicates().values.tolist() == [
        ["Married-civ-spouse", "Some-college", "Exec-managerial", "Private", "White"]
    ]
    assert (released_11[["sex", "age"]] == "*").all().all()
    # non-QI attributes are revealed unchanged
    assert (
        released_11["hours"].tolist() == table.loc[released_11.index, "hours"].tolist()
    )

    # Node 19: none of its children (42, 4) complies: pruned without release.
    n19 = stats[node[19].id]
    assert (n19["released"], n19["lent"], n19["holds"]) == (0, 0, 46)

    # Node 8: only node 9 (now 100) complies; 15-19 and 22 hold 132 >= k, so
    # nothing is lent, node 9 releases its 100 and node 8 ends with 132 (Fig. 4).
    n8 = stats[node[8].id]
    assert (n8["non_complying"], n8["lent"], n8["released"], n8["holds"]) == (
        132,
        0,
        100,
        132,
    )

    # The rest follows from the same rules: node 6 borrows 31 of node 8's 32
    # extras for Handlers-cleaners (69); node 1 releases everything; the 16
    # Married-AF-spouse rows reach the root alone and are dropped (< k).
    assert (stats[node[6].id]["lent"], stats[node[6].id]["released"]) == (31, 101)
    assert stats[node[1].id]["holds"] == 0
    assert result.lost.tolist() == node[23].rows.tolist()
    assert len(result.table) + len(result.lost) == len(table)
    assert k_anonymity(result.table, QI) >= 100


def test_worked_example_lent_rows_are_released_with_the_parent_path():
    table, tree, node = _worked_example()
    result = anonymize_tree(table, tree, QI, 100, np.random.default_rng(3))
    at_9 = result.group == result.group_nodes.index(node[9].id)
    rows = set(result.positions[at_9].tolist())
    from_11 = rows & set(node[11].rows.tolist())
    assert len(rows) == 100 and len(from_11) == 88
    released = result.table[at_9]
    assert (released["race"] == "*").all()
    assert (released["workclass"] == "Private").all()


def test_worked_example_with_value_sets_instead_of_suppression():
    table, tree, node = _worked_example()
    result = anonymize_tree(
        table, tree, QI, 100, np.random.default_rng(0), generalize_small_siblings=True
    )
    at_9 = result.table[result.group == result.group_nodes.index(node[9].id)]
    # node 9's release: races of the four small siblings plus the lent Whites
    assert at_9["race"].unique().tolist() == [
        "{Amer-Indian-Eskimo|Asian-Pac-Islander|Black|Other|White}"
    ]
    assert (at_9["sex"] == "*").all()  # sex was never tested below node 9
    assert k_anonymity(result.table, QI) >= 100


def test_greedy_lending_lends_the_instances_closest_to_the_small_siblings():
    table, tree, node = _worked_example()
    # make 88 of node 11's rows look like the small siblings on "sex"
    small = np.concatenate([node[i].rows for i in (10, 12, 13, 14)])
    table.loc[small, "sex"] = "z"
    look_alike = node[11].rows[:88]
    table.loc[look_alike, "sex"] = "z"
    table.loc[np.concatenate([small, look_alike]), "age"] = 40
    result = anonymize_tree(
        table, tree, QI, 100, np.random.default_rng(0), lending="greedy"
    )
    at_9 = result.group == result.group_nodes.index(node[9].id)
    lent = set(result.positions[at_9].tolist()) & set(node[11].rows.tolist())
    assert lent == set(look_alike.tolist())


def test_numeric_attribute_tested_by_thresholds_is_released_as_its_mean():
    # age <= 30 (4 rows) / age > 30 (4 rows), k = 4: both comply
    table = pd.DataFrame(
        {"age": [20, 22, 24, 30, 40, 45, 50, 61], "y": list("aaaabbbb")}
    )
    left = TreeNode(Interval("age", high=30.0), rows=np.arange(4))
    right = TreeNode(Interval("age", low=30.0), rows=np.arange(4, 8))
    tree = PredicateTree(TreeNode(children=[left, right], rows=np.arange(8)), 8)
    result = anonymize_tree(table, tree, ["age"], 4, np.random.default_rng(0))
    assert result.table["age"].tolist() == ["24"] * 4 + ["49"] * 4
    assert result.table["y"].tolist() == table["y"].tolist()
    as_intervals = anonymize_tree(
        table, tree, ["age"], 4, np.random.default_rng(0), numeric_release="interval"
    )
    assert as_intervals.table["age"].tolist() == ["(-inf, 30]"] * 4 + ["(30, inf)"] * 4


# -- the algorithm object -----------------------------------------------------------------


def _spec(qi, k, l=1, target="y"):  # noqa: E741
    return AnonymizationSpec.of(tuple(qi), "s" if l > 1 else None, target, k=k, l=l)


@st.composite
def tables(draw):
    n = draw(st.integers(1, 70))
    k = draw(st.integers(1, min(n, 9)))
    rows = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["a", "b", "c", None]),
                st.sampled_from(["x", "y"]),
                st.integers(0, 60),
                st.sampled_from(["p", "q", "r"]),
                st.integers(0, 9),
                st.sampled_from(["yes", "no"]),
            ),
            min_size=n,
            max_size=n,
        )
    )
    frame = pd.DataFrame(rows, columns=["c1", "c2", "num", "c3", "other", "y"])
    frame["c1"] = frame["c1"].astype("string")
    frame.index = pd.RangeIndex(100, 100 + n)  # a non-default index must survive
    params = draw(
        st.fixed_dictionaries(
            {
                "inducer": st.sampled_from(["c45", "sklearn"]),
                "lending": st.sampled_from(["random", "greedy"]),
                "generalize_small_siblings": st.booleans(),
                "pruning_confidence": st.sampled_from([0.25, None]),
                "numeric_release": st.sampled_from(["mean", "interval"]),
            }
        )
    )
    seed = draw(st.integers(0, 2**16))
    return frame, k, params, seed


def _text(column: pd.Series) -> pd.Series:
    return column.astype(object).map(lambda v: "<NA>" if pd.isna(v) else str(v))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=tables())
def test_random_tables_release_k_anonymous_data_and_keep_the_rest(case):
    table, k, params, seed = case
    qi = ["c1", "c2", "num", "c3"]
    before = table.copy(deep=True)
    release = Kactus(**params).anonymize(
        table, _spec(qi, k), np.random.default_rng(seed)
    )
    out = release.table
    pd.testing.assert_frame_equal(table, before)  # input not mutated
    lost = release.evidence["lost_records"]
    assert lost < k
    assert len(out) + lost == len(table) == release.records_in
    if len(out):
        assert k_anonymity(out, qi) >= k
    # non-QI columns and the target are never altered
    pd.testing.assert_frame_equal(
        out[["other", "y"]], table.loc[out.index, ["other", "y"]]
    )
    assert list(out.columns) == list(table.columns)
    # same seed -> byte-identical release
    again = Kactus(**params).anonymize(table, _spec(qi, k), np.random.default_rng(seed))
    assert again.table.to_csv() == out.to_csv()
    json.dumps(release.evidence)
    out.to_parquet(io.BytesIO())  # QI columns are text: one type per column
    # a kept categorical value is the row's true value
    for name in ("c1", "c2", "c3"):
        released = _text(out[name])
        kept = (released != "*") & ~released.str.startswith("{")
        assert (
            released[kept].tolist() == _text(table.loc[out.index[kept], name]).tolist()
        )


@settings(max_examples=25, deadline=None)
@given(case=tables())
def test_released_means_lie_inside_the_path_interval(case):
    table, k, _, seed = case
    tree = Kactus().grow_tree(table, _spec(["c1", "num"], k))
    result = anonymize_tree(
        table.reset_index(drop=True),
        tree,
        ["c1", "num"],
        k,
        np.random.default_rng(seed),
    )
    for g, node_id in enumerate(result.group_nodes):
        tests = [p for p in tree.path(tree.node(node_id)) if isinstance(p, Interval)]
        values = result.table.loc[result.group == g, "num"]
        if tests:
            assert (values == values.iloc[0]).all()
            value = float(values.iloc[0])
            for test in tests:
                assert test.low < value <= test.high


def test_registry_and_parameters():
    assert ALGORITHMS["kactus"] is Kactus
    algo = get_algorithm("kactus", lending="greedy")
    assert algo.get_params() == {
        "inducer": "c45",
        "lending": "greedy",
        "generalize_small_siblings": False,
        "pruning_confidence": 0.25,
        "numeric_release": "mean",
    }
    assert Kactus.summary and "\n" not in Kactus.summary
    table = pd.DataFrame({"a": list("abab"), "y": list("xyxy")})
    with pytest.raises(InvalidParameterError, match="lending"):
        Kactus(lending="nearest").anonymize(
            table, _spec(["a"], 2), np.random.default_rng(0)
        )
    with pytest.raises(InvalidParameterError, match="inducer"):
        Kactus(inducer="j48").anonymize(
            table, _spec(["a"], 2), np.random.default_rng(0)
        )
    with pytest.raises(InvalidParameterError, match="pruning_confidence"):
        Kactus(pruning_confidence=0.9).anonymize(
            table, _spec(["a"], 2), np.random.default_rng(0)
        )
    unpruned = Kactus(pruning_confidence=None).anonymize(
        table, _spec(["a"], 2), np.random.default_rng(0)
    )
    assert k_anonymity(unpruned.table, ["a"]) >= 2


def test_l_diversity_and_missing_target_are_rejected():
    table = pd.DataFrame({"a": list("abab"), "s": list("pqpq"), "y": list("xyxy")})
    with pytest.raises(InvalidParameterError, match="only l = 1"):
        Kactus().anonymize(table, _spec(["a"], 2, l=2), np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="target"):
        Kactus().anonymize(
            table, _spec(["a"], 2, target=None), np.random.default_rng(0)
        )


def test_infeasible_when_there_are_fewer_rows_than_k():
    empty = pd.DataFrame(
        {"a": pd.Series([], dtype="string"), "y": pd.Series([], dtype="string")}
    )
    with pytest.raises(InfeasibleConstraintError):
        Kactus().anonymize(empty, _spec(["a"], 1), np.random.default_rng(0))
    with pytest.raises((InfeasibleConstraintError, InvalidParameterError)):
        Kactus().anonymize(empty.iloc[:0], _spec(["a"], 3), np.random.default_rng(0))
