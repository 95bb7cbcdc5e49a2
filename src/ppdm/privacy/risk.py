"""Re-identification risk of a released table, after El Emam.

Three attackers are modelled [1]_ [2]_. Write ``f_j`` for the size of
released equivalence class ``j``, ``n`` for the released rows and ``F_j`` for
the number of records of the *population* whose values fall in class ``j``
(the original table stands in for the population when it is given).

- **Prosecutor** (knows the target is in the release): a record of class
  ``j`` is re-identified with probability ``1/f_j``. Reported: the maximum
  ``1/min f_j``, the average over records ``(1/n) sum_j f_j (1/f_j) =
  n_classes / n``, and the share of records whose risk exceeds a threshold
  (default 0.2, i.e. records in classes smaller than 5).
- **Journalist** (does not know whether the target is in the release, and
  matches it against the population): risk ``1/F_j``; reported as maximum and
  share of records above the threshold.
- **Marketer** (wants to re-identify as many records as possible): the
  expected share of released records correctly matched,
  ``(1/n) sum_j f_j / F_j``.

A class is *covered* by a population record when every released cell covers
the record's value: ``*`` covers everything, an empty cell covers a missing
value, a range or interval covers the numbers in it, a value set its members,
and any other text the equal value. ``F_j`` is never taken below ``f_j``
(classes whose rows the population cannot account for are counted in
``classes_not_in_population`` instead: usually a formatting mismatch between
the two tables).

References
----------
.. [1] K. El Emam, F. K. Dankar, "Protecting privacy using k-anonymity",
   Journal of the American Medical Informatics Association 15(5), 627-637,
   2008.
.. [2] K. El Emam, "Guide to the De-Identification of Personal Health
   Information", CRC Press, 2013 (chapter on measuring re-identification
   risk: prosecutor, journalist and marketer risk).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from ppdm.exceptions import InvalidParameterError
from ppdm.generalization.ordered_text import date_format
from ppdm.privacy.measures import ClassPartition, equivalence_classes
from ppdm.privacy.result import json_value
from ppdm.values import SUPPRESSED, Cell, format_number, parse_cell

__all__ = ["RiskReport", "reidentification_risk", "population_class_sizes"]

#: Largest (classes x population rows / 64 x QIs) coverage test, in 64-bit
#: word operations, computed for journalist/marketer risk when the release is
#: not a global recoding.
MAX_COVERAGE_WORK = 2_000_000_000
_MAX_BITSET_BYTES = 1 << 30
_BLOCK_BYTES = 64 << 20


@dataclass(frozen=True)
class RiskReport:
    """Re-identification risk figures (see the module docstring).

    Population-based figures are None when no population was given (or when
    ``population_note`` explains why they were not computed).
    """

    threshold: float
    n_rows: int
    n_classes: int
    prosecutor_max: float
    prosecutor_average: float
    prosecutor_records_at_risk: float
    journalist_max: float | None = None
    journalist_records_at_risk: float | None = None
    marketer: float | None = None
    population_rows: int | None = None
    classes_not_in_population: int | None = None
    population_note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form, in a fixed key order."""
        return {
            "threshold": json_value(self.threshold),
            "n_rows": self.n_rows,
            "n_classes": self.n_classes,
            "prosecutor_max": json_value(self.prosecutor_max),
            "prosecutor_average": json_value(self.prosecutor_average),
            "prosecutor_records_at_risk": json_value(self.prosecutor_records_at_risk),
            "journalist_max": json_value(self.journalist_max),
            "journalist_records_at_risk": json_value(self.journalist_records_at_risk),
            "marketer": json_value(self.marketer),
            "population_rows": self.population_rows,
            "classes_not_in_population": self.classes_not_in_population,
            "population_note": self.population_note,
        }


