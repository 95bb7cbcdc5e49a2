"""What a released table achieves, measured from its values alone.

Every measure has the pyCANON signature ``measure(table, quasi_identifiers,
...)`` and returns the achieved value. Equivalence classes are computed by
integer-coding each column (missing values and the suppression marker are
values of their own, never dropped) and compacting the combined key, so the
cost is a few vectorised passes over the rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "equivalence_classes",
    "class_sizes",
    "k_anonymity",
    "distinct_l_diversity",
]


def _codes(column: pd.Series) -> tuple[np.ndarray, int]:
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    return codes.astype(np.int64, copy=False), max(len(uniques), 1)


def equivalence_classes(
    table: pd.DataFrame, quasi_identifiers: Sequence[str]
) -> tuple[np.ndarray, int]:
    """Class id per row (0..n_classes-1) over ``quasi_identifiers``.

    Returns
    -------
    ids : numpy.ndarray of int64, shape (n_rows,)
    n_classes : int
    """
    n = len(table)
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    key = np.zeros(n, dtype=np.int64)
    radix_used = 1
    for name in quasi_identifiers:
        codes, card = _codes(table[name])
        if radix_used * card >= 2**62:  # compact before the key could overflow
            key, uniques = pd.factorize(key)
            key = key.astype(np.int64)
            radix_used = len(uniques)
        key = key * card + codes
        radix_used *= card
    ids, uniques = pd.factorize(key)
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
    ids, n_classes = equivalence_classes(table, quasi_identifiers)
    if n_classes == 0:
        return 0
    sens, n_sens = _codes(table[sensitive_attribute])
    pairs = np.unique(ids * n_sens + sens)
    return int(np.bincount(pairs // n_sens, minlength=n_classes).min())
