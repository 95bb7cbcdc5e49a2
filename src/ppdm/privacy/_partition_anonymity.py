"""Anonymity of a release of projections: set and partition anonymity (DMPD).

A DMPD release is several projections of one table, each holding some
features and the target ``y``. Every projection alone is checked by the
class models as usual: *partial anonymity* ``PAL`` is exactly
:class:`~ppdm.privacy.KAnonymity` checked on each released table over the
quasi-identifiers it holds (the verifier does that per table; a table
holding no quasi-identifier is one class of all its rows). What no single
table shows is the *join*: an attacker can join two projections on the
target they share. *Set anonymity* ``SAL`` is the smallest class over
``QI ∪ y`` of the natural join of any two projections; *partition anonymity*
is ``PartAL = min(PAL, SAL)`` (Matatov, Rokach & Maimon 2010, Definition 8).

The join is never materialised. Two projections ``p`` and ``r`` joined on
``y``: for a class ``c`` the join holds ``count_p(q_p, c) * count_r(q_r, c)``
rows with quasi-identifier values ``(q_p, q_r, c)``, so the pair's smallest
class is ``min_c (min_q count_p(q, c)) * (min_q count_r(q, c))`` over the
groups that exist, and ``SAL`` over all pairs is, class by class, the product
of the two smallest per-projection minima (:func:`set_anonymity_level`).

The join is the natural join: on every column two released tables share.
DMPD's projections share the target alone, so that is the join on ``y`` of
the definition; any further shared column is counted as part of the class
too, which can only make the classes measured smaller (a conservative
reading). Two tables sharing no column join as a Cartesian product (one join
value). The models need no target parameter: the released files say what
they share.

>>> import pandas as pd
>>> from ppdm.privacy import SetAnonymity
>>> p1 = pd.DataFrame({"age": ["a", "a", "b", "b"], "y": ["0", "1", "0", "1"]})
>>> p2 = pd.DataFrame({"zip": ["x", "x", "x", "z"], "y": ["0", "1", "1", "0"]})
>>> result = SetAnonymity(k=1).check_release(
...     {"projection-1": p1, "projection-2": p2}, ["age", "zip"])
>>> result.achieved, result.passed
(1, True)
>>> SetAnonymity(k=2).check_release(
...     {"projection-1": p1, "projection-2": p2}, ["age", "zip"]).passed
False

References
----------
.. [1] N. Matatov, L. Rokach and O. Maimon, "Privacy-preserving data mining:
   A feature set partitioning approach", Information Sciences
   180(14):2696-2720, 2010 (Definition 8; Lemma 2).
.. [2] C. Yao, X. S. Wang and S. Jajodia, "Checking for k-anonymity violation
   by views", Proc. VLDB 2005, 910-921.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdm.privacy.base import MAX_EXAMPLES
from ppdm.privacy.measures import equivalence_classes
from ppdm.privacy.result import PrivacyResult

if TYPE_CHECKING:
    from ppdm.privacy._set_anonymity import JoinAnonymity

__all__ = [
    "class_minima",
    "partial_anonymity_level",
    "join_anonymity_result",
    "set_anonymity_level",
]


def class_minima(
    group_ids: np.ndarray, n_groups: int, join_ids: np.ndarray, n_join: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per join value, the smallest group that holds it, and that group.

    Parameters
    ----------
    group_ids : numpy.ndarray of int
        Quasi-identifier group of each row (``0..n_groups-1``; all zeros for a
        projection holding no quasi-identifier).
    n_groups : int
    join_ids : numpy.ndarray of int
        Join value (the class ``c`` of the target) of each row, ``0..n_join-1``.
    n_join : int

    Returns
    -------
    minima : numpy.ndarray of int64, shape (n_join,)
        ``min_q count(q, c)`` over the groups with rows of ``c``; 0 where no
        row has ``c``.
    argmin : numpy.ndarray of int64, shape (n_join,)
        The group achieving it (-1 where no row has ``c``).

    Examples
    --------
    >>> class_minima(np.array([0, 0, 1, 1, 1]), 2, np.array([0, 1, 0, 0, 1]), 2)
    (array([1, 1]), array([0, 0]))
    """
    counts = np.bincount(
        np.asarray(group_ids, dtype=np.int64) * n_join + join_ids,
        minlength=n_groups * n_join,
    ).reshape(n_groups, n_join)
    masked = np.where(counts > 0, counts, np.iinfo(np.int64).max)
    argmin = masked.argmin(axis=0)
    minima = masked[argmin, np.arange(n_join)]
    present = minima != np.iinfo(np.int64).max
    return np.where(present, minima, 0), np.where(present, argmin, -1)


def set_anonymity_level(minima: Sequence[np.ndarray]) -> int | None:
    """SAL of projections joined on the target, from :func:`class_minima`.

    The smallest class of a pair's join is ``min_c m_p[c] * m_r[c]``; the
    smallest over all pairs is, for each class, the product of the two
    smallest minima. Classes without rows (0) have no join rows.

    Returns
    -------
    int or None
        None for fewer than two projections (no join).

    Examples
    --------
    >>> set_anonymity_level([np.array([3, 5]), np.array([2, 7]), np.array([4, 1])])
    5
    """
    if len(minima) < 2:
        return None
    stacked = np.sort(np.vstack([np.asarray(m, dtype=np.int64) for m in minima]), 0)
    products = stacked[0] * stacked[1]
    products = products[stacked[0] > 0]
    return int(products.min()) if len(products) else None


