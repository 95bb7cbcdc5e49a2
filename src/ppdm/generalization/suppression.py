"""Which classes of a generalized table to suppress so that every model accepts it.

A generalization (a lattice node) groups the rows into classes; the classes
the requirement's models reject are suppressed. The suppressed rows form one
more class of their own in the released table (the marker in every
quasi-identifier, merged with any class whose labels are all the marker), so
that class must be accepted too, or be dropped; and dropping rows changes the
whole-table distribution t-closeness compares with, so the remaining classes
are asked again. :func:`release_plan` repeats this until nothing changes, and
says whether the suppression fits the budget.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdm.privacy import Requirement
from ppdm.privacy.evaluation import EncodedSensitive

__all__ = ["SuppressionPlan", "release_plan"]


@dataclass(frozen=True)
class SuppressionPlan:
    """What a generalization releases under a requirement (:func:`release_plan`).

    Attributes
    ----------
    suppress : numpy.ndarray of bool, shape (n_classes,)
        Classes whose rows are suppressed.
    keep_suppressed : bool
        The suppressed rows are released as one class (every quasi-identifier
        the marker); False: they are dropped.
    feasible : bool
        The suppressed rows fit the budget and something is left to release.
    rejected : int
        Rows of the classes the requirement rejects in the whole table (the
        first suppression, before any drop).
    suppressed : int
        Rows of the suppressed classes.
    """

    suppress: np.ndarray
    keep_suppressed: bool
    feasible: bool
    rejected: int
    suppressed: int


def release_plan(
    requirement: Requirement,
    sensitive: pd.DataFrame,
    class_ids: np.ndarray,
    n_classes: int,
    marker_class: np.ndarray | None = None,
    *,
    eta: int | None = None,
    encoded: Mapping[str, EncodedSensitive] | None = None,
    weights: np.ndarray | None = None,
) -> SuppressionPlan:
    """Which classes to suppress so that what is released meets ``requirement``.

    1. The classes some model rejects are suppressed.
    2. The suppressed rows, with the rows of the class whose released labels
       are all the suppression marker (``marker_class``; they merge in the
       released table), are asked as one class: if every model accepts it,
       they are released as that class and the table keeps every row.
    3. Otherwise the suppressed rows are dropped. Dropping rows changes the
       table distribution t-closeness compares with (and the values the
       verifier orders), so the remaining classes are asked again, on the
       remaining rows alone; the ones now rejected join the suppressed
       classes and the plan restarts at 2. For a requirement decided by
       bounds, dropping changes no class and this step is skipped.

    The plan is infeasible as soon as the suppressed rows exceed ``eta`` or
    nothing would be left.

    Parameters
    ----------
    requirement : Requirement
    sensitive : pandas.DataFrame
        The requirement's sensitive attributes, one row per table row.
    class_ids : numpy.ndarray of int
        Class of each row, ``0..n_classes-1``.
    n_classes : int
    marker_class : numpy.ndarray of bool, optional
        Per class: its released quasi-identifiers are all the marker.
    eta : int, optional
        Suppression budget in rows (None: no budget).
    encoded : mapping, optional
        ``requirement.encode(sensitive, weights=weights)``, when the caller
        has it.
    weights : numpy.ndarray of int, optional
        Rows each row of ``sensitive`` stands for (a frequency table's
        counts); default one. The plan is then the plan of the rows
        described: every size, budget and model decision is weighted.

    Returns
    -------
    SuppressionPlan
    """
    class_ids = np.asarray(class_ids, dtype=np.int64)
    if encoded is None:
        encoded = requirement.encode(sensitive, weights=weights)
    if marker_class is None:
        marker_class = np.zeros(n_classes, dtype=bool)
    sizes = np.bincount(class_ids, weights=weights, minlength=n_classes).astype(
        np.int64
    )
    suppress = ~requirement.accepts_groups(
        class_ids, n_classes, encoded, weights=weights
    )
    rejected = int(sizes[suppress].sum())
    while True:
        n_suppressed = int(sizes[suppress].sum())
        keep, feasible, done = _plan_step(
            requirement, sensitive, class_ids, suppress, marker_class, encoded,
            eta=eta, n_suppressed=n_suppressed, weights=weights,
        )  # fmt: skip
        if done is None:
            return SuppressionPlan(suppress, keep, feasible, rejected, n_suppressed)
        suppress = suppress | done


def _plan_step(
    requirement: Requirement,
    sensitive: pd.DataFrame,
    class_ids: np.ndarray,
    suppress: np.ndarray,
    marker_class: np.ndarray,
    encoded: Mapping[str, EncodedSensitive],
    *,
    eta: int | None,
    n_suppressed: int,
    weights: np.ndarray | None,
) -> tuple[bool, bool, np.ndarray | None]:
    """One round of :func:`release_plan`.

    Returns ``(keep_suppressed, feasible, None)`` when the plan is decided,
    or ``(False, False, more)`` with the classes to suppress as well.
    """
    if eta is not None and n_suppressed > eta:
        return False, False, None
    if n_suppressed == 0:
        return True, True, None
    pool = np.flatnonzero((suppress | marker_class)[class_ids])
    one = np.zeros(len(pool), dtype=np.int64)
    pool_weights = None if weights is None else weights[pool]
    if requirement.accepts_groups(one, 1, encoded, rows=pool, weights=pool_weights)[0]:
        return True, True, None
    remaining = np.flatnonzero(~suppress[class_ids])
    if len(remaining) == 0 or (weights is not None and not weights[remaining].any()):
        return False, False, None
    if requirement.decided_by_bounds:
        return False, True, None
    kept = np.flatnonzero(~suppress)
    compact = np.full(len(suppress), -1, dtype=np.int64)
    compact[kept] = np.arange(len(kept))
    remaining_weights = None if weights is None else weights[remaining]
    ok = requirement.accepts_groups(
        compact[class_ids[remaining]],
        len(kept),
        requirement.encode(sensitive.iloc[remaining], weights=remaining_weights),
        weights=remaining_weights,
    )
    if ok.all():
        return False, True, None
    more = np.zeros(len(suppress), dtype=bool)
    more[kept[~ok]] = True
    return False, False, more
