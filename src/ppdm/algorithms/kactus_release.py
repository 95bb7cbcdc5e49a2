"""kACTUS's released table: suppress(R, Q, path) for every released group.

A quasi-identifier that the group's tree path pins to one value is kept; one
tested only by thresholds is released as the group's mean or the path's
interval; with ``generalize_small_siblings`` a categorical one may be released
as the group's value set; every other one is the suppression marker
(:func:`ppdm.algorithms.kactus.anonymize_tree` states the rules). Cells are
text in the grammar of :mod:`ppdm.values`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ppdm.generalization.ordered_text import text_kind
from ppdm.model import (
    AttributeKind,
    attribute_kind,
)
from ppdm.trees.base import Between, PredicateTree, TreeNode, constraint_kinds
from ppdm.values import format_interval, format_number, format_set


@dataclass
class KactusResult:
    """What :func:`anonymize_tree` produced.

    Attributes
    ----------
    table : pandas.DataFrame
        Released rows in input order (input index kept); quasi-identifier
        columns hold text (:mod:`ppdm.values` grammar): kept values, means,
        intervals, value sets or the suppression marker; missing stays missing.
    positions : numpy.ndarray of int64
        Input row position of every released row.
    group : numpy.ndarray of int64
        Released group (one group = one release of one node) of every row.
    group_nodes : list of int
        Tree node id each group was released from.
    lost : numpy.ndarray of int64
        Input positions of the dropped rows (fewer than k; none when models
        beyond k-anonymity are enforced).
    node_stats : list of dict
        Per processed node: its id, instances released from its complying
        children, instances lent to it, instances it holds after pruning.
    root_stats : dict
        With models beyond k-anonymity only: instances lent to the root's
        group by released groups (``lent``), and groups (records) merged whole
        into it (``absorbed_groups``, ``absorbed_records``); empty otherwise.
    """

    table: pd.DataFrame
    positions: np.ndarray
    group: np.ndarray
    group_nodes: list[int]
    lost: np.ndarray
    node_stats: list[dict[str, Any]] = field(default_factory=list)
    root_stats: dict[str, int] = field(default_factory=dict)


def _as_text(value: Any) -> str | None:
    """A released cell as text (ppdm.values grammar); missing stays missing.

    Text keeps a column of kept values, means, sets and markers one type, so
    it can be written to CSV and Parquet alike.
    """
    if (
        value is None
        or value is pd.NA
        or (isinstance(value, float) and np.isnan(value))
    ):
        return None
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, bool
    ):
        return format_number(float(value))
    return str(value)


def path_interval(tree: PredicateTree, node: TreeNode, attribute: str) -> tuple:
    """The interval ``(low, high]`` the thresholds on ``node``'s path leave."""
    low, high = -np.inf, np.inf
    for predicate in tree.path(node):
        if isinstance(predicate, Between) and predicate.attribute == attribute:
            low, high = max(low, predicate.low), min(high, predicate.high)
    return float(low), float(high)


