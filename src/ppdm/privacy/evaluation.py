"""Privacy models judging values: released tables, classes, candidate groups.

The models and the requirement (:mod:`ppdm.privacy.base`,
:mod:`ppdm.privacy.requirement`) hold what a configuration needs and import
neither numpy nor pandas; their methods that read values call the functions
here, so validating a configuration or listing the algorithms never loads the
data libraries, and a check or a search loads them on first use.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.privacy.base import MAX_EXAMPLES, TOLERANCE
from ppdm.privacy.measures import (
    ClassPartition,
    SensitiveCounts,
    counts_from_codes,
    sensitive_value_ranks,
)
from ppdm.privacy.result import PrivacyResult, json_value

if TYPE_CHECKING:
    from ppdm.privacy._l_diversity import EntropyLDiversity
    from ppdm.privacy._t_closeness import TCloseness
    from ppdm.privacy.base import PrivacyModel
    from ppdm.privacy.requirement import Requirement

__all__ = [
    "EncodedSensitive",
    "closeness_rejected",
    "encode_sensitive",
    "entropy_rejected",
    "group_partition",
    "model_result",
    "rejected_by_bounds",
    "requirement_accepts",
    "requirement_results",
    "rows_rejected",
    "weights_of",
]


def model_result(
    model: PrivacyModel,
    table: pd.DataFrame | ClassPartition,
    quasi_identifiers: Sequence[str],
) -> PrivacyResult:
    """:meth:`PrivacyModel.check <ppdm.privacy.base.PrivacyModel.check>`: the
    model's measure per class, the violating classes and the worst examples."""
    partition = ClassPartition.of(table, quasi_identifiers)
    values = model.per_class(partition)
    passes = model.class_passes(values)
    if len(values) == 0:
        achieved: float | int = 0
    elif model.higher_is_better:
        achieved = values.min()
    else:
        achieved = values.max()
    achieved = json_value(achieved)
    failing = np.flatnonzero(~passes)
    examples: tuple[dict[str, Any], ...] = ()
    if len(failing):
        severity = values[failing] if model.higher_is_better else -values[failing]
        # Worst measure first, then the larger class (more rows exposed),
        # then class id: ids follow the classes' values, so the examples do
        # not depend on the row order or on the engine that built them.
        size = -partition.sizes[failing]
        worst = failing[np.lexsort((failing, size, severity))][:MAX_EXAMPLES]
        keys = partition.keys(worst)
        examples = tuple(
            {
                **{q: json_value(v) for q, v in zip(keys.columns, row, strict=True)},
                "size": int(partition.sizes[c]),
                model.measure: json_value(values[c]),
            }
            for c, row in zip(worst, keys.itertuples(index=False), strict=True)
        )
    return PrivacyResult(
        model=str(model),
        requirement=model.describe(),
        measure=model.measure,
        achieved=achieved,
        passed=bool(len(values) > 0 and passes.all()),
        n_classes=partition.n_classes,
        n_violating_classes=len(failing),
        n_violating_rows=int(partition.sizes[failing].sum()),
        examples=examples,
        kind=model.kind,
    )


def rejected_by_bounds(model: PrivacyModel, partition: ClassPartition) -> np.ndarray:
    """Per class, 1.0 when its size or its distinct sensitive values are below
    the model's bounds (every refinement fails too), else 0.0
    (:meth:`~ppdm.privacy.base.PrivacyModel.rejected_in_refinements`)."""
    fails = np.asarray(partition.sizes) < model.minimal_class_size
    attribute = model.sensitive_attribute
    if (
        model.uses_sensitive_attribute
        and attribute
        and model.minimal_distinct_values > 1
    ):
        distinct = partition.sensitive(attribute).distinct_per_class()
        fails |= distinct < model.minimal_distinct_values
    return fails.astype(float)


