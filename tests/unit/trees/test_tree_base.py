"""The predicate-tree interface: construction, coverage, routing, evidence."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from ppdm.trees import (
    Between,
    Equals,
    PredicateTree,
    TreeNode,
    ValueSet,
    constraint_kinds,
)


def _table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "colour": pd.array(
                ["red", "blue", "red", None, "green", "blue"], dtype="string"
            ),
            "age": [20.0, 35.0, 50.0, 41.0, np.nan, 29.0],
        }
    )


def _tree() -> PredicateTree:
    """colour = red -> age <= 30 / age > 30; colour in {blue, green}; missing -> red."""
    young = TreeNode(Between("age", high=30.0), rows=np.array([0]))
    old = TreeNode(Between("age", low=30.0), rows=np.array([2, 3]))
    red = TreeNode(
        Equals("colour", "red"),
        children=[young, old],
        rows=np.array([0, 2, 3]),
        missing_child=1,
    )
    other = TreeNode(ValueSet("colour", {"blue", "green"}), rows=np.array([1, 4, 5]))
    root = TreeNode(children=[red, other], rows=np.arange(6), missing_child=0)
    return PredicateTree(root, 6)


def test_ids_are_preorder_and_paths_conjoin_the_tests():
    tree = _tree()
    assert [node.id for node in tree.nodes] == [0, 1, 2, 3, 4]
    assert [leaf.id for leaf in tree.leaves] == [2, 3, 4]
    old = tree.node(3)
    assert [p.describe() for p in tree.path(old)] == ["colour = red", "age > 30"]
    assert constraint_kinds(tree, old) == {"colour": "equals", "age": "interval"}
    assert constraint_kinds(tree, tree.node(4)) == {"colour": "set"}
    assert tree.depth() == 2


def test_postorder_visits_every_node_after_its_children():
    tree = _tree()
    seen: set[int] = set()
    for node in tree.postorder():
        assert all(child.id in seen for child in node.children)
        seen.add(node.id)
    assert seen == {0, 1, 2, 3, 4}


def test_leaf_ids_follow_the_stored_rows_and_apply_routes_missing_values():
    tree = _tree()
    assert tree.leaf_ids().tolist() == [2, 4, 3, 3, 4, 4]
    # row 3 (colour missing) follows the root's missing child (red), then age 41 > 30
    # row 4 (age missing but colour green) never meets the age test
    assert tree.apply(_table()).tolist() == [2, 4, 3, 3, 4, 4]
    unseen = pd.DataFrame({"colour": ["purple", "red"], "age": [10.0, np.nan]})
    # purple matches no colour test -> red (missing child); age NaN -> old (missing child 1)
    assert tree.apply(unseen).tolist() == [2, 3]


@pytest.mark.parametrize(
    "leaf_rows, message",
    [
        (([0], [2, 3], [1, 4]), "incomplete coverage"),  # row 5 in no leaf
        (([0, 2], [2, 3], [1, 4, 5]), "incomplete coverage"),  # row 2 in two leaves
    ],
)
def test_coverage_is_checked(leaf_rows, message):
    young = TreeNode(Between("age", high=30.0), rows=np.array(leaf_rows[0]))
    old = TreeNode(Between("age", low=30.0), rows=np.array(leaf_rows[1]))
    red = TreeNode(
        Equals("colour", "red"),
        children=[young, old],
        rows=np.array(leaf_rows[0] + leaf_rows[1]),
    )
    other = TreeNode(Equals("colour", "blue"), rows=np.array(leaf_rows[2]))
    with pytest.raises(ValueError, match=message):
        PredicateTree(TreeNode(children=[red, other], rows=np.arange(6)), 6)


def test_a_node_must_hold_its_childrens_rows_and_test_one_attribute():
    a = TreeNode(Equals("x", 1), rows=np.array([0]))
    b = TreeNode(Equals("y", 2), rows=np.array([1]))
    with pytest.raises(ValueError, match="univariate"):
        PredicateTree(TreeNode(children=[a, b], rows=np.arange(2)), 2)
    c = TreeNode(Equals("x", 2), rows=np.array([1]))
    with pytest.raises(ValueError, match="holds 3 rows"):
        PredicateTree(TreeNode(children=[a, c], rows=np.arange(3)), 2)


def test_predicate_masks():
    column = pd.Series(pd.array(["a", None, "b", "c"], dtype="string"))
    assert Equals("v", "a").mask(column).tolist() == [True, False, False, False]
    assert Equals("v", None).mask(column).tolist() == [False, True, False, False]
    assert ValueSet("v", {"b", None}).mask(column).tolist() == [
        False,
        True,
        True,
        False,
    ]
    numbers = pd.Series([1.0, 2.0, np.nan, 3.0])
    assert Between("n", 1.0, 2.0).mask(numbers).tolist() == [False, True, False, False]
    assert Between("n", -math.inf, 2.0).mask(numbers).tolist() == [
        True,
        True,
        False,
        False,
    ]


def test_to_dict_is_compact_json():
    tree = _tree()
    tree.node(2).label = np.str_("yes")
    blob = json.loads(json.dumps(tree.to_dict()))
    assert blob["n_rows"] == 6 and blob["n_leaves"] == 3
    assert blob["nodes"][0] == {"id": 0, "n": 6}
    assert blob["nodes"][2] == {
        "id": 2,
        "n": 1,
        "parent": 1,
        "test": "age <= 30",
        "label": "yes",
    }
    assert blob["nodes"][4]["test"] == "colour in {blue|green}"
