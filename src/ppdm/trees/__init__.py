"""Classification trees as trees of predicates that know their instances.

The interface (:mod:`ppdm.trees.base`) is what tree-guided algorithms such as
kACTUS read; :class:`C45` (multiway categorical splits, gain ratio) and
:class:`SklearnInducer` (scikit-learn CART through an adapter) produce it.
"""

from __future__ import annotations

from ppdm.trees.base import (
    Between,
    Equals,
    Predicate,
    PredicateTree,
    TreeNode,
    ValueSet,
    constraint_kinds,
)

#: Inducers load scipy and scikit-learn, which the configuration check and the
#: command line must not pay for: they are imported on first use.
_LAZY = {
    "C45": "ppdm.trees.c45",
    "SklearnInducer": "ppdm.trees.sklearn_adapter",
    "encode": "ppdm.trees.sklearn_adapter",
    "tree_from_sklearn": "ppdm.trees.sklearn_adapter",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "C45",
    "Equals",
    "Between",
    "Predicate",
    "PredicateTree",
    "SklearnInducer",
    "TreeNode",
    "ValueSet",
    "constraint_kinds",
    "encode",
    "tree_from_sklearn",
]
