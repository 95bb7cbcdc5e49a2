"""kACTUS: k-anonymity by multi-dimensional suppression guided by a classification tree.

Phase 1 grows a classification tree on the quasi-identifiers plus the target
(:class:`ppdm.trees.C45` with MinObj = k, or scikit-learn CART through
:class:`ppdm.trees.SklearnInducer`). Phase 2, :func:`anonymize_tree`, prunes it
bottom-up: a leaf with at least k instances is released with every
quasi-identifier its path does not pin suppressed; smaller leaves are merged
into their parent, and complying siblings lend extra instances so the merged
node reaches k. The project's kACTUS notes (``shared/algorithms/kactus.md``)
record the decisions the paper leaves open; this module follows them.

Beyond the paper, every privacy model of the requirement is enforced
(l-diversity in its three variants, t-closeness): a leaf complies when the
models accept its group, lending also brings the sensitive values a group
lacks, and the records left at the root are completed from the released
groups instead of being dropped (:mod:`ppdm.algorithms.kactus_pruning`). With
k-anonymity alone the paper's algorithm runs unchanged.

References
----------
.. [1] S. Kisilevich, L. Rokach, Y. Elovici, B. Shapira, "Efficient
   Multidimensional Suppression for K-Anonymity", IEEE Transactions on
   Knowledge and Data Engineering 22(3):334-347, 2010.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from ppdm.algorithms.base import Anonymizer
from ppdm.algorithms.kactus_pruning import _Distances, _ModelPruning, _only_k, _prune_k
from ppdm.algorithms.kactus_release import KactusResult, _suppress, path_interval
from ppdm.exceptions import InfeasibleConstraintError, InvalidParameterError
from ppdm.model import (
    SUPPRESSED,
    AnonymizationSpec,
    Release,
)
from ppdm.privacy import Requirement
from ppdm.progress import report
from ppdm.trees.base import PredicateTree

__all__ = ["Kactus", "KactusResult", "anonymize_tree", "path_interval"]


def anonymize_tree(
    table: pd.DataFrame,
    tree: PredicateTree,
    quasi_identifiers: Sequence[str],
    k: int,
    rng: np.random.Generator,
    *,
    lending: str = "random",
    generalize_small_siblings: bool = False,
    numeric_release: str = "mean",
    suppression_marker: str = SUPPRESSED,
    requirement: Requirement | None = None,
) -> KactusResult:
    """The paper's Anonymize(S, Q, CT, k) on a tree whose nodes hold their rows.

    Internal nodes are processed children-first (postorder), so each one has
    only leaves below it when its turn comes (the paper's "node of height 1";
    the paper leaves the order open). For a node p:

    1. a child leaf with ``>= k`` instances complies, the others add their
       count to ``nui``;
    2. if ``0 < nui < k`` and the complying children have at least
       ``required = k - nui`` extra instances (beyond k each), exactly
       ``required`` of them are lent: they stay in S and move up with the
       non-complying instances. ``lending="random"``: each complying child is
       shuffled, its first ``size - k`` instances are its extras, and the
       lent ones are drawn uniformly from all extras. ``lending="greedy"``:
       the extras are the instances closest to the non-complying ones (see
       :class:`_Distances`), and the closest extras are lent (ties broken by
       ``rng``). When ``nui >= k`` or ``nui == 0`` nothing is lent and the
       complying children release all their instances (kactus.md Decision).
    3. every complying child releases its remaining instances (suppress with
       its path), and p becomes a leaf holding the non-complying and lent
       instances.

    Finally the root's instances are released with every quasi-identifier
    suppressed if there are at least k of them, and dropped otherwise (fewer
    than k records are lost).

    With a ``requirement`` holding more than k-anonymity (l-diversity,
    t-closeness; not in the paper), "complies" means "every model accepts the
    leaf's group" (:meth:`Requirement.accepts_groups`) and k is the
    requirement's smallest acceptable class; see :class:`_ModelPruning` for
    the lending and the root. No record is dropped then: the root's group is
    completed with records lent by, or whole groups taken from, the released
    groups until the models accept it.

    suppress(R, Q, path), per quasi-identifier: pinned by an equality test
    and single-valued in R -> kept; tested only by inequalities (numeric) ->
    the mean of the attribute over R (missing values in R get it too), or,
    with ``numeric_release="interval"``, the path's interval (the
    intersection of its thresholds, e.g. ``(30, 50]``); else the suppression
    marker. With ``generalize_small_siblings`` a categorical
    attribute that the path constrains to a value set, or whose test was
    pruned away below the releasing node, is released as the value set of R
    (``{a|b}``) instead of the marker -- the paper's "Yellow OR Blue"
    proposal; a group holding a missing value of the attribute keeps the
    marker, since a value set cannot say "missing".

    Parameters
    ----------
    table : pandas.DataFrame
        The rows the tree was grown on (``tree.n_rows`` rows), in order.
    tree : PredicateTree
    quasi_identifiers : sequence of str
    k : int
        Smallest group released; with a ``requirement``, its
        ``minimal_class_size``.
    rng : numpy.random.Generator
    lending : {"random", "greedy"}, default="random"
    generalize_small_siblings : bool, default=False
    numeric_release : {"mean", "interval"}, default="mean"
    suppression_marker : str, default="*"
    requirement : Requirement, optional
        The privacy models every released group must satisfy. None, or a
        requirement of k-anonymity alone, runs the paper's algorithm.

    Returns
    -------
    KactusResult

    Raises
    ------
    InfeasibleConstraintError
        The models reject even the whole table as one class, so no group of
        records can be released.
    """
    if tree.n_rows != len(table):
        raise ValueError(
            f"the tree covers {tree.n_rows} rows; the table has {len(table)}"
        )
    if requirement is not None and k != requirement.minimal_class_size:
        raise ValueError(
            f"k={k} differs from the requirement's smallest class "
            f"({requirement.minimal_class_size})"
        )
    distances = _Distances(table, quasi_identifiers) if lending == "greedy" else None
    if requirement is None or _only_k(requirement):
        pruned = _prune_k(tree, k, rng, distances)
    else:
        pruned = _ModelPruning(table, tree, requirement, rng, distances).run()

    result = _suppress(
        table,
        tree,
        quasi_identifiers,
        pruned.group_nodes,
        pruned.group_rows,
        pruned.pruned_attributes,
        generalize_small_siblings,
        numeric_release,
        suppression_marker,
    )
    result.lost = pruned.lost
    result.node_stats = pruned.stats
    result.root_stats = pruned.root_stats
    return result


@dataclass(eq=False, repr=False, kw_only=True)
class Kactus(Anonymizer):
    """kACTUS (Kisilevich et al. 2010): tree-guided multi-dimensional suppression.

    Grows a classification tree on the quasi-identifiers and the target, then
    prunes it bottom-up with :func:`anonymize_tree`: instances of a leaf with
    at least k members are released with the quasi-identifiers the leaf's
    path does not pin suppressed (numeric ones tested by thresholds get the
    group mean); smaller leaves merge into their parent, helped by instances
    lent from complying siblings. Fewer than k records may be dropped at the
    root (the paper's Corollary 3); they are listed in the evidence, and
    ``spec.suppression_limit`` is not applied (the loss is bounded by k, not
    by a fraction).

    Beyond the paper, every model of ``spec.requirement`` is enforced
    (distinct, entropy and recursive (c, l)-diversity, t-closeness): a leaf
    complies only when the models accept its group
    (:meth:`~ppdm.privacy.Requirement.accepts_groups`), non-complying ones are
    pruned and helped by lent instances as in the paper, the lent instances
    being chosen to bring the sensitive values the group lacks (see
    :class:`_ModelPruning`), and the requirement's smallest acceptable class
    replaces k (tree MinObj, extras). No record is dropped then: the
    fully suppressed group left at the root borrows instances from the
    released groups, or merges whole ones, until the models accept it, so
    the released sensitive distribution is the table's (t-closeness's
    reference). When the models reject even the whole table as one class
    (e.g. entropy l above the table's own diversity), no group can be
    released and :class:`InfeasibleConstraintError` is raised. With
    k-anonymity alone the release is the paper's, byte for byte.

    The release's evidence holds ``tree`` (compact JSON: node ids, parents,
    tests, sizes, majority labels), ``nodes`` (per processed internal node:
    instances released by its complying children, non-complying count,
    instances lent, instances it holds after pruning), ``groups``,
    ``records_released``, ``records_fully_suppressed`` (released at the root),
    ``lost_records`` and ``lost_positions`` (input row positions of the
    dropped rows, fewer than k) and ``suppressed_cells``; with models beyond
    k-anonymity also ``models`` (their names), ``minimal_class_size`` and
    ``root`` (instances lent to the root's group, groups and records merged
    into it).

    Parameters
    ----------
    inducer : {"c45", "sklearn"}, default="c45"
        Phase-1 tree: the C4.5-style inducer with multiway categorical splits
        and MinObj = max(k, 2) (the paper's J48 setting; k is the
        requirement's smallest acceptable class), or scikit-learn CART
        on one-hot encoded attributes with ``min_samples_leaf = k``.
    lending : {"random", "greedy"}, default="random"
        Which extra instances complying leaves lend (see
        :func:`anonymize_tree`); "random" is the paper's. "greedy" lends the
        instances closest to the non-complying ones: distance = number of
        categorical QIs differing from the non-complying instances' most
        frequent value + sum over numeric QIs of |x - their median| / the
        attribute's range (capped at 1; missing counts 1); ties by ``rng``.
    generalize_small_siblings : bool, default=False
        Release a value set ("Yellow OR Blue") instead of suppressing a
        categorical attribute whose test was pruned away (not in the paper;
        its own suggested improvement).
    pruning_confidence : float or None, default=0.25
        Confidence factor of the C4.5 inducer's error-based pruning (J48's
        default, as in the paper's experiments); ``None`` grows the unpruned
        tree. Ignored by the "sklearn" inducer.
    numeric_release : {"mean", "interval"}, default="mean"
        What a numeric quasi-identifier tested only by thresholds on the
        releasing path becomes: the group's mean (the paper's rule) or the
        path's interval, e.g. ``(30, 50]`` (not in the paper: a group mean is
        a near-unique number per group, which learners trained on the release
        can treat as a group identifier; see ``benchmarks/results/kactus.md``).

    References
    ----------
    .. [1] S. Kisilevich, L. Rokach, Y. Elovici, B. Shapira, "Efficient
       Multidimensional Suppression for K-Anonymity", IEEE Transactions on
       Knowledge and Data Engineering 22(3):334-347, 2010.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from ppdm.model import AnonymizationSpec
    >>> table = pd.DataFrame({
    ...     "sex": ["M", "M", "M", "F", "F", "F"],
    ...     "zip": ["1", "2", "1", "2", "1", "2"],
    ...     "income": ["hi", "hi", "hi", "lo", "lo", "lo"]})
    >>> spec = AnonymizationSpec.of(("sex", "zip"), None, "income", k=3)
    >>> release = Kactus().anonymize(table, spec, np.random.default_rng(0))
    >>> release.table[["sex", "zip"]].drop_duplicates().values.tolist()
    [['M', '*'], ['F', '*']]
    """

    name: ClassVar[str] = "kactus"

    inducer: str = "c45"
    lending: str = "random"
    generalize_small_siblings: bool = False
    pruning_confidence: float | None = 0.25
    numeric_release: str = "mean"

    def grow_tree(self, table: pd.DataFrame, spec: AnonymizationSpec) -> PredicateTree:
        """Phase 1: the classification tree on ``QI + target``.

        MinObj (``min_samples_leaf``) is the requirement's smallest acceptable
        class (k for k-anonymity alone, ``max(k, ceil(l))`` with l-diversity).
        """
        # The inducers load scipy and scikit-learn; a configuration check that
        # only builds the algorithm must not pay for them.
        from ppdm.trees.c45 import C45
        from ppdm.trees.sklearn_adapter import SklearnInducer

        X = table[list(spec.quasi_identifiers)]
        y = table[spec.target]
        smallest = spec.requirement.minimal_class_size
        if self.inducer == "sklearn":
            return SklearnInducer(min_samples_leaf=smallest).fit(X, y).tree_
        return (
            C45(min_obj=max(smallest, 2), confidence=self.pruning_confidence)
            .fit(X, y)
            .tree_
        )

    def _anonymize(
        self, table: pd.DataFrame, spec: AnonymizationSpec, rng: np.random.Generator
    ) -> Release:
        requirement = spec.requirement
        if spec.target is None:
            raise InvalidParameterError(
                "kactus needs a target to grow its tree; got None"
            )
        if spec.target in spec.quasi_identifiers:
            raise InvalidParameterError(
                f"target {spec.target!r} is also a quasi-identifier; the target "
                "is never altered"
            )
        smallest = requirement.minimal_class_size
        if len(table) < smallest:
            raise InfeasibleConstraintError(
                f"kactus cannot release {requirement} data from {len(table)} rows "
                f"(classes need at least {smallest})"
            )
        tree = self.grow_tree(table, spec)
        report(0.5, f"kactus: tree grown ({len(tree.leaves)} leaves)")
        result = anonymize_tree(
            table,
            tree,
            spec.quasi_identifiers,
            smallest,
            rng,
            lending=self.lending,
            generalize_small_siblings=self.generalize_small_siblings,
            numeric_release=self.numeric_release,
            suppression_marker=spec.suppression_marker,
            requirement=requirement,
        )
        released = result.table
        qi = list(spec.quasi_identifiers)
        suppressed = int((released[qi] == spec.suppression_marker).to_numpy().sum())
        root_groups = [
            g for g, node in enumerate(result.group_nodes) if node == tree.root.id
        ]
        evidence = {
            "tree": tree.to_dict(),
            "inducer": self.inducer,
            "k": int(spec.k),
            "nodes": result.node_stats,
            "groups": len(result.group_nodes),
            "records_released": len(released),
            "records_fully_suppressed": int(np.isin(result.group, root_groups).sum()),
            "lost_records": len(result.lost),
            "lost_positions": [int(i) for i in result.lost],
            "suppressed_cells": suppressed,
        }
        if result.root_stats:
            evidence["models"] = list(requirement.model_names)
            evidence["minimal_class_size"] = int(smallest)
            evidence["root"] = dict(result.root_stats)
        return self._release(released, spec, table, evidence)