def _suppress(
    table: pd.DataFrame,
    tree: PredicateTree,
    quasi_identifiers: Sequence[str],
    group_nodes: list[int],
    group_rows: list[np.ndarray],
    pruned_attributes: dict[int, frozenset[str]],
    generalize: bool,
    numeric_release: str,
    marker: str,
) -> KactusResult:
    """suppress(R, Q, path) for every released group at once, vectorised.

    Rows are laid out group after group so per-group statistics are
    ``numpy.ufunc.reduceat`` calls over contiguous runs. Each released column
    is first an integer code per row into a small label table (the column's
    distinct values, the marker, then one label per group mean or value set),
    so no per-row Python object is made until the final ``take``.
    """
    sizes = np.array([len(rows) for rows in group_rows], dtype=np.int64)
    rows = np.concatenate(group_rows) if group_rows else np.zeros(0, dtype=np.int64)
    n_groups = len(group_rows)
    group = np.repeat(np.arange(n_groups), sizes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    kinds_of = {
        node: constraint_kinds(tree, tree.node(node)) for node in set(group_nodes)
    }
    # Input order without a sort: rows are distinct positions in [0, n), so
    # scattering their ranks over the table is O(n) (argsort is O(n log n)).
    rank = np.full(len(table), -1, dtype=np.int64)
    rank[rows] = np.arange(len(rows))
    order = rank[rank >= 0]
    positions = rows[order]

    released_qi: dict[str, np.ndarray] = {}
    for name in quasi_identifiers:
        column = table[name]
        codes, uniques = pd.factorize(column, use_na_sentinel=False)
        n_values = len(uniques)
        labels: list[Any] = [*np.asarray(uniques, dtype=object), marker]
        out = np.full(len(rows), n_values, dtype=np.int64)  # the marker
        # Dates and codes kept as text: a group's values leave as their range
        # of whole months or masked code, never as a set of exact values.
        as_text = (
            text_kind(column)
            if attribute_kind(column) is not AttributeKind.NUMERIC
            else None
        )
        if n_groups:
            kind = np.array([kinds_of[node].get(name, "") for node in group_nodes])
            c = codes.astype(np.int64, copy=False)[rows]
            single = np.minimum.reduceat(c, starts) == np.maximum.reduceat(c, starts)
            keep = (kind == "equals") & single
            if as_text is not None and as_text.kind == "date" and generalize:
                keep[:] = False
            mask = keep[group]
            out[mask] = c[mask]
            per_group: dict[int, Any] = {}
            if attribute_kind(column) is AttributeKind.NUMERIC:
                use = (kind == "interval") & ~keep
                if use.any() and numeric_release == "interval":
                    for g in np.flatnonzero(use):
                        node = tree.node(group_nodes[g])
                        low, high = path_interval(tree, node, name)
                        per_group[int(g)] = format_interval(low, high, closed="right")
                elif use.any():
                    values = column.to_numpy(dtype=float, na_value=np.nan)[rows]
                    present = ~np.isnan(values)
                    total = np.add.reduceat(np.where(present, values, 0.0), starts)
                    count = np.add.reduceat(present.astype(np.int64), starts)
                    for g in np.flatnonzero(use):
                        per_group[int(g)] = (
                            float(total[g] / count[g]) if count[g] else np.nan
                        )
            elif generalize:
                pruned = np.array(
                    [
                        name in pruned_attributes.get(node, frozenset())
                        for node in group_nodes
                    ]
                )
                use = ~keep & ((kind == "set") | (kind == "equals") | pruned)
                if use.any():
                    chosen = use[group]
                    pairs = np.unique(group[chosen] * n_values + c[chosen])
                    owners, members = pairs // n_values, pairs % n_values
                    cut = np.flatnonzero(np.diff(owners)) + 1
                    for owner, codes_in in zip(
                        np.split(owners, cut), np.split(members, cut), strict=True
                    ):
                        values = [uniques[m] for m in codes_in]
                        # a set cannot say "missing": such groups stay suppressed
                        if not any(pd.isna(v) for v in values):
                            per_group[int(owner[0])] = (
                                format_set(values)
                                if as_text is None
                                else as_text.summary(values)
                            )
            if per_group:
                label_of = np.full(n_groups, n_values, dtype=np.int64)
                for g, label in per_group.items():
                    label_of[g] = len(labels)
                    labels.append(label)
                mask = np.isin(group, np.fromiter(per_group, dtype=np.int64))
                out[mask] = label_of[group[mask]]
        table_of_labels = np.empty(len(labels), dtype=object)
        table_of_labels[:] = [_as_text(label) for label in labels]
        released_qi[name] = table_of_labels[out[order]]

    others = [c for c in table.columns if c not in released_qi]
    rest = table[others].iloc[positions]
    data = {
        name: (
            pd.Series(released_qi[name], index=rest.index, dtype=object)
            if name in released_qi
            else rest[name]
        )
        for name in table.columns
    }
    released = pd.DataFrame(data, index=rest.index)
    return KactusResult(
        table=released,
        positions=positions,
        group=group[order],
        group_nodes=list(group_nodes),
        lost=np.zeros(0, dtype=np.int64),
    )
