"""Validate out of core: pandera and Great Expectations per partition, the table from summaries.

:func:`validate_partitions` gives what :func:`ppdm.prepare.validation.validate_table`
gives on the concatenated table, one partition at a time:

- every row is judged on its own partition, by the same code: coercion to the
  schema's types, the pandera schema (run lazily), and the suite's row-wise
  expectations as Great Expectations' own conditions, each on its one column
  (:mod:`ppdm.scale.row_checks`; a suite with anything else runs GX's whole
  validation on the partition); a rejected row keeps its reasons and its row
  number in the whole table;
- the table-level judgements are made once, from per-partition summaries
  combined exactly: a column none of whose values converts (over all
  partitions), the row count, the set or list of columns, a ``mostly``
  threshold, distinct-value sets, minimum, maximum, and sum and mean of
  integer columns. For each expectation, the partitions' metrics are
  combined (counts added, sets united, extremes taken) and handed to the
  expectation's own GX validation, so success, observed value and detail are
  those GX gives on the whole table;
- ``expect_column_values_to_be_unique`` needs the whole column: a first pass
  counts each partition's values, and each partition then runs GX's
  ``expect_column_values_to_not_be_in_set`` with the values that occur more
  than once in the table, which marks exactly the rows the uniqueness
  expectation marks on the whole table (they are reported under the
  uniqueness expectation).

The outputs: clean partitions (``out_dir/clean/part-00000.parquet, ...``, one
per input partition, typed as the schema declares; a partition whose rows were
all rejected is an empty file), the quarantine as ONE CSV file
(``out_dir/quarantine.csv``, the rejected rows as they came in with
``_source_row`` and ``_reasons``, as the in-memory step stores it), and the
report, with the same keys and figures as ``validate_table``'s. Over the
rejected limit, or when a table-level expectation fails, the same
:class:`~ppdm.exceptions.DataValidationError` (same message) is raised after
the quarantine is written; its ``outcome`` is the :class:`PartitionedValidation`.

Per-partition work goes through ``map_parts(fn, items)`` (builtin ``map``
by default, or a Dask-backed mapper): ``fn`` is a top-level function and each
item a plain dict (paths, the schema, the suite as a dict), so both pickle.

What cannot be checked on partitions is refused before any work, with
:class:`~ppdm.exceptions.InvalidParameterError`: pandera uniqueness
(``unique`` on a column or the schema), and GX expectations whose metrics do
not combine exactly (medians, quantiles, standard deviations, row order such
as ``expect_column_values_to_be_increasing``, column types, compound
uniqueness). A mean or sum expectation on a column holding non-integer
numbers is refused when the partitions are summarised (a float sum depends on
the order of the additions). Dataframe-wide pandera checks, if a schema has
them, run on each partition, which is right for row-wise checks only.

Differences from the in-memory path that do not reach the report: the
``failure_cases`` of the error hold the same failures, in partition order
rather than stage by stage; a malformed suite is refused before the rows are
read (in memory, after the schema's own errors).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa

from ppdm.exceptions import InvalidParameterError
from ppdm.prepare import validation as v
from ppdm.release.artifacts import table_to_csv_bytes, write_atomic
from ppdm.scale.ingest_parts import PART_NAME, PartitionedTable, write_part
from ppdm.scale.metric_summaries import SUMMED, combine_metric, partition_summary
from ppdm.scale.part_files import read_part
from ppdm.scale.row_checks import (
    COLUMN_CONDITIONS,
    ColumnCondition,
    gx_order,
    run_conditions,
)

__all__ = ["PartitionedValidation", "QUARANTINE_NAME", "validate_partitions"]

#: File name of the quarantine in ``out_dir``.
QUARANTINE_NAME = "quarantine.csv"
#: Where each expectation's position in the suite travels in its GX meta, and
#: a uniqueness expectation's own type and arguments (it runs as not-in-set).
_INDEX, _ORIGINAL = "ppdm_suite_index", "ppdm_suite_expectation"

#: ``map_parts(fn, items)``: ``fn`` applied to every item, results in order.
MapParts = Callable[[Callable[[Any], Any], Sequence[Any]], Iterable[Any]]

# Row-wise GX map metrics: a row's verdict depends on that row alone (those
# whose condition reads one column's values run column by column).
_ROW_WISE = COLUMN_CONDITIONS | {
    "column_values.match_like_pattern",
    "column_values.not_match_like_pattern",
    "column_values.match_like_pattern_list",
    "column_values.not_match_like_pattern_list",
    "column_values.match_strftime_format",
    "column_values.dateutil_parseable",
    "column_values.json_parseable",
    "column_values.match_json_schema",
    "column_pair_values.equal",
    "column_pair_values.a_greater_than_b",
    "column_pair_values.in_set",
    "select_column_values.unique.within_record",
    "multicolumn_sum.equal",
}
_UNIQUE = "column_values.unique"
_LISTED = ("unexpected_values", "unexpected_index_list")
_UNKEPT = ("unexpected_index_query", "unexpected_rows")
# Aggregate metrics combined exactly from per-partition summaries.
_AGGREGATES = {
    "table.row_count",
    "table.columns",
    "table.column_count",
    "column.min",
    "column.max",
    "column.sum",
    "column.mean",
    "column.distinct_values",
    "column.distinct_values.count",
    "column.distinct_values.not_in_set",
    "column.distinct_values.not_in_set.count",
    "column.distinct_values.missing_from_column",
    "column.distinct_values.missing_from_column.count",
}


@dataclass(frozen=True)
class PartitionedValidation:
    """What the validate step produces out of core.

    Attributes
    ----------
    clean : PartitionedTable
        The accepted rows, one partition per input partition, typed as the
        schema declares (as :attr:`ValidationOutcome.clean
        <ppdm.prepare.validation.ValidationOutcome>` in slices).
    quarantine : pandas.DataFrame
        The rejected rows as they came in, with ``_source_row`` (0-based row
        number in the whole table) and ``_reasons``; small by the rejected
        limit.
    quarantine_path : str
        The quarantine written as one CSV file (as the in-memory step stores it).
    report : dict
        The report, with the keys and figures of ``validate_table``'s.
    """

    clean: PartitionedTable
    quarantine: pd.DataFrame
    quarantine_path: str
    report: dict[str, Any]

    @property
    def clean_paths(self) -> tuple[str, ...]:
        """The clean partitions' files, in row order."""
        return self.clean.paths


