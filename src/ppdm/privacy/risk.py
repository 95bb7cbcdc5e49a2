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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.privacy.base import json_value
from ppdm.privacy.measures import ClassPartition, equivalence_classes
from ppdm.values import SUPPRESSED, format_number, parse_cell

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
        texts, numbers = _value_texts(list(uniques))
        hit = _covers(value, texts, numbers, marker, (covers or {}).get(source))
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


def _covers(
    cell: object,
    texts: list[str | None],
    numbers: np.ndarray,
    marker: str,
    labels: Mapping[str, Sequence[str]] | None = None,
) -> np.ndarray:
    """Which population values (as ``texts`` and ``numbers``) ``cell`` covers."""
    parsed = parse_cell(_text(cell), marker)
    if parsed.kind == "value" and labels and parsed.text in labels:
        leaves = set(labels[parsed.text])
        return np.array([t in leaves for t in texts], dtype=bool)
    if parsed.kind == "suppressed":
        return np.ones(len(texts), dtype=bool)
    if parsed.kind == "missing":
        return np.array([t is None or t == "" for t in texts], dtype=bool)
    if parsed.kind == "set":
        # a missing value inside a set is written as an empty member
        members = set(parsed.members)
        return np.array(
            [("" if t is None else t) in members for t in texts], dtype=bool
        )
    same = np.array([t == parsed.text for t in texts], dtype=bool)
    if parsed.kind == "interval":
        x = numbers
        above = x >= parsed.low if parsed.low_closed else x > parsed.low
        below = x <= parsed.high if parsed.high_closed else x < parsed.high
        return (above & below & ~np.isnan(x)) | same
    return same


def _value_texts(values: list[object]) -> tuple[list[str | None], np.ndarray]:
    texts = [_text(v) for v in values]
    numbers = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce")
    return texts, numbers.to_numpy(dtype=float)


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
    # Per QI, a (distinct released cell x distinct population value) coverage
    # matrix; the loop runs over distinct cells, never over rows.
    cell_codes, value_codes, coverage = [], [], []
    functional = True
    for q in qis:
        c_codes, c_uniques = pd.factorize(keys[q], use_na_sentinel=False)
        v_codes, v_uniques = pd.factorize(combos[q], use_na_sentinel=False)
        texts, numbers = _value_texts(list(v_uniques))
        matrix = np.vstack(
            [
                _covers(cell, texts, numbers, marker, (covers or {}).get(q))
                for cell in c_uniques
            ]
        )
        functional &= bool((matrix.sum(axis=0) <= 1).all())
        cell_codes.append(c_codes)
        value_codes.append(v_codes)
        coverage.append(matrix)
    n_classes = len(keys)
    if functional:
        # Global recoding: each population combination falls in at most one
        # class, found by mapping every value to its single covering cell.
        class_key = _mixed_key(cell_codes, [m.shape[0] for m in coverage])
        lookup = pd.Index(class_key)
        combo_cells = []
        hit = np.ones(n_combos, dtype=bool)
        for matrix, v_codes in zip(coverage, value_codes, strict=True):
            has = matrix.any(axis=0)
            cell_of_value = np.where(has, matrix.argmax(axis=0), 0)
            combo_cells.append(cell_of_value[v_codes])
            hit &= has[v_codes]
        combo_key = _mixed_key(combo_cells, [m.shape[0] for m in coverage])
        target = lookup.get_indexer(combo_key)
        ok = hit & (target >= 0)
        return np.bincount(
            target[ok], weights=combo_counts[ok], minlength=n_classes
        ).astype(np.int64)
    return _bitset_counts(cell_codes, value_codes, coverage, combo_ids, n_classes)


def _bitset_counts(
    cell_codes: list[np.ndarray],
    value_codes: list[np.ndarray],
    coverage: list[np.ndarray],
    combo_ids: np.ndarray,
    n_classes: int,
) -> np.ndarray | None:
    # Local recoding (overlapping cells): per QI and released cell, the
    # population rows it covers as a bitset; a class covers the AND of its
    # cells' bitsets and F_j is that AND's popcount. Written by hand because
    # no library computes coverage counts of generalized records; bitsets keep
    # it to classes x rows/64 word operations per QI.
    n_rows = len(combo_ids)
    n_bytes = (n_rows + 7) // 8
    n_words = (n_bytes + 7) // 8
    n_cells = sum(m.shape[0] for m in coverage)
    if (
        n_classes * n_words * len(coverage) > MAX_COVERAGE_WORK
        or n_cells * n_words * 8 > _MAX_BITSET_BYTES
    ):
        return None
    bitsets = []
    cell_block = max(1, _BLOCK_BYTES // max(n_rows, 1))
    for matrix, v_codes in zip(coverage, value_codes, strict=True):
        row_codes = v_codes[combo_ids]
        words = np.zeros((matrix.shape[0], n_words * 8), dtype=np.uint8)
        for start in range(0, matrix.shape[0], cell_block):
            stop = min(start + cell_block, matrix.shape[0])
            covered = matrix[start:stop][:, row_codes]
            words[start:stop, :n_bytes] = np.packbits(
                covered, axis=1, bitorder="little"
            )
        bitsets.append(words.view(np.uint64))
    out = np.empty(n_classes, dtype=np.int64)
    block = max(1, _BLOCK_BYTES // (8 * n_words))
    for start in range(0, n_classes, block):
        stop = min(start + block, n_classes)
        acc = bitsets[0][cell_codes[0][start:stop]]
        for words, codes in zip(bitsets[1:], cell_codes[1:], strict=True):
            acc &= words[codes[start:stop]]
        out[start:stop] = np.bitwise_count(acc).sum(axis=1, dtype=np.int64)
    return out


def _mixed_key(codes: list[np.ndarray], radices: list[int]) -> np.ndarray:
    key = np.zeros(len(codes[0]) if codes else 0, dtype=np.int64)
    for c, r in zip(codes, radices, strict=True):
        key = key * max(r, 1) + np.asarray(c, dtype=np.int64)
    return key
