"""The privacy models written from their definitions, one class at a time.

A test oracle for the vectorised models: plain Python over lists of values,
no numpy, no shared code with :mod:`ppdm.privacy`. Algorithm tests ask it
whether a class their algorithm released (or refused) is acceptable.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

import pandas as pd

__all__ = ["emd", "plain", "plain_accepts"]


def plain(value: object) -> object:
    """A sensitive value as a plain Python object; missing is a value of its own."""
    return "<NA>" if pd.isna(value) else value


def emd(values: list, whole: list) -> float:
    """Earth Mover's Distance of ``values`` to ``whole`` (Li et al. 2007), plainly.

    Ordered distance when every value of ``whole`` is a number, else equal.
    """
    share, reference_share = Counter(values), Counter(whole)
    n, total = len(values), len(whole)
    keys = list(reference_share)
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in keys)
    if numeric and len(keys) > 1:
        keys.sort()
        running, distance = 0.0, 0.0
        for v in keys[:-1]:
            running += share[v] / n - reference_share[v] / total
            distance += abs(running)
        return distance / (len(keys) - 1)
    return 0.5 * sum(abs(share[v] / n - reference_share[v] / total) for v in keys)


def plain_accepts(
    models: Sequence, rows: list[int], whole: list[int], column: Callable[[str], list]
) -> bool:
    """Whether every model accepts the class ``rows`` of a table holding the
    rows ``whole`` (t-closeness compares with those). ``column(attribute)``
    lists an attribute's plain values by row."""
    for model in models:
        if model.name == "k-anonymity":
            if len(rows) < model.k:
                return False
            continue
        values = [column(model.attribute)[r] for r in rows]
        counts = sorted(Counter(values).values(), reverse=True)
        n = len(values)
        if model.name == "distinct-l-diversity":
            ok = len(counts) >= model.l
        elif model.name == "entropy-l-diversity":
            entropy = -sum(c / n * math.log(c / n) for c in counts)
            ok = n > 0 and math.exp(entropy) >= model.l - 1e-9
        elif model.name == "recursive-cl-diversity":
            ok = len(counts) >= model.l and counts[0] < model.c * sum(
                counts[model.l - 1 :]
            )
        elif model.name == "t-closeness":
            reference_values = [column(model.attribute)[r] for r in whole]
            ok = emd(values, reference_values) <= model.t + 1e-9
        else:
            raise AssertionError(model.name)
        if not ok:
            return False
    return True