def validate_partitions(
    parts: PartitionedTable | Sequence[str | Path],
    schema: pa.DataFrameSchema | type[pa.DataFrameModel],
    suite: Mapping[str, Any],
    *,
    max_rejected_fraction: float = 0.05,
    source: str = "table",
    out_dir: str | Path,
    map_parts: MapParts = map,
    column_conditions: bool = True,
    finish: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
) -> PartitionedValidation:
    """Validate a partitioned table as ``validate_table`` validates the whole.

    Parameters
    ----------
    parts : PartitionedTable or sequence of path
        The raw table's Parquet partitions, in row order (as
        :func:`~ppdm.scale.ingest_parts.ingest_partitions` writes them).
    schema : pandera.pandas.DataFrameSchema or DataFrameModel class
        The dataset's schema.
    suite : dict
        The dataset's expectation suite (``{"name", "expectations"}``).
    max_rejected_fraction : float, default=0.05
        The largest fraction of rejected rows the table may have.
    source : str, default="table"
        Names the table in messages.
    out_dir : str or pathlib.Path
        Where ``clean/part-00000.parquet, ...`` and ``quarantine.csv`` are
        written (created if absent).
    map_parts : callable, default=map
        ``map_parts(fn, items)`` applies ``fn`` to every item and returns the
        results in order; ``fn`` is a top-level function of one plain dict.
    column_conditions : bool, default=True
        Run the row-wise expectations as GX's conditions column by column
        (:mod:`ppdm.scale.row_checks`) where the suite allows; False: GX's
        whole validation on every partition (the reference the tests compare).
    finish : callable, optional
        Applied to each partition's clean rows before they are written (a
        picklable function of a frame, e.g. keeping only the columns a
        release may carry), so they are written once, not written, read and
        written again.

    Returns
    -------
    PartitionedValidation

    Raises
    ------
    ppdm.exceptions.SchemaMismatchError
        As ``validate_table``: a required column missing, an extra column
        under a strict schema, a column with no value of its declared type.
    ppdm.exceptions.DataValidationError
        As ``validate_table`` (same message), after the quarantine is written;
        ``outcome`` is the :class:`PartitionedValidation`.
    ppdm.exceptions.InvalidParameterError
        ``max_rejected_fraction`` not in [0, 1], a malformed suite, or a check
        that partitions cannot make exactly (see the module docstring).
    """
    v._check_fraction(max_rejected_fraction)
    table = PartitionedTable.of(parts)
    frame_schema = v._frame_schema(schema)
    _refuse_global_pandera(frame_schema)
    v._check_columns(pd.DataFrame(columns=list(table.columns)), frame_schema, source)
    plan = _Plan.of(suite)
    out = Path(out_dir)
    (out / "clean").mkdir(parents=True, exist_ok=True)

    base = {"schema": frame_schema, "source": source}
    duplicates: dict[str, list] = {}
    if plan.unique_columns:
        counted = map_parts(
            _part_value_counts,
            [
                {**base, "path": path, "columns": plan.unique_columns}
                for path in table.paths
            ],
        )
        duplicates = _duplicates(list(counted), plan.unique_columns)
    worker_suite = plan.worker_suite(duplicates)
    shared = {
        **base,
        "suite": worker_suite,
        "aggregates": plan.aggregates,
        "counted": plan.counted,
        "conditions": plan.conditions(worker_suite) if column_conditions else None,
        "finish": finish,
    }
    jobs = [
        {
            **shared,
            "path": path,
            "start": start,
            "clean_path": str(out / "clean" / PART_NAME.format(index)),
        }
        for index, (path, start) in enumerate(
            zip(table.paths, table.starts, strict=True)
        )
    ]
    found = list(map_parts(_validate_part, jobs))

    v._refuse_unconvertible(_unconvertible(found, frame_schema), source)
    failures = v._all_failures(*[part["failures"] for part in found])
    quarantine = _concat([part["quarantine"] for part in found])
    quarantine_path = out / QUARANTINE_NAME
    write_atomic(quarantine_path, table_to_csv_bytes(quarantine))
    items = plan.combine([part["gx"] for part in found], _typed_dtypes(found))
    statistics = _statistics(items)
    rows_clean = sum(part["rows_clean"] for part in found)
    report = v._report(
        source=source,
        schema_name=v._schema_name(schema, frame_schema),
        suite=suite,
        rows=(table.rows, rows_clean, table.rows - rows_clean),
        limit=max_rejected_fraction,
        pandera_rows=_summed([part["pandera_rows"] for part in found]),
        gx_rows=_summed([part["gx_rows"] for part in found]),
        gx_report=v._gx_report(items, statistics),
    )
    clean = PartitionedTable(
        tuple(job["clean_path"] for job in jobs),
        tuple(part["rows_clean"] for part in found),
        tuple(found[0]["clean_columns"]) if found else (),
        rows_clean,
    )
    outcome = PartitionedValidation(clean, quarantine, str(quarantine_path), report)
    v._conclude(report, source, failures, outcome)
    return outcome