def reidentification_risk(
    table: pd.DataFrame | ClassPartition,
    quasi_identifiers: Sequence[str],
    *,
    population: pd.DataFrame | None = None,
    threshold: float = 0.2,
    suppression_marker: str = SUPPRESSED,
    covers: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
) -> RiskReport:
    """Prosecutor, and with a population journalist and marketer, risk.

    Parameters
    ----------
    table : pandas.DataFrame or ClassPartition
        The released table (or its partition over ``quasi_identifiers``).
    quasi_identifiers : sequence of str
    population : pandas.DataFrame, optional
        The original table (or any population the release was drawn from),
        with the raw values of ``quasi_identifiers``.
    threshold : float, default=0.2
        A record is at risk when its re-identification probability exceeds
        this (0.2: classes of fewer than 5 records).
    suppression_marker : str, default="*"
    covers : mapping, optional
        ``{attribute: {generalized label: raw values it stands for}}`` for
        releases generalized along hierarchies (labels such as ``Married``
        that name a group of raw values); read from the hierarchy files, never
        from the algorithm.

    Returns
    -------
    RiskReport

    Examples
    --------
    >>> t = pd.DataFrame({"age": ["[20, 29]"] * 3 + ["[30, 39]"] * 2})
    >>> r = reidentification_risk(t, ["age"])
    >>> r.prosecutor_max, r.prosecutor_average, r.prosecutor_records_at_risk
    (0.5, 0.4, 1.0)
    """
    if not 0 < threshold <= 1:
        raise InvalidParameterError(
            f"risk threshold must be in (0, 1]; got {threshold}"
        )
    partition = ClassPartition.of(table, quasi_identifiers)
    sizes = partition.sizes
    n = partition.n_rows
    if n == 0:
        return RiskReport(threshold, 0, 0, math.nan, math.nan, math.nan)
    at_risk = (1.0 / sizes) > threshold
    report = RiskReport(
        threshold=threshold,
        n_rows=n,
        n_classes=partition.n_classes,
        prosecutor_max=1.0 / float(sizes.min()),
        prosecutor_average=partition.n_classes / n,
        prosecutor_records_at_risk=float(sizes[at_risk].sum()) / n,
    )
    if population is None:
        return report
    population = _with_feature_columns(
        population, partition.quasi_identifiers, suppression_marker, covers
    )
    missing = [q for q in partition.quasi_identifiers if q not in population.columns]
    if missing:
        return _with_note(report, f"population lacks quasi-identifiers {missing}")
    keys = partition.keys(np.arange(partition.n_classes))
    pop = population_class_sizes(keys, population, suppression_marker, covers)
    if pop is None:
        return _with_note(
            report,
            "population risk not computed: the release is not a global recoding "
            "and classes x population combinations exceed the work limit",
        )
    short = pop < sizes
    pop = np.maximum(pop, sizes)
    j_risk = 1.0 / pop
    note = (
        f"{int(short.sum())} of {len(sizes)} released classes match fewer population "
        "records than they hold (cells the verifier cannot read as values of the "
        "original, e.g. hierarchy labels without their hierarchies); their "
        "population is taken as their own size"
        if short.any()
        else None
    )
    return RiskReport(
        **{
            **report.__dict__,
            "journalist_max": float(j_risk.max()),
            "journalist_records_at_risk": float(sizes[j_risk > threshold].sum()) / n,
            "marketer": float(np.sort(sizes / pop).sum()) / n,  # order-free
            "population_rows": len(population),
            "classes_not_in_population": int(short.sum()),
            "population_note": note,
        }
    )


