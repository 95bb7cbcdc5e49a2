"""Classification trees as trees of predicates that know their instances.

The interface (:mod:`ppdm.trees.base`) is what tree-guided algorithms such as
kACTUS read; :class:`C45` (multiway categorical splits, gain ratio) and
:class:`SklearnInducer` (scikit-learn CART through an adapter) produce it.
"""

from __future__ import annotations

from ppdm.trees.base import (
    Equals,
    Interval,
    Predicate,
    PredicateTree,
    TreeNode,
    ValueSet,
    constraint_kinds,
)
from ppdm.trees.c45 import C45
from ppdm.trees.sklearn_adapter import SklearnInducer, encode, tree_from_sklearn

__all__ = [
    "C45",
    "Equals",
    "Interval",
    "Predicate",
    "PredicateTree",
    "SklearnInducer",
    "TreeNode",
    "ValueSet",
    "constraint_kinds",
    "encode",
    "tree_from_sklearn",
]