def partial_anonymity_level(
    tables: Mapping[str, pd.DataFrame], quasi_identifiers: Sequence[str]
) -> int:
    """PAL: the smallest class of any table over the quasi-identifiers it holds.

    A table holding none is one class of all its rows. This is what
    :class:`~ppdm.privacy.KAnonymity` checks table by table.
    """
    levels = []
    for table in tables.values():
        own = [q for q in quasi_identifiers if q in table.columns]
        if not len(table):
            continue
        if own:
            ids, _ = equivalence_classes(table, own)
            levels.append(int(np.bincount(ids).min()))
        else:
            levels.append(len(table))
    return min(levels) if levels else 0


@dataclass(frozen=True)
class _Pair:
    """The smallest class of one pair's join."""

    size: int
    example: dict[str, Any]


def _pair_level(
    names: tuple[str, str],
    tables: Mapping[str, pd.DataFrame],
    quasi_identifiers: Sequence[str],
) -> _Pair | None:
    """Smallest class over ``QI ∪ join columns`` of the natural join of a pair."""
    left, right = (tables[n] for n in names)
    join = [c for c in left.columns if c in set(right.columns)]
    both = pd.concat([left[join], right[join]], ignore_index=True)
    if join:
        join_ids, n_join = equivalence_classes(both, join)
    else:
        join_ids, n_join = np.zeros(len(both), dtype=np.int64), 1
    sides = []
    for table, ids in ((left, join_ids[: len(left)]), (right, join_ids[len(left) :])):
        own = [q for q in quasi_identifiers if q in table.columns and q not in join]
        if own:
            groups, n_groups = equivalence_classes(table, own)
        else:
            groups, n_groups = np.zeros(len(table), dtype=np.int64), 1
        minima, argmin = class_minima(groups, n_groups, ids, n_join)
        sides.append((table, own, groups, minima, argmin))
    (_, _, _, m_left, _), (_, _, _, m_right, _) = sides
    products = np.where((m_left > 0) & (m_right > 0), m_left * m_right, -1)
    if not (products > 0).any():
        return None
    worst = int(np.argmin(np.where(products > 0, products, np.iinfo(np.int64).max)))
    example: dict[str, Any] = {"tables": f"{names[0]} + {names[1]}"}
    row = int(np.flatnonzero(join_ids == worst)[0])
    for column in join:
        example[column] = both[column].iloc[row]
    for table, own, groups, _, argmin in sides:
        if own:
            first = int(np.flatnonzero(groups == argmin[worst])[0])
            for q in own:
                example[q] = table[q].iloc[first]
    example["size"] = int(products[worst])
    return _Pair(int(products[worst]), {k: _text(v) for k, v in example.items()})


def _text(value: Any) -> Any:
    if isinstance(value, (np.integer, int)) and not isinstance(value, bool):
        return int(value)
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return str(value)


def _set_result(
    k: int,
    tables: Mapping[str, pd.DataFrame],
    quasi_identifiers: Sequence[str],
) -> tuple[int, list[_Pair], int]:
    """(SAL, violating pairs worst first, pairs checked) of ``tables``."""
    names = sorted(tables)
    pairs = []
    for pair in combinations(names, 2):
        level = _pair_level(pair, tables, quasi_identifiers)
        if level is not None:
            pairs.append(level)
    if not pairs:
        # One table (or joins with no rows): nothing to join; PartAL = PAL.
        return partial_anonymity_level(tables, quasi_identifiers), [], 0
    pairs.sort(key=lambda p: p.size)
    return pairs[0].size, [p for p in pairs if p.size < k], len(pairs)


def join_anonymity_result(
    model: JoinAnonymity,
    tables: Mapping[str, pd.DataFrame],
    quasi_identifiers: Sequence[str],
) -> PrivacyResult:
    """Set anonymity (SAL, over the pairs) of the released tables; for
    partition anonymity (``model.counts_tables``) the smaller of it and PAL,
    table by table. The violating pairs and classes are the examples,
    smallest first."""
    level, violating, n_classes = _set_result(model.k, tables, quasi_identifiers)
    examples = [p.example for p in violating]
    n_bad, bad_rows = len(violating), sum(p.size for p in violating)
    if model.counts_tables:
        pal = None
        for name in sorted(tables):
            table = tables[name]
            own = [q for q in quasi_identifiers if q in table.columns]
            if not len(table):
                continue
            if not own:  # one class of all its rows
                pal = len(table) if pal is None else min(pal, len(table))
                continue
            ids, n = equivalence_classes(table, own)
            sizes = np.bincount(ids, minlength=n)
            smallest = int(sizes.min())
            pal = smallest if pal is None else min(pal, smallest)
            n_bad += int((sizes < model.k).sum())
            bad_rows += int(sizes[sizes < model.k].sum())
            for group in np.flatnonzero(sizes < model.k)[:MAX_EXAMPLES]:
                first = int(np.flatnonzero(ids == group)[0])
                example = {"tables": name}
                example.update({q: _text(table[q].iloc[first]) for q in own})
                example["size"] = int(sizes[group])
                examples.append(example)
        level = level if pal is None else min(pal, level)
        n_classes += len(tables)
    # The pairs come smallest first; the tables' classes join them in order.
    examples.sort(key=lambda e: e["size"])
    return PrivacyResult(
        model=str(model),
        requirement=model.describe(),
        measure=model.measure,
        achieved=level,
        passed=level >= model.k,
        n_classes=n_classes,
        n_violating_classes=n_bad,
        n_violating_rows=bad_rows,
        examples=tuple(e for e in examples if e["size"] < model.k)[:MAX_EXAMPLES],
        kind=model.kind,
    )