def _with_feature_columns(
    population: pd.DataFrame,
    columns: Sequence[str],
    marker: str,
    covers: Mapping[str, Mapping[str, Sequence[str]]] | None,
) -> pd.DataFrame:
    """``population`` plus the 0/1 feature columns ``<q>=<value>`` it lacks.

    A feature release (fs-anonymity) publishes ``q=v`` columns; a population
    record has the feature (``"1"``) when its value of ``q`` is covered by
    ``v`` (an interval its numbers, a value itself), else ``"0"``, so the
    journalist and marketer risks count the records of each released feature
    vector.
    """
    added: dict[str, np.ndarray] = {}
    attributes = [str(c) for c in population.columns]
    for name in columns:
        if name in population.columns:
            continue
        source = next(
            (
                a
                for a in sorted(attributes, key=len, reverse=True)
                if name.startswith(f"{a}=")
            ),
            None,
        )
        if source is None:
            continue
        value = name[len(source) + 1 :]
        codes, uniques = pd.factorize(population[source], use_na_sentinel=False)
        coverage = _Coverage(
            _Domain(list(uniques)), [value], marker, (covers or {}).get(source)
        )
        hit = coverage.dense(np.array([0]))[0]
        added[name] = np.where(hit[codes], "1", "0").astype(object)
    if not added:
        return population
    return pd.concat([population, pd.DataFrame(added, index=population.index)], axis=1)


def _with_note(report: RiskReport, note: str) -> RiskReport:
    return RiskReport(**{**report.__dict__, "population_note": note})


def _text(value: object) -> str | None:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    if isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool
    ):
        return format_number(float(value))
    return str(value)


#: A calendar range of a date quasi-identifier as the algorithms release it
#: (whole months, ISO days: :mod:`ppdm.generalization.ordered_text`).
_DATE_RANGE = re.compile(r"^\[(\d{4}-\d{2}-\d{2}), (\d{4}-\d{2}-\d{2})\]$")
#: A code released with its last digits masked (``010**``).
_CODE_MASK = re.compile(r"^(\d*)(\*+)$")


