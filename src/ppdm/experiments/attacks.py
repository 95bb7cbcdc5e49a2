"""Linkage and homogeneity attacks on a release, measured.

Two attackers are simulated against a released table, each holding the
*original* quasi-identifier values of a sample of people known to be in the
release (the prosecutor model of El Emam [1]_):

- **Linkage (re-identification)**: the candidates of a target are the released
  records whose quasi-identifier cells are consistent with the target's
  original values (each cell *covers* the value, see below). The attacker
  picks one candidate uniformly, so the expected success is
  ``1 / |candidates|`` when the target's own record is a candidate and 0
  otherwise. The re-identification rate is its mean over the targets. In a
  k-anonymous release whose cells cover their rows' original values, every
  target's own class (at least k records) is among its candidates, so both
  the mean and the maximum are at most ``1/k``.
- **Homogeneity** (Machanavajjhala et al. [2]_): the attacker infers the
  sensitive value shared by all candidates. A target is exposed when the
  candidates hold one sensitive value only and it is the target's. Two weaker
  inferences are reported as well: the *confidence* (the largest share of one
  sensitive value among the candidates, what the attacker would bet with) and
  the *majority guess* (the expected success of guessing the most frequent
  value among the candidates, ties broken uniformly). Distinct l-diversity
  bounds the homogeneity attack (no candidate set that holds the target's own
  class has fewer than l values), not the confidence.

A released cell covers an original value when (:mod:`ppdm.values` grammar):
``*`` (suppressed) covers everything; an empty cell covers a missing value; an
interval or range covers the numbers in it; a value set covers what any of its
members covers (members may be values, intervals or hierarchy labels); a
hierarchy label covers the leaves under it (``covers`` from
:func:`ppdm.utility.loss.covers_from_hierarchies`); any other text covers the
equal value (``37`` and ``37.0`` are equal). A quasi-identifier the release
does not contain covers everything.

The count of candidates is vectorised: released rows are grouped into
classes (equal quasi-identifier cells), targets into combinations of
original values, and per quasi-identifier one (distinct cell x distinct
value) coverage matrix is built by one vectorised test per distinct cell. A
block of classes x combinations is then the AND of rows gathered from those
matrices, and the candidates (and their sensitive values) of every
combination are one matrix product per block. No Python loop runs over rows
or over (row, target) pairs.

:func:`release_for_attack` makes a release in this process exactly as the
release pipeline does (:func:`ppdm.pipeline.plan_release`: discretize the
numeric quasi-identifiers when the algorithm takes binned input, give the
hierarchies to algorithms that generalize along them, ``rng =
default_rng(seed)``), with the input position of every released row kept for
the ground truth. :func:`run_attacks` sweeps datasets, algorithms and k;
``benchmarks/bench_attacks.py`` is its command line.

References
----------
.. [1] K. El Emam, F. K. Dankar, "Protecting privacy using k-anonymity",
   Journal of the American Medical Informatics Association 15(5), 627-637,
   2008.
.. [2] A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam,
   "l-Diversity: Privacy Beyond k-Anonymity", ACM Transactions on Knowledge
   Discovery from Data 1(1), article 3, 2007.

Examples
--------
>>> import numpy as np
>>> import pandas as pd
>>> released = pd.DataFrame({
...     "age": ["[20, 29]"] * 3 + ["[30, 39]"] * 3,
...     "zip": ["130**"] * 3 + ["*"] * 3,
...     "disease": ["flu", "flu", "hiv", "hiv", "hiv", "hiv"]})
>>> known = pd.DataFrame({"age": [25, 31], "zip": ["130**", "14850"]})
>>> attack = linkage_attack(released, known, [0, 3], ["age", "zip"],
...                         sensitive_attribute="disease")
>>> attack.candidates.tolist(), attack.success.tolist()
([3, 3], [0.3333333333333333, 0.3333333333333333])
>>> attack.homogeneous.tolist(), attack.confidence.tolist()
([False, True], [0.6666666666666666, 1.0])
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdm.exceptions import AnonymizationError, InvalidParameterError
from ppdm.privacy.measures import equivalence_classes
from ppdm.values import SUPPRESSED, Cell, format_number, parse_cell

if TYPE_CHECKING:
    from ppdm.config import ReleaseConfig

__all__ = [
    "ATTACK_COLUMNS",
    "AttackRelease",
    "LinkageAttack",
    "attack_release",
    "coverage_matrix",
    "linkage_attack",
    "release_for_attack",
    "run_attacks",
    "shipped_params",
]

logger = logging.getLogger(__name__)

#: Largest block of (classes x target combinations) coverage tested at once.
_BLOCK_CELLS = 1 << 22

#: Columns of :func:`run_attacks`' table, in order.
ATTACK_COLUMNS = (
    "dataset",
    "algorithm",
    "params",
    "k",
    "l",
    "rows_in",
    "rows_released",
    "targets",
    "rate_mean",
    "rate_max",
    "inv_k",
    "not_covered",
    "homogeneity",
    "confidence_mean",
    "confidence_max",
    "majority_guess",
    "inv_l",
    "rate_ok",
    "max_ok",
    "homogeneity_ok",
    "passed",
    "seconds_anonymize",
    "seconds_attack",
    "error",
)


# -- coverage of original values by released cells ---------------------------
def _as_text(value: object) -> str | None:
    """A cell or an original value as text; None when missing."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    if isinstance(value, bool | np.bool_):
        return str(value)
    if isinstance(value, int | float | np.integer | np.floating):
        return format_number(float(value))
    return str(value)


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