# -- what partitions cannot check --------------------------------------------------------
def _refuse_global_pandera(frame_schema: pa.DataFrameSchema) -> None:
    unique = [name for name, column in frame_schema.columns.items() if column.unique]
    if frame_schema.unique or unique:
        raise InvalidParameterError(
            f"schema {frame_schema.name!r}: uniqueness "
            f"({', '.join(map(str, unique or frame_schema.unique))}) cannot be "
            "checked by pandera one partition at a time; state it in the suite "
            "as expect_column_values_to_be_unique, which is checked over the "
            "whole table"
        )


@dataclass(frozen=True)
class _Expectation:
    index: int
    entry: dict[str, Any]  # the suite's entry, with the index in its meta
    kind: str  # "map", "unique" or "aggregate"
    map_metric: str | None


@dataclass(frozen=True)
class _Plan:
    """The suite, each expectation classified by how partitions check it."""

    name: str
    expectations: tuple[_Expectation, ...]

    @classmethod
    def of(cls, suite: Mapping[str, Any]) -> _Plan:
        built = v.build_expectations(suite)  # refuses a malformed suite
        engine, runtime = _engine(), _runtime()
        planned = []
        for index, (entry, expectation) in enumerate(
            zip(suite["expectations"], built, strict=True)
        ):
            label = f"suite {suite.get('name', '<unnamed>')!r}: expectation {index}"
            try:
                names = list(
                    expectation.get_validation_dependencies(
                        execution_engine=engine, runtime_configuration=runtime
                    ).metric_configurations
                )
            except Exception as exc:  # needs the data's types: not combinable
                raise InvalidParameterError(
                    f"{label} ({entry['type']}) cannot be checked on partitions: "
                    f"it depends on the column types ({v._shorten(str(exc))})"
                ) from exc
            map_metric = getattr(expectation, "map_metric", None)
            if map_metric == _UNIQUE:
                kind = "unique"
            elif map_metric in _ROW_WISE and _map_metrics_only(names, map_metric):
                kind = "map"
            elif map_metric is None and set(names) <= _AGGREGATES:
                kind = "aggregate"
            else:
                unknown = [n for n in names if n not in _AGGREGATES]
                raise InvalidParameterError(
                    f"{label} ({entry['type']}) cannot be checked on partitions: "
                    f"its metrics {unknown or names} do not combine exactly "
                    "across partitions; row-wise expectations, uniqueness, "
                    "row counts, column sets, distinct values, minimum, "
                    "maximum, and sum and mean of integers do"
                )
            meta = {**dict(entry.get("meta", {})), _INDEX: index}
            planned.append(
                _Expectation(index, {**dict(entry), "meta": meta}, kind, map_metric)
            )
        return cls(str(suite.get("name") or "suite"), tuple(planned))

    @property
    def unique_columns(self) -> list[str]:
        return list(
            dict.fromkeys(
                e.entry["kwargs"]["column"]
                for e in self.expectations
                if e.kind == "unique"
            )
        )

    @property
    def aggregates(self) -> dict[int, list[tuple[str, Any]]]:
        """Per aggregate expectation: (metric name, column) of its metrics."""
        engine, runtime = _engine(), _runtime()
        found = {}
        for e in self.expectations:
            if e.kind != "aggregate":
                continue
            configs = _expectation(e.entry).get_validation_dependencies(
                execution_engine=engine, runtime_configuration=runtime
            )
            found[e.index] = [
                (name, config.metric_domain_kwargs.get("column"))
                for name, config in configs.metric_configurations.items()
            ]
        return found

    @functools.cached_property
    def counted(self) -> dict[int, tuple[str, list[str]]]:
        """Per row-wise expectation: its map metric and the counts it needs.

        Computed once: asking GX for an expectation's dependencies costs about
        10 ms, and :meth:`conditions` reads this for every expectation.
        """
        engine, runtime = _engine(), _runtime()
        found = {}
        for e in self.expectations:
            if e.kind == "aggregate":
                continue
            entry = e.entry
            map_metric = str(e.map_metric)
            if e.kind == "unique":  # runs as not-in-set on the partitions
                entry = {**entry, "type": "expect_column_values_to_not_be_in_set",
                         "kwargs": {**entry["kwargs"], "value_set": []}}  # fmt: skip
                map_metric = "column_values.not_in_set"
            names = (
                _expectation(entry)
                .get_validation_dependencies(
                    execution_engine=engine, runtime_configuration=runtime
                )
                .metric_configurations
            )
            found[e.index] = (
                map_metric,
                [n for n in names if n == "table.row_count" or n.endswith(SUMMED)],
            )
        return found

    def worker_suite(self, duplicates: Mapping[str, list]) -> dict[str, Any]:
        """The suite the partitions run: uniqueness as "not one of the duplicates"."""
        entries = []
        for e in self.expectations:
            entry = e.entry
            if e.kind == "unique":
                kwargs = dict(entry["kwargs"])
                original = {"type": entry["type"], "kwargs": dict(kwargs)}
                kwargs["value_set"] = list(duplicates[kwargs["column"]])
                entry = {
                    **entry,
                    "type": "expect_column_values_to_not_be_in_set",
                    "kwargs": kwargs,
                    "meta": {**entry["meta"], _ORIGINAL: original},
                }
            entries.append(entry)
        return {"name": self.name, "expectations": entries}

    def conditions(self, worker_suite: Mapping[str, Any]) -> dict | None:
        """The row-wise expectations as column conditions; None: GX runs each partition.

        ``worker_suite`` is :meth:`worker_suite`'s (uniqueness as not-in-set).
        Every expectation must be an aggregate (summarised here) or a
        condition on one column's values (:mod:`ppdm.scale.row_checks`) with
        no row condition and no suite parameter.
        """
        engine, runtime = _engine(), _runtime()
        found = {}
        for e, entry in zip(
            self.expectations, worker_suite["expectations"], strict=True
        ):
            if e.kind == "aggregate":
                continue
            kwargs = entry.get("kwargs", {})
            if "$PARAMETER" in repr(kwargs) or kwargs.get("row_condition"):
                return None
            configs = (
                _expectation(entry)
                .get_validation_dependencies(
                    execution_engine=engine, runtime_configuration=runtime
                )
                .metric_configurations
            )
            # uniqueness runs as not-in-set (see worker_suite)
            metric = (
                "column_values.not_in_set" if e.kind == "unique" else str(e.map_metric)
            )
            config = configs.get(f"{metric}.unexpected_count")
            column = kwargs.get("column")
            if (
                metric not in COLUMN_CONDITIONS
                or config is None
                or not isinstance(column, str)
                or any(
                    value is not None
                    for key, value in config.metric_domain_kwargs.items()
                    if key != "column"
                )
            ):
                return None
            found[e.index] = ColumnCondition(
                index=e.index,
                metric=metric,
                column=column,
                value_kwargs=dict(config.metric_value_kwargs),
                counts=tuple(self.counted[e.index][1]),
            )
        return found

    def combine(self, parts: list[list[dict]], dtypes: dict[str, str | None]) -> list:
        """The whole table's GX result items, from the partitions' (in GX's order)."""
        order = [item["index"] for item in parts[0]] if parts else []
        by_index = [{item["index"]: item for item in part} for part in parts]
        engine, runtime = _engine(), _runtime()
        items = []
        for index in order:
            e = self.expectations[index]
            expectation = _expectation(e.entry)
            mine = [part[index] for part in by_index]
            raised = next((item for item in mine if item["raised"]), None)
            if raised is None:
                try:
                    items.append(
                        self._combined(e, expectation, mine, dtypes, engine, runtime)
                    )
                    continue
                except InvalidParameterError:
                    raise
                except Exception as exc:  # as GX records a failing validation
                    message = str(exc)
            else:
                message = raised["message"]
            items.append(
                v._GxItem(
                    kind=e.entry["type"],
                    kwargs=dict(e.entry.get("kwargs", {})),
                    success=False,
                    result={},
                    raised=True,
                    message=message,
                    meta=dict(e.entry["meta"]),
                )
            )
        return items

    @staticmethod
    def _combined(
        e: _Expectation,
        expectation: Any,
        mine: list[dict],
        dtypes: dict[str, str | None],
        engine: Any,
        runtime: dict,
    ) -> Any:
        configs = expectation.get_validation_dependencies(
            execution_engine=engine, runtime_configuration=runtime
        ).metric_configurations
        metrics = {}
        for name, config in configs.items():
            if name.endswith(_LISTED):  # the failing rows come from the partitions
                metrics[config.id] = []
            elif name.endswith(_UNKEPT):
                metrics[config.id] = None
            else:
                values = [item["metrics"][_worker_name(e, name)] for item in mine]
                column = config.metric_domain_kwargs.get("column")
                metrics[config.id] = combine_metric(
                    name, values, config, dtypes.get(column), e
                )
        result = expectation.metrics_validate(
            metrics=metrics,
            runtime_configuration=copy.deepcopy(runtime),
            execution_engine=engine,
        )
        return v._GxItem.of(result)