class _Domain:
    """The distinct population values of one quasi-identifier, indexed for coverage.

    A released cell's coverage is found by lookups (a value, a set's members,
    hierarchy labels) and binary searches (numeric intervals, date ranges), so
    building the coverage of every distinct released cell costs about the
    number of values it covers, never (cells x values) Python comparisons.
    """

    def __init__(self, values: Sequence[object]) -> None:
        self.texts = [_text(v) for v in values]
        self.size = len(self.texts)
        # Positions by text, found by one factorize and one sort: a value's
        # positions are a slice of the sorted order (no list per value).
        codes, uniques = pd.factorize(
            pd.Series(self.texts, dtype=object), use_na_sentinel=False
        )
        self._order = np.argsort(codes, kind="stable").astype(np.int64)
        self._bounds = np.searchsorted(codes[self._order], np.arange(len(uniques) + 1))
        # Texts are str or None; factorize gives None back as NaN.
        self._index = {
            (text if isinstance(text, str) else None): i
            for i, text in enumerate(uniques.tolist())
        }
        self.missing = np.sort(
            np.concatenate([self.positions(None), self.positions("")])
        )
        numbers = pd.to_numeric(pd.Series(self.texts, dtype=object), errors="coerce")
        self._numbers = _SortedValues(numbers.to_numpy(dtype=float))
        self._days: _SortedValues | None = None
        self._text_array: np.ndarray | None = None
        #: The order runs are kept in: the first range read decides.
        self.run_order: str | None = None

    def positions(self, text: str | None) -> np.ndarray:
        i = self._index.get(text)
        if i is None:
            return _NONE
        return self._order[self._bounds[i] : self._bounds[i + 1]]

    def _sorted(self, order: str) -> _SortedValues:
        return self._dates() if order == "days" else self._numbers

    def _union(self, parts: list[np.ndarray | _Run]) -> np.ndarray | _Run:
        """The coverage of ``parts``: one run as a run, else distinct positions."""
        present = [p for p in parts if len(p)]
        if len(present) == 1 and isinstance(present[0], _Run):
            run = present[0]
            if self.run_order in (None, run.order):
                self.run_order = run.order
                return run
        arrays = [
            self._sorted(p.order).order[p.start : p.stop] if isinstance(p, _Run) else p
            for p in present
        ]
        if len(arrays) <= 1:
            return arrays[0] if arrays else _NONE
        return np.unique(np.concatenate(arrays))

    def covered(
        self,
        cell: object,
        marker: str,
        labels: Mapping[str, Sequence[str]] | None = None,
    ) -> np.ndarray | _Run:
        """The values ``cell`` covers: distinct positions, or a run of sorted values."""
        parsed = parse_cell(_text(cell), marker)
        if parsed.kind == "suppressed":
            return np.arange(self.size, dtype=np.int64)
        if parsed.kind == "set":
            # a missing value inside a set is written as an empty member; a
            # member is itself a value, a range or a label
            parts = [
                part
                for member in parsed.members
                for part in self._one(parse_cell(member, marker), labels)
            ]
            return self._union(parts)
        return self._union(self._one(parsed, labels))

    def _one(
        self, parsed: Cell, labels: Mapping[str, Sequence[str]] | None
    ) -> list[np.ndarray | _Run]:
        """What a cell that is not a set covers, in parts that may overlap."""
        if parsed.kind == "missing":
            return [self.missing]
        if parsed.kind == "suppressed":
            return [np.arange(self.size, dtype=np.int64)]
        same = self.positions(parsed.text)
        if parsed.kind == "interval":
            inside = _Run(
                "numbers",
                *self._numbers.between(
                    parsed.low, parsed.low_closed, parsed.high, parsed.high_closed
                ),
            )
            return [inside, same]
        if labels and parsed.text in labels:
            return [self.positions(leaf) for leaf in labels[parsed.text]] + [same]
        dates = _DATE_RANGE.match(parsed.text)
        if dates:
            low, high = (np.datetime64(d, "D").astype(np.int64) for d in dates.groups())
            inside = _Run("days", *self._dates().between(low, True, high, True))
            return [inside, same]
        mask = _CODE_MASK.match(parsed.text)
        if mask:
            return [self._masked(mask[1], len(parsed.text)), same]
        return [same]

    def rank(self) -> np.ndarray:
        """Each value's place in the order ranges are read in (dates, else numbers).

        A released range covers consecutive ranks, so the rows it covers are
        consecutive once the rows are sorted by this rank.
        """
        ordered = self._sorted(self.run_order or "numbers")
        rest = np.setdiff1d(np.arange(self.size), ordered.order, assume_unique=True)
        rank = np.empty(self.size, dtype=np.int64)
        rank[np.concatenate([ordered.order, rest])] = np.arange(self.size)
        return rank

    def _dates(self) -> _SortedValues:
        """The values as days since 1970 (NaN: not a date), read in the column's format."""
        if self._days is None:
            texts = pd.Series(self.texts, dtype=object)
            fmt = date_format(texts) or "%Y-%m-%d"
            when = pd.to_datetime(texts, format=fmt, errors="coerce")
            days = when.to_numpy(dtype="datetime64[D]").astype(np.int64).astype(float)
            days[when.isna().to_numpy()] = np.nan
            self._days = _SortedValues(days)
        return self._days

    def _masked(self, prefix: str, width: int) -> np.ndarray:
        """Codes a mask such as ``010**`` stands for: the prefix, then up to its width."""
        if self._text_array is None:
            self._text_array = np.array(
                ["" if t is None else t for t in self.texts], dtype=str
            )
        texts = self._text_array
        lengths = np.char.str_len(texts)
        hit = np.char.startswith(texts, prefix) & (lengths > len(prefix))
        return np.flatnonzero(hit & (lengths <= width))


_NONE = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class _Run:
    """Values ``start..stop-1`` of one order of a domain (``"numbers"`` or ``"days"``).

    A numeric interval or a date range covers a run of the values sorted;
    kept as its two ends, its coverage costs nothing to store, however many
    values it spans.
    """

    order: str
    start: int
    stop: int

    def __len__(self) -> int:
        return self.stop - self.start