class _Values:
    """Distinct original values of one attribute, as texts and numbers."""

    def __init__(self, values: Sequence[object]) -> None:
        texts = [_as_text(v) for v in values]
        self.texts = pd.Series(texts, dtype=object)
        self.missing = np.array([t is None for t in texts], dtype=bool)
        self.numbers = pd.to_numeric(self.texts, errors="coerce").to_numpy(
            dtype=float, na_value=np.nan
        )

    def equal(self, text: str) -> np.ndarray:
        same = (self.texts == text).to_numpy(dtype=bool, copy=True)
        number = _number(text)
        if not math.isnan(number):
            same |= self.numbers == number
        return same

    def within(self, cell: Cell) -> np.ndarray:
        x = self.numbers
        above = x >= cell.low if cell.low_closed else x > cell.low
        below = x <= cell.high if cell.high_closed else x < cell.high
        return above & below & ~np.isnan(x)

    def among(self, leaves: Sequence[str]) -> np.ndarray:
        return self.texts.isin([str(v) for v in leaves]).to_numpy(dtype=bool, copy=True)


def coverage_matrix(
    cells: Sequence[object],
    values: Sequence[object],
    *,
    labels: Mapping[str, Sequence[str]] | None = None,
    suppression_marker: str = SUPPRESSED,
) -> np.ndarray:
    """Which original ``values`` each released cell covers.

    Parameters
    ----------
    cells : sequence
        Distinct released cells of one attribute (:mod:`ppdm.values` grammar;
        numbers are read as their text).
    values : sequence
        Distinct original values of the attribute (None or NaN: missing).
    labels : mapping, optional
        ``{hierarchy label: raw values it covers}`` of the attribute (one
        entry of :func:`ppdm.utility.loss.covers_from_hierarchies`).
    suppression_marker : str, default="*"

    Returns
    -------
    numpy.ndarray of bool, shape (len(cells), len(values))

    Notes
    -----
    One vectorised test over ``values`` per distinct cell (and per distinct
    value-set member); see the module docstring for the rules.

    Examples
    --------
    >>> coverage_matrix(["[20, 30)", "{a|b}", "*", ""], [25, "a", None]).astype(int)
    array([[1, 0, 0],
           [0, 1, 0],
           [1, 1, 1],
           [0, 0, 1]])
    >>> coverage_matrix(["Married"], ["Married-civ-spouse", "Divorced"],
    ...                 labels={"Married": ["Married-civ-spouse"]}).tolist()
    [[True, False]]
    """
    domain = _Values(values)
    labels = labels or {}
    memo: dict[str, np.ndarray] = {}

    def covered(text: str | None, *, in_set: bool = False) -> np.ndarray:
        key = ("\x00" if in_set else "") + ("" if text is None else text)
        if key in memo:
            return memo[key]
        cell = parse_cell(text, suppression_marker)
        if cell.kind == "suppressed":
            out = np.ones(len(domain.missing), dtype=bool)
        elif cell.kind == "missing":
            out = domain.missing.copy()
        elif cell.kind == "set" and not in_set:
            out = np.zeros(len(domain.missing), dtype=bool)
            for member in cell.members:
                out |= covered(member, in_set=True)
        else:
            out = domain.equal(cell.text)
            if cell.kind == "interval":
                out |= domain.within(cell)
            if cell.text in labels:
                out |= domain.among(labels[cell.text])
        memo[key] = out
        return out

    rows = [covered(_as_text(cell)) for cell in cells]
    if not rows:
        return np.zeros((0, len(domain.missing)), dtype=bool)
    return np.vstack(rows)


