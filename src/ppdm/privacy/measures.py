"""What a released table achieves, measured from its values alone.

Every measure has the pyCANON signature ``measure(table, quasi_identifiers,
...)`` and returns the achieved value. Equivalence classes are computed by
integer-coding each column (missing values and the suppression marker are
values of their own, never dropped) and compacting the combined key, so the
cost is a few vectorised passes over the rows.

The sensitive-attribute measures (l-diversity variants, t-closeness) all work
on one table of ``(class, value, count)`` pairs, :class:`SensitiveCounts`, so
no measure loops over classes in Python. :class:`ClassPartition` builds the
classes once and serves every measure; the verifier uses it so that checking
four privacy models costs one encoding of the table. The out-of-core verifier
(:mod:`ppdm.verify.out_of_core`) builds the same two objects from Dask group-by
aggregates, which is why the per-class formulas live on them and not on the
rows.

Every measure's paper is listed here once; the measures cite it by number.

References
----------
.. [1] L. Sweeney, "k-anonymity: a model for protecting privacy",
   International Journal of Uncertainty, Fuzziness and Knowledge-Based
   Systems 10(5), 557-570, 2002.
.. [2] A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam,
   "l-diversity: Privacy beyond k-anonymity", ACM Transactions on Knowledge
   Discovery from Data 1(1), article 3, 2007.
.. [3] N. Li, T. Li, S. Venkatasubramanian, "t-closeness: Privacy beyond
   k-anonymity and l-diversity", Proc. IEEE 23rd International Conference on
   Data Engineering (ICDE), 106-115, 2007.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.values import parse_cell

__all__ = [
    "equivalence_classes",
    "canonical_classes",
    "class_sizes",
    "k_anonymity",
    "distinct_l_diversity",
    "entropy_l_diversity",
    "recursive_cl_diversity",
    "t_closeness",
    "SensitiveCounts",
    "ClassPartition",
    "sensitive_value_ranks",
]

# Dense (classes x values) blocks for the ordered EMD are built this many
# cells at a time, so a numeric sensitive attribute with many distinct values
# never needs a classes x values matrix in memory at once.
_EMD_BLOCK_CELLS = 4_000_000


def _codes(column: pd.Series) -> tuple[np.ndarray, int]:
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    return codes.astype(np.int64, copy=False), max(len(uniques), 1)


def equivalence_classes(
    table: pd.DataFrame, quasi_identifiers: Sequence[str]
) -> tuple[np.ndarray, int]:
    """Class id per row (0..n_classes-1) over ``quasi_identifiers``.

    Class ids are numbered in order of first appearance.

    Returns
    -------
    ids : numpy.ndarray of int64, shape (n_rows,)
    n_classes : int
    """
    return _class_ids(table, quasi_identifiers, sort=False)


def _sorted_codes(column: pd.Series) -> tuple[np.ndarray, int]:
    # Ranking the few distinct values and relabelling the codes is cheaper
    # than pd.factorize(sort=True) on long text columns (measured ~20%).
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    codes = codes.astype(np.int64, copy=False)
    try:
        order = np.argsort(np.asarray(uniques, dtype=object), kind="stable")
    except TypeError:  # values of mixed types that do not compare
        return codes, max(len(uniques), 1)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[codes], max(len(uniques), 1)


def canonical_classes(
    table: pd.DataFrame, quasi_identifiers: Sequence[str]
) -> tuple[np.ndarray, int]:
    """Like :func:`equivalence_classes`, with classes numbered by their values.

    Class ids follow the lexicographic order of the classes' quasi-identifier
    values (each column in its sorted order), so any two tables holding the
    same classes number them alike, however their rows are ordered. The
    in-memory and the Dask verifier rely on it to report the same example
    classes.
    """
    return _class_ids(table, quasi_identifiers, sort=True)


def _class_ids(
    table: pd.DataFrame, quasi_identifiers: Sequence[str], *, sort: bool
) -> tuple[np.ndarray, int]:
    """Combine the columns' codes into one integer key per row, then number it.

    ``sort`` numbers the keys in the order of the columns' sorted values (and
    keeps that order through the compaction that stops the key overflowing).
    """
    n = len(table)
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    codes_of = _sorted_codes if sort else _codes
    key = np.zeros(n, dtype=np.int64)
    radix_used = 1
    for name in quasi_identifiers:
        codes, card = codes_of(table[name])
        if radix_used * card >= 2**62:  # compact before the key could overflow
            key, uniques = pd.factorize(key, sort=sort)
            key = key.astype(np.int64)
            radix_used = len(uniques)
        key = key * card + codes
        radix_used *= card
    ids, uniques = pd.factorize(key, sort=sort)
    return ids.astype(np.int64, copy=False), len(uniques)


def class_sizes(table: pd.DataFrame, quasi_identifiers: Sequence[str]) -> np.ndarray:
    """Size of every equivalence class over ``quasi_identifiers``."""
    ids, n_classes = equivalence_classes(table, quasi_identifiers)
    return np.bincount(ids, minlength=n_classes)


def k_anonymity(table: pd.DataFrame, quasi_identifiers: Sequence[str]) -> int:
    """Smallest equivalence-class size (0 for an empty table)."""
    sizes = class_sizes(table, quasi_identifiers)
    return int(sizes.min()) if len(sizes) else 0


def distinct_l_diversity(
    table: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive_attribute: str
) -> int:
    """Smallest number of distinct sensitive values in a class (0 if empty)."""
    counts = ClassPartition.of(table, quasi_identifiers).sensitive(sensitive_attribute)
    per_class = counts.distinct_per_class()
    return int(per_class.min()) if len(per_class) else 0


def entropy_l_diversity(
    table: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive_attribute: str
) -> float:
    """Entropy l-diversity: ``min`` over classes of ``exp(H(class))``.

    ``H`` is the Shannon entropy (natural log) of the sensitive values in a
    class (Machanavajjhala et al., the module's reference [2]). A table is
    entropy l-diverse when the returned value is ``>= l``; the real value is
    returned (pyCANON truncates it to an integer). 0.0 for an empty table.

    Examples
    --------
    >>> t = pd.DataFrame({"zip": ["a", "a", "b", "b"], "dx": ["x", "y", "x", "x"]})
    >>> entropy_l_diversity(t, ["zip"], "dx")
    1.0
    """
    counts = ClassPartition.of(table, quasi_identifiers).sensitive(sensitive_attribute)
    per_class = counts.entropy_l_per_class()
    return float(per_class.min()) if len(per_class) else 0.0


def recursive_cl_diversity(
    table: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive_attribute: str,
    c: float,
) -> int:
    """Largest ``l`` such that the table is recursive (c, l)-diverse.

    With the sensitive counts of a class sorted ``r_1 >= r_2 >= ... >= r_m``,
    the class is (c, l)-diverse iff ``r_1 < c * (r_l + r_{l+1} + ... + r_m)``
    (the module's reference [2]). The condition weakens as ``l`` falls, so
    every class has a largest ``l`` it meets (0 when it fails even ``l = 1``,
    i.e. ``c <= 1`` and a single value); the table achieves the minimum of
    these.

    Examples
    --------
    >>> t = pd.DataFrame({"zip": ["a"] * 4, "dx": ["x", "x", "y", "z"]})
    >>> recursive_cl_diversity(t, ["zip"], "dx", c=2.0)
    2
    """
    counts = ClassPartition.of(table, quasi_identifiers).sensitive(sensitive_attribute)
    per_class = counts.recursive_l_per_class(c)
    return int(per_class.min()) if len(per_class) else 0


def t_closeness(
    table: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive_attribute: str,
    *,
    ordered: bool | None = None,
) -> float:
    """Largest Earth Mover's Distance between a class and the whole table.

    The distance between sensitive-value distributions follows Li, Li and
    Venkatasubramanian (the module's reference [3]): for a nominal attribute the *equal distance*
    (every pair of values 1 apart, so EMD = half the L1 distance); for an
    ordered attribute the *ordered distance* (values ``i`` and ``j`` of ``m``
    ordered values are ``|i - j| / (m - 1)`` apart, so EMD =
    ``sum_i |cumsum(q - p)_i| / (m - 1)``). A table is t-close when the
    returned value is ``<= t``.

    Parameters
    ----------
    ordered : bool or None, default=None
        Use the ordered distance. ``None`` decides from the column: numeric
        dtype, ordered categorical, or text whose every value is a number or an
        interval (as written by :mod:`ppdm.values`) is ordered; anything else
        is nominal.

    Examples
    --------
    >>> t = pd.DataFrame({"zip": ["a", "a", "b", "b"], "dx": ["x", "y", "x", "x"]})
    >>> t_closeness(t, ["zip"], "dx")
    0.25
    """
    counts = ClassPartition.of(table, quasi_identifiers).sensitive(sensitive_attribute)
    per_class = counts.emd_per_class(ordered=ordered)
    return float(per_class.max()) if len(per_class) else 0.0


def sensitive_value_ranks(
    labels: Sequence[object] | np.ndarray, dtype: object = None
) -> np.ndarray | None:
    """Rank of each distinct sensitive value in its natural order, or None.

    ``labels`` are the distinct values; ``dtype`` the column's dtype. Ordered
    categoricals follow their category order, numbers their value; text is
    ordered when every label is a number or an interval of
    :mod:`ppdm.values` (by lower then upper bound). Returns None when the
    values have no order (nominal attribute) or include a missing value,
    ``*`` or any other non-numeric text.
    """
    labels = list(labels)
    if isinstance(dtype, pd.CategoricalDtype) and dtype.ordered:
        position = {value: i for i, value in enumerate(dtype.categories)}
        if any(pd.isna(v) or v not in position for v in labels):
            return None
        keys = [(float(position[v]), 0.0) for v in labels]
    else:
        keys = []
        for value in labels:
            key = _order_key(value)
            if key is None:
                return None
            keys.append(key)
    order = sorted(range(len(labels)), key=lambda i: (keys[i], str(labels[i])))
    ranks = np.empty(len(labels), dtype=np.int64)
    ranks[order] = np.arange(len(labels))
    return ranks


def _order_key(value: object) -> tuple[float, float] | None:
    if isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, int | float | np.integer | np.floating):
        number = float(value)
        return None if math.isnan(number) else (number, number)
    if not isinstance(value, str):
        return None
    cell = parse_cell(value)
    if cell.kind == "interval":
        return (cell.low, cell.high)
    if cell.kind != "value":
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return None if math.isnan(number) else (number, number)


@dataclass(frozen=True, eq=False)
class SensitiveCounts:
    """How often each sensitive value occurs in each equivalence class.

    One entry per (class, value) pair present in the table; every per-class
    measure is a vectorised reduction over these arrays.

    Attributes
    ----------
    attribute : str
    class_sizes : numpy.ndarray of int64, shape (n_classes,)
    pair_class, pair_value, pair_count : numpy.ndarray of int64, shape (n_pairs,)
        Class id, value code and number of rows of each pair.
    values : numpy.ndarray
        The distinct sensitive values, indexed by value code.
    ranks : numpy.ndarray of int64 or None
        Rank of each value code in the attribute's natural order; None for a
        nominal attribute.
    """

    attribute: str
    class_sizes: np.ndarray
    pair_class: np.ndarray
    pair_value: np.ndarray
    pair_count: np.ndarray
    values: np.ndarray
    ranks: np.ndarray | None
    #: Distribution of the whole table, when the classes cover only part of
    #: it (an algorithm testing candidate groups); None: from the pairs.
    whole: np.ndarray | None = None

    @property
    def n_classes(self) -> int:
        return len(self.class_sizes)

    @property
    def n_values(self) -> int:
        return len(self.values)

    def distinct_per_class(self) -> np.ndarray:
        """Number of distinct sensitive values in each class."""
        return np.bincount(self.pair_class, minlength=self.n_classes)

    def entropy_l_per_class(self) -> np.ndarray:
        """``exp`` of the entropy of each class's sensitive values."""
        share = self.pair_count / self.class_sizes[self.pair_class]
        entropy = -np.bincount(
            self.pair_class, weights=share * np.log(share), minlength=self.n_classes
        )
        return np.exp(entropy)

    def recursive_l_per_class(self, c: float) -> np.ndarray:
        """Largest ``l`` each class meets for recursive (c, l)-diversity."""
        if len(self.pair_class) == 0:  # no rows: no class meets any l
            return np.zeros(self.n_classes, dtype=np.int64)
        order = np.lexsort((-self.pair_count, self.pair_class))
        cls = self.pair_class[order]
        cnt = self.pair_count[order]
        # counts before this pair within its class (sorted descending), so
        # the tail r_i + ... + r_m of pair i is class size minus that.
        before = np.cumsum(cnt) - cnt
        starts = np.flatnonzero(np.r_[True, cls[1:] != cls[:-1]])
        first = np.zeros(self.n_classes, dtype=np.int64)
        first[cls[starts]] = starts
        tail = self.class_sizes[cls] - (before - before[first[cls]])
        largest = cnt[first[cls]]
        meets = largest < c * tail
        return np.bincount(cls, weights=meets, minlength=self.n_classes).astype(
            np.int64
        )

    def global_distribution(self) -> np.ndarray:
        """Share of each sensitive value in the whole table."""
        if self.whole is not None:
            return self.whole
        totals = np.bincount(
            self.pair_value, weights=self.pair_count, minlength=self.n_values
        )
        return totals / totals.sum()

    def emd_per_class(self, *, ordered: bool | None = None) -> np.ndarray:
        """Earth Mover's Distance of each class to the whole table.

        See :func:`t_closeness` for the two ground distances.
        """
        if ordered is None:
            ordered = self.ranks is not None
        elif ordered and self.ranks is None:
            raise InvalidParameterError(
                f"t-closeness: sensitive attribute {self.attribute!r} has values "
                "without a numeric order; use ordered=False (equal distance)"
            )
        whole = self.global_distribution()
        share = self.pair_count / self.class_sizes[self.pair_class]
        if not ordered or self.n_values <= 1:
            # Values absent from a class contribute their whole-table share.
            gap = np.bincount(
                self.pair_class,
                weights=np.abs(share - whole[self.pair_value]) - whole[self.pair_value],
                minlength=self.n_classes,
            )
            return np.clip(0.5 * (gap + 1.0), 0.0, None)
        return self._ordered_emd(share, whole)

    def _ordered_emd(self, share: np.ndarray, whole: np.ndarray) -> np.ndarray:
        assert self.ranks is not None
        m = self.n_values
        rank = self.ranks[self.pair_value]
        whole_cum = np.cumsum(whole[np.argsort(self.ranks)])[:-1]
        emd = np.empty(self.n_classes)
        block = max(1, _EMD_BLOCK_CELLS // m)
        order = np.argsort(self.pair_class, kind="stable")
        cls_sorted = self.pair_class[order]
        starts = np.arange(0, self.n_classes + block, block)
        bounds = np.searchsorted(cls_sorted, starts)
        for i, start in enumerate(range(0, self.n_classes, block)):
            stop = min(start + block, self.n_classes)
            rows = order[bounds[i] : bounds[i + 1]]
            dense = np.zeros((stop - start, m))
            dense[self.pair_class[rows] - start, rank[rows]] = share[rows]
            cum = np.cumsum(dense, axis=1)[:, :-1]
            emd[start:stop] = np.abs(cum - whole_cum).sum(axis=1) / (m - 1)
        return emd


@dataclass(frozen=True, eq=False)
class ClassPartition:
    """The equivalence classes of a table over its quasi-identifiers.

    Classes are numbered by their values (:func:`canonical_classes`). Built
    once per table with :meth:`of`; the sensitive counts of each
    attribute are computed on first use and kept, so several privacy models
    share one encoding.

    Attributes
    ----------
    quasi_identifiers : tuple of str
    sizes : numpy.ndarray of int64, shape (n_classes,)
    n_rows : int
    """

    quasi_identifiers: tuple[str, ...]
    sizes: np.ndarray
    n_rows: int
    _table: pd.DataFrame | None = field(default=None, repr=False)
    _ids: np.ndarray | None = field(default=None, repr=False)
    _keys: pd.DataFrame | None = field(default=None, repr=False)
    _sensitive: dict[str, SensitiveCounts] = field(default_factory=dict, repr=False)

    @classmethod
    def of(
        cls, table: pd.DataFrame | ClassPartition, quasi_identifiers: Sequence[str]
    ) -> ClassPartition:
        """Partition ``table``; an existing partition on the same QIs is reused."""
        qis = tuple(quasi_identifiers)
        if isinstance(table, ClassPartition):
            if table.quasi_identifiers != qis:
                raise InvalidParameterError(
                    f"partition is over {list(table.quasi_identifiers)}, "
                    f"not {list(qis)}"
                )
            return table
        missing = [q for q in qis if q not in table.columns]
        if missing:
            raise InvalidParameterError(
                f"quasi-identifiers {missing} are not columns of the table "
                f"(columns: {list(table.columns)})"
            )
        ids, n_classes = canonical_classes(table, qis)
        sizes = np.bincount(ids, minlength=n_classes)
        return cls(qis, sizes, len(table), _table=table, _ids=ids)

    @classmethod
    def from_aggregates(
        cls,
        quasi_identifiers: Sequence[str],
        keys: pd.DataFrame,
        sizes: np.ndarray,
        sensitive: Sequence[SensitiveCounts] = (),
    ) -> ClassPartition:
        """A partition from group-by results: one row of ``keys`` per class."""
        sizes = np.asarray(sizes, dtype=np.int64)
        return cls(
            tuple(quasi_identifiers),
            sizes,
            int(sizes.sum()),
            _keys=keys.reset_index(drop=True),
            _sensitive={s.attribute: s for s in sensitive},
        )

    @classmethod
    def from_groups(
        cls,
        ids: np.ndarray,
        n_groups: int,
        sensitive: Sequence[SensitiveCounts] = (),
        weights: np.ndarray | None = None,
    ) -> ClassPartition:
        """A partition of rows into candidate groups, with no released values.

        Algorithms use it to ask the privacy models about groups they are
        considering (a Mondrian cut, a tree leaf, a lattice node's classes);
        ``ids`` are the rows' group numbers in ``0..n_groups-1``. ``weights``
        (int, one per row of ``ids``) counts each row as that many rows (a
        frequency table's counts): the sizes are then weighted sums, and
        ``sensitive`` must be counted with the same weights.
        """
        sizes = np.bincount(ids, weights=weights, minlength=n_groups).astype(np.int64)
        return cls(
            (),
            sizes,
            int(sizes.sum()),
            _sensitive={s.attribute: s for s in sensitive},
        )

    @property
    def n_classes(self) -> int:
        return len(self.sizes)

    def sensitive(self, attribute: str) -> SensitiveCounts:
        """The (class, value) counts of ``attribute``."""
        if attribute not in self._sensitive:
            if self._table is None or self._ids is None:
                raise InvalidParameterError(
                    f"sensitive attribute {attribute!r} was not aggregated"
                )
            if attribute not in self._table.columns:
                raise InvalidParameterError(
                    f"sensitive attribute {attribute!r} is not a column of the "
                    f"table (columns: {list(self._table.columns)})"
                )
            column = self._table[attribute]
            codes, uniques = pd.factorize(column, use_na_sentinel=False)
            values = np.asarray(uniques, dtype=object)
            self._sensitive[attribute] = counts_from_codes(
                attribute,
                self._ids,
                self.sizes,
                codes.astype(np.int64, copy=False),
                values,
                sensitive_value_ranks(values, column.dtype),
            )
        return self._sensitive[attribute]

    def keys(self, classes: Sequence[int] | np.ndarray) -> pd.DataFrame:
        """Quasi-identifier values of the given classes, one row each."""
        classes = np.asarray(classes, dtype=np.int64)
        if self._keys is not None:
            return self._keys.iloc[classes][list(self.quasi_identifiers)]
        assert self._table is not None and self._ids is not None
        # first row of each requested class, in one pass over the ids
        positions = np.flatnonzero(np.isin(self._ids, classes, kind="table"))
        found, first = np.unique(self._ids[positions], return_index=True)
        rows = positions[first][np.searchsorted(found, classes)]
        return self._table.iloc[rows][list(self.quasi_identifiers)]


def counts_from_codes(
    attribute: str,
    ids: np.ndarray,
    sizes: np.ndarray,
    codes: np.ndarray,
    values: np.ndarray,
    ranks: np.ndarray | None,
    whole: np.ndarray | None = None,
    weights: np.ndarray | None = None,
) -> SensitiveCounts:
    """Build :class:`SensitiveCounts` from per-row class ids and value codes.

    ``weights`` (int, one per row; default 1) counts each row as that many
    rows, so a frequency table (one row per distinct combination, weighted
    by its count) gives the counts of the rows it describes. Pairs of
    weight 0 are left out, as a value no row holds. ``sizes`` are the classes'
    (weighted) sizes. The pairs are ordered by class, then value code, so the
    per-class float sums run in an order that does not depend on the order of
    the rows.
    """
    n_values = max(len(values), 1)
    key = ids * n_values + codes
    space = len(sizes) * n_values
    if space <= 4 * len(key) + 1_000_000:
        # A dense count over the (class, value) key space beats hashing when
        # that space is not much larger than the table.
        dense = np.bincount(key, weights=weights, minlength=space)
        pair_uniques = np.flatnonzero(dense)
        counts = dense[pair_uniques].astype(np.int64)
    else:
        pair_key, uniques = pd.factorize(key, sort=True)
        counts = np.bincount(pair_key, weights=weights, minlength=len(uniques))
        counts = counts.astype(np.int64)
        pair_uniques = np.asarray(uniques, dtype=np.int64)
        if weights is not None:
            present = counts > 0
            pair_uniques, counts = pair_uniques[present], counts[present]
    return SensitiveCounts(
        attribute,
        np.asarray(sizes, dtype=np.int64),
        pair_uniques // n_values,
        pair_uniques % n_values,
        counts,
        values,
        ranks,
        whole,
    )