class _SortedValues:
    """Numbers sorted once, so the positions inside an interval are two binary searches."""

    def __init__(self, values: np.ndarray) -> None:
        present = np.flatnonzero(~np.isnan(values))
        order = np.argsort(values[present], kind="stable")
        self.order = present[order]
        self.sorted = values[self.order]

    def between(
        self, low: float, low_closed: bool, high: float, high_closed: bool
    ) -> tuple[int, int]:
        """``(start, stop)``: the values in the interval are ``order[start:stop]``."""
        left = np.searchsorted(self.sorted, low, side="left" if low_closed else "right")
        right = np.searchsorted(
            self.sorted, high, side="right" if high_closed else "left"
        )
        return int(left), int(max(left, right))


class _Coverage:
    """Which population values each distinct released cell of one quasi-identifier covers.

    Cells that cover a run of sorted values (intervals, date ranges) are kept
    as their ends, in rank space (:meth:`_Domain.rank`); the others as a sparse
    (cell x value) matrix. Memory grows with the values listed, never with
    cells x values.
    """

    def __init__(
        self,
        domain: _Domain,
        cells: Sequence[object],
        marker: str,
        labels: Mapping[str, Sequence[str]] | None,
    ) -> None:
        covered = [domain.covered(cell, marker, labels) for cell in cells]
        self.n_cells, self.n_values = len(covered), domain.size
        self.rank = domain.rank()
        is_run = np.array([isinstance(c, _Run) for c in covered], dtype=bool)
        self.run_cells = np.flatnonzero(is_run)
        runs = [covered[i] for i in self.run_cells]
        self.run_start = np.array([r.start for r in runs], dtype=np.int64)
        self.run_stop = np.array([r.stop for r in runs], dtype=np.int64)
        lists = [_NONE if run else c for c, run in zip(covered, is_run, strict=True)]
        indptr = np.zeros(len(lists) + 1, dtype=np.int64)
        np.cumsum([len(c) for c in lists], out=indptr[1:])
        indices = np.concatenate(lists) if lists else _NONE
        self.listed = sparse.csr_matrix(
            (np.ones(len(indices), dtype=bool), indices, indptr),
            shape=(self.n_cells, self.n_values),
        )

    @property
    def size(self) -> int:
        """Covered (cell, value) pairs in all."""
        return int(self.listed.nnz + (self.run_stop - self.run_start).sum())

    def _by_rank(self, weights: np.ndarray) -> np.ndarray:
        """Per rank, the sum of ``weights`` of the runs that cover it."""
        steps = np.zeros(self.n_values + 1, dtype=np.int64)
        np.add.at(steps, self.run_start, weights)
        np.add.at(steps, self.run_stop, -weights)
        return np.cumsum(steps[:-1])

    def cells_per_value(self) -> np.ndarray:
        """How many cells cover each value."""
        listed = np.bincount(self.listed.indices, minlength=self.n_values)
        runs = self._by_rank(np.ones(len(self.run_cells), dtype=np.int64))
        return listed + runs[self.rank]

    def cell_of_value(self) -> np.ndarray:
        """The cell covering each value (-1: none), when at most one cell covers each."""
        out = self._by_rank(self.run_cells + 1)[self.rank] - 1
        out[self.listed.indices] = np.repeat(
            np.arange(self.n_cells), np.diff(self.listed.indptr)
        )
        return out

    def dense(self, cells: np.ndarray) -> np.ndarray:
        """The (len(cells) x value) coverage of ``cells``, as booleans."""
        block = self.listed[cells].toarray()
        where = np.flatnonzero(np.isin(cells, self.run_cells))
        if len(where):
            runs = np.searchsorted(self.run_cells, cells[where])
            steps = np.zeros((len(where), self.n_values + 1), dtype=np.int8)
            rows = np.arange(len(where))
            steps[rows, self.run_start[runs]] += 1
            steps[rows, self.run_stop[runs]] -= 1
            by_rank = np.cumsum(steps[:, :-1], axis=1, dtype=np.int8) > 0
            block[where] |= by_rank[:, self.rank]
        return block