def entropy_rejected(model: EntropyLDiversity, partition: ClassPartition) -> np.ndarray:
    """Entropy is concave: a class split into parts has at least their mean entropy.

    With ``w`` the share of a class's rows in failing parts (entropy at
    least 0) and the rest in passing ones (at least ``log l``),
    ``H(class) >= (1 - w) log l``, so ``w >= 1 - H(class) / log l``.
    """
    share = rejected_by_bounds(model, partition)
    if model.l <= 1 + TOLERANCE:
        return share
    entropy = np.log(np.maximum(model.per_class(partition), 1.0))
    bound = 1.0 - entropy / math.log(model.l - TOLERANCE)
    return np.maximum(share, np.clip(bound, 0.0, 1.0))


def closeness_rejected(model: TCloseness, partition: ClassPartition) -> np.ndarray:
    """Both distances are convex in a class's distribution and at most 1.

    A class split into parts is at most their mean distance; with ``w`` the
    share of its rows in failing parts (distance at most 1) and the rest
    within ``t``, ``d(class) <= w + (1 - w) t``, so
    ``w >= (d(class) - t) / (1 - t)``.
    """
    share = rejected_by_bounds(model, partition)
    limit = model.t + TOLERANCE
    if limit >= 1:
        return share
    bound = (model.per_class(partition) - limit) / (1.0 - limit)
    return np.maximum(share, np.clip(bound, 0.0, 1.0))


