"""Mondrian: strict multidimensional partitioning, the generalization baseline.

The algorithm (LeFevre, DeWitt and Ramakrishnan, 2006) recursively cuts a
partition of the table in two on the quasi-identifier of widest normalized
range, at the median, as long as both halves satisfy every privacy model of
the requirement: k-anonymity, distinct, entropy or recursive (c, l)-diversity,
t-closeness. Every record is then released with each quasi-identifier
replaced by the summary of its final partition: a range, an interval or a
value set. The released classes are exactly the final partitions, so the
release passes the verifier whenever the whole table does.

The models are asked through the requirement (``spec.requirement``): its
``minimal_class_size`` is a cheap bound that filters the cuts of every open
partition at once, and :meth:`ppdm.privacy.Requirement.accepts_groups` decides
the halves of the remaining candidate cuts (t-closeness comparing each half
with the whole table's distribution). With k-anonymity alone the size bound is
the whole decision and no model is asked. The whole table is the partition
Mondrian starts from and keeps when no cut is allowed, so it must pass every
model: when it fails one (entropy or recursive diversity of a skewed
attribute) the requirement is infeasible, and for models monotone under
generalization (all five) no partition could pass anyway; t-closeness always
accepts it.

Implementation: breadth first, vectorised
-----------------------------------------
A recursive function per partition costs milliseconds of interpreter time per
leaf, and full Adult at ``k=5`` has about 5,700 leaves. Here every
quasi-identifier is integer-coded once, each row carries a partition id, and
one *round* decides the cut of every open partition at once: per attribute, one
``bincount`` (or one ``np.unique`` for attributes with many distinct values)
gives a per-partition histogram of codes, from which the minimum, maximum,
number of distinct codes, normalized width and median cut of every partition
follow with cumulative sums and ``searchsorted``. New ids are assigned so that
the children of a partition sit between its neighbours' children; a round
therefore costs a few passes over the rows and there are about
``log2(n / k)`` rounds. Each partition's decision depends on its own rows only,
so the result equals the one of the recursive formulation (the unit tests
cross-check it against a plain recursive implementation).

Frequency tables (out of core)
------------------------------
Strict cuts keep equal values together, so every row of one quasi-identifier
combination lands in the same final partition and the release is a function
of the combination. :meth:`Mondrian.recode` runs the same partitioning on a
:class:`~ppdm.scale.frequency.FrequencyTable` (one line per distinct
combination of quasi-identifiers, sensitive attributes and target) with the
lines' row counts as weights: every histogram, median position, size bound
and model decision counts rows, while the global numeric range, the domain
sizes and hence the normalized widths depend only on the distinct values,
which are the same. The partitions, released cells and evidence are those of
:meth:`Mondrian.anonymize` on the rows the table describes, whatever their
order or however the table was combined from parts.

Conventions (deterministic; no randomness is used)
--------------------------------------------------
Order of values
    numeric: by value; ordinal: by category order; nominal: unordered
    categoricals by category order, other columns by sorted value (by their
    text, then type name, when the values cannot be compared). A missing
    value (NA) is a value of its own, placed after every present value.
Normalized width of a partition on an attribute
    numeric: ``(max - min) / (global max - global min)`` over present values,
    plus ``1 / d`` when the partition holds NA (``d``: distinct values of the
    column, NA included); ordinal: ``(codes spanned from the lowest to the
    highest present category, + 1 if NA is present) / (number of categories,
    + 1 if the column has NA)``; nominal: ``(distinct values, NA included) /
    (domain size, + 1 if the column has NA)``, where the domain is the
    categories of a categorical and the distinct values otherwise.
Choice of the cut
    attributes are tried by decreasing width, ties broken by their position in
    ``quasi_identifiers``; the first allowable cut is taken. An attribute with a
    single value in the partition cannot be cut. A partition without an
    allowable cut is final.
Median cut (strict)
    with the partition's codes sorted, ``t`` is the code at position
    ``(size - 1) // 2`` (the lower median); the left half is ``code <= t``, the
    right half ``code > t``. When ``t`` is the partition's largest code the
    right half would be empty, so ``t`` steps down to the next smaller code
    present. Equal values always stay together, so the halves of a nominal cut
    have disjoint value sets. The cut is allowable when both halves hold at
    least ``requirement.minimal_class_size`` rows and every privacy model
    accepts each half (a missing sensitive value counts as a value); with
    k-anonymity alone the size test is the whole decision.
Released cells (grammar of :mod:`ppdm.values`)
    numeric: ``format_range(min, max)``; ordinal whose categories are all
    intervals (e.g. the output of discretization): the one interval from the
    lowest category's lower end to the highest category's upper end, or the
    category itself when only one is present; dates and codes kept as text
    (:mod:`ppdm.generalization.ordered_text`), ordered by calendar or by
    text: the ISO range of the whole months of the dates, or
    the codes masked after their common prefix, never a member's exact date
    nor a set of full codes; other ordinal and nominal attributes:
    ``format_set`` of the values present. A partition that holds
    NA as well as present values releases the set ``{|<summary>}`` (the empty
    member is the missing value); a partition with only NA releases ``""``.
Rows
    the release keeps the input's rows, index and order; non-quasi-identifier
    columns (target and sensitive attribute included) are copied unchanged.
    Released quasi-identifier columns are pandas ``string`` columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from ppdm.algorithms.base import Anonymizer
from ppdm.exceptions import InfeasibleConstraintError, InvalidParameterError
from ppdm.generalization.ordered_text import TextKind, text_kind
from ppdm.model import AnonymizationSpec, AttributeKind, Release, attribute_kind
from ppdm.privacy import Requirement
from ppdm.scale.recoding import Recoding
from ppdm.values import (
    Cell,
    format_interval_span,
    format_range,
    format_set,
    parse_cell,
)

if TYPE_CHECKING:
    from ppdm.scale.frequency import FrequencyTable

__all__ = ["Mondrian", "MondrianPartition", "mondrian_partition"]

# A per-partition histogram of codes is built densely with ``np.bincount`` when
# its cells stay within this multiple of the row count (else ``np.unique``).
_DENSE_FACTOR = 8
_DENSE_MIN_CELLS = 1 << 16
# Value sets of attributes with at most this many codes are keyed by a bitmask.
_BITMASK_CODES = 62


@dataclass(frozen=True)
class _Dimension:
    """One quasi-identifier, integer-coded in its documented order."""

    name: str
    kind: AttributeKind
    codes: np.ndarray  # int64 per row; NA -> n_values
    n_values: int  # present values (or categories); codes 0..n_values-1
    has_na: bool  # the column holds NA (code n_values)
    labels: np.ndarray  # object array: the value of each code (NA excluded)
    domain: int  # denominator of the ordinal / nominal width
    numbers: np.ndarray  # float64 value per code (numeric); extra slot for NA
    numeric_range: float  # global max - min of present values (numeric)
    intervals: tuple[Cell, ...] | None  # parsed categories (interval ordinal)
    text_kind: TextKind | None = None  # dates or codes kept as text

    @property
    def n_codes(self) -> int:
        return self.n_values + int(self.has_na)


@dataclass(frozen=True)
class MondrianPartition:
    """The final partitions Mondrian found, and how.

    Attributes
    ----------
    ids : numpy.ndarray of int64, shape (n_rows,)
        Partition of each input row, numbered in depth-first, left-before-right
        order of the cut tree (the left half holds the smaller codes).
    n_partitions : int
    cuts : dict of str to int
        Number of cuts made on each quasi-identifier.
    rounds : int
        Breadth-first rounds run (depth of the cut tree + 1).
    """

    ids: np.ndarray
    n_partitions: int
    cuts: dict[str, int]
    rounds: int


def _encode(column: pd.Series, name: str) -> _Dimension:
    """Integer-code one quasi-identifier in its documented order."""
    kind = attribute_kind(column)
    intervals: tuple[Cell, ...] | None = None
    numbers = np.zeros(1)
    numeric_range = 0.0
    as_text: TextKind | None = None
    if isinstance(column.dtype, pd.CategoricalDtype):
        # Categoricals keep their category order, unused categories included,
        # so the width of an ordinal is measured against its whole domain.
        codes = column.cat.codes.to_numpy().astype(np.int64)
        labels = np.asarray(column.cat.categories, dtype=object)
        if kind is AttributeKind.ORDINAL and len(labels):
            cells = tuple(parse_cell(str(c)) for c in labels)
            if all(c.kind == "interval" for c in cells):
                intervals = cells
    else:
        try:
            codes, uniques = pd.factorize(column, sort=True)
            labels = np.asarray(uniques, dtype=object)
        except TypeError:  # values of mixed types: order them by their text
            codes, uniques = pd.factorize(column)
            # Text, then type name: equal texts of different types (1 and
            # "1") are ordered the same whatever the order of the rows.
            order = np.lexsort(
                (
                    np.asarray([type(u).__name__ for u in uniques]),
                    np.asarray([str(u) for u in uniques]),
                )
            )
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = np.arange(len(order))
            codes = np.where(codes >= 0, rank[np.maximum(codes, 0)], -1)
            labels = np.asarray(uniques, dtype=object)[order]
        codes = np.asarray(codes, dtype=np.int64)
        if kind is AttributeKind.NOMINAL and not pd.api.types.is_bool_dtype(
            column.dtype
        ):
            # Dates and codes kept as text are ordered (by calendar, by text)
            # and released as ranges and masks, never as sets of their values.
            as_text = text_kind(column)
            if as_text is not None:
                order = as_text.sort_keys(labels)
                rank = np.empty(len(order), dtype=np.int64)
                rank[order] = np.arange(len(order))
                codes = np.where(codes >= 0, rank[np.maximum(codes, 0)], -1)
                labels = labels[order]
                kind = AttributeKind.ORDINAL
        if kind is AttributeKind.NUMERIC:
            present = np.asarray(labels, dtype=np.float64)
            numbers = np.append(present, 0.0)  # the NA slot is never read
            if len(present):
                numeric_range = float(present[-1] - present[0])
    n_values = len(labels)
    missing = codes < 0
    has_na = bool(missing.any())
    codes[missing] = n_values
    return _Dimension(
        name=name,
        kind=kind,
        codes=codes,
        n_values=n_values,
        has_na=has_na,
        labels=labels,
        domain=max(n_values + int(has_na), 1),
        numbers=numbers,
        numeric_range=numeric_range,
        intervals=intervals,
        text_kind=as_text if kind is AttributeKind.ORDINAL else None,
    )


def _count(ids: np.ndarray, n: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Rows per id ``0..n-1`` (int64): one per item, or the items' ``weights``."""
    if weights is None:
        return np.bincount(ids, minlength=n)
    # bincount adds the weights as float64: exact for totals below 2**53.
    return np.bincount(ids, weights=weights, minlength=n).astype(np.int64)