# -- the attack -----------------------------------------------------------------
@dataclass(frozen=True)
class LinkageAttack:
    """Per-target outcome of the linkage and homogeneity attacks.

    Attributes
    ----------
    candidates : numpy.ndarray of int64, shape (n_targets,)
        Released records whose cells cover the target's original values.
    true_covered : numpy.ndarray of bool, shape (n_targets,)
        Whether the target's own released record is among its candidates.
    success : numpy.ndarray of float, shape (n_targets,)
        Expected success of a uniform pick among the candidates:
        ``1 / candidates`` when ``true_covered``, else 0.
    sensitive_values : tuple
        The sensitive attribute's distinct released values (empty without a
        sensitive attribute).
    sensitive_counts : numpy.ndarray of int64, shape (n_targets, n_values)
        Candidates holding each sensitive value.
    true_sensitive : numpy.ndarray of int64, shape (n_targets,)
        Index into ``sensitive_values`` of each target's own value (-1
        without a sensitive attribute).
    """

    candidates: np.ndarray
    true_covered: np.ndarray
    success: np.ndarray
    sensitive_values: tuple[Any, ...]
    sensitive_counts: np.ndarray
    true_sensitive: np.ndarray

    @property
    def n_targets(self) -> int:
        return len(self.candidates)

    @property
    def rate(self) -> float:
        """Re-identification rate: the mean expected success over the targets."""
        return float(self.success.mean()) if self.n_targets else math.nan

    @property
    def max_success(self) -> float:
        """The largest expected success of one target."""
        return float(self.success.max()) if self.n_targets else math.nan

    @property
    def has_sensitive(self) -> bool:
        return len(self.sensitive_values) > 0

    @property
    def homogeneous(self) -> np.ndarray:
        """Targets whose candidates hold one sensitive value, the target's own."""
        counts = self.sensitive_counts
        if not self.has_sensitive:
            return np.zeros(self.n_targets, dtype=bool)
        single = (counts > 0).sum(axis=1) == 1
        own = counts[np.arange(self.n_targets), self.true_sensitive] > 0
        return single & own

    @property
    def confidence(self) -> np.ndarray:
        """Largest share of one sensitive value among each target's candidates."""
        if not self.has_sensitive:
            return np.zeros(self.n_targets)
        top = self.sensitive_counts.max(axis=1, initial=0)
        return np.divide(
            top,
            self.candidates,
            out=np.zeros(self.n_targets),
            where=self.candidates > 0,
        )

    @property
    def majority_success(self) -> np.ndarray:
        """Expected success of guessing the candidates' most frequent value."""
        if not self.has_sensitive:
            return np.zeros(self.n_targets)
        counts = self.sensitive_counts
        top = counts.max(axis=1, initial=0)
        tied = (counts == top[:, None]) & (top[:, None] > 0)
        own = tied[np.arange(self.n_targets), self.true_sensitive]
        n_tied = tied.sum(axis=1)
        return np.divide(
            own.astype(float), n_tied, out=np.zeros(self.n_targets), where=n_tied > 0
        )

    def summary(self) -> dict[str, float | int]:
        """Means and maxima over the targets (JSON-safe)."""
        has = self.has_sensitive and self.n_targets > 0
        return {
            "targets": self.n_targets,
            "rate_mean": self.rate,
            "rate_max": self.max_success,
            "not_covered": int((~self.true_covered).sum()),
            "homogeneity": float(self.homogeneous.mean()) if has else math.nan,
            "confidence_mean": float(self.confidence.mean()) if has else math.nan,
            "confidence_max": float(self.confidence.max()) if has else math.nan,
            "majority_guess": float(self.majority_success.mean()) if has else math.nan,
        }


