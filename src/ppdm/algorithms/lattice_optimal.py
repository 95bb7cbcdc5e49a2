"""Optimal full-domain generalization: the least-loss lattice node meeting every model.

A node is *feasible* when suppressing exactly its classes that some privacy
model of the requirement rejects fits the suppression budget, and what is then
released passes every model (see :func:`ppdm.generalization.suppression.release_plan`: the
suppressed rows form a class of their own, or are dropped and the rest asked
again). The models are asked through the requirement
(:meth:`ppdm.generalization.lattice.GeneralizationLattice.decide`): for k-anonymity and
distinct l-diversity the class size and distinct-value bounds, computed with
bit masks, are the whole decision; entropy and recursive (c, l)-diversity and
t-closeness are decided per class by the model objects, after the bounds have
rejected what they can.

For k-anonymity and distinct l-diversity a class merged with an accepted
class is accepted, so generalizing never turns accepted rows into rejected
ones: the rows of rejected classes only grow towards the bottom of the
lattice (the property behind Samarati's and Incognito's searches), and a node
whose rejected rows alone exceed the budget proves every node below it
infeasible. Entropy and recursive (c, l)-diversity and t-closeness only
promise that a merge of accepted classes is accepted
(``Requirement.monotonic_under_generalization``): an accepted class merged
with a rejected one can be rejected, so a more specific node may reject fewer
rows. For them the budget prunes only when it is no row at all (a rejected
merged class has a rejected part). The search prunes on that and on nothing
else (a node can also be infeasible because the rows left after a drop fail
t-closeness, which proves nothing about other nodes), and not at all when a
model is not monotone. The loss is not monotone (more generalization can mean
less suppression), but the generalization loss with no suppression at all is,
and it bounds GLM from below. The search visits nodes in order of that bound,
skips nodes already proved infeasible, and stops when the bound reaches the
best loss found: the result is the exact optimum.

References
----------
.. [1] Samarati, P.: Protecting Respondents' Identities in Microdata Release.
   IEEE Transactions on Knowledge and Data Engineering 13(6) (2001) 1010-1027.
.. [2] LeFevre, K., DeWitt, D.J., Ramakrishnan, R.: Incognito: Efficient
   Full-Domain k-Anonymity. In: Proceedings of the 2005 ACM SIGMOD
   International Conference on Management of Data (2005) 49-60.
.. [3] Iyengar, V.S.: Transforming Data to Satisfy Privacy Constraints. In:
   Proceedings of the 8th ACM SIGKDD International Conference on Knowledge
   Discovery and Data Mining (2002) 279-288.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ppdm.algorithms.full_domain import FullDomainAnonymizer, LatticeBuilder
from ppdm.exceptions import InfeasibleConstraintError, InvalidParameterError
from ppdm.generalization.hierarchies import Hierarchy
from ppdm.generalization.lattice import (
    GeneralizationLattice,
    NodeMetrics,
    require_hierarchies,
)
from ppdm.model import AnonymizationSpec

__all__ = ["LatticeOptimal", "OptimalResult", "optimal_node"]


@dataclass(frozen=True)
class OptimalResult:
    """Outcome of :func:`optimal_node`.

    Attributes
    ----------
    best : NodeMetrics or None
        The optimum (None when no node is feasible).
    evaluations : int
        Nodes evaluated.
    pruned : int
        Nodes proved infeasible without evaluation.
    best_infeasible : NodeMetrics or None
        The evaluated node that suppressed the fewest rows, when none is feasible.
    """

    best: NodeMetrics | None
    evaluations: int
    pruned: int
    best_infeasible: NodeMetrics | None


def optimal_node(
    lattice: GeneralizationLattice,
    *,
    k: int | None = None,
    l: int = 1,
    loss: str = "glm",
) -> OptimalResult:
    """The feasible node of least ``loss``; ties: fewer levels, then lattice order.

    Parameters
    ----------
    lattice : GeneralizationLattice
        Built with the suppression limit, and with the ``requirement`` to meet
        (or the sensitive attribute, for the bound ``l``).
    k, l : int, optional
        Bounds instead of the lattice's requirement: classes of at least ``k``
        rows and ``l`` distinct sensitive values. None (the default) asks the
        lattice's requirement (:meth:`GeneralizationLattice.decide`).
    loss : {"glm", "cm"}, default="glm"
        With "cm" there is no cheap bound: only infeasibility prunes.

    Raises
    ------
    InvalidParameterError
        ``k`` is None and the lattice has no requirement.
    """
    if k is None:
        requirement = lattice.requirement
        if requirement is None:
            raise InvalidParameterError(
                "optimal_node needs k, or a lattice built with a requirement"
            )
        evaluate = lattice.decide
        # A node over the suppression budget proves its down-set over budget
        # when a failing class fails in every one of its subclasses (k and
        # distinct l). Other monotone models only promise that some subclass
        # fails, and fewer rows may be suppressed below: that proves nothing
        # unless the budget is no row at all.
        prune = requirement.decided_by_bounds or (
            requirement.monotonic_under_generalization and lattice.eta == 0
        )
    else:

        def evaluate(levels: np.ndarray) -> NodeMetrics:
            return lattice.evaluate(levels, k=k, l=l)

        prune = True
    nodes = lattice.nodes()
    if loss == "glm":
        bound = lattice.loss_bound(nodes)
    else:
        bound = np.zeros(len(nodes))
    level_sum = nodes.sum(axis=1)
    heights = lattice.heights
    strides = np.cumprod(np.r_[1, (heights + 1)[::-1][:-1]])[::-1]
    done = np.zeros(len(nodes), dtype=bool)  # evaluated, or proved infeasible
    pruned = np.zeros(len(nodes), dtype=bool)
    state: dict[str, Any] = {"best": None, "key": None, "closest": None, "evals": 0}

    def visit(index: int) -> bool:
        """Evaluate one node; prune below it when over budget. Return feasibility."""
        metrics = evaluate(nodes[index])
        state["evals"] += 1
        done[index] = True
        if not metrics.feasible:
            if (prune and metrics.over_budget) or metrics.infeasible_below:
                below = (nodes <= nodes[index]).all(axis=1) & ~done
                pruned[below] = True
                done[below] = True
            closest = state["closest"]
            if closest is None or metrics.suppressed < closest.suppressed:
                state["closest"] = metrics
            return False
        key = (metrics.value(loss), int(level_sum[index]), int(index))
        if state["key"] is None or key < state["key"]:
            state["best"], state["key"] = metrics, key
        return True

    # 1. A good first solution: walk down from the top node, each step to the
    #    child of least loss bound that is still feasible. A top node over
    #    budget proves every node infeasible.
    current = len(nodes) - 1
    top_feasible = visit(current)
    if not top_feasible and done.all():
        return OptimalResult(None, state["evals"], int(pruned.sum()), state["closest"])
    while top_feasible:
        children = [
            current - int(strides[a]) for a in range(len(heights)) if nodes[current, a]
        ]
        children.sort(key=lambda c: (bound[c], c))
        for child in children:
            if not done[child] and visit(child):
                current = child
                break
        else:
            break
    # 2. Every other node that could still beat it, most general first: an
    #    infeasible one then proves its whole down-set infeasible at once, so
    #    only the maximal infeasible candidates are ever evaluated.
    for index in np.lexsort((np.arange(len(nodes)), bound, -level_sum)):
        if done[index]:
            continue
        key = (bound[index], int(level_sum[index]), int(index))
        if state["key"] is not None and key > state["key"]:
            continue
        visit(int(index))
    return OptimalResult(
        state["best"], state["evals"], int(pruned.sum()), state["closest"]
    )


class LatticeOptimal(FullDomainAnonymizer):
    """Least-loss full-domain generalization meeting every privacy model.

    The requirement's models (k-anonymity; distinct, entropy or recursive
    (c, l)-diversity; t-closeness) decide every node through
    ``spec.requirement``, within the suppression limit (module docstring).

    Parameters
    ----------
    loss : {"glm", "cm"}, default="glm"
        Iyengar's general loss metric or classification metric (needs a target).

    Notes
    -----
    Exact: every node is either evaluated, proved infeasible by a more general
    node over budget (monotone models only), or has a loss lower bound above
    the optimum (module docstring). Hierarchies come from
    ``spec.hierarchies``. Suppressed rows have every quasi-identifier ``*``
    and are kept as one class when every model accepts that class, dropped
    otherwise (then the remaining rows are checked again, for t-closeness);
    the released table passes :func:`ppdm.verify.verify_tables`.

    The release depends on the frequency table of (quasi-identifiers,
    sensitive attributes, target) alone: :meth:`recode` runs the same search
    on it (:meth:`GeneralizationLattice.from_frequencies`) and
    ``recode(FrequencyTable.of(table, ...), spec, rng).apply(table)`` is
    ``anonymize(table, spec, rng).table``, with the same evidence.

    References
    ----------
    .. [1] Samarati, P.: Protecting Respondents' Identities in Microdata
       Release. IEEE TKDE 13(6) (2001) 1010-1027.

    Examples
    --------
    >>> from ppdm.generalization.hierarchies import Hierarchy
    >>> table = pd.DataFrame({"sex": list("FFMMMF") * 3, "zip": list("abaabb") * 3})
    >>> hs = {c: Hierarchy.from_rows(c, [[v, "*"] for v in sorted(set(table[c]))],
    ...                               source=c) for c in table}
    >>> spec = AnonymizationSpec.of(("sex", "zip"), None, None, k=6, hierarchies=hs)
    >>> release = LatticeOptimal().anonymize(table, spec, np.random.default_rng(0))
    >>> release.evidence["chosen"]["levels"]
    {'sex': 0, 'zip': 1}
    """

    name: ClassVar[str] = "lattice-optimal"

    def __init__(self, *, loss: str = "glm") -> None:
        self.loss = loss

    def _search(
        self,
        build: LatticeBuilder,
        spec: AnonymizationSpec,
        rng: np.random.Generator,
    ) -> tuple[dict[str, Hierarchy], NodeMetrics, dict[str, Any]]:
        """The optimal node of the lattice, and its evidence (``rng`` is unused)."""
        hierarchies = require_hierarchies(self.name, spec)
        if self.loss == "cm" and spec.target is None:
            raise InvalidParameterError(f"{self.name}: loss 'cm' needs a target")
        lattice = build(hierarchies)
        result = optimal_node(lattice, loss=self.loss)
        if result.best is None:
            closest = result.best_infeasible
            detail = (
                f"; the closest node {closest.levels} must suppress "
                f"{closest.suppressed} rows"
                if closest is not None
                else ""
            )
            raise InfeasibleConstraintError(
                f"{self.name}: no generalization meets {spec.requirement} with "
                f"at most {lattice.eta} suppressed rows (suppression_limit="
                f"{spec.suppression_limit}){detail}"
            )
        best = result.best
        evidence = {
            "loss": self.loss,
            "chosen": best.as_dict(lattice.attributes),
            "evaluations": result.evaluations,
            "pruned_infeasible": result.pruned,
            "lattice_size": lattice.size,
            "suppression_budget": lattice.eta,
        }
        return hierarchies, best, evidence