def _map_metrics_only(names: list[str], map_metric: str) -> bool:
    allowed = {"table.row_count"} | {
        f"{prefix}.{suffix}"
        for prefix in (map_metric, "column_values.nonnull")
        for suffix in (*SUMMED, *_LISTED, *_UNKEPT)
    }
    return set(names) <= allowed


def _worker_name(e: _Expectation, name: str) -> str:
    """The metric's name in the partitions' suite (uniqueness ran as not-in-set)."""
    if e.kind == "unique" and name.startswith(_UNIQUE + "."):
        return "column_values.not_in_set." + name[len(_UNIQUE) + 1 :]
    return name


def _engine() -> Any:
    from great_expectations.execution_engine import PandasExecutionEngine

    return PandasExecutionEngine()


def _runtime() -> dict[str, Any]:
    return {"result_format": dict(v._GX_RESULT_FORMAT)}


def _expectation(entry: Mapping[str, Any]) -> Any:
    return v.build_expectations({"name": "one", "expectations": [entry]})[0]


# -- per partition (top-level functions of plain arguments: picklable) ----------------------
def _typed_part(job: Mapping[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame, Any]:
    """A partition as read, its schema-checked frame, and coercion's output."""
    raw = read_part(job["path"])
    work = v._check_columns(raw, job["schema"], job["source"])
    coerced = v._coerce_columns(work, job["schema"], job["source"], refuse=False)
    return raw, work, coerced


def _part_value_counts(job: Mapping[str, Any]) -> dict[str, pd.Series]:
    """How often each (typed, present) value of the uniqueness columns occurs."""
    _, _, (typed, _, _) = _typed_part(job)
    return {
        name: typed[name].value_counts(dropna=True)
        for name in job["columns"]
        if name in typed.columns  # else GX reports the missing column
    }


def _validate_part(job: Mapping[str, Any]) -> dict[str, Any]:
    """Judge one partition's rows; summarise it for the table-level judgements."""
    frame_schema, source, start = job["schema"], job["source"], int(job["start"])
    raw, work, (typed, coerce_failures, unconvertible) = _typed_part(job)
    pandera_failures = v._run_pandera(typed, frame_schema, coerce_failures, source)
    gx_failures, gx_items = _conditions_part(typed, job) or _gx_part(
        typed, job["suite"], job["aggregates"], job["counted"]
    )
    failures = v._all_failures(coerce_failures, pandera_failures, gx_failures)
    rejected, keep = v._split_rows(failures, len(raw))
    quarantine = v._quarantine(raw, failures, list(work.columns), rejected)
    quarantine[v.SOURCE_ROW] = rejected + start
    clean = v._final_types(typed.iloc[keep].reset_index(drop=True), frame_schema)
    if job.get("finish") is not None:
        clean = job["finish"](clean)
    write_part(clean, job["clean_path"])
    failures = failures.assign(row=failures["row"].to_numpy(dtype=np.int64) + start)
    return {
        "rows_clean": len(keep),
        "clean_columns": [str(c) for c in clean.columns],
        "failures": failures,
        "quarantine": quarantine,
        "pandera_rows": v._failing_rows(failures, v._PANDERA),
        "gx_rows": v._failing_rows(failures, v._GX),
        "unconvertible": [
            {**c, "first": None if c["first"] is None else c["first"] + start}
            for c in unconvertible
        ],
        "dtypes": {str(c): str(d) for c, d in typed.dtypes.items()},
        "gx": gx_items,
    }


def _gx_part(
    typed: pd.DataFrame,
    suite: Mapping[str, Any],
    aggregates: Mapping[int, list],
    counted: Mapping[int, tuple[str, list[str]]],
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """GX on the partition: the failing rows, and per expectation its metrics.

    A row-wise expectation gives the counts its validation needs (rows,
    missing, unexpected) as GX computed them on the partition; an aggregate
    one the partition's summaries.
    """
    expectations = v.build_expectations(suite)
    context, batch = v._gx_batch(typed)
    result = v._gx_run(batch, suite, expectations)
    items = [v._GxItem.of(r) for r in result.results]
    metrics: dict[int, Any] = {}  # None: GX's result does not show them
    for item in items:
        index = int(item.meta[_INDEX])
        if item.raised:
            continue
        if index in aggregates:
            metrics[index] = {
                name: partition_summary(name, typed, column)
                for name, column in aggregates[index]
            }
        else:
            metrics[index] = _counts_of(item.result, *counted[index])
    missing = {i: expectations[i] for i, found in metrics.items() if found is None}
    if missing:
        metrics.update(_map_counts(context.get_validator(batch=batch), missing))
    failures, summaries = [], []
    for item in items:
        index = int(item.meta[_INDEX])
        if not item.success and item.row_level:
            failures.append(v._gx_row_failures(_as_suite_item(item), typed))
        found = metrics.get(index, {})
        could_not = isinstance(found, str)  # a metric GX could not compute
        summaries.append(
            {
                "index": index,
                "raised": item.raised or could_not,
                "message": found if could_not else item.message,
                "metrics": {} if could_not else found,
            }
        )
    return v._stack(failures), summaries


def _conditions_part(
    typed: pd.DataFrame, job: Mapping[str, Any]
) -> tuple[pd.DataFrame, list[dict[str, Any]]] | None:
    """As :func:`_gx_part`, with GX's conditions run column by column (None: cannot)."""
    conditions = job.get("conditions")
    if conditions is None:
        return None
    found = run_conditions(typed, conditions)
    if found is None:
        return None
    entries = job["suite"]["expectations"]
    failures, summaries = [], []
    for position in gx_order(entries):
        entry = entries[position]
        index = int(entry["meta"][_INDEX])
        if index in job["aggregates"]:
            metrics = {
                name: partition_summary(name, typed, column)
                for name, column in job["aggregates"][index]
            }
        else:
            rows, metrics = found[index]
            kwargs = dict(entry.get("kwargs", {}))
            if len(rows) and kwargs.get("mostly", 1) >= 1:
                item = v._GxItem(
                    kind=entry["type"],
                    kwargs=kwargs,
                    success=False,
                    result={"unexpected_index_list": rows},
                    raised=False,
                    message=None,
                    meta=dict(entry["meta"]),
                )
                failures.append(v._gx_row_failures(_as_suite_item(item), typed))
        summaries.append(
            {"index": index, "raised": False, "message": None, "metrics": metrics}
        )
    return v._stack(failures), summaries


def _counts_of(
    result: Mapping[str, Any], map_metric: str, names: list[str]
) -> dict[str, int] | None:
    """A row-wise expectation's counts, read off GX's result of it (None if absent).

    GX's map validation reports ``element_count`` (the metric
    ``table.row_count``), ``missing_count`` (``column_values.nonnull``'s
    unexpected count) and ``unexpected_count`` (its own metric's), unchanged.
    """
    keys = {
        "table.row_count": "element_count",
        f"{map_metric}.unexpected_count": "unexpected_count",
        "column_values.nonnull.unexpected_count": "missing_count",
    }
    found = {}
    for name in names:
        key = keys.get(name)
        if key is None or result.get(key) is None:
            return None
        found[name] = int(result[key])
    return found


def _as_suite_item(item: Any) -> Any:
    """A uniqueness expectation that ran as not-in-set, named as the suite names it."""
    original = item.meta.get(_ORIGINAL)
    if original is None:
        return item
    return dataclasses.replace(
        item, kind=original["type"], kwargs=dict(original["kwargs"])
    )


def _map_counts(validator: Any, expectations: Mapping[int, Any]) -> dict[int, Any]:
    """The counts each row-wise expectation's validation needs, computed by GX.

    One metric computation for all of them; an expectation whose metric GX
    could not compute gets the reason (a string) instead.
    """
    runtime = _runtime()
    wanted: dict[int, dict[str, Any]] = {}
    for index, expectation in expectations.items():
        configs = expectation.get_validation_dependencies(
            execution_engine=validator.execution_engine, runtime_configuration=runtime
        ).metric_configurations
        wanted[index] = {
            name: config
            for name, config in configs.items()
            if name == "table.row_count" or name.endswith(SUMMED)
        }
    unique = {c.id: c for configs in wanted.values() for c in configs.values()}
    resolved, aborted = validator.compute_metrics(list(unique.values()), runtime)
    found: dict[int, Any] = {}
    for index, configs in wanted.items():
        missing = [name for name, c in configs.items() if c.id not in resolved]
        found[index] = (
            f"metric {missing[0]} could not be computed"
            if missing
            else {name: resolved[c.id] for name, c in configs.items()}
        )
    return found


def _typed_dtypes(found: list[dict]) -> dict[str, str | None]:
    """Each column's dtype in the whole typed table (float if some part's was)."""
    seen: dict[str, set] = {}
    for part in found:
        for column, dtype in part["dtypes"].items():
            seen.setdefault(column, set()).add(dtype)
    return {
        column: (
            next(iter(kinds))
            if len(kinds) == 1
            else "float64"
            if kinds <= {"int64", "float64"}
            else None
        )
        for column, kinds in seen.items()
    }


def _statistics(items: list) -> dict[str, Any]:
    from great_expectations.validator.validation_statistics import (
        calc_validation_statistics,
    )

    stats = calc_validation_statistics(
        [SimpleNamespace(success=item.success) for item in items]
    )
    return {
        "evaluated_expectations": stats.evaluated_expectations,
        "successful_expectations": stats.successful_expectations,
        "unsuccessful_expectations": stats.unsuccessful_expectations,
        "success_percent": v._jsonable(stats.success_percent),
    }


def _unconvertible(
    found: list[dict], frame_schema: pa.DataFrameSchema
) -> list[dict[str, Any]]:
    """Per coerced column, its bad and present cells over all partitions (schema order)."""
    merged: dict[str, dict[str, Any]] = {}
    for part in found:
        for column in part["unconvertible"]:
            name = column["column"]
            if name not in merged:
                merged[name] = dict(column)
                continue
            total = merged[name]
            total["bad"] += column["bad"]
            total["present"] += column["present"]
            if column["first"] is not None and (
                total["first"] is None or column["first"] < total["first"]
            ):
                total["first"], total["shown"] = column["first"], column["shown"]
    return [merged[name] for name in frame_schema.columns if name in merged]


def _duplicates(counted: list[dict[str, pd.Series]], columns: list[str]) -> dict:
    found = {}
    for name in columns:
        pieces = [part[name] for part in counted if name in part]
        if not pieces:
            found[name] = []
            continue
        totals = pd.concat(pieces).groupby(level=0, sort=True).sum()
        found[name] = totals.index[totals.to_numpy() > 1].tolist()
    return found


def _summed(series: list[pd.Series]) -> pd.Series:
    """Failing rows per label over all partitions (labels sorted, as in one table)."""
    present = [s for s in series if len(s)]
    if not present:
        return series[0] if series else pd.Series(dtype=np.int64)
    return pd.concat(present).groupby(level=0, sort=True).sum()


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Stack the partitions' quarantines (an empty one may hold other dtypes)."""
    present = [f for f in frames if len(f)]
    if not present:
        return frames[0]
    return pd.concat(present, ignore_index=True)
