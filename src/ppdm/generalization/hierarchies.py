"""Generalization hierarchies (DGHs) loaded from data files, with integer code tables.

A hierarchy generalizes one attribute in levels ``0 .. height``: level 0 is the
raw value, level ``height`` the single root ``"*"``. Hierarchies are data, one
file per attribute in ``hierarchies/<dataset>/``:

- ``<attribute>.csv`` (ARX style): one row per raw value, one column per level,
  ``;``-separated, no header, the last column ``*``. Example row of
  ``education.csv``: ``Masters;Graduate;University;*``.
- ``<attribute>.json`` with ``{"type": "intervals", "min": 17, "max": 90,
  "widths": [5, 10, 20, 40, 80], "origin": 0}``: an integer attribute whose
  raw values are the integers ``min .. max``; level ``j`` (1-based) groups them
  into half-open buckets ``[origin + i * w, origin + (i + 1) * w)`` of width
  ``w = widths[j - 1]`` (labels written with :func:`ppdm.values.format_interval`,
  e.g. ``[15, 20)``), and one more level is the root ``*``. Each width must be a
  multiple of the previous one, so that every bucket lies in one parent.

Missing values (NA) are not listed in the files: every hierarchy has one extra,
implicit leaf for them, released as ``""`` (the value grammar's "missing") at
every level below the root and as ``*`` at the root. It is a label of its own,
so missing values never merge with a real value before the root.

Information loss per cell (Iyengar's general loss metric) is a property of the
label: ``(leaves under the label - 1) / (listed leaves - 1)``. For an interval
hierarchy the leaves are the consecutive integers of the domain, so this is the
covered width over the attribute's range, the numeric form of the metric. The
missing leaf has loss 0 below the root; the root has loss 1.

References
----------
.. [1] Iyengar, V.S.: Transforming Data to Satisfy Privacy Constraints. In:
   Proceedings of the 8th ACM SIGKDD International Conference on Knowledge
   Discovery and Data Mining (2002) 279-288.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ppdm.exceptions import DataValidationError
from ppdm.model import SUPPRESSED
from ppdm.values import format_interval, format_number

__all__ = ["MISSING_LABEL", "Hierarchy", "load_hierarchies", "load_hierarchy"]

#: Label of the implicit missing-value leaf below the root.
MISSING_LABEL = ""
_DELIMITER = ";"


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """A domain generalization hierarchy of one attribute, as integer code tables.

    Build one with :meth:`from_rows`, :meth:`from_intervals` or
    :func:`load_hierarchy`; the constructor takes the already-checked tables.

    Parameters
    ----------
    attribute : str
        Column the hierarchy generalizes.
    leaves : tuple of str
        Listed raw values (level-0 labels), in file order.
    labels : tuple of tuple of str
        ``labels[j]`` is the distinct labels at level ``j``; the missing leaf's
        label ``""`` is the last one at every level below the root.
    codes : numpy.ndarray of int64, shape (len(leaves) + 1, height + 1)
        ``codes[i, j]`` is the index in ``labels[j]`` of leaf ``i`` at level
        ``j``; the last row is the missing leaf.
    source : str
        File it came from (used in error messages).
    integer_domain : tuple of int or None
        ``(min, max)`` when the leaves are the integers ``min .. max`` (interval
        hierarchies); raw values are then encoded arithmetically.

    Examples
    --------
    >>> h = Hierarchy.from_rows(
    ...     "sex", [["Female", "*"], ["Male", "*"]], source="sex.csv")
    >>> h.height, h.labels[1]
    (1, ('*',))
    >>> h.generalize(pd.Series(["Male", None, "Female"]), 0).tolist()
    ['Male', '', 'Female']
    """

    attribute: str
    leaves: tuple[str, ...]
    labels: tuple[tuple[str, ...], ...]
    codes: np.ndarray
    source: str
    integer_domain: tuple[int, int] | None = None

    # ------------------------------------------------------------------ build
    @classmethod
    def from_rows(
        cls, attribute: str, rows: Sequence[Sequence[str]], *, source: str
    ) -> Hierarchy:
        """Build and validate a hierarchy from ARX-style rows (one per raw value).

        Raises
        ------
        DataValidationError
            Naming ``source`` and the 1-based row: an empty file, rows of
            different depth, a duplicated raw value, a label with two parents,
            or a last level that is not a single root ``*``.
        """
        if not rows:
            raise DataValidationError(f"{source}: hierarchy file has no rows")
        depth = len(rows[0])
        if depth < 2:
            raise DataValidationError(
                f"{source}, row 1: a hierarchy needs at least 2 levels "
                f"(raw value and '*'); got {depth}"
            )
        seen: dict[str, int] = {}
        for number, row in enumerate(rows, start=1):
            if len(row) != depth:
                raise DataValidationError(
                    f"{source}, row {number}: ragged depth, {len(row)} levels "
                    f"where row 1 has {depth}"
                )
            if any(cell == MISSING_LABEL for cell in row):
                raise DataValidationError(
                    f"{source}, row {number}: empty label; the empty label is "
                    "reserved for missing values"
                )
            if row[0] in seen:
                raise DataValidationError(
                    f"{source}, row {number}: raw value {row[0]!r} already "
                    f"listed in row {seen[row[0]]}"
                )
            seen[row[0]] = number
        roots = sorted({row[-1] for row in rows})
        if roots != [SUPPRESSED]:
            extra = [r for r in roots if r != SUPPRESSED]
            where = next(i for i, row in enumerate(rows, 1) if row[-1] != SUPPRESSED)
            raise DataValidationError(
                f"{source}, row {where}: the last level must be the single root "
                f"{SUPPRESSED!r}; found root(s) {extra}"
            )
        # Each label must have one parent, else generalization is ambiguous.
        for level in range(1, depth - 1):
            parent_of: dict[str, tuple[str, int]] = {}
            for number, row in enumerate(rows, start=1):
                label, parent = row[level], row[level + 1]
                known = parent_of.setdefault(label, (parent, number))
                if known[0] != parent:
                    raise DataValidationError(
                        f"{source}, row {number}: label {label!r} at level "
                        f"{level} generalizes to {parent!r} but to {known[0]!r} "
                        f"in row {known[1]}"
                    )
        table = np.array([list(row) for row in rows], dtype=object)
        labels: list[tuple[str, ...]] = []
        codes = np.empty((len(rows) + 1, depth), dtype=np.int64)
        for level in range(depth):
            level_codes, uniques = pd.factorize(table[:, level])
            names = tuple(str(u) for u in uniques)
            if level < depth - 1:
                names += (MISSING_LABEL,)
                codes[-1, level] = len(names) - 1
            else:
                codes[-1, level] = 0
            codes[:-1, level] = level_codes
            labels.append(names)
        return cls(attribute, tuple(table[:, 0]), tuple(labels), codes, source)

    @classmethod
    def from_intervals(
        cls,
        attribute: str,
        *,
        minimum: int,
        maximum: int,
        widths: Sequence[int],
        origin: int = 0,
        source: str,
    ) -> Hierarchy:
        """Interval hierarchy over the integers ``minimum .. maximum``.

        Raises
        ------
        DataValidationError
            Naming ``source``: bounds not integers or reversed, widths not
            positive, not increasing, or not each a multiple of the previous.
        """
        numbers = [minimum, maximum, origin, *widths]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in numbers):
            raise DataValidationError(
                f"{source}: min, max, origin and widths must be integers; got "
                f"min={minimum!r}, max={maximum!r}, origin={origin!r}, "
                f"widths={list(widths)!r}"
            )
        if minimum > maximum:
            raise DataValidationError(f"{source}: min {minimum} > max {maximum}")
        previous = 1
        for position, width in enumerate(widths):
            if width <= previous - (position == 0) or width % previous:
                raise DataValidationError(
                    f"{source}: widths[{position}]={width} must be greater than "
                    f"and a multiple of {previous}, so buckets nest"
                )
            previous = width
        values = np.arange(minimum, maximum + 1)
        rows = [[format_number(v) for v in values]]
        for width in widths:
            low = origin + np.floor_divide(values - origin, width) * width
            rows.append([format_interval(lo, lo + width) for lo in low.tolist()])
        rows.append([SUPPRESSED] * len(values))
        hierarchy = cls.from_rows(attribute, list(zip(*rows)), source=source)
        return cls(
            attribute,
            hierarchy.leaves,
            hierarchy.labels,
            hierarchy.codes,
            source,
            integer_domain=(minimum, maximum),
        )

    # ---------------------------------------------------------------- queries
    @property
    def height(self) -> int:
        """Number of generalization steps (the DGH length N_j)."""
        return self.codes.shape[1] - 1

    @property
    def missing_leaf(self) -> int:
        """Leaf code of missing values."""
        return len(self.leaves)

    def n_labels(self, level: int) -> int:
        """Number of distinct labels at ``level``."""
        return len(self.labels[level])

    def level_codes(self, level: int) -> np.ndarray:
        """Label code at ``level`` of every leaf (missing leaf last)."""
        return self.codes[:, level]

    def label_array(self, level: int) -> np.ndarray:
        """Labels at ``level`` as an object array, indexed by label code."""
        return np.array(self.labels[level], dtype=object)

    def parent_codes(self, level: int, to_level: int) -> np.ndarray:
        """Map from label code at ``level`` to label code at ``to_level`` >= level."""
        mapping = np.zeros(self.n_labels(level), dtype=np.int64)
        mapping[self.codes[:, level]] = self.codes[:, to_level]
        return mapping

    def label_loss(self, level: int) -> np.ndarray:
        """Iyengar's per-cell loss of every label at ``level`` (module docstring)."""
        listed = self.codes[:-1, level]
        leaves_under = np.bincount(listed, minlength=self.n_labels(level))
        loss = (leaves_under - 1).clip(min=0) / max(len(self.leaves) - 1, 1)
        if level == self.height:
            loss[:] = 1.0
        return loss

    def encode(self, column: pd.Series) -> np.ndarray:
        """Leaf code of every value of ``column`` (missing -> :attr:`missing_leaf`).

        Raises
        ------
        DataValidationError
            Naming the source file, the column and the first uncovered values.
        """
        if self.integer_domain is not None and pd.api.types.is_numeric_dtype(
            column.dtype
        ):
            return self._encode_integers(column)
        value_codes, uniques = pd.factorize(column, use_na_sentinel=True)
        keys = [_text(v) for v in uniques]
        position = {leaf: i for i, leaf in enumerate(self.leaves)}
        missing = [k for k in keys if k not in position]
        if missing:
            self._uncovered(column, missing)
        lookup = np.array([position[k] for k in keys] + [self.missing_leaf])
        return lookup[value_codes].astype(np.int64, copy=False)

    def _encode_integers(self, column: pd.Series) -> np.ndarray:
        low, high = self.integer_domain  # type: ignore[misc]
        values = column.to_numpy(dtype=float, na_value=np.nan)
        present = ~np.isnan(values)
        bad = present & (
            (values < low) | (values > high) | (values != np.round(values))
        )
        if bad.any():
            self._uncovered(column, [_text(v) for v in np.unique(values[bad])])
        codes = np.full(len(values), self.missing_leaf, dtype=np.int64)
        codes[present] = values[present].astype(np.int64) - low
        return codes

    def _uncovered(self, column: pd.Series, values: list[str]) -> None:
        shown = ", ".join(repr(v) for v in values[:5])
        more = f" and {len(values) - 5} more" if len(values) > 5 else ""
        raise DataValidationError(
            f"{self.source}: hierarchy of {self.attribute!r} does not cover "
            f"value(s) {shown}{more} of column {column.name!r}"
        )

    def label(self, value: object, level: int) -> str:
        """The label of one raw value at ``level`` (missing -> ``""`` or ``*``)."""
        column = pd.Series([value], name=self.attribute)
        return str(self.generalize(column, level).iloc[0])

    def check_covers(self, table: pd.DataFrame) -> None:
        """Raise :class:`DataValidationError` unless the column's values are leaves."""
        if self.attribute not in table.columns:
            raise DataValidationError(
                f"{self.source}: attribute {self.attribute!r} is not a column of "
                "the table"
            )
        self.encode(table[self.attribute])

    def generalize(self, column: pd.Series, level: int) -> pd.Series:
        """The column's values at ``level``, as released text (pandas strings)."""
        labels = self.label_array(level)[self.level_codes(level)[self.encode(column)]]
        return pd.Series(labels, index=column.index, name=column.name, dtype="string")


