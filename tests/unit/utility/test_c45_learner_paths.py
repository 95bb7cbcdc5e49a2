"""The C4.5 learner's indexed paths learn the trees of its general paths.

``fit`` reads a nominal block of plain categories through one integer code
a row, a block of value sets through its stored entries, and a numeric
block without ranges through the ranks of its values; the general paths
(a CSR row slice and product, a float sort) stay for what those do not
cover and are what ``_indexed = False`` runs. Both add the same products in
the same order, so the trees must be equal to the last bit: every node's
split, threshold, branch fractions and class weights, and the predicted
probabilities. (A difference in the last bit of a weight could flip a
tie between two splits, so the comparison is exact.)
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.prepare import datasets
from ppdm.trees.c45 import entropy
from ppdm.utility.c45_learner import C45Learner, _Node
from ppdm.utility.features import CellFeaturizer


class _GeneralPaths(C45Learner):
    """The learner without its indexes: CSR slices and float sorts."""

    _indexed = False


def _nodes(learner: C45Learner) -> list[tuple]:
    out, stack = [], [learner.tree_]
    while stack:
        node = stack.pop()
        out.append(
            (
                node.block,
                np.float64(node.threshold).tobytes(),
                np.asarray(node.fractions, dtype=np.float64).tobytes(),
                np.asarray(node.distribution, dtype=np.float64).tobytes(),
            )
        )
        stack.extend(node.children)
    return out


def _assert_same_trees(blocks: list, x, y: np.ndarray, x_test, **params) -> C45Learner:
    indexed = C45Learner(blocks=blocks, **params).fit(x, y)
    general = _GeneralPaths(blocks=blocks, **params).fit(x, y)
    assert _nodes(indexed) == _nodes(general)
    np.testing.assert_array_equal(
        indexed.predict_proba(x_test), general.predict_proba(x_test)
    )
    return indexed


def _random_tables(
    rng: np.random.Generator, n: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """An original table and a release of it: suppressed and missing cells,
    value sets, numeric ranges, fractional weights from all of them."""
    colour = rng.choice(["red", "green", "blue", "grey"], n)
    shape = rng.choice(["a", "b", "c"], n)
    size = rng.integers(0, 12, n)
    price = np.round(rng.normal(50, 15, n), 1)
    signal = (size > 5) ^ (colour == "red") ^ (rng.random(n) < 0.15)
    label = np.where(signal, "yes", np.where(rng.random(n) < 0.3, "maybe", "no"))
    if rng.random() < 0.5:
        label = np.where(signal, "yes", "no")  # two classes as well as three
    original = pd.DataFrame(
        {
            "colour": pd.array(colour, dtype="string"),
            "shape": pd.array(shape, dtype="string"),
            "size": size,
            "price": price,
            "label": label,
        }
    )
    released = original.astype({"size": "string", "price": "string"})
    released["colour"] = released["colour"].astype(object)
    cells = rng.random((n, 4))
    released.loc[cells[:, 0] < 0.1, "colour"] = "*"
    released.loc[cells[:, 0] > 0.95, "colour"] = None
    pairs = np.where(shape == "a", "{a|b}", "{b|c}")
    released.loc[cells[:, 1] < 0.2, "shape"] = pairs[cells[:, 1] < 0.2]
    low = size // 4 * 4
    ranges = pd.Series([f"[{a}, {a + 3}]" for a in low], index=released.index)
    released.loc[cells[:, 2] < 0.3, "size"] = ranges[cells[:, 2] < 0.3]
    released.loc[cells[:, 2] > 0.9, "size"] = "*"
    released.loc[cells[:, 3] < 0.05, "price"] = "*"
    return original, released


@pytest.mark.parametrize("view", ["midpoint", "bounds"])
def test_indexed_and_general_paths_grow_the_same_trees_on_random_releases(view):
    rng = np.random.default_rng(20261129)
    leaves = []
    for _ in range(6):
        n = int(rng.integers(150, 500))
        original, released = _random_tables(rng, n)
        featurizer = CellFeaturizer(exclude=["label"], numeric_ranges=view).fit(
            original
        )
        x_test = featurizer.transform(released.sample(frac=1.0, random_state=0))
        for table in (original, released):
            x = featurizer.transform(table)
            y = table["label"].astype(str).to_numpy()
            min_obj = float(rng.choice([1, 2, 5]))
            learner = _assert_same_trees(
                featurizer.blocks_, x, y, x_test, min_obj=min_obj
            )
            leaves.append(learner.n_leaves_)
        # a block of value sets is indexed by its stored entries, not codes
        x = featurizer.transform(released)
        learner = C45Learner(blocks=featurizer.blocks_)
        learner._prepare(x, released["label"].astype(str).to_numpy())
        shape = [s.name for s in featurizer.specs_].index("shape")
        assert shape in learner._entries and shape not in learner._codes
    assert max(leaves) > 5  # trees that split, not only leaves


def test_the_split_scores_of_both_paths_are_equal():
    original, released = _random_tables(np.random.default_rng(5), 400)
    featurizer = CellFeaturizer(exclude=["label"]).fit(original)
    x = featurizer.transform(released)
    y = released["label"].astype(str).to_numpy()
    blocks = featurizer.blocks_
    assert (
        C45Learner(blocks=blocks).split_scores(x, y)
        == _GeneralPaths(blocks=blocks).split_scores(x, y)
        != {}
    )


def _score(split) -> tuple | None:
    if split is None:
        return None
    return (split.block, split.gain, split.split_info, split.threshold.hex())


def test_every_block_scores_and_splits_the_same_on_nodes_of_fractional_weights():
    # Grown trees rarely show the last bit of a split's score; a node of
    # rows in any order with weights such as an unknown value leaves (1/3,
    # 0.3711) does: ties between equal values are summed in row order in
    # both paths, and the children are the same rows with the same weights.
    rng = np.random.default_rng(7)
    for _ in range(4):
        original, released = _random_tables(rng, 300)
        featurizer = CellFeaturizer(exclude=["label"]).fit(original)
        x = featurizer.transform(released)
        y = released["label"].astype(str).to_numpy()
        indexed = C45Learner(blocks=featurizer.blocks_, min_obj=1)
        general = _GeneralPaths(blocks=featurizer.blocks_, min_obj=1)
        indexed._prepare(x, y)
        general._prepare(x, y)
        for _ in range(8):
            rows = rng.permutation(len(y))[: int(rng.integers(10, len(y)))]
            weights = rng.choice([1.0, 0.5, 1 / 3, 0.3711, 0.05], len(rows))
            total = float(weights.sum())
            for block, numeric in enumerate(indexed._numeric):
                if numeric:
                    scores = [
                        learner._score_numeric(block, rows, weights, total)
                        for learner in (indexed, general)
                    ]
                    assert _score(scores[0]) == _score(scores[1])
                    continue
                scores = [
                    learner._score_nominal(block, rows, weights, total)
                    for learner in (indexed, general)
                ]
                assert _score(scores[0]) == _score(scores[1])
                children = []
                for learner in (indexed, general):
                    node = _Node(np.zeros(learner._n_classes), block=block)
                    parts = learner._partition(node, rows, weights)
                    children.append(
                        [node.fractions.tobytes()]
                        + [(r.tobytes(), w.tobytes()) for r, w in parts]
                    )
                assert children[0] == children[1]


def _one_block_split(table: np.ndarray, total: float, min_obj: float) -> tuple | None:
    # the nominal split of one block, as the learner scored a block alone
    sizes = table.sum(axis=1)
    known = float(sizes.sum())
    if np.count_nonzero(sizes >= min_obj - 1e-6) < 2:
        return None
    info = float((sizes * entropy(table)).sum()) / known
    gain = known / total * (float(entropy(table.sum(axis=0))) - info)
    parts = np.append(sizes, max(total - known, 0.0))
    return (gain, float(entropy(parts)))


def test_nominal_blocks_scored_together_score_as_one_block_at_a_time():
    rng = np.random.default_rng(11)
    learner = C45Learner(min_obj=2)
    for _ in range(200):
        n_classes = int(rng.integers(2, 5))
        learner._n_classes = n_classes
        widths = rng.integers(0, 40, int(rng.integers(1, 6)))
        tables = [
            rng.choice([0.0, 1.0, 2.0, 0.5, 1 / 3, 0.3711, 17.0], (w, n_classes))
            for w in widths
        ]
        total = sum(float(t.sum()) for t in tables) / len(tables) + rng.random() * 5
        blocks = list(range(len(tables)))
        splits = learner._nominal_splits(blocks, tables, total)
        for block, table in zip(blocks, tables):
            split = splits[block]
            expected = _one_block_split(table, total, 2)
            assert (split and (split.gain, split.split_info)) == expected


def _release_like(table: pd.DataFrame, columns: list[str], seed: int) -> pd.DataFrame:
    """Suppress 5 % of the cells of ``columns`` and write 10 % of each as a
    value set of the cell's value and another value of the column."""
    rng = np.random.default_rng(seed)
    out = table.astype({c: object for c in columns})
    for name in columns:
        # a missing cell stays unknown, as a suppressed one
        values = table[name].astype("string").fillna("*").to_numpy(dtype=object)
        domain = np.unique(values[values != "*"].astype(str))
        draw = rng.random(len(table))
        other = rng.choice(domain, len(table))
        sets = np.array(
            [f"{{{a}|{b}}}" if a != b else a for a, b in zip(values, other)],
            dtype=object,
        )
        column = values.astype(object)
        column[draw < 0.1] = sets[draw < 0.1]
        column[draw > 0.95] = "*"
        out[name] = column
    return out


