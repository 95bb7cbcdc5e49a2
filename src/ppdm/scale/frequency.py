"""The frequency table: distinct combinations of the columns an algorithm reads, with counts.

An out-of-core release never brings the rows into memory. The algorithms
that only depend on the multiset of (quasi-identifiers, sensitive
attributes, target) tuples run on this table instead: one row per distinct
combination and its number of rows. Each partition of a large table is
reduced to its own frequency table; :meth:`FrequencyTable.combine` sums them,
which gives exactly the frequency table of the whole table.

Rows are in a canonical order (sorted by the key columns, missing values
last), so the result does not depend on how the table was partitioned or
ordered.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError

__all__ = ["FrequencyTable", "COUNT"]

#: Name of the count column of :attr:`FrequencyTable.frame`.
COUNT = "__rows__"


@dataclass(frozen=True)
class FrequencyTable:
    """Distinct combinations of ``columns`` and how many rows hold each.

    Attributes
    ----------
    frame : pandas.DataFrame
        The key ``columns`` (their dtypes as in the table, categoricals with
        their categories) followed by the int64 column :data:`COUNT`; one row
        per distinct combination, in canonical order, index ``0..n-1``.
    columns : tuple of str
        The key columns.
    """

    frame: pd.DataFrame
    columns: tuple[str, ...]

    @classmethod
    def of(cls, table: pd.DataFrame, columns: Sequence[str]) -> FrequencyTable:
        """The frequency table of ``table`` over ``columns`` (missing is a value)."""
        columns = tuple(dict.fromkeys(columns))
        missing = [c for c in columns if c not in table.columns]
        if missing:
            raise InvalidParameterError(
                f"frequency table over {missing}: not columns of the table "
                f"(columns: {list(table.columns)})"
            )
        if COUNT in columns:
            raise InvalidParameterError(f"{COUNT!r} is reserved for the row counts")
        counts = (
            table.groupby(list(columns), dropna=False, observed=True, sort=False)
            .size()
            .rename(COUNT)
            .reset_index()
        )
        return cls._canonical(counts, columns, table)

    @classmethod
    def combine(cls, parts: Iterable[FrequencyTable]) -> FrequencyTable:
        """The frequency table of the concatenated tables the ``parts`` describe."""
        parts = list(parts)
        if not parts:
            raise InvalidParameterError("no frequency tables to combine")
        columns = parts[0].columns
        for part in parts[1:]:
            if part.columns != columns:
                raise InvalidParameterError(
                    f"frequency tables over different columns: {list(columns)} "
                    f"and {list(part.columns)}"
                )
        stacked = pd.concat([p.frame for p in parts], ignore_index=True)
        counts = (
            stacked.groupby(list(columns), dropna=False, observed=True, sort=False)[
                COUNT
            ]
            .sum()
            .reset_index()
        )
        return cls._canonical(counts, columns, parts[0].frame)

    @classmethod
    def _canonical(
        cls, counts: pd.DataFrame, columns: tuple[str, ...], like: pd.DataFrame
    ) -> FrequencyTable:
        # groupby may widen integer keys holding NA to float, or drop unused
        # categories; give every key column back the table's own dtype.
        for c in columns:
            if counts[c].dtype != like[c].dtype:
                counts[c] = counts[c].astype(like[c].dtype)
        ordered = counts.sort_values(
            list(columns), na_position="last", kind="mergesort", ignore_index=True
        )
        ordered[COUNT] = ordered[COUNT].to_numpy(dtype=np.int64)
        return cls(frame=ordered[[*columns, COUNT]], columns=columns)

    @property
    def counts(self) -> np.ndarray:
        """Rows per combination (int64)."""
        return self.frame[COUNT].to_numpy(dtype=np.int64)

    @property
    def n_rows(self) -> int:
        """Rows of the table described."""
        return int(self.counts.sum())

    @property
    def keys(self) -> pd.DataFrame:
        """The distinct combinations (key columns only)."""
        return self.frame[list(self.columns)]

    def __len__(self) -> int:
        return len(self.frame)

    def expand(self) -> pd.DataFrame:
        """The rows described (key columns), in canonical order; for tests and small tables."""
        return self.keys.loc[self.keys.index.repeat(self.counts)].reset_index(drop=True)