def _text(value: object) -> str:
    """Raw value as the text the hierarchy files list (17, not 17.0)."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, bool
    ):
        if isinstance(value, (float, np.floating)) and math.isnan(value):
            return "nan"
        return format_number(value)
    return str(value)


def load_hierarchy(path: Path) -> Hierarchy:
    """Load one hierarchy file (``.csv`` or ``.json``); the attribute is its stem."""
    path = Path(path)
    source = str(path)
    if path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as handle:
            rows = [row for row in csv.reader(handle, delimiter=_DELIMITER) if row]
        return Hierarchy.from_rows(path.stem, rows, source=source)
    if path.suffix == ".json":
        try:
            rule = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise DataValidationError(f"{source}: not valid JSON ({error})") from None
        if not isinstance(rule, dict) or rule.get("type") != "intervals":
            raise DataValidationError(
                f'{source}: a JSON hierarchy must be an object with "type": "intervals"'
            )
        unknown = set(rule) - {"type", "min", "max", "widths", "origin"}
        absent = {"min", "max", "widths"} - set(rule)
        if unknown or absent:
            raise DataValidationError(
                f"{source}: unknown key(s) {sorted(unknown)} / missing key(s) "
                f"{sorted(absent)}; expected type, min, max, widths[, origin]"
            )
        if not isinstance(rule["widths"], list):
            raise DataValidationError(f"{source}: widths must be a list of integers")
        return Hierarchy.from_intervals(
            path.stem,
            minimum=rule["min"],
            maximum=rule["max"],
            widths=rule["widths"],
            origin=rule.get("origin", 0),
            source=source,
        )
    raise DataValidationError(f"{source}: hierarchy files are .csv or .json")


def load_hierarchies(directory: Path) -> dict[str, Hierarchy]:
    """Load every ``*.csv`` / ``*.json`` hierarchy in ``directory``, by attribute.

    Raises
    ------
    DataValidationError
        A file is malformed (the message names the file and row), or two files
        define the same attribute.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise DataValidationError(f"{directory}: no such hierarchy directory")
    hierarchies: dict[str, Hierarchy] = {}
    for path in sorted(directory.iterdir()):
        if path.suffix not in (".csv", ".json"):
            continue
        if path.stem in hierarchies:
            raise DataValidationError(
                f"{path}: attribute {path.stem!r} already defined by "
                f"{hierarchies[path.stem].source}"
            )
        hierarchies[path.stem] = load_hierarchy(path)
    return hierarchies
