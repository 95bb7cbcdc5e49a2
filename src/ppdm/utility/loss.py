"""Information-loss metrics of a release, from the original and released tables.

Released cells follow :mod:`ppdm.values`. Every metric charges records that
the algorithm dropped (``len(original) - len(released)``) as fully lost, so a
release cannot look better by deleting its hard rows. Equivalence classes
come from :func:`ppdm.privacy.measures.equivalence_classes` (missing values and the
suppression marker are values of their own).

Each function takes the original table first and the released table second,
then the quasi-identifiers, as pyCANON's utility metrics do.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.model import SUPPRESSED, AnonymizationSpec, AttributeKind, attribute_kind
from ppdm.privacy.measures import class_sizes, equivalence_classes
from ppdm.utility.features import interval_bounds
from ppdm.values import parse_cell

__all__ = [
    "NCP",
    "SuppressedCells",
    "classification_metric",
    "covers_from_hierarchies",
    "discernibility_metric",
    "information_loss",
    "lost_records",
    "ncp",
    "release_loss",
    "suppressed_cells",
]


@dataclass(frozen=True)
class NCP:
    """Normalized certainty penalty of a release.

    Attributes
    ----------
    total : float
        Sum of the per-cell penalties over quasi-identifier cells, dropped
        records included (each of their cells costs 1).
    mean : float
        ``total / (n_original_rows * n_quasi_identifiers)``, in [0, 1].
    per_attribute : dict of str to float
        Mean penalty of each quasi-identifier, in [0, 1].
    n_cells : int
        ``n_original_rows * n_quasi_identifiers``.
    """

    total: float
    mean: float
    per_attribute: dict[str, float] = field(default_factory=dict)
    n_cells: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SuppressedCells:
    """Cells holding the suppression marker in a released table."""

    count: int
    fraction: float
    per_column: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def covers_from_hierarchies(
    hierarchies: Mapping[str, Any],
) -> dict[str, dict[str, tuple[str, ...]]]:
    """``{attribute: {generalized label: leaves it covers}}`` from hierarchies.

    ``hierarchies`` maps attributes to :class:`ppdm.generalization.hierarchies.Hierarchy`
    objects (``leaves``, ``labels``, ``codes``, ``height``). Level-0 labels,
    the missing label and the root are left out: they need no coverage.
    """
    covers: dict[str, dict[str, tuple[str, ...]]] = {}
    for attribute, hierarchy in hierarchies.items():
        leaves = np.asarray(hierarchy.leaves, dtype=object)
        listed = np.asarray(hierarchy.codes)[: len(leaves)]
        labels: dict[str, tuple[str, ...]] = {}
        for level in range(1, int(hierarchy.height)):
            for index, label in enumerate(hierarchy.labels[level]):
                if label and label not in labels:
                    labels[str(label)] = tuple(leaves[listed[:, level] == index])
        covers[str(attribute)] = labels
    return covers


def lost_records(original: pd.DataFrame, released: pd.DataFrame) -> int:
    """Rows of the original that the release does not contain (never negative)."""
    return max(len(original) - len(released), 0)


def _check_columns(table: pd.DataFrame, columns: Sequence[str], role: str) -> None:
    absent = [c for c in columns if c not in table.columns]
    if absent:
        raise InvalidParameterError(f"{absent} are not columns of the {role} table")


def _cell_penalty_numeric(cell: Any, low: float, high: float) -> float:
    span = high - low
    if cell.kind == "suppressed":
        return 1.0
    if cell.kind in ("missing", "value"):
        return 0.0
    if span <= 0:
        return 0.0
    if cell.kind == "interval":
        width = min(cell.high, high) - max(cell.low, low)
        return float(min(max(width, 0.0) / span, 1.0))
    if cell.kind == "set":
        bounds = []
        for member in cell.members:
            inner = parse_cell(member)
            if inner.kind == "interval":
                bounds += [max(inner.low, low), min(inner.high, high)]
            else:
                try:
                    bounds.append(float(member))
                except ValueError:
                    return 1.0
        return float(min((max(bounds) - min(bounds)) / span, 1.0))
    return 1.0


def _cell_penalty_categories(
    cell: Any,
    domain: Mapping[str, int],
    bounds: np.ndarray | None,
    covers: Mapping[str, Collection[str]],
) -> float:
    size = len(domain)
    if cell.kind == "suppressed":
        return 1.0
    if cell.kind == "missing" or (cell.kind != "set" and cell.text in domain):
        return 0.0
    if size <= 1:
        return 0.0
    if cell.kind == "set":
        covered = len(set(cell.members))
    elif cell.kind == "interval" and bounds is not None:
        # an ordinal (discretized) attribute: count the bins inside the range
        inside = (bounds[:, 0] >= cell.low) & (bounds[:, 1] <= cell.high)
        covered = int(inside.sum())
    elif cell.text in covers:
        covered = len(set(covers[cell.text]))
    else:
        # A label outside the domain with no known coverage (e.g. a hierarchy
        # node the caller did not describe): charged as fully generalized, so
        # the report never understates the loss.
        return 1.0
    return float(min(max(covered - 1, 0) / (size - 1), 1.0))


def _attribute_penalties(
    original: pd.Series,
    released: pd.Series,
    marker: str,
    covers: Mapping[str, Collection[str]],
) -> float:
    """Sum of the cell penalties of one released column."""
    kind = attribute_kind(original)
    if attribute_kind(released) is AttributeKind.NUMERIC:
        return 0.0  # exact numbers (or means) only: no generalized cell
    codes, uniques = pd.factorize(released, use_na_sentinel=True)
    if len(uniques) == 0:
        return 0.0
    if kind is AttributeKind.NUMERIC:
        values = original.to_numpy(dtype=float, na_value=np.nan)
        finite = values[np.isfinite(values)]
        low, high = (finite.min(), finite.max()) if len(finite) else (0.0, 0.0)
        penalties = np.array(
            [_cell_penalty_numeric(parse_cell(u, marker), low, high) for u in uniques]
        )
    else:
        if kind is AttributeKind.ORDINAL:
            categories = [str(c) for c in original.cat.categories]
            bounds = interval_bounds(categories)
        else:
            categories = sorted(original.dropna().astype(str).unique())
            bounds = None
        domain = {c: i for i, c in enumerate(categories)}
        penalties = np.array(
            [
                _cell_penalty_categories(parse_cell(u, marker), domain, bounds, covers)
                for u in uniques
            ]
        )
    counts = np.bincount(codes[codes >= 0], minlength=len(uniques))
    return float(counts @ penalties)


def ncp(
    original: pd.DataFrame,
    released: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    *,
    marker: str = SUPPRESSED,
    covers: Mapping[str, Mapping[str, Collection[str]]] | None = None,
) -> NCP:
    """Normalized certainty penalty (NCP), Iyengar's general loss metric (GLM).

    Per released quasi-identifier cell:

    - numeric attribute, range or interval: its width, clipped to the
      attribute's observed range in ``original``, divided by that range; a
      numeric value set: the span of its members over the range;
    - categorical attribute, value set: ``(|set| - 1) / (|domain| - 1)``; on a
      discretized (interval-category) attribute, a released interval counts the
      bins it covers; a generalized label listed in ``covers`` counts the
      values it covers; any other label outside the domain costs 1;
    - suppressed (``marker``): 1; exact value or missing: 0.

    Records dropped by the algorithm cost 1 per quasi-identifier.

    Parameters
    ----------
    original, released : pandas.DataFrame
    quasi_identifiers : sequence of str
        Must be columns of both tables.
    marker : str, default="*"
    covers : mapping, optional
        ``{attribute: {generalized label: original values it covers}}``, e.g.
        from a generalization hierarchy.

    Returns
    -------
    NCP
        ``total``, ``mean`` in [0, 1], ``per_attribute`` and ``n_cells``.

    References
    ----------
    .. [1] V. S. Iyengar, "Transforming data to satisfy privacy constraints",
       in Proc. 8th ACM SIGKDD International Conference on Knowledge
       Discovery and Data Mining (KDD), pp. 279-288, 2002.
    .. [2] J. Xu, W. Wang, J. Pei, X. Wang, B. Shi and A. W.-C. Fu,
       "Utility-based anonymization using local recoding", in Proc. 12th ACM
       SIGKDD International Conference on Knowledge Discovery and Data Mining
       (KDD), pp. 785-790, 2006.

    Examples
    --------
    >>> import pandas as pd
    >>> original = pd.DataFrame({"age": [20, 30, 40, 60]})
    >>> released = pd.DataFrame({"age": ["[20, 40]", "[20, 40]", "*"]})
    >>> result = ncp(original, released, ["age"])
    >>> result.total, result.mean
    (3.0, 0.75)
    """
    _check_columns(original, quasi_identifiers, "original")
    _check_columns(released, quasi_identifiers, "released")
    covers = covers or {}
    n = len(original)
    dropped = lost_records(original, released)
    per_attribute = {}
    total = 0.0
    for name in quasi_identifiers:
        attribute_total = (
            _attribute_penalties(
                original[name], released[name], marker, covers.get(name, {})
            )
            + dropped
        )
        per_attribute[name] = attribute_total / n if n else 0.0
        total += attribute_total
    n_cells = n * len(quasi_identifiers)
    return NCP(
        total=float(total),
        mean=float(total / n_cells) if n_cells else 0.0,
        per_attribute=per_attribute,
        n_cells=int(n_cells),
    )


def discernibility_metric(
    original: pd.DataFrame, released: pd.DataFrame, quasi_identifiers: Sequence[str]
) -> float:
    """Discernibility metric DM: sum of squared class sizes plus dropped x |D|.

    Every released record is charged the size of its equivalence class over
    ``quasi_identifiers``; every record the algorithm dropped is charged the
    size of the whole original table.

    References
    ----------
    .. [1] R. J. Bayardo and R. Agrawal, "Data Privacy through Optimal
       k-Anonymization", in Proc. 21st International Conference on Data
       Engineering (ICDE), pp. 217-228, 2005.

    Examples
    --------
    >>> import pandas as pd
    >>> original = pd.DataFrame({"zip": ["1", "2", "3", "4", "5"]})
    >>> released = pd.DataFrame({"zip": ["*", "*", "{3|4}", "{3|4}"]})
    >>> discernibility_metric(original, released, ["zip"])
    13.0
    """
    _check_columns(released, quasi_identifiers, "released")
    sizes = class_sizes(released, quasi_identifiers).astype(np.float64)
    return float((sizes**2).sum() + lost_records(original, released) * len(original))


def classification_metric(
    original: pd.DataFrame,
    released: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    target: str,
) -> float:
    """Classification metric CM: fraction of records penalised for the target.

    A released record is penalised when its target label is not the majority
    label of its equivalence class (ties: one majority label is kept, the
    others penalised); a dropped record is always penalised. The sum is
    divided by the number of original records.

    References
    ----------
    .. [1] V. S. Iyengar, "Transforming data to satisfy privacy constraints",
       in Proc. 8th ACM SIGKDD International Conference on Knowledge
       Discovery and Data Mining (KDD), pp. 279-288, 2002.

    Examples
    --------
    >>> import pandas as pd
    >>> original = pd.DataFrame({"zip": list("abcde"), "y": list("yynyn")})
    >>> released = pd.DataFrame({"zip": ["*", "*", "*", "e"], "y": list("yyny")})
    >>> classification_metric(original, released, ["zip"], "y")
    0.4
    """
    _check_columns(released, [*quasi_identifiers, target], "released")
    n = len(original)
    if n == 0:
        return 0.0
    ids, n_classes = equivalence_classes(released, quasi_identifiers)
    labels, uniques = pd.factorize(released[target], use_na_sentinel=False)
    n_labels = max(len(uniques), 1)
    pair_counts = np.bincount(ids * n_labels + labels, minlength=n_classes * n_labels)
    majority = pair_counts.reshape(n_classes, n_labels).max(axis=1).sum()
    penalised = len(released) - majority + lost_records(original, released)
    return float(penalised / n)


def suppressed_cells(
    released: pd.DataFrame,
    columns: Sequence[str] | None = None,
    *,
    marker: str = SUPPRESSED,
) -> SuppressedCells:
    """Count the cells equal to ``marker`` (in ``columns``, default all).

    ``fraction`` is over the released cells of those columns.
    """
    columns = list(released.columns if columns is None else columns)
    _check_columns(released, columns, "released")
    per_column = {}
    for name in columns:
        column = released[name]
        if attribute_kind(column) is AttributeKind.NUMERIC:
            per_column[str(name)] = 0
        else:
            per_column[str(name)] = int(column.astype(object).eq(marker).sum())
    count = sum(per_column.values())
    n_cells = len(released) * len(columns)
    return SuppressedCells(
        count=count,
        fraction=float(count / n_cells) if n_cells else 0.0,
        per_column=per_column,
    )


def information_loss(
    original: pd.DataFrame,
    released: pd.DataFrame,
    spec: AnonymizationSpec,
    *,
    covers: Mapping[str, Mapping[str, Collection[str]]] | None = None,
) -> dict[str, Any]:
    """Every loss metric of one released table, as a JSON-serialisable dict.

    The quasi-identifiers are those of ``spec`` that the released table holds
    (a projection may hold a subset). CM is given when ``spec.target`` is
    released. Without ``covers``, the coverage of generalized labels comes
    from ``spec.hierarchies`` when it has any.
    """
    marker = spec.suppression_marker
    if covers is None and spec.hierarchies:
        covers = covers_from_hierarchies(spec.hierarchies)
    qi = [c for c in spec.quasi_identifiers if c in released.columns]
    result: dict[str, Any] = {
        "quasi_identifiers": qi,
        "rows_original": len(original),
        "rows_released": len(released),
        "lost_records": lost_records(original, released),
    }
    if qi:
        loss = ncp(original, released, qi, marker=marker, covers=covers)
        result["ncp"] = loss.to_dict()
        result["discernibility"] = discernibility_metric(original, released, qi)
        sizes = class_sizes(released, qi)
        result["equivalence_classes"] = len(sizes)
        result["min_class_size"] = int(sizes.min()) if len(sizes) else 0
        result["average_class_size"] = (
            float(len(released) / len(sizes)) if len(sizes) else 0.0
        )
    if spec.target is not None and spec.target in released.columns and qi:
        result["classification_metric"] = classification_metric(
            original, released, qi, spec.target
        )
    result["suppressed_cells"] = suppressed_cells(released, marker=marker).to_dict()
    return _json_ready(result)


def release_loss(
    tables: Mapping[str, Mapping[str, Any]],
    quasi_identifiers: Sequence[str],
    rows_original: int,
) -> dict[str, Any]:
    """Loss of a whole release of one or several tables, from per-table figures.

    A release of several tables (projections, a column subset) spreads the
    quasi-identifiers over its tables; each table's
    :func:`information_loss` only sees the quasi-identifiers it holds, so a
    quasi-identifier that no table releases would go uncharged. Here every
    quasi-identifier of the requirement is charged:

    - released in one or more tables: its per-attribute NCP in the table that
      keeps it best (the least penalty: the most an analyst can read of it);
    - released in no table (withheld): 1 per original record, as a
      suppressed cell.

    Parameters
    ----------
    tables : mapping of str to dict
        :func:`information_loss` of each released table.
    quasi_identifiers : sequence of str
        The requirement's quasi-identifiers.
    rows_original : int

    Returns
    -------
    dict
        ``n_tables``; ``released_in`` (``{quasi-identifier: [tables]}``);
        ``withheld`` (quasi-identifiers in no table); ``ncp`` (``total``,
        ``mean``, ``per_attribute``, ``n_cells`` over all quasi-identifiers);
        ``suppressed_cells`` (count over all tables); ``lost_records`` (the
        most any table lost).

    Examples
    --------
    >>> per_table = {
    ...     "a": {"ncp": {"per_attribute": {"age": 0.5}}, "lost_records": 0,
    ...           "suppressed_cells": {"count": 3}},
    ...     "b": {"ncp": {"per_attribute": {"age": 0.25, "zip": 0.0}},
    ...           "lost_records": 2, "suppressed_cells": {"count": 1}},
    ... }
    >>> loss = release_loss(per_table, ["age", "zip", "sex"], 10)
    >>> loss["ncp"]["per_attribute"], loss["withheld"], loss["lost_records"]
    ({'age': 0.25, 'zip': 0.0, 'sex': 1.0}, ['sex'], 2)
    """
    released_in: dict[str, list[str]] = {str(q): [] for q in quasi_identifiers}
    per_attribute: dict[str, float] = {}
    for name, loss in tables.items():
        for attribute, value in (
            (loss.get("ncp") or {}).get("per_attribute") or {}
        ).items():
            if attribute not in released_in:
                continue
            released_in[attribute].append(str(name))
            best = per_attribute.get(attribute)
            per_attribute[attribute] = value if best is None else min(best, value)
    withheld = [q for q, names in released_in.items() if not names]
    per_attribute = {q: float(per_attribute.get(q, 1.0)) for q in released_in}
    n_cells = rows_original * len(per_attribute)
    total = float(sum(per_attribute.values()) * rows_original)
    return _json_ready(
        {
            "n_tables": len(tables),
            "released_in": released_in,
            "withheld": withheld,
            "ncp": {
                "total": total,
                "mean": total / n_cells if n_cells else 0.0,
                "per_attribute": per_attribute,
                "n_cells": n_cells,
            },
            "suppressed_cells": int(
                sum(
                    (t.get("suppressed_cells") or {}).get("count", 0)
                    for t in tables.values()
                )
            ),
            "lost_records": int(
                max((t.get("lost_records", 0) for t in tables.values()), default=0)
            ),
        }
    )


def _json_ready(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (float, np.floating)):
        as_float = float(value)
        return None if math.isnan(as_float) else as_float
    return value