def population_class_sizes(
    keys: pd.DataFrame,
    population: pd.DataFrame,
    marker: str = SUPPRESSED,
    covers: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
) -> np.ndarray | None:
    """``F_j``: population records covered by each released class.

    ``keys`` holds one row of released quasi-identifier cells per class.
    Returns None when the exact count would exceed :data:`MAX_COVERAGE_WORK`
    (or 1 GB of coverage bitsets).
    """
    qis = list(keys.columns)
    if not qis:  # a single class holding everyone
        return np.full(len(keys), len(population), dtype=np.int64)
    combo_ids, n_combos = equivalence_classes(population, qis)
    combo_counts = np.bincount(combo_ids, minlength=n_combos).astype(np.float64)
    firsts = np.flatnonzero(
        np.r_[True, combo_ids[1:] > np.maximum.accumulate(combo_ids)[:-1]]
    )
    combos = population.iloc[firsts][qis]
    # Per QI, a sparse (distinct released cell x distinct population value)
    # coverage matrix; the loop runs over distinct cells, never over rows.
    cell_codes, value_codes, coverage = [], [], []
    functional = True
    for q in qis:
        c_codes, c_uniques = pd.factorize(keys[q], use_na_sentinel=False)
        v_codes, v_uniques = pd.factorize(combos[q], use_na_sentinel=False)
        matrix = _Coverage(
            _Domain(list(v_uniques)), list(c_uniques), marker, (covers or {}).get(q)
        )
        functional &= bool((matrix.cells_per_value() <= 1).all())
        cell_codes.append(c_codes)
        value_codes.append(v_codes)
        coverage.append(matrix)
    n_classes = len(keys)
    if functional:
        # Global recoding: each population combination falls in at most one
        # class, found by mapping every value to its single covering cell.
        class_key = _mixed_key(cell_codes, [m.n_cells for m in coverage])
        lookup = pd.Index(class_key)
        combo_cells = []
        hit = np.ones(n_combos, dtype=bool)
        for matrix, v_codes in zip(coverage, value_codes, strict=True):
            cell_of_value = matrix.cell_of_value()
            combo_cells.append(np.maximum(cell_of_value, 0)[v_codes])
            hit &= cell_of_value[v_codes] >= 0
        combo_key = _mixed_key(combo_cells, [m.n_cells for m in coverage])
        target = lookup.get_indexer(combo_key)
        ok = hit & (target >= 0)
        return np.bincount(
            target[ok], weights=combo_counts[ok], minlength=n_classes
        ).astype(np.int64)
    return _bitset_counts(cell_codes, value_codes, coverage, combo_ids, n_classes)


