"""Checking k-anonymity by containment on released tables.

The model (:class:`ppdm.privacy._containment.KAnonymityByContainment`) and
which columns it reads are described there, without numpy or pandas; this
module reads the released values, and is imported when a check runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdm.privacy.base import MAX_EXAMPLES
from ppdm.privacy.result import PrivacyResult
from ppdm.selection._bitsets import containment_sizes

if TYPE_CHECKING:
    from ppdm.privacy._containment import KAnonymityByContainment

__all__ = ["containment_features", "containment_result"]

_ONE = frozenset({"1", "1.0", "True", "true"})
_ZERO = frozenset({"0", "0.0", "False", "false"})


def containment_features(
    table: pd.DataFrame, quasi_identifiers: Sequence[str]
) -> tuple[np.ndarray, list[str], list[str]]:
    """The 0/1 feature matrix a containment check reads from one table.

    Returns
    -------
    (matrix, names, problems)
        ``matrix`` (n, d) bool; ``names`` the feature of each column
        (``q=value``); ``problems`` the binary columns holding other values.
    """
    qis = sorted(quasi_identifiers, key=len, reverse=True)
    blocks: list[np.ndarray] = []
    names: list[str] = []
    problems: list[str] = []
    for column in table.columns:
        name = str(column)
        if name in quasi_identifiers:
            text = table[column].astype("string").fillna("").to_numpy(dtype=object)
            values, codes = np.unique(text.astype(str), return_inverse=True)
            blocks.append(
                np.asarray(codes).reshape(-1)[:, None] == np.arange(len(values))
            )
            names.extend(f"{name}={v}" for v in values)
            continue
        if not any(name.startswith(f"{q}=") for q in qis):
            continue
        text = table[column].astype("string").fillna("").to_numpy(dtype=object)
        text = text.astype(str)
        ones = np.isin(text, list(_ONE))
        zeros = np.isin(text, list(_ZERO))
        if not (ones | zeros).all():
            problems.append(name)
        blocks.append(ones[:, None])
        names.append(name)
    n = len(table)
    matrix = np.hstack(blocks) if blocks else np.zeros((n, 0), dtype=bool)
    return matrix, names, problems


def containment_result(
    model: KAnonymityByContainment,
    tables: Mapping[str, pd.DataFrame],
    quasi_identifiers: Sequence[str],
) -> PrivacyResult:
    """AC of every released table over its quasi-identifier features."""
    achieved: int | None = None
    n_classes = violating = violating_rows = 0
    examples: list[tuple[int, int, str, dict[str, Any]]] = []
    problems: list[dict[str, Any]] = []
    for table_name in sorted(tables):
        table = tables[table_name]
        matrix, names, bad = containment_features(table, quasi_identifiers)
        problems.extend(
            {"table": table_name, "column": c, "error": "not 0/1"} for c in bad
        )
        if len(table) == 0:
            achieved = 0 if achieved is None else min(achieved, 0)
            continue
        sizes = containment_sizes(matrix)
        lowest = int(sizes.min())
        achieved = lowest if achieved is None else min(achieved, lowest)
        packed = np.packbits(matrix, axis=1)
        _, first, inverse, counts = np.unique(
            packed,
            axis=0,
            return_index=True,
            return_inverse=True,
            return_counts=True,
        )
        inverse = np.asarray(inverse).reshape(-1)
        n_classes += len(first)
        ac = sizes[first]
        failing = np.flatnonzero(ac < model.k)
        violating += len(failing)
        violating_rows += int(counts[failing].sum())
        for p in failing:
            pattern = (
                ", ".join(names[j] for j in np.flatnonzero(matrix[first[p]]))
                or "(no feature)"
            )
            examples.append(
                (
                    int(ac[p]),
                    -int(counts[p]),
                    pattern,
                    {
                        "table": table_name,
                        "features": pattern,
                        "size": int(counts[p]),
                        "k": int(ac[p]),
                    },
                )
            )
    examples.sort(key=lambda e: e[:3])
    shown = tuple([*problems, *(e[3] for e in examples)][:MAX_EXAMPLES])
    value = 0 if achieved is None else achieved
    passed = (
        achieved is not None
        and value >= model.k
        and not problems
        and any(len(t) for t in tables.values())
    )
    return PrivacyResult(
        model=str(model),
        requirement=model.describe(),
        measure=model.measure,
        achieved=value,
        passed=bool(passed),
        n_classes=n_classes,
        n_violating_classes=violating + len(problems),
        n_violating_rows=violating_rows,
        examples=shown,
        kind=model.kind,
    )
