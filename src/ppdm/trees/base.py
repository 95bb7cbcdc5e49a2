"""A classification tree as a tree of predicates that knows its instances.

Every tree inducer of the project (the C4.5-style :class:`ppdm.trees.C45`, the
scikit-learn adapter) returns a :class:`PredicateTree`. kACTUS and any other
tree-guided algorithm read only this interface, so an inducer is a black box to
them, as in the paper's wrapper approach.

Each edge carries one predicate on one attribute:

- :class:`Equals` -- ``attribute == value`` (a multiway categorical split; the
  value may be missing, written ``None``, when missing values form a branch);
- :class:`Between` -- ``low < attribute <= high`` (a numeric threshold split;
  either end may be infinite);
- :class:`ValueSet` -- ``attribute in {values}`` (what a chain of binary splits
  on an encoded categorical attribute leaves).

Every node records the row positions of the training instances that reach it
(``node.rows``). Coverage is complete: every instance follows exactly one path,
so the leaves' row sets partition ``range(n_rows)`` and a node's rows are the
union of its children's rows (:meth:`PredicateTree.check_coverage`).

Missing values and unseen categories: when a row matches none of a node's
child predicates (a missing value of the split attribute, or a category the
inducer never saw at that node), it follows ``node.missing_child``, the child
index the inducer chose for that purpose. Both inducers of the project set it
to the most frequent branch (the child with the most training instances),
except that scikit-learn's own learned ``missing_go_to_left`` direction is kept
by the adapter.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "Equals",
    "Between",
    "Predicate",
    "PredicateTree",
    "TreeNode",
    "ValueSet",
    "constraint_kinds",
    "is_missing",
]


def is_missing(value: Any) -> bool:
    """True for ``None``, NaN and ``pandas.NA`` (the one test used for values)."""
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


@dataclass(frozen=True)
class Equals:
    """``attribute == value``; ``value=None`` matches the missing values."""

    attribute: str
    value: Any

    def mask(self, column: pd.Series) -> np.ndarray:
        """Boolean mask of the values of ``column`` that satisfy the predicate."""
        if is_missing(self.value):
            return column.isna().to_numpy()
        return (column == self.value).fillna(False).to_numpy(dtype=bool)

    def describe(self) -> str:
        value = "<missing>" if is_missing(self.value) else self.value
        return f"{self.attribute} = {value}"


@dataclass(frozen=True)
class Between:
    """``low < attribute <= high`` (scikit-learn's and C4.5's ``x <= t`` goes left).

    A missing value satisfies no interval; it follows the node's missing child.
    """

    attribute: str
    low: float = -math.inf
    high: float = math.inf

    def mask(self, column: pd.Series) -> np.ndarray:
        values = pd.to_numeric(column, errors="coerce").to_numpy(
            dtype=float, na_value=np.nan
        )
        with np.errstate(invalid="ignore"):
            return (values > self.low) & (values <= self.high)

    def describe(self) -> str:
        if math.isinf(self.low):
            return f"{self.attribute} <= {self.high:g}"
        if math.isinf(self.high):
            return f"{self.attribute} > {self.low:g}"
        return f"{self.low:g} < {self.attribute} <= {self.high:g}"


@dataclass(frozen=True)
class ValueSet:
    """``attribute in values``; ``None`` among the values matches missing ones."""

    attribute: str
    values: frozenset

    def __init__(self, attribute: str, values: Any) -> None:
        object.__setattr__(self, "attribute", attribute)
        object.__setattr__(self, "values", frozenset(values))

    def mask(self, column: pd.Series) -> np.ndarray:
        present = [v for v in self.values if not is_missing(v)]
        hit = column.isin(present).fillna(False).to_numpy(dtype=bool)
        if any(is_missing(v) for v in self.values):
            hit = hit | column.isna().to_numpy()
        return hit

    def describe(self) -> str:
        members = sorted("<missing>" if is_missing(v) else str(v) for v in self.values)
        return f"{self.attribute} in {{{'|'.join(members)}}}"


Predicate = Equals | Between | ValueSet


@dataclass(eq=False)
class TreeNode:
    """One node: the predicate on the edge from its parent, and its instances.

    Parameters
    ----------
    predicate : Equals, Between, ValueSet or None
        Test on the edge from the parent; ``None`` for the root.
    children : list of TreeNode
        Empty for a leaf. All children test the same attribute (univariate).
    rows : numpy.ndarray of int64
        Positions (0-based, in the training table) of the instances reaching
        the node.
    missing_child : int, default=0
        Index in ``children`` of the branch taken by a row that matches no
        child predicate (missing value, unseen category).
    label : object, optional
        Majority class of the node's instances (informative only).
    source_id : int, default=-1
        The node's id in the inducer's own structure (scikit-learn node index).
    """

    predicate: Predicate | None = None
    children: list[TreeNode] = field(default_factory=list)
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    missing_child: int = 0
    label: Any = None
    source_id: int = -1
    id: int = field(default=-1, init=False)
    parent: TreeNode | None = field(default=None, init=False, repr=False)

    @property
    def is_leaf(self) -> bool:
        return not self.children

    @property
    def size(self) -> int:
        return len(self.rows)

    @property
    def split_attribute(self) -> str | None:
        """The attribute the children test (``None`` for a leaf)."""
        if not self.children:
            return None
        predicate = self.children[0].predicate
        return None if predicate is None else predicate.attribute


class PredicateTree:
    """A tree of predicates over a training table of ``n_rows`` rows.

    Construct it from a root :class:`TreeNode` whose nodes already hold their
    rows (inducers do this; tests build trees by hand the same way). Node ids
    are assigned in preorder, root = 0.

    Parameters
    ----------
    root : TreeNode
    n_rows : int
        Number of rows of the training table.
    check : bool, default=True
        Run :meth:`check_coverage` (raises ``ValueError`` when coverage is not
        complete).

    Examples
    --------
    >>> import numpy as np
    >>> yes = TreeNode(Equals("windy", "yes"), rows=np.array([0, 2]))
    >>> no = TreeNode(Equals("windy", "no"), rows=np.array([1]))
    >>> tree = PredicateTree(TreeNode(children=[yes, no], rows=np.arange(3)), 3)
    >>> tree.leaf_ids().tolist()
    [1, 2, 1]
    """

    def __init__(self, root: TreeNode, n_rows: int, *, check: bool = True) -> None:
        self.root = root
        self.n_rows = int(n_rows)
        self.nodes: list[TreeNode] = []
        stack: list[tuple[TreeNode, TreeNode | None]] = [(root, None)]
        while stack:  # iterative preorder: deep trees must not hit recursion limits
            node, parent = stack.pop()
            node.id = len(self.nodes)
            node.parent = parent
            node.rows = np.asarray(node.rows, dtype=np.int64)
            self.nodes.append(node)
            stack.extend((child, node) for child in reversed(node.children))
        if check:
            self.check_coverage()

    # -- structure -------------------------------------------------------
    @property
    def leaves(self) -> list[TreeNode]:
        return [node for node in self.nodes if node.is_leaf]

    def node(self, node_id: int) -> TreeNode:
        return self.nodes[node_id]

    def path(self, node: TreeNode) -> list[Predicate]:
        """Predicates from the root down to ``node`` (the paper's ant(v))."""
        tests: list[Predicate] = []
        while node.parent is not None:
            assert node.predicate is not None
            tests.append(node.predicate)
            node = node.parent
        return tests[::-1]

    def postorder(self) -> Iterator[TreeNode]:
        """Nodes children-first, left to right (every node after its subtree)."""
        # Reversed preorder of the mirrored tree is a postorder.
        stack, out = [self.root], []
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(node.children)
        return reversed(out)

    def depth(self) -> int:
        depth = {self.root.id: 0}
        for node in self.nodes[1:]:
            assert node.parent is not None
            depth[node.id] = depth[node.parent.id] + 1
        return max(depth.values())

    # -- instances -------------------------------------------------------
    def leaf_ids(self) -> np.ndarray:
        """Id of the leaf each training row reaches (from the stored rows)."""
        out = np.full(self.n_rows, -1, dtype=np.int64)
        for leaf in self.leaves:
            out[leaf.rows] = leaf.id
        return out

    def check_coverage(self) -> None:
        """Raise ``ValueError`` unless every row follows exactly one path."""
        counts = np.zeros(self.n_rows, dtype=np.int64)
        for leaf in self.leaves:
            if len(leaf.rows) and (
                leaf.rows.min() < 0 or leaf.rows.max() >= self.n_rows
            ):
                raise ValueError(
                    f"leaf {leaf.id} holds a row outside [0, {self.n_rows})"
                )
            np.add.at(counts, leaf.rows, 1)
        if not np.all(counts == 1):
            bad = int(np.flatnonzero(counts != 1)[0])
            raise ValueError(
                f"incomplete coverage: row {bad} reaches {counts[bad]} leaves (want 1)"
            )
        for node in self.nodes:
            if node.children:
                size = sum(child.size for child in node.children)
                if size != node.size:
                    raise ValueError(
                        f"node {node.id} holds {node.size} rows but its children "
                        f"hold {size}"
                    )
                attributes = {child.predicate.attribute for child in node.children}
                if len(attributes) != 1:
                    raise ValueError(
                        f"node {node.id}: children test {sorted(attributes)}; a "
                        "univariate tree tests one attribute per node"
                    )

    def apply(self, table: pd.DataFrame) -> np.ndarray:
        """Route the rows of ``table`` down the tree; leaf id per row.

        A row that matches no child predicate follows ``missing_child``.
        Vectorised: one mask per edge over the rows that reach its parent.
        """
        out = np.full(len(table), -1, dtype=np.int64)
        stack: list[tuple[TreeNode, np.ndarray]] = [(self.root, np.arange(len(table)))]
        columns: dict[str, pd.Series] = {}
        while stack:
            node, positions = stack.pop()
            if node.is_leaf or len(positions) == 0:
                out[positions] = node.id
                continue
            attribute = node.split_attribute
            assert attribute is not None
            if attribute not in columns:
                columns[attribute] = table[attribute].reset_index(drop=True)
            column = columns[attribute].iloc[positions]
            free = np.ones(len(positions), dtype=bool)
            assigned: list[np.ndarray] = []
            for child in node.children:
                assert child.predicate is not None
                hit = child.predicate.mask(column) & free
                free &= ~hit
                assigned.append(hit)
            assigned[node.missing_child] |= free
            for child, hit in zip(node.children, assigned, strict=True):
                stack.append((child, positions[hit]))
        return out

    # -- evidence --------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Compact JSON-serialisable form: one entry per node, in preorder."""
        nodes = []
        for node in self.nodes:
            entry: dict[str, Any] = {"id": node.id, "n": node.size}
            if node.parent is not None:
                entry["parent"] = node.parent.id
                assert node.predicate is not None
                entry["test"] = node.predicate.describe()
            if node.label is not None:
                entry["label"] = _jsonable(node.label)
            nodes.append(entry)
        return {"n_rows": self.n_rows, "n_leaves": len(self.leaves), "nodes": nodes}

    def __repr__(self) -> str:
        return (
            f"PredicateTree(n_rows={self.n_rows}, nodes={len(self.nodes)}, "
            f"leaves={len(self.leaves)})"
        )


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def constraint_kinds(tree: PredicateTree, node: TreeNode) -> dict[str, str]:
    """How the path to ``node`` constrains each attribute it tests.

    Returns attribute -> ``"equals"`` (pinned to one value by an equality, or
    by a value set of one member), ``"set"`` (a value set of several members,
    no equality) or ``"interval"`` (only inequalities).
    """
    kinds: dict[str, str] = {}
    for predicate in tree.path(node):
        name = predicate.attribute
        if isinstance(predicate, Equals) or (
            isinstance(predicate, ValueSet) and len(predicate.values) == 1
        ):
            kinds[name] = "equals"
        elif isinstance(predicate, ValueSet):
            if kinds.get(name) != "equals":
                kinds[name] = "set"
        elif name not in kinds:
            kinds[name] = "interval"
    return kinds


def children_sizes(node: TreeNode) -> Sequence[int]:
    """Sizes of a node's children (helper for evidence and tests)."""
    return [child.size for child in node.children]