def _bitset_counts(
    cell_codes: list[np.ndarray],
    value_codes: list[np.ndarray],
    coverage: list[_Coverage],
    combo_ids: np.ndarray,
    n_classes: int,
) -> np.ndarray | None:
    # Local recoding (overlapping cells): per QI and released cell, the
    # population rows it covers as a bitset; a class covers the AND of its
    # cells' bitsets and F_j is that AND's popcount. Written by hand because
    # no library computes coverage counts of generalized records; bitsets keep
    # it to classes x rows/64 word operations per QI.
    n_rows = len(combo_ids)
    n_words = (n_rows + 63) // 64
    n_cells = sum(m.n_cells for m in coverage)
    if (
        n_classes * n_words * len(coverage) > MAX_COVERAGE_WORK
        or n_cells * n_words * 8 > _MAX_BITSET_BYTES
    ):
        return None
    # The bits follow the rows sorted by the rank of the quasi-identifier with
    # the most coverage (a date or number released as ranges, as a rule): each
    # of its range cells then covers one span of consecutive rows, whose bitset
    # is written word by word instead of gathered row by row.
    lead = int(np.argmax([m.size for m in coverage]))
    rows_rank = coverage[lead].rank[value_codes[lead][combo_ids]]
    order = np.argsort(rows_rank, kind="stable")
    rows = combo_ids[order]
    bitsets = []
    for q, (matrix, v_codes) in enumerate(zip(coverage, value_codes, strict=True)):
        words = np.zeros((matrix.n_cells, n_words), dtype=np.uint64)
        gathered = np.arange(matrix.n_cells)
        if q == lead:
            _write_runs(words, matrix, rows_rank[order])
            gathered = np.setdiff1d(gathered, matrix.run_cells, assume_unique=True)
        _write_gathered(words, matrix, gathered, v_codes[rows])
        bitsets.append(words)
    out = np.empty(n_classes, dtype=np.int64)
    block = max(1, _BLOCK_BYTES // (8 * n_words))
    for start in range(0, n_classes, block):
        stop = min(start + block, n_classes)
        acc = bitsets[0][cell_codes[0][start:stop]]
        for words, codes in zip(bitsets[1:], cell_codes[1:], strict=True):
            acc &= words[codes[start:stop]]
        out[start:stop] = np.bitwise_count(acc).sum(axis=1, dtype=np.int64)
    return out


def _write_runs(words: np.ndarray, matrix: _Coverage, sorted_rank: np.ndarray) -> None:
    """Write the bitsets of the run cells: each covers one span of consecutive bits.

    ``sorted_rank`` is the rank of each row in bit order (ascending), so a run
    of ranks ``start..stop-1`` covers the rows from the first of rank
    ``start`` to the last of rank ``stop - 1``: bits ``first..last-1``. The
    words strictly inside a span are all ones (marked by a running sum of
    +1/-1 steps), and the two edge words are written one per cell.
    """
    first = np.searchsorted(sorted_rank, matrix.run_start, side="left")
    last = np.searchsorted(sorted_rank, matrix.run_stop, side="left")
    spans = np.flatnonzero(last > first)
    cells, first, last = matrix.run_cells[spans], first[spans], last[spans]
    head, tail = first // 64, (last - 1) // 64
    # The words strictly inside each span: one slice each (the spans' lengths
    # in all, rather than cells x words of running sums).
    ones = ~np.uint64(0)
    inner = np.flatnonzero(tail > head + 1)
    for cell, h, t in zip(
        cells[inner].tolist(), head[inner].tolist(), tail[inner].tolist(), strict=True
    ):
        words[cell, h + 1 : t] = ones
    low_edge = _low_bits(first - head * 64)  # bits below the span in its head word
    high_edge = _low_bits(last - tail * 64)  # bits up to the span's end in its tail
    one = head == tail
    words[cells[one], head[one]] = high_edge[one] & ~low_edge[one]
    two = ~one
    words[cells[two], head[two]] = ~low_edge[two]
    words[cells[two], tail[two]] = high_edge[two]


def _low_bits(n: np.ndarray) -> np.ndarray:
    """Words with their ``n`` lowest bits set (0 <= n <= 64)."""
    shifted = np.left_shift(np.uint64(1), np.minimum(n, 63).astype(np.uint64))
    return np.where(n >= 64, ~np.uint64(0), shifted - np.uint64(1))


def _write_gathered(
    words: np.ndarray, matrix: _Coverage, cells: np.ndarray, row_codes: np.ndarray
) -> None:
    """Write the bitsets of ``cells`` by gathering each row's coverage."""
    n_rows = len(row_codes)
    n_bytes = (n_rows + 7) // 8
    as_bytes = words.view(np.uint8)
    block = max(1, _BLOCK_BYTES // max(n_rows, 1))
    for start in range(0, len(cells), block):
        part = cells[start : start + block]
        covered = matrix.dense(part)[:, row_codes]
        as_bytes[part, :n_bytes] = np.packbits(covered, axis=1, bitorder="little")


def _mixed_key(codes: list[np.ndarray], radices: list[int]) -> np.ndarray:
    key = np.zeros(len(codes[0]) if codes else 0, dtype=np.int64)
    for c, r in zip(codes, radices, strict=True):
        key = key * max(r, 1) + np.asarray(c, dtype=np.int64)
    return key
