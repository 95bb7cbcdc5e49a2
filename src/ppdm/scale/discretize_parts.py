"""Discretize out of core: cut points from exact per-partition histograms.

Both discretization methods of :mod:`ppdm.prepare.discretize` depend on a
column only through its histogram: the sorted distinct values with their row
counts (``"equal-frequency"``), or with their row counts per class of the
target (``"mdl"``, Fayyad & Irani's entropy needs no more). So each partition
is reduced to its histograms (one worker per partition, through
``map_parts``), the histograms are summed, and the cut points come from the
same code the in-memory :func:`~ppdm.prepare.discretize.discretize` runs on
the whole table's histogram: they are equal, float for float.

Class codes follow the in-memory order too: the classes in order of first
appearance in the target column (partition by partition), which fixes the
order of the entropy's float sums.

A histogram has one row per distinct value: small for the integer columns of
census-like data (ages, hours), as large as the column for a continuous
column of distinct floats. Exact MDL needs it all; the memory it takes is
that of the distinct values, not of the rows.

References
----------
.. [1] U. M. Fayyad and K. B. Irani, "Multi-Interval Discretization of
   Continuous-Valued Attributes for Classification Learning", IJCAI 1993,
   pp. 1022-1027.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.prepare import discretize as _discretize
from ppdm.scale.ingest_parts import (
    PART_NAME,
    PartitionedTable,
    _remove_stale,
    write_part,
)
from ppdm.scale.part_files import read_part

__all__ = [
    "PartitionedDiscretization",
    "apply_cut_points_partitioned",
    "discretize_partitioned",
    "fit_cut_points_partitioned",
]

#: ``map_parts(fn, items)``: ``fn`` applied to every item, results in order.
MapParts = Callable[[Callable[[Any], Any], Sequence[Any]], Iterable[Any]]


@dataclass(frozen=True)
class PartitionedDiscretization:
    """A discretized partitioned table and the cut points that made it.

    Attributes
    ----------
    table : PartitionedTable
        The binned partitions, one for each input partition.
    cut_points : dict of str to list of float
        As :attr:`ppdm.prepare.discretize.Discretization.cut_points`.
    method : str
        ``"mdl"`` or ``"equal-frequency"``.
    """

    table: PartitionedTable
    cut_points: dict[str, list[float]] = field(default_factory=dict)
    method: str = "mdl"


def fit_cut_points_partitioned(
    parts: PartitionedTable | Sequence[str | Path],
    columns: Sequence[str],
    target: str | None,
    *,
    method: str = "mdl",
    n_bins: int = 5,
    map_parts: MapParts = map,
) -> dict[str, list[float]]:
    """Cut points of ``columns``, equal to :func:`~ppdm.prepare.discretize.discretize`'s.

    Parameters
    ----------
    parts : PartitionedTable or sequence of path
        The table's Parquet partitions, in row order.
    columns : sequence of str
        Numeric columns to discretize.
    target : str or None
        The class column (required by ``"mdl"``).
    method : {"mdl", "equal-frequency"}, default="mdl"
    n_bins : int, default=5
        Bins per column for ``"equal-frequency"``.
    map_parts : callable, default=map
        ``map_parts(fn, items)`` applies ``fn`` to every item and returns the
        results in order (builtin ``map``, or one that farms out to a Dask
        cluster); ``fn`` is a top-level function of one plain dict.

    Returns
    -------
    dict of str to list of float
        Sorted cut points per column, in the order of ``columns``.

    Raises
    ------
    ppdm.exceptions.InvalidParameterError
        As :func:`~ppdm.prepare.discretize.discretize`: unknown method, a
        listed column missing or not numeric or all missing ("cannot be
        binned"), no target for ``"mdl"`` or the target among ``columns``.
    """
    table = PartitionedTable.of(parts)
    columns = list(columns)
    _check(table, columns, target, method, n_bins)
    supervised = method == "mdl"
    jobs = [
        {
            "path": path,
            "columns": columns,
            "target": target if supervised else None,
        }
        for path in table.paths
    ]
    found = list(map_parts(_part_histograms, jobs))
    cut_points = {}
    for name in columns:
        distinct, counts = _combine(
            [part["histograms"][name] for part in found],
            [part["classes"] for part in found] if supervised else None,
        )
        if not len(distinct):
            raise InvalidParameterError(
                f"column {name!r} cannot be binned: it has no non-missing values"
            )
        if supervised:
            cuts = _discretize._mdl_from_counts(distinct, counts)
        else:
            cuts = _discretize._equal_frequency_from_counts(
                distinct, counts, int(n_bins)
            )
        cut_points[name] = cuts.tolist()
    return cut_points


def apply_cut_points_partitioned(
    parts: PartitionedTable | Sequence[str | Path],
    cut_points: Mapping[str, Sequence[float]],
    out_dir: str | Path,
    *,
    map_parts: MapParts = map,
) -> PartitionedTable:
    """Bin every partition with ``cut_points``; write ``out_dir/part-00000.parquet, ...``.

    Each output partition equals the matching slice of
    :func:`~ppdm.prepare.discretize.apply_cut_points` on the whole table
    (binning is row by row). Partition files of an earlier run beyond the
    last one are removed.

    Returns
    -------
    PartitionedTable
        The binned partitions, one per input partition.

    Raises
    ------
    ppdm.exceptions.InvalidParameterError
        A column of ``cut_points`` is missing or not numeric.
    """
    table = PartitionedTable.of(parts)
    absent = [c for c in cut_points if c not in table.columns]
    if absent:
        raise InvalidParameterError(
            f"cut points given for {absent}, which are not columns of the table"
        )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plain = {str(k): [float(c) for c in v] for k, v in cut_points.items()}
    jobs = [
        {"source": path, "target": str(out / PART_NAME.format(i)), "cut_points": plain}
        for i, path in enumerate(table.paths)
    ]
    rows = list(map_parts(_apply_part, jobs))
    _remove_stale(out, len(jobs))
    return PartitionedTable(
        tuple(job["target"] for job in jobs),
        tuple(int(r) for r in rows),
        table.columns,
        int(sum(rows)),
    )


def discretize_partitioned(
    parts: PartitionedTable | Sequence[str | Path],
    columns: Sequence[str],
    target: str | None,
    *,
    method: str = "mdl",
    n_bins: int = 5,
    out_dir: str | Path,
    map_parts: MapParts = map,
) -> PartitionedDiscretization:
    """:func:`fit_cut_points_partitioned`, then :func:`apply_cut_points_partitioned`.

    The partitioned counterpart of :func:`~ppdm.prepare.discretize.discretize`.
    """
    cut_points = fit_cut_points_partitioned(
        parts, columns, target, method=method, n_bins=n_bins, map_parts=map_parts
    )
    binned = apply_cut_points_partitioned(
        parts, cut_points, out_dir, map_parts=map_parts
    )
    return PartitionedDiscretization(binned, cut_points, method)


# -- checks, as discretize() makes them ------------------------------------------------
def _check(
    table: PartitionedTable,
    columns: list[str],
    target: str | None,
    method: str,
    n_bins: int,
) -> None:
    _discretize._check_method(method, n_bins)
    absent = [c for c in columns if c not in table.columns]
    if absent:
        raise InvalidParameterError(
            f"columns {absent} to discretize are not columns of the table"
        )
    if method == "mdl":
        if not isinstance(target, str) or target not in table.columns:
            raise InvalidParameterError(
                f"method 'mdl' needs the target column; got {target!r}"
            )
        if target in columns:
            raise InvalidParameterError(
                f"target {target!r} cannot be discretized as a feature"
            )
    head = _empty_frame(table.paths[0])  # the types, from the Parquet schema
    for name in columns:
        _discretize._numeric_values(head[name], name)  # fail before any work


def _empty_frame(path: str) -> pd.DataFrame:
    import pyarrow.parquet as pq
    from pandas.io._util import arrow_table_to_pandas

    return arrow_table_to_pandas(pq.read_schema(path).empty_table())


# -- per partition (top-level functions of plain arguments: picklable) -------------------
def _part_histograms(job: dict[str, Any]) -> dict[str, Any]:
    """One partition's histograms: ``{column: (distinct, counts)}`` and its classes.

    ``classes`` are the partition's target labels in order of first
    appearance (all rows, as ``discretize`` codes the whole column); the
    columns of each ``counts`` matrix follow them.
    """
    columns, target = list(job["columns"]), job["target"]
    frame = read_part(job["path"], columns + ([target] if target else []))
    codes, classes = None, []
    if target is not None:
        codes, uniques = pd.factorize(frame[target], use_na_sentinel=True)
        codes = codes.astype(np.int64, copy=False)
        classes = list(uniques)
    histograms = {}
    for name in columns:
        x = _discretize._numeric_values(frame[name], name)
        keep = ~np.isnan(x)
        if codes is not None:
            keep &= codes >= 0
            distinct, counts = _discretize._histogram(x[keep], codes[keep])
            # one column per class of the partition, present or not
            full = np.zeros((len(distinct), len(classes)), dtype=np.int64)
            full[:, : counts.shape[1]] = counts
            counts = full
        else:
            distinct, counts = _discretize._histogram(x[keep])
        histograms[name] = (distinct, counts)
    return {"histograms": histograms, "classes": classes}


def _apply_part(job: dict[str, Any]) -> int:
    frame = read_part(job["source"])
    binned = _discretize.apply_cut_points(frame, job["cut_points"])
    write_part(binned, job["target"])
    return len(binned)


# -- combining --------------------------------------------------------------------------
def _combine(
    histograms: list[tuple[np.ndarray, np.ndarray]], classes: list[list] | None
) -> tuple[np.ndarray, np.ndarray]:
    """Sum partition histograms into the whole table's (classes in global order).

    A distinct value is represented as in the whole table's stable sort: by
    its first occurrence, partitions taken in order.
    """
    if classes is not None:
        labels = [label for part in classes for label in part]
        global_codes, _ = pd.factorize(pd.Series(labels, dtype=object))
        width = int(global_codes.max()) + 1 if len(global_codes) else 0
        widened, offset = [], 0
        for (distinct, counts), part in zip(histograms, classes, strict=True):
            mapping = global_codes[offset : offset + len(part)]
            offset += len(part)
            full = np.zeros((len(distinct), width), dtype=np.int64)
            full[:, mapping] = counts  # a partition's classes are distinct
            widened.append((distinct, full))
        histograms = widened
    values = np.concatenate([h[0] for h in histograms])
    counts = np.concatenate([h[1] for h in histograms])
    order = np.argsort(values, kind="stable")
    x = values[order]
    if not len(x):
        return x, counts[order]
    starts = np.flatnonzero(np.r_[True, x[1:] != x[:-1]])
    return x[starts], np.add.reduceat(counts[order], starts, axis=0)
