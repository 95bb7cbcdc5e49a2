"""What a lattice node releases: the generalized table, or its recoding.

The classes some model of the requirement rejects are suppressed, and the
suppressed rows are kept as one class or dropped
(:func:`ppdm.generalization.suppression.release_plan`);
:func:`generalized_release` applies that plan to a table and
:func:`generalized_recoding` decides it on a frequency table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ppdm.exceptions import InfeasibleConstraintError
from ppdm.generalization.hierarchies import Hierarchy
from ppdm.generalization.suppression import release_plan
from ppdm.model import AnonymizationSpec
from ppdm.privacy.measures import equivalence_classes

if TYPE_CHECKING:
    from ppdm.scale.frequency import FrequencyTable


# ---------------------------------------------------------------- release
@dataclass(frozen=True)
class _NodeRelease:
    """What a node releases of each unit (a row, or a frequency table's combination)."""

    generalized: dict[str, pd.Series]  # released quasi-identifiers, per unit
    suppress: np.ndarray  # per unit: its quasi-identifiers become the marker
    keep_suppressed: bool  # suppressed units are released (else dropped)
    counts: dict[str, int]  # ``suppressed`` (kept) and ``dropped`` rows


def _node_release(
    units: pd.DataFrame,
    weights: np.ndarray | None,
    spec: AnonymizationSpec,
    hierarchies: Mapping[str, Hierarchy],
    levels: Sequence[int],
) -> _NodeRelease:
    """The release plan of one node, shared by the table and the recoding."""
    qis = list(spec.quasi_identifiers)
    requirement = spec.requirement
    marker = spec.suppression_marker
    generalized: dict[str, pd.Series] = {}
    at_marker = np.ones(len(units), dtype=bool)
    for q, level in zip(qis, levels):
        generalized[q] = hierarchies[q].generalize(units[q], int(level))
        at_marker &= (generalized[q] == marker).to_numpy(dtype=bool, na_value=False)
    labels = pd.DataFrame({q: column.array for q, column in generalized.items()})
    ids, n_classes = equivalence_classes(labels, qis)
    marker_class = np.zeros(n_classes, dtype=bool)
    marker_class[ids[at_marker]] = True
    sensitive = units[list(requirement.sensitive_attributes)]
    plan = release_plan(
        requirement, sensitive, ids, n_classes, marker_class, weights=weights
    )
    if not plan.feasible:
        raise InfeasibleConstraintError(
            f"generalization {dict(zip(qis, (int(v) for v in levels)))} leaves "
            f"nothing that meets {requirement}"
        )
    suppress = plan.suppress[ids]
    for q in qis:
        column = generalized[q].copy()
        column[suppress] = marker
        generalized[q] = column
    n_suppressed = plan.suppressed
    return _NodeRelease(
        generalized,
        suppress,
        plan.keep_suppressed,
        {
            "suppressed": n_suppressed if plan.keep_suppressed else 0,
            "dropped": 0 if plan.keep_suppressed else n_suppressed,
        },
    )


def generalized_release(
    table: pd.DataFrame,
    spec: AnonymizationSpec,
    hierarchies: Mapping[str, Hierarchy],
    levels: Sequence[int],
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The table generalized to ``levels``, with what the requirement rejects suppressed.

    The classes some model of ``spec.requirement`` rejects are suppressed:
    all their quasi-identifiers become the marker. The suppressed rows are
    kept as one class of their own (merged with a class whose labels are all
    the marker) when every model accepts that class, and dropped otherwise;
    after a drop, classes that t-closeness now rejects (the table's
    distribution changed) are suppressed too (:func:`release_plan`). For
    k-anonymity and distinct l-diversity this suppresses the classes smaller
    than ``k`` or with fewer than ``l`` distinct sensitive values. The result
    passes :func:`ppdm.verify.verify_tables` with ``spec.requirement``.
    :func:`generalized_recoding` is the same release, decided on a frequency
    table.

    Returns
    -------
    release : pandas.DataFrame
        Input column order, index reset; quasi-identifiers as strings.
    counts : dict
        ``suppressed`` rows (all QIs ``*``, kept) and ``dropped`` rows.

    Raises
    ------
    InfeasibleConstraintError
        Nothing meeting the requirement is left at these levels.
    """
    node = _node_release(table, None, spec, hierarchies, levels)
    out = table.copy()
    for q, column in node.generalized.items():
        out[q] = column
    if not node.keep_suppressed:
        out = out[~node.suppress]
    out = out.reset_index(drop=True)
    return out, node.counts


def generalized_recoding(
    frequencies: FrequencyTable,
    spec: AnonymizationSpec,
    hierarchies: Mapping[str, Hierarchy],
    levels: Sequence[int],
) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray, dict[str, int]]:
    """:func:`generalized_release` decided on a frequency table, as a recoding.

    The classes, the suppression and the drop are planned on the
    frequency table's combinations weighted by their counts, which is the plan
    of the rows it describes; the result says what each distinct
    quasi-identifier combination becomes.
    ``Recoding(quasi_identifiers, original, released, kept, ...).apply(table)``
    is then ``generalized_release(table, ...)``'s table, for the table the
    frequency table was made of or any of its partitions.

    Returns
    -------
    original : pandas.DataFrame
        Each distinct quasi-identifier combination once (the table's dtypes),
        in the frequency table's order, index ``0..n-1``.
    released : pandas.DataFrame
        Its released values (strings; the marker where suppressed).
    kept : numpy.ndarray of bool
        False where its rows are dropped.
    counts : dict
        As :func:`generalized_release`'s.

    Raises
    ------
    InfeasibleConstraintError
        Nothing meeting the requirement is left at these levels.
    """
    qis = list(spec.quasi_identifiers)
    keys = frequencies.keys
    node = _node_release(keys, frequencies.counts, spec, hierarchies, levels)
    # Combinations that differ only in sensitive or target values share
    # their quasi-identifiers, hence their class and their fate.
    first = ~keys.duplicated(subset=qis).to_numpy()
    original = keys.loc[first, qis].reset_index(drop=True)
    released = pd.DataFrame(
        {q: node.generalized[q][first].reset_index(drop=True) for q in qis}
    )
    if node.keep_suppressed:
        kept = np.ones(len(original), dtype=bool)
    else:
        kept = ~node.suppress[first]
    return original, released, kept, node.counts