@pytest.mark.parametrize(
    ("name", "rows", "target", "columns"),
    [
        ("german", None, "credit", ["purpose", "housing", "age"]),
        ("adult", 6000, "income", ["workclass", "education", "race", "age"]),
    ],
)
def test_the_same_trees_on_adult_and_german_and_their_releases(
    name, rows, target, columns
):
    table = datasets.load(name)
    if rows is not None:
        table = table.sample(n=rows, random_state=0).reset_index(drop=True)
    released = _release_like(table, columns, seed=1)
    featurizer = CellFeaturizer(exclude=[target]).fit(table)
    x_test = featurizer.transform(table.iloc[: len(table) // 3])
    for frame in (table, released):
        x = featurizer.transform(frame)
        y = frame[target].astype(str).to_numpy()
        learner = _assert_same_trees(featurizer.blocks_, x, y, x_test)
        assert learner.n_leaves_ > 5


def _partition_labels(rng: np.random.Generator, domain: list[str]) -> dict[str, str]:
    """Each value's released cell under a random cut of the domain into
    disjoint groups (a hierarchy level): ``{a|b|c}``, or the value alone."""
    order = rng.permutation(domain)
    cuts = np.sort(rng.choice(np.arange(1, len(domain)), 2, replace=False))
    out = {}
    for group in np.split(order, cuts):
        label = str(group[0]) if len(group) == 1 else "{" + "|".join(group) + "}"
        out.update(dict.fromkeys(group.tolist(), label))
    return out


def _full_domain_release(
    rng: np.random.Generator, n: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A table and a release of it generalized as a full-domain (lattice)
    release is: every nominal cell at one level of a hierarchy (disjoint
    value sets, so values with equal columns), ranges of one width, a column
    suppressed whole, suppressed and missing cells."""
    colours = [f"c{i}" for i in range(7)]
    shapes = [f"s{i}" for i in range(5)]
    colour = rng.choice(colours, n)
    shape = rng.choice(shapes, n)
    size = rng.integers(0, 40, n)
    signal = np.where(
        np.isin(colour, ["c0", "c1", "c2"]), size > 20, np.isin(shape, ["s0", "s1"])
    ) ^ (rng.random(n) < 0.1)
    label = np.where(signal, "yes", np.where(rng.random(n) < 0.3, "maybe", "no"))
    original = pd.DataFrame(
        {
            "colour": colour,
            "shape": shape,
            "kind": rng.choice(["k0", "k1"], n),
            "size": size,
            "label": label,
        }
    )
    released = original.astype(object)
    for name, domain in (("colour", colours), ("shape", shapes)):
        released[name] = original[name].map(_partition_labels(rng, domain))
    released["kind"] = "*"  # no row knows it: it never splits
    width = int(rng.choice([5, 10]))
    low = size // width * width
    released["size"] = [f"[{a}, {a + width})" for a in low]
    suppressed = rng.random(n) < 0.03
    released.loc[suppressed, ["colour", "shape", "size"]] = "*"
    released.loc[rng.random(n) < 0.05, "shape"] = None
    return original, released


class _Unpruned(C45Learner):
    def _prune(self, root: _Node) -> None:
        pass


class _GeneralUnpruned(_GeneralPaths):
    def _prune(self, root: _Node) -> None:
        pass


def _shared_subtrees(learner: C45Learner) -> int:
    """How many split nodes have two children grown as one: equal branches of
    a value set (their subtrees must be copies, never the same nodes)."""
    shared, seen, stack = 0, set(), [learner.tree_]
    while stack:
        node = stack.pop()
        assert id(node) not in seen  # a tree, each node once
        seen.add(id(node))
        twins = {
            (child.distribution.tobytes(), len(child.children))
            for child in node.children
            if child.children
        }
        shared += len(twins) < sum(1 for child in node.children if child.children)
        stack.extend(node.children)
    return shared


@pytest.mark.parametrize("view", ["midpoint", "bounds"])
def test_full_domain_releases_grow_the_same_trees_by_both_paths(view):
    # A value set of a hierarchy level holds values no other cell holds:
    # their columns are equal, read once, and their branches grown once and
    # copied. The general path reads every value and grows every branch.
    rng = np.random.default_rng(20261130)
    shared = 0
    for _ in range(6):
        original, released = _full_domain_release(rng, int(rng.integers(300, 700)))
        featurizer = CellFeaturizer(exclude=["label"], numeric_ranges=view).fit(
            original
        )
        x = featurizer.transform(released)
        y = released["label"].astype(str).to_numpy()
        x_test = featurizer.transform(original.iloc[::3])
        min_obj = float(rng.choice([1, 2]))
        _assert_same_trees(featurizer.blocks_, x, y, x_test, min_obj=min_obj)
        # the grown trees before pruning, every node of them
        grown = [
            learner(blocks=featurizer.blocks_, min_obj=min_obj).fit(x, y)
            for learner in (_Unpruned, _GeneralUnpruned)
        ]
        assert _nodes(grown[0]) == _nodes(grown[1])
        shared += _shared_subtrees(grown[0])
        prepared = C45Learner(blocks=featurizer.blocks_)
        prepared._prepare(x, y)
        names = [s.name for s in featurizer.specs_]
        assert names.index("kind") in prepared._never_split
        assert set(prepared._aliases) <= set(prepared._entries)
        assert prepared._aliases  # some value sets held equal columns
    assert shared > 0  # the copies were made and compared


def test_the_tables_of_a_node_leave_out_only_the_used_blocks():
    # the tables of the blocks a node may still split on are those of a
    # node that counts every block, bit for bit; the others are not counted
    rng = np.random.default_rng(3)
    original, released = _full_domain_release(rng, 500)
    featurizer = CellFeaturizer(exclude=["label"]).fit(original)
    learner = C45Learner(blocks=featurizer.blocks_)
    learner._prepare(
        featurizer.transform(released), released["label"].astype(str).to_numpy()
    )
    indexed = sorted(learner._coded_slices)
    assert len(learner._codes) >= 1 and len(learner._entries) >= 1
    for _ in range(20):
        rows = np.sort(rng.choice(500, int(rng.integers(5, 500)), replace=False))
        weights = rng.choice([1.0, 0.5, 1 / 3, 0.3711, 1 / 7], len(rows))
        full = learner._coded_tables(rows, weights)
        used = frozenset(b for b in indexed if rng.random() < 0.5)
        part = learner._coded_tables(rows, weights, used)
        if used == frozenset(indexed):
            assert part is None
            continue
        for block in indexed:
            start, width = learner._coded_slices[block]
            if block in used:
                assert not part[start : start + width].any()
            else:
                assert (
                    part[start : start + width].tobytes()
                    == full[start : start + width].tobytes()
                )