def _canonical_codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Value code of every row and the distinct values, numbered in value order.

    Numbering the values by their order (missing last), not by their first
    row, makes the codes of a table and of its frequency table (or of the
    same rows shuffled) agree, and with them the order in which the
    per-class measures add up their floats. Values that do not compare are
    ordered by type name and text.
    """
    try:
        raw, uniques = pd.factorize(column, use_na_sentinel=False, sort=True)
    except TypeError:
        raw, uniques = pd.factorize(column, use_na_sentinel=False)
        found = np.asarray(uniques, dtype=object)
        keys = [
            (bool(pd.isna(v)) if np.ndim(v) == 0 else False, type(v).__name__, str(v))
            for v in found
        ]
        order = sorted(range(len(found)), key=keys.__getitem__)
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        return rank[np.asarray(raw, dtype=np.int64)], found[order]
    return np.asarray(raw, dtype=np.int64), np.asarray(uniques, dtype=object)


@dataclass(frozen=True)
class EncodedSensitive:
    """A table's sensitive attribute coded once, for repeated group checks.

    Attributes
    ----------
    attribute : str
    codes : numpy.ndarray of int64
        Value code of every row (values numbered in their sorted order).
    values : numpy.ndarray
        The distinct values, by code.
    ranks : numpy.ndarray or None
        Order of the values when they are numbers or intervals.
    whole : numpy.ndarray
        Share of each value in the whole table (t-closeness's reference),
        weighted by the rows' weights when the table is a frequency table.
    """

    attribute: str
    codes: np.ndarray
    values: np.ndarray
    ranks: np.ndarray | None
    whole: np.ndarray

    @classmethod
    def of(
        cls, column: pd.Series, weights: np.ndarray | None = None
    ) -> EncodedSensitive:
        """Code ``column``; ``weights`` (int, one per row) count a row as that many.

        With weights, the values are those of positive total weight (a value
        only zero-weight rows hold is no value of the table described; those
        rows keep a code, and count for nothing).
        """
        codes, values = _canonical_codes(column)
        counts = np.bincount(
            codes, weights=weights_of(weights, len(codes)), minlength=len(values)
        )
        if weights is not None and len(values) and not (counts > 0).all():
            held = counts > 0
            new = np.cumsum(held) - 1
            new[~held] = 0
            codes = new[codes]
            values, counts = values[held], counts[held]
        counts = np.asarray(counts, dtype=float)
        if not len(counts):
            counts = np.zeros(1)
        whole = counts / max(counts.sum(), 1.0)
        return cls(
            str(column.name),
            codes,
            values,
            sensitive_value_ranks(values, column.dtype),
            whole,
        )

    def counts(
        self,
        ids: np.ndarray,
        sizes: np.ndarray,
        rows: np.ndarray | None = None,
        weights: np.ndarray | None = None,
    ) -> SensitiveCounts:
        """(group, value) counts of the considered rows (``weights`` per row of ``ids``)."""
        codes = self.codes if rows is None else self.codes[rows]
        return counts_from_codes(
            self.attribute,
            ids,
            sizes,
            codes,
            self.values,
            self.ranks,
            self.whole,
            weights,
        )


def weights_of(weights: np.ndarray | None, n: int) -> np.ndarray | None:
    """``weights`` as an int64 array of ``n`` non-negative entries (None stays None)."""
    if weights is None:
        return None
    array = np.asarray(weights)
    if array.shape != (n,):
        raise InvalidParameterError(
            f"weights must hold one entry per row ({n}); got shape {array.shape}"
        )
    if array.dtype.kind not in "iu" or (len(array) and array.min() < 0):
        raise InvalidParameterError(
            "weights must be integers >= 0 (rows per combination); got "
            f"{array.dtype} values from {array.min() if len(array) else None}"
        )
    return array.astype(np.int64, copy=False)


def encode_sensitive(
    requirement: Requirement, table: pd.DataFrame, weights: np.ndarray | None
) -> dict[str, EncodedSensitive]:
    """:meth:`Requirement.encode <ppdm.privacy.Requirement.encode>`."""
    missing = [a for a in requirement.sensitive_attributes if a not in table.columns]
    if missing:
        raise InvalidParameterError(
            f"sensitive attribute(s) {missing} are not columns of the table "
            f"(columns: {list(table.columns)})"
        )
    weights = weights_of(weights, len(table))
    return {
        a: EncodedSensitive.of(table[a], weights)
        for a in requirement.sensitive_attributes
    }


def requirement_accepts(
    requirement: Requirement, partition: ClassPartition
) -> np.ndarray:
    """Which classes every class model of ``requirement`` accepts."""
    ok = np.ones(partition.n_classes, dtype=bool)
    for model in requirement.class_models:
        ok &= model.accepts(partition)
    return ok


def group_partition(
    requirement: Requirement,
    ids: np.ndarray,
    n_groups: int,
    encoded: Mapping[str, EncodedSensitive],
    *,
    rows: np.ndarray | None = None,
    weights: np.ndarray | None = None,
) -> ClassPartition:
    """The candidate groups as a partition, with the sensitive counts the
    requirement's models read (arguments of
    :meth:`Requirement.accepts_groups <ppdm.privacy.Requirement.accepts_groups>`)."""
    ids = np.asarray(ids, dtype=np.int64)
    weights = weights_of(weights, len(ids))
    sizes = np.bincount(ids, weights=weights, minlength=n_groups).astype(np.int64)
    counts = [
        encoded[a].counts(ids, sizes, rows, weights)
        for a in requirement.sensitive_attributes
    ]
    return ClassPartition.from_groups(ids, n_groups, counts, weights)


def rows_rejected(requirement: Requirement, partition: ClassPartition) -> float:
    """Rows some model rejects at every refinement of the partition's classes."""
    share = np.zeros(partition.n_classes)
    for model in requirement.class_models:
        share = np.maximum(share, model.rejected_in_refinements(partition))
    return float(np.dot(np.asarray(partition.sizes, dtype=float), share))


def requirement_results(
    requirement: Requirement, table: pd.DataFrame | ClassPartition
) -> tuple[PrivacyResult, ...]:
    """Every class model's result on a released table (or its partition)."""
    partition = ClassPartition.of(table, requirement.quasi_identifiers)
    return tuple(
        m.check(partition, requirement.quasi_identifiers)
        for m in requirement.class_models
    )
