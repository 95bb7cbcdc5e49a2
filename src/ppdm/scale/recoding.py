"""A recoding: what each distinct quasi-identifier combination becomes in the release.

The algorithms that run on a :class:`~ppdm.scale.frequency.FrequencyTable`
decide, for every distinct combination of quasi-identifier values, the
released values (generalized or the suppression marker) and whether its rows
are released at all. :meth:`Recoding.apply` then turns any part of the table
into its part of the release, so a table of any size is released one
partition at a time with the same result as the in-memory algorithm.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError

__all__ = ["Recoding"]


@dataclass(frozen=True)
class Recoding:
    """Released quasi-identifier values per distinct original combination.

    Attributes
    ----------
    quasi_identifiers : tuple of str
    original : pandas.DataFrame
        The distinct original combinations (one column per quasi-identifier,
        the table's dtypes), index ``0..n-1``, each combination once.
    released : pandas.DataFrame
        Same index and columns: the released value of each combination, in
        the dtype the in-memory algorithm releases.
    kept : numpy.ndarray of bool
        False for combinations whose rows are not released (dropped).
    evidence : dict
        The algorithm's JSON-safe account of its run (as in
        :attr:`ppdm.model.Release.evidence`).
    params : dict
        The algorithm's parameters.
    algorithm : str
    records_in : int
        Rows of the table the recoding was computed from.
    """

    quasi_identifiers: tuple[str, ...]
    original: pd.DataFrame
    released: pd.DataFrame
    kept: np.ndarray
    algorithm: str
    records_in: int
    evidence: Mapping[str, Any] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        qis = list(self.quasi_identifiers)
        for name, frame in (("original", self.original), ("released", self.released)):
            if list(frame.columns) != qis:
                raise InvalidParameterError(
                    f"recoding {name} columns {list(frame.columns)} are not the "
                    f"quasi-identifiers {qis}"
                )
        n = len(self.original)
        if len(self.released) != n or len(self.kept) != n:
            raise InvalidParameterError(
                f"recoding of {n} combinations has {len(self.released)} released "
                f"rows and {len(self.kept)} kept flags"
            )

    def positions(self, part: pd.DataFrame) -> np.ndarray:
        """Row of :attr:`original` of each row of ``part`` (missing matches missing)."""
        qis = list(self.quasi_identifiers)
        index = pd.MultiIndex.from_frame(self.original)
        found = np.asarray(index.get_indexer(pd.MultiIndex.from_frame(part[qis])))
        unknown = np.flatnonzero(found < 0)
        if unknown.size:
            row = part.iloc[int(unknown[0])]
            raise InvalidParameterError(
                f"{unknown.size} row(s) have a quasi-identifier combination the "
                f"recoding was not computed from, e.g. "
                f"{ {q: row[q] for q in qis} }"
            )
        return found

    def apply(self, part: pd.DataFrame) -> pd.DataFrame:
        """``part`` as released: quasi-identifiers recoded, dropped rows removed.

        Other columns are copied unchanged; row order is kept (the pipeline
        shuffles afterwards); the index is reset.
        """
        at = self.positions(part)
        out = part.copy()
        for q in self.quasi_identifiers:
            # the taken array as it is: a round trip through Python objects
            # (to_numpy, then back to the dtype) was most of a part's recoding
            out[q] = self.released[q].take(at).set_axis(part.index)
        keep = self.kept[at]
        if not keep.all():
            out = out[keep]
        return out.reset_index(drop=True)

    def rows_released(self, counts: Sequence[int] | np.ndarray) -> int:
        """Rows released, given the rows per combination of :attr:`original`."""
        return int(np.asarray(counts, dtype=np.int64)[self.kept].sum())