def _first_rows(ids: np.ndarray, n: int) -> np.ndarray:
    first = np.full(n, len(ids), dtype=np.int64)
    np.minimum.at(first, ids, np.arange(len(ids), dtype=np.int64))
    return first


def linkage_attack(
    released: pd.DataFrame,
    known: pd.DataFrame,
    true_rows: Sequence[int] | np.ndarray,
    quasi_identifiers: Sequence[str],
    *,
    sensitive_attribute: str | None = None,
    covers: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
    suppression_marker: str = SUPPRESSED,
) -> LinkageAttack:
    """Link targets to released records by their original quasi-identifiers.

    Parameters
    ----------
    released : pandas.DataFrame
        The released table.
    known : pandas.DataFrame
        One row per target: the original values of ``quasi_identifiers``
        (what the attacker knows).
    true_rows : sequence of int
        Position in ``released`` of each target's own record (the ground
        truth; the attacker does not know it).
    quasi_identifiers : sequence of str
        Columns of ``known``; those absent from ``released`` cover everything.
    sensitive_attribute : str, optional
        Released column the homogeneity attack infers (released unaltered, so
        a target's own value is read at its record).
    covers : mapping, optional
        ``{attribute: {hierarchy label: raw values}}``
        (:func:`ppdm.utility.loss.covers_from_hierarchies`).
    suppression_marker : str, default="*"

    Returns
    -------
    LinkageAttack

    Raises
    ------
    InvalidParameterError
        A quasi-identifier missing from ``known``, a sensitive attribute
        missing from ``released``, or ``true_rows`` of the wrong length or
        out of range.
    """
    qis = list(quasi_identifiers)
    absent = [q for q in qis if q not in known.columns]
    if absent:
        raise InvalidParameterError(
            f"known: quasi-identifiers {absent} are not columns of the attacker's "
            f"table (columns: {list(known.columns)})"
        )
    rows = np.asarray(true_rows, dtype=np.int64).reshape(-1)
    if len(rows) != len(known):
        raise InvalidParameterError(
            f"true_rows must give one released row per target: got {len(rows)} "
            f"for {len(known)} targets"
        )
    if len(rows) and (rows.min() < 0 or rows.max() >= len(released)):
        raise InvalidParameterError(
            f"true_rows must be in [0, {len(released) - 1}]; got values from "
            f"{rows.min()} to {rows.max()}"
        )
    if sensitive_attribute is not None and sensitive_attribute not in released:
        raise InvalidParameterError(
            f"sensitive_attribute {sensitive_attribute!r} is not a released column"
        )
    present = [q for q in qis if q in released.columns]
    n_released = len(released)
    if present and n_released:
        class_ids, n_classes = equivalence_classes(released, present)
    else:
        class_ids, n_classes = np.zeros(n_released, dtype=np.int64), 1
    sizes = np.bincount(class_ids, minlength=n_classes)
    keys = released.iloc[_first_rows(class_ids, n_classes)] if n_released else None
    if present and len(known):
        combo_ids, n_combos = equivalence_classes(known, present)
    else:
        combo_ids, n_combos = np.zeros(len(known), dtype=np.int64), 1
    combos = known.iloc[_first_rows(combo_ids, n_combos)] if len(known) else None

    # Per QI: class -> distinct cell, combination -> distinct value, and the
    # (cell x value) coverage matrix.
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    if keys is not None and combos is not None:
        for q in present:
            cell_codes, cells = pd.factorize(keys[q], use_na_sentinel=False)
            value_codes, values = pd.factorize(combos[q], use_na_sentinel=False)
            matrix = coverage_matrix(
                list(cells),
                list(values),
                labels=(covers or {}).get(q),
                suppression_marker=suppression_marker,
            )
            parts.append((matrix, cell_codes, value_codes))

    if sensitive_attribute is not None:
        s_codes, s_values = pd.factorize(
            released[sensitive_attribute], use_na_sentinel=False
        )
        sensitive_values = tuple(s_values)
    else:
        s_codes, sensitive_values = np.zeros(n_released, dtype=np.int64), ()
    n_s = len(sensitive_values)
    # Per class: its size, then its rows per sensitive value.
    weights = np.zeros((n_classes, 1 + n_s), dtype=np.float64)
    weights[:, 0] = sizes
    if n_s:
        np.add.at(weights, (class_ids, 1 + s_codes), 1.0)
    totals = np.zeros((n_combos, 1 + n_s), dtype=np.float64)
    if combos is not None and n_released:
        block = max(1, _BLOCK_CELLS // max(n_combos, 1))
        for start in range(0, n_classes, block):
            stop = min(start + block, n_classes)
            cov = np.ones((stop - start, n_combos), dtype=bool)
            for matrix, cell_codes, value_codes in parts:
                cov &= matrix[cell_codes[start:stop]][:, value_codes]
            totals += cov.T.astype(np.float64) @ weights[start:stop]
    counts = np.rint(totals).astype(np.int64)

    per_target = counts[combo_ids]
    candidates = per_target[:, 0]
    true_class = class_ids[rows]
    target_combo = combo_ids
    true_covered = np.ones(len(rows), dtype=bool)
    for matrix, cell_codes, value_codes in parts:
        true_covered &= matrix[cell_codes[true_class], value_codes[target_combo]]
    success = np.divide(
        1.0,
        candidates,
        out=np.zeros(len(rows)),
        where=true_covered & (candidates > 0),
    )
    return LinkageAttack(
        candidates=candidates,
        true_covered=true_covered,
        success=success,
        sensitive_values=sensitive_values,
        sensitive_counts=per_target[:, 1:],
        true_sensitive=(
            np.asarray(s_codes, dtype=np.int64)[rows]
            if n_s
            else np.full(len(rows), -1, dtype=np.int64)
        ),
    )


# -- releases made as the pipeline makes them ---------------------------------
@dataclass(frozen=True)
class AttackRelease:
    """A release made in this process, with its ground truth.

    Attributes
    ----------
    config : ReleaseConfig
        The configuration the release was made with.
    original : pandas.DataFrame
        The input table, before discretization (the attacker's knowledge is
        taken from it).
    released : pandas.DataFrame
        The released table, in the algorithm's row order.
    rows : numpy.ndarray of int64
        Input position (row of ``original``) of every released row.
    covers : dict or None
        ``{attribute: {hierarchy label: raw values}}`` of the hierarchies the
        algorithm generalized along; None for algorithms without hierarchies.
    seconds : float
        Wall time of discretization plus anonymization.
    """

    config: ReleaseConfig
    original: pd.DataFrame
    released: pd.DataFrame
    rows: np.ndarray
    covers: dict[str, dict[str, tuple[str, ...]]] | None
    seconds: float


def _row_column(table: pd.DataFrame) -> str:
    name = "__ppdm_attack_row__"
    while name in table.columns:
        name += "_"
    return name


def release_for_attack(
    config: ReleaseConfig, table: pd.DataFrame | None = None
) -> AttackRelease:
    """Make ``config``'s release in this process, as the release pipeline does.

    The steps are the pipeline's (:func:`ppdm.pipeline.plan_release`): the
    table keeps the columns a release may carry, by role, as the validate
    step keeps them (identifying columns, which no algorithm reads, are left
    out rather than pseudonymized); the numeric quasi-identifiers are
    discretized with the configured method when the algorithm takes binned
    input (method ``"none"`` otherwise); the algorithm gets the shipped or
    configured hierarchies when it generalizes along them; and ``rng =
    numpy.random.default_rng(config.seed)``. Validation itself is not run
    (the embedded tables pass it whole), nor the publication's row shuffle.
    To keep the ground truth, the input gets one extra column holding each
    row's position, which no algorithm reads (it is neither a
    quasi-identifier, nor sensitive, nor the target) and every one carries
    through; it is removed from the released table.

    Parameters
    ----------
    config : ReleaseConfig
    table : pandas.DataFrame, optional
        The input; default: the configured source, read as the ingest step
        reads it.

    Returns
    -------
    AttackRelease

    Raises
    ------
    InvalidParameterError
        The algorithm releases several tables (projections), whose linkage is
        not this attack.
    AnonymizationError
        Whatever the algorithm raises (e.g. an infeasible constraint).
    """
    from ppdm.model import AttributeKind, attribute_kind
    from ppdm.pipeline import plan_release
    from ppdm.prepare import ingest
    from ppdm.prepare.discretize import discretize
    from ppdm.prepare.roles import release_bound
    from ppdm.utility.loss import covers_from_hierarchies

    if table is None:
        source = config.source
        table = ingest.load_source(
            source.kind, source.location, **source.reader_options()
        )
    plan = plan_release(config)
    started = time.perf_counter()
    # What the validate step keeps: the columns a release may carry (keyed
    # pseudonyms of identifiers are left out; no algorithm reads them).
    kept = [c for c in config.released_columns if c not in config.pseudonymized]
    bound = release_bound(table, kept)
    settings = plan.discretize
    binned = bound
    if settings.method != "none":
        columns = (
            list(settings.columns)
            if settings.columns is not None
            else [
                c
                for c in settings.quasi_identifiers
                if attribute_kind(bound[c]) is AttributeKind.NUMERIC
            ]
        )
        if columns:
            extra = {"n_bins": settings.n_bins} if settings.n_bins is not None else {}
            binned = discretize(
                bound, columns, settings.target, method=settings.method, **extra
            ).table
    row_column = _row_column(binned)
    binned = binned.assign(**{row_column: np.arange(len(binned), dtype=np.int64)})
    anonymize = plan.anonymize
    hierarchies = (
        anonymize.hierarchies.load() if anonymize.hierarchies is not None else None
    )
    release = anonymize.build_algorithm().anonymize(
        binned, anonymize.spec(hierarchies), np.random.default_rng(anonymize.seed)
    )
    seconds = time.perf_counter() - started
    if len(release.tables) != 1:
        raise InvalidParameterError(
            f"algorithm {config.algorithm!r} releases {len(release.tables)} tables "
            f"({', '.join(sorted(release.tables))}); the linkage attack reads a "
            "one-table release"
        )
    (released,) = release.tables.values()
    if row_column in released.columns:
        rows = released[row_column].to_numpy(dtype=np.int64)
        released = released.drop(columns=[row_column])
    elif len(released) == len(table):
        rows = np.arange(len(table), dtype=np.int64)
    else:
        raise InvalidParameterError(
            f"algorithm {config.algorithm!r} dropped the row-position column and "
            f"released {len(released)} of {len(table)} rows; the released rows "
            "cannot be matched to the input"
        )
    return AttackRelease(
        config=config,
        original=table,
        released=released.reset_index(drop=True),
        rows=rows,
        covers=covers_from_hierarchies(hierarchies) if hierarchies else None,
        seconds=seconds,
    )


def attack_release(
    release: AttackRelease, *, sample: int | None = 1000, seed: int = 0
) -> LinkageAttack:
    """Attack ``release`` with the original values of a random sample of its people.

    Parameters
    ----------
    release : AttackRelease
    sample : int or None, default=1000
        Targets drawn without replacement among the released people (all of
        them when fewer, or when None).
    seed : int, default=0
        Seed of the draw (``numpy.random.default_rng(seed)``).

    Returns
    -------
    LinkageAttack
    """
    if sample is not None and (isinstance(sample, bool) or sample < 1):
        raise InvalidParameterError(
            f"sample must be an integer >= 1 or None (everyone); got {sample!r}"
        )
    config = release.config
    n = len(release.rows)
    if sample is None or sample >= n:
        targets = np.arange(n, dtype=np.int64)
    else:
        rng = np.random.default_rng(seed)
        targets = np.sort(rng.choice(n, size=sample, replace=False))
    qis = list(config.quasi_identifiers)
    known = release.original.iloc[release.rows[targets]][qis].reset_index(drop=True)
    # The protected attribute; without l-diversity, the declared one (a control).
    sensitive = list(config.requirement.sensitive_attributes) or [
        a for a in (config.sensitive_attribute,) if a is not None
    ]
    return linkage_attack(
        release.released,
        known,
        targets,
        qis,
        sensitive_attribute=sensitive[0] if sensitive else None,
        covers=release.covers,
        suppression_marker=config.requirement.suppression_marker,
    )


# -- the sweep ------------------------------------------------------------------
def shipped_params(dataset: str, algorithm: str) -> dict[str, Any]:
    """Parameters of ``algorithm`` in the shipped configuration releasing ``dataset``.

    The configurations under ``configs/`` are read in name order; the first
    whose ``dataset`` and ``algorithm`` match gives its ``params``. Without
    one, the algorithm's defaults (``{}``).
    """
    from ppdm import resources
    from ppdm.config import load_config

    for name in sorted(resources.config_names()):
        config = load_config(resources.config_file(name))
        if config.dataset == dataset and config.algorithm == algorithm:
            return dict(config.params)
    return {}


def run_attacks(
    datasets: Sequence[str],
    algorithms: Sequence[str],
    ks: Sequence[int],
    *,
    sample: int | None = 1000,
    seed: int = 0,
    l: int | None = None,  # noqa: E741 - the literature's name
) -> pd.DataFrame:
    """Linkage and homogeneity attacks on every (dataset, algorithm, k) release.

    Each release is the dataset's shipped default configuration
    (:func:`ppdm.config.default_config`: quasi-identifiers, sensitive
    attribute, target, l, suppression limit, discretization, seed) with
    ``algorithm``, its parameters from a shipped configuration of that
    algorithm and dataset (:func:`shipped_params`) and ``k``.

    Parameters
    ----------
    datasets : sequence of str
        Datasets with a shipped default configuration.
    algorithms : sequence of str
        Registry names (:data:`ppdm.algorithms.ALGORITHMS`).
    ks : sequence of int
    sample : int or None, default=1000
        Targets per release (:func:`attack_release`).
    seed : int, default=0
        Seed of the targets' draw.
    l : int, optional
        Distinct l instead of the configuration's (``1``: k-anonymity alone,
        a control showing what the homogeneity attack finds without
        l-diversity).

    Returns
    -------
    pandas.DataFrame
        One row per release with :data:`ATTACK_COLUMNS`. ``inv_l`` and the
        homogeneity check are NaN / True where no l-diversity was required
        (l = 1). ``passed`` is ``rate_ok and max_ok and homogeneity_ok``; a
        release the algorithm could not make has ``error`` set and NaN
        figures.
    """
    from ppdm.config import default_config

    rows = []
    for dataset in datasets:
        base = default_config(dataset)
        for algorithm in algorithms:
            params = shipped_params(dataset, algorithm)
            for k in ks:
                config = base.with_overrides(
                    algorithm=algorithm, params=params, k=k, l=l
                )
                rows.append(_attack_row(config, dataset, params, sample, seed))
    return pd.DataFrame(rows, columns=list(ATTACK_COLUMNS))


def _attack_row(
    config: ReleaseConfig,
    dataset: str,
    params: Mapping[str, Any],
    sample: int | None,
    seed: int,
) -> dict[str, Any]:
    requirement = config.requirement
    k, l = int(requirement.k), int(requirement.minimal_distinct_values)
    row: dict[str, Any] = {
        "dataset": dataset,
        "algorithm": config.algorithm,
        "params": dict(params),
        "k": k,
        "l": l,
        "inv_k": 1.0 / k,
        "inv_l": 1.0 / l if l > 1 else math.nan,
        "error": "",
    }
    logger.info("attacking %s / %s at k=%d", dataset, config.algorithm, k)
    try:
        release = release_for_attack(config)
    except AnonymizationError as err:
        row.update(error=f"{type(err).__name__}: {err}", passed=False)
        return row
    started = time.perf_counter()
    attack = attack_release(release, sample=sample, seed=seed)
    row.update(attack.summary())
    tolerance = 1e-12
    rate_ok = row["rate_mean"] <= 1.0 / k + tolerance
    max_ok = row["rate_max"] <= 1.0 / k + tolerance
    homogeneity_ok = l <= 1 or row["homogeneity"] <= 1.0 / l + tolerance
    row.update(
        rows_in=len(release.original),
        rows_released=len(release.released),
        rate_ok=bool(rate_ok),
        max_ok=bool(max_ok),
        homogeneity_ok=bool(homogeneity_ok),
        passed=bool(rate_ok and max_ok and homogeneity_ok),
        seconds_anonymize=release.seconds,
        seconds_attack=time.perf_counter() - started,
    )
    return row