def _histogram(
    part: np.ndarray,
    code: np.ndarray,
    n_parts: int,
    n_codes: int,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Non-empty (partition, code) cells with their row counts, sorted by both.

    ``weights`` are the rows each item stands for (all positive), default one.
    """
    n_cells = n_parts * n_codes
    key = part * n_codes + code
    if n_cells <= max(_DENSE_FACTOR * len(code), _DENSE_MIN_CELLS):
        counts = _count(key, n_cells, weights)
        cells = np.flatnonzero(counts)
        counts = counts[cells]
    elif weights is None:
        cells, counts = np.unique(key, return_counts=True)
    else:
        cells, inverse = np.unique(key, return_inverse=True)
        counts = _count(inverse.ravel(), len(cells), weights)
    part, code = np.divmod(cells, n_codes)
    return part, code, counts


@dataclass(frozen=True)
class _Stats:
    """Per-partition facts about one attribute, from its code histogram."""

    n_distinct: np.ndarray  # distinct codes, NA included
    low: np.ndarray  # lowest present code
    high: np.ndarray  # highest present code
    has_na: np.ndarray
    has_present: np.ndarray
    threshold: np.ndarray  # median cut: left half is code <= threshold
    left_size: np.ndarray


def _stats(
    dim: _Dimension,
    part: np.ndarray,
    code: np.ndarray,
    sizes: np.ndarray,
    weights: np.ndarray | None = None,
) -> _Stats:
    n_parts = len(sizes)
    h_part, h_code, h_count = _histogram(part, code, n_parts, dim.n_codes, weights)
    n_distinct = np.bincount(h_part, minlength=n_parts)
    ends = np.cumsum(n_distinct)
    starts = ends - n_distinct
    low = h_code[starts]
    high = h_code[ends - 1]
    has_na = (high == dim.n_values) if dim.has_na else np.zeros(n_parts, bool)
    has_present = ~has_na | (n_distinct > 1)
    second = h_code[np.maximum(ends - 2, 0)]
    high = np.where(has_na & has_present, second, high)
    # Lower median, then one code down when it is the partition's last code.
    cum = np.cumsum(h_count)
    offset = cum[ends - 1] - sizes
    at = np.searchsorted(cum, offset + (sizes - 1) // 2, side="right")
    at = np.maximum(np.minimum(at, ends - 2), 0)
    return _Stats(
        n_distinct=n_distinct,
        low=low,
        high=high,
        has_na=has_na,
        has_present=has_present,
        threshold=h_code[at],
        left_size=cum[at] - offset,
    )


def _width(dim: _Dimension, st: _Stats) -> np.ndarray:
    """Normalized width of every partition on ``dim`` (module docstring)."""
    if dim.kind is AttributeKind.NUMERIC:
        span = np.where(st.has_present, dim.numbers[st.high] - dim.numbers[st.low], 0.0)
        base = span / dim.numeric_range if dim.numeric_range > 0 else span * 0.0
        n_distinct_global = dim.n_values + int(dim.has_na)
        return base + st.has_na / n_distinct_global
    if dim.kind is AttributeKind.ORDINAL:
        run = np.where(st.has_present, st.high - st.low + 1, 0)
        return (run + st.has_na) / dim.domain
    return st.n_distinct / dim.domain


def mondrian_partition(
    table: pd.DataFrame,
    quasi_identifiers: list[str] | tuple[str, ...],
    k: int = 1,
    *,
    sensitive_attribute: str | None = None,
    l: int = 1,  # noqa: E741 - the literature's name
    requirement: Requirement | None = None,
    weights: np.ndarray | None = None,
) -> MondrianPartition:
    """Partition ``table`` by strict Mondrian (see the module docstring).

    Parameters
    ----------
    table : pandas.DataFrame
        The rows, or the distinct combinations of a frequency table with
        their row counts in ``weights``.
    quasi_identifiers : sequence of str
    k : int, default=1
        Minimum partition size in rows; ``1 <= k <=`` the rows.
    sensitive_attribute : str, optional
        Needed when ``l > 1``.
    l : int, default=1
        Minimum number of distinct sensitive values per partition; at most the
        number of distinct values in the whole table.
    requirement : Requirement, optional
        Privacy models every partition must satisfy, instead of the shorthand
        ``sensitive_attribute`` / ``l`` (``k`` still bounds the size).
    weights : numpy.ndarray of int, shape (len(table),), optional
        Rows each line of ``table`` stands for (each at least 1; default 1).
        Every histogram, median, size bound and model decision counts rows,
        so the partition of a frequency table's combinations is the one of
        the rows it describes: each row's partition is its combination's.

    Returns
    -------
    MondrianPartition

    Raises
    ------
    InfeasibleConstraintError
        Not even the whole table is a valid partition: ``k`` exceeds the rows,
        ``l`` the distinct sensitive values, or a model rejects the table.
    InvalidParameterError
        ``l > 1`` without a ``sensitive_attribute``, ``l`` /
        ``sensitive_attribute`` given with a ``requirement``, or ``weights``
        of another length or below 1.

    References
    ----------
    .. [1] K. LeFevre, D. J. DeWitt and R. Ramakrishnan, "Mondrian
       Multidimensional K-Anonymity", in Proc. 22nd International Conference
       on Data Engineering (ICDE), Atlanta, GA, USA, 2006, p. 25.
    """
    if requirement is None:
        if l > 1 and sensitive_attribute is None:
            raise InvalidParameterError(f"mondrian: l={l} needs a sensitive_attribute")
        requirement = Requirement.of(
            tuple(quasi_identifiers),
            sensitive_attribute if l > 1 else None,
            k=k,
            l=l,
        )
    elif l != 1 or sensitive_attribute is not None:
        raise InvalidParameterError(
            "mondrian: give l and sensitive_attribute through the requirement "
            f"({requirement}), not as well as it"
        )
    if weights is not None:
        weights = _check_weights(weights, len(table))
    dims = [_encode(table[name], name) for name in quasi_identifiers]
    return _partition(table, dims, requirement, k, weights)


def _check_weights(weights: Any, n_items: int) -> np.ndarray:
    """``weights`` as int64 row counts, one per item, each at least 1."""
    counts = np.asarray(weights)
    if counts.shape != (n_items,) or not np.issubdtype(counts.dtype, np.integer):
        raise InvalidParameterError(
            f"mondrian: weights must be {n_items} integer row counts (one per line "
            f"of the table); got shape {counts.shape} of {counts.dtype}"
        )
    counts = counts.astype(np.int64)
    if n_items and counts.min() < 1:
        raise InvalidParameterError(
            f"mondrian: weights must be row counts of at least 1; got "
            f"{int(counts.min())}"
        )
    return counts


def _partition(
    table: pd.DataFrame,
    dims: list[_Dimension],
    requirement: Requirement,
    k: int = 1,
    weights: np.ndarray | None = None,
) -> MondrianPartition:
    """Body of :func:`mondrian_partition` on already encoded attributes.

    Partitions are at least ``max(k, requirement.minimal_class_size)`` rows,
    and every model of ``requirement`` accepts each of them. ``weights``
    (checked int64 counts, or None for one row per line) are the rows each
    line of ``table`` stands for; the in-memory release and the frequency
    table's recoding both run this one function.
    """
    n_items = len(table)
    n = n_items if weights is None else int(weights.sum())
    k = max(int(k), requirement.minimal_class_size)
    if k > n:
        raise InfeasibleConstraintError(
            f"mondrian: k={k} (the smallest class {requirement} accepts) exceeds "
            f"the {n} rows of the table"
        )
    m = len(dims)
    codes2d = np.column_stack([d.codes for d in dims]) if m else np.zeros((n_items, 0))
    # k-anonymity alone: the size bound decides every cut and no model is asked.
    ask_models = not (
        requirement.decided_by_bounds and requirement.minimal_distinct_values <= 1
    )
    encoded = requirement.encode(table, weights) if ask_models else {}
    if ask_models:
        _check_whole_table(table, requirement, encoded, weights)

    pid = np.zeros(n_items, dtype=np.int64)
    is_open = np.ones(1, dtype=bool)
    cuts = np.zeros(m, dtype=np.int64)
    rounds = 0
    while is_open.any():
        rounds += 1
        open_ids = np.flatnonzero(is_open)
        n_open = len(open_ids)
        local = np.full(len(is_open), -1, dtype=np.int64)
        local[open_ids] = np.arange(n_open)
        active = np.flatnonzero(is_open[pid])
        part = local[pid[active]]
        active_weights = None if weights is None else weights[active]
        sizes = _count(part, n_open, active_weights)

        width = np.empty((n_open, m))
        allowed = np.empty((n_open, m), dtype=bool)
        threshold = np.empty((n_open, m), dtype=np.int64)
        for j, dim in enumerate(dims):
            st = _stats(dim, part, dim.codes[active], sizes, active_weights)
            width[:, j] = _width(dim, st)
            threshold[:, j] = st.threshold
            allowed[:, j] = (
                (st.n_distinct > 1) & (st.left_size >= k) & (sizes - st.left_size >= k)
            )
        score = np.where(allowed, width, -np.inf)
        chosen = np.full(n_open, -1, dtype=np.int64)
        if not ask_models:
            best = np.argmax(score, axis=1) if m else np.zeros(n_open, np.int64)
            ok = allowed[np.arange(n_open), best] if m else np.zeros(n_open, bool)
            chosen[ok] = best[ok]
        else:
            # Try the attributes by decreasing width until every model accepts
            # both halves of the cut; non-allowable attributes sort last.
            order = np.argsort(-score, axis=1, kind="stable")
            undecided = np.ones(n_open, dtype=bool)
            for r in range(m):
                dim_r = order[:, r]
                candidate = undecided & allowed[np.arange(n_open), dim_r]
                if not candidate.any():
                    break
                rank = np.cumsum(candidate) - 1
                in_candidate = candidate[part]
                rows = active[in_candidate]
                row_part = part[in_candidate]
                row_dim = dim_r[row_part]
                side = codes2d[rows, row_dim] > threshold[row_part, row_dim]
                child = 2 * rank[row_part] + side
                n_cand = int(candidate.sum())
                accepted = _accepts(
                    requirement, child, 2 * n_cand, encoded, rows, weights
                )
                good = accepted[0::2] & accepted[1::2]
                cand_ids = np.flatnonzero(candidate)
                chosen[cand_ids[good]] = dim_r[cand_ids[good]]
                undecided[cand_ids[good]] = False

        split = chosen >= 0
        cuts += np.bincount(chosen[split], minlength=m)
        in_split = split[part]
        rows = active[in_split]
        row_part = part[in_split]
        row_dim = chosen[row_part]
        side = np.zeros(n_items, dtype=np.int64)
        side[rows] = codes2d[rows, row_dim] > threshold[row_part, row_dim]
        # Children 2p and 2p+1 renumbered in order: ids stay depth-first.
        key = 2 * pid + side
        occupied = np.zeros(2 * len(is_open), dtype=bool)
        occupied[key] = True
        child_open = np.zeros(2 * len(is_open), dtype=bool)
        parents = open_ids[split]
        child_open[2 * parents] = True
        child_open[2 * parents + 1] = True
        new_id = np.cumsum(occupied) - 1
        pid = new_id[key]
        is_open = child_open[occupied]

    return MondrianPartition(
        ids=pid,
        n_partitions=len(is_open),
        cuts={d.name: int(c) for d, c in zip(dims, cuts)},
        rounds=rounds,
    )


def _accepts(
    requirement: Requirement,
    ids: np.ndarray,
    n_groups: int,
    encoded: dict[str, Any],
    rows: np.ndarray | None,
    weights: np.ndarray | None,
) -> np.ndarray:
    """Which candidate groups every model accepts, counting rows by ``weights``.

    ``weights`` are the whole table's (one per line), ``rows`` the positions of
    the considered lines; with weights, the models judge the rows described.
    """
    if weights is not None and rows is not None:
        weights = weights[rows]
    return requirement.accepts_groups(
        ids, n_groups, encoded, rows=rows, weights=weights
    )


def _check_whole_table(
    table: pd.DataFrame,
    requirement: Requirement,
    encoded: dict[str, Any],
    weights: np.ndarray | None = None,
) -> None:
    """Raise unless every model accepts the whole table as one partition."""
    for model in requirement.models:
        attribute = model.sensitive_attribute
        if not model.uses_sensitive_attribute or attribute is None:
            continue
        present = int(table[attribute].nunique(dropna=False))
        if present < model.minimal_distinct_values:
            raise InfeasibleConstraintError(
                f"mondrian: l={model.minimal_distinct_values} ({model}) exceeds the "
                f"{present} distinct values of {attribute!r} in the whole table"
            )
    whole = np.zeros(len(table), dtype=np.int64)
    refused = [
        str(model)
        for model in requirement.models
        if not _accepts(
            Requirement(requirement.quasi_identifiers, (model,)),
            whole,
            1,
            encoded,
            None,
            weights,
        )[0]
    ]
    if refused:
        why = (
            "no partition of it can (the models are monotone under merging)"
            if requirement.monotonic_under_generalization
            else "Mondrian needs it as the partition it keeps when no cut is allowed"
        )
        raise InfeasibleConstraintError(
            f"mondrian: the whole table does not satisfy {', '.join(refused)}; {why}"
        )


def _with_missing(summary: str, has_na: bool, has_present: bool) -> str:
    if not has_present:
        return ""
    if has_na:
        return format_set([summary, ""])
    return summary


def _summaries(
    dim: _Dimension, ids: np.ndarray, n_parts: int
) -> tuple[list[str], np.ndarray]:
    """Released texts on ``dim``, and the index of each partition's text."""
    h_part, h_code, _ = _histogram(ids, dim.codes, n_parts, dim.n_codes)
    n_distinct = np.bincount(h_part, minlength=n_parts)
    ends = np.cumsum(n_distinct)
    low = h_code[ends - n_distinct]
    high = h_code[ends - 1]
    has_na = (high == dim.n_values) if dim.has_na else np.zeros(n_parts, bool)
    has_present = ~has_na | (n_distinct > 1)
    high = np.where(has_na & has_present, h_code[np.maximum(ends - 2, 0)], high)

    by_ends = (
        dim.text_kind is not None
        and dim.n_values > 0
        and dim.text_kind.summarised_by_ends(dim.labels)
    )
    if dim.kind is AttributeKind.NUMERIC or dim.intervals is not None or by_ends:
        # The summary depends on (low, high, has_na) only: format each distinct
        # triple once rather than once per partition.
        triple = np.column_stack([low, np.where(has_present, high, -1), has_na])
        uniq, inverse = np.unique(triple, axis=0, return_inverse=True)
        if by_ends:
            last_value = dim.n_values - 1  # the NA slot of an all-missing group
            ends_text = dim.text_kind.summaries_of_ends(
                dim.labels,
                np.minimum(uniq[:, 0], last_value),
                np.clip(uniq[:, 1], 0, last_value),
            )
        texts = []
        for position, (lo, hi, na) in enumerate(uniq):
            present = hi >= 0
            if not present:
                summary = ""
            elif by_ends:
                summary = ends_text[position]
            elif dim.kind is AttributeKind.NUMERIC:
                summary = format_range(dim.numbers[lo], dim.numbers[hi])
            elif lo == hi:
                summary = str(dim.labels[lo])
            else:
                summary = format_interval_span(dim.intervals[lo], dim.intervals[hi])
            texts.append(_with_missing(summary, bool(na), present))
        return texts, inverse.ravel()

    # Value sets: key each partition's set of codes, format each distinct set
    # once. A bitmask key is vectorised; wide domains fall back to bytes keys.
    if dim.n_codes <= _BITMASK_CODES:
        bits = np.left_shift(np.int64(1), h_code)
        mask = np.add.reduceat(bits, ends - n_distinct)
        uniq, inverse = np.unique(mask, return_inverse=True)
        members = [np.flatnonzero((int(u) >> np.arange(dim.n_codes)) & 1) for u in uniq]
    else:
        groups = np.split(h_code, ends[:-1])
        keys = np.asarray([g.tobytes() for g in groups], dtype=object)
        inverse, uniq_keys = pd.factorize(keys)
        members = [np.frombuffer(b, dtype=h_code.dtype) for b in uniq_keys]
    texts = []
    for codes in members:
        values = ["" if c == dim.n_values else str(dim.labels[c]) for c in codes]
        if dim.text_kind is not None and len(values):
            present = [v for c, v in zip(codes, values) if c != dim.n_values]
            summary = dim.text_kind.summary(present) if present else ""
            texts.append(
                _with_missing(summary, len(present) < len(values), bool(present))
            )
            continue
        texts.append(format_set(values) if len(values) else "")
    return texts, np.asarray(inverse).ravel()


class Mondrian(Anonymizer):
    """Strict multidimensional partitioning (Mondrian), the generalization baseline.

    Every record is kept and every quasi-identifier is generalized to the
    summary of the record's partition (see :mod:`ppdm.algorithms.mondrian`
    for the exact conventions); nothing is suppressed. A partition is cut only
    when every privacy model of ``spec.requirement`` (k-anonymity; distinct,
    entropy or recursive (c, l)-diversity; t-closeness) accepts both halves,
    so the released table passes :func:`ppdm.verify.verify_tables`; a table
    that a model rejects as a whole is infeasible. ``rng`` is not used: the
    result is a function of the table and the spec only. The release depends
    on the frequency table of (quasi-identifiers, sensitive attributes,
    target) alone, so :meth:`recode` computes it out of core: the recoding of
    each distinct quasi-identifier combination, which
    :meth:`~ppdm.scale.recoding.Recoding.apply` turns into the release of any
    part of the table.

    Parameters
    ----------
    split : {"median"}, default="median"
        Where a partition is cut: at the (lower) median of the chosen
        attribute, equal values kept together (strict partitioning).

    References
    ----------
    .. [1] K. LeFevre, D. J. DeWitt and R. Ramakrishnan, "Mondrian
       Multidimensional K-Anonymity", in Proc. 22nd International Conference
       on Data Engineering (ICDE), Atlanta, GA, USA, 2006, p. 25.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from ppdm.model import AnonymizationSpec
    >>> table = pd.DataFrame({"age": [23, 25, 31, 38, 52, 60],
    ...                       "sex": ["F", "M", "F", "M", "F", "F"],
    ...                       "income": ["<=50K", ">50K", "<=50K", ">50K",
    ...                                  ">50K", "<=50K"]})
    >>> spec = AnonymizationSpec.of(("age", "sex"), None, "income", k=2)
    >>> release = Mondrian().anonymize(table, spec, np.random.default_rng(0))
    >>> release.table["age"].tolist()
    ['[23, 31]', '[23, 31]', '[23, 31]', '[38, 60]', '[38, 60]', '[38, 60]']
    >>> release.evidence["n_partitions"]
    2

    The same release from the frequency table (three copies of each row):

    >>> from ppdm.scale.frequency import FrequencyTable
    >>> counts = FrequencyTable.combine(
    ...     [FrequencyTable.of(table, ["age", "sex", "income"])] * 3
    ... )
    >>> spec6 = AnonymizationSpec.of(("age", "sex"), None, "income", k=6)
    >>> recoding = Mondrian().recode(counts, spec6, np.random.default_rng(0))
    >>> recoding.apply(table)["age"].tolist() == release.table["age"].tolist()
    True
    """

    name: ClassVar[str] = "mondrian"

    def __init__(self, *, split: str = "median") -> None:
        self.split = split

    def _anonymize(
        self, table: pd.DataFrame, spec: AnonymizationSpec, rng: np.random.Generator
    ) -> Release:
        dims = [_encode(table[name], name) for name in spec.quasi_identifiers]
        partition = _partition(table, dims, spec.requirement)
        released = table.copy()
        for dim in dims:
            released[dim.name] = pd.Series(
                _released_cells(dim, partition, partition.ids), index=table.index
            )
        evidence = _evidence(partition, None)
        return self._release(released, spec, table, evidence)

    def _recode(
        self,
        frequencies: FrequencyTable,
        spec: AnonymizationSpec,
        rng: np.random.Generator,
    ) -> Recoding:
        """The release as a function of the quasi-identifier combination.

        The same partitioning as :meth:`anonymize`, on the frequency table's
        distinct combinations weighted by their row counts: partitions, cells
        and evidence are those of the rows the table describes.
        """
        keys = frequencies.keys
        counts = _check_weights(frequencies.counts, len(keys))
        qis = list(spec.quasi_identifiers)
        dims = [_encode(keys[name], name) for name in qis]
        partition = _partition(keys, dims, spec.requirement, weights=counts)
        # Strict partitions keep equal values together, so the lines of one
        # quasi-identifier combination (differing in sensitive values or
        # target) share one partition: keep the first line of each.
        codes2d = np.column_stack([d.codes for d in dims])
        _, first = np.unique(codes2d, axis=0, return_index=True)
        first = np.sort(first)
        ids = partition.ids[first]
        released = pd.DataFrame(
            {dim.name: _released_cells(dim, partition, ids) for dim in dims}
        )
        original = keys[qis].iloc[first].reset_index(drop=True)
        kept = np.ones(len(first), dtype=bool)
        return self._recoding(
            frequencies, spec, (original, released, kept), _evidence(partition, counts)
        )


def _released_cells(
    dim: _Dimension, partition: MondrianPartition, ids: np.ndarray
) -> pd.api.extensions.ExtensionArray:
    """The released cells on ``dim`` of lines in partitions ``ids`` (``string``)."""
    texts, of_partition = _summaries(dim, partition.ids, partition.n_partitions)
    # Taking from the few distinct texts is far cheaper than building a
    # string array from one Python object per row.
    return pd.array(texts, dtype="string").take(of_partition[ids])


def _evidence(
    partition: MondrianPartition, weights: np.ndarray | None
) -> dict[str, Any]:
    """The release's evidence; ``weights`` as in :func:`_partition`."""
    sizes = _count(partition.ids, partition.n_partitions, weights)
    return {
        "n_partitions": partition.n_partitions,
        "partition_size": {
            "min": int(sizes.min()),
            "median": float(np.median(sizes)),
            "max": int(sizes.max()),
        },
        "cuts": partition.cuts,
        "rounds": partition.rounds,
        # Recoding.apply keeps each part's order as well.
        "row_order": "input",
    }
