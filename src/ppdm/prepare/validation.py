"""Validate a raw table against a pandera schema and a Great Expectations suite.

The ``validate`` step splits the ingested table into a *clean* table, typed as
the schema declares, and a *quarantine* table holding every rejected row as it
came in, with all the reasons it was rejected. Two independent validators run
on every row:

- the dataset's pandera ``DataFrameModel`` (types, ranges, value domains,
  nullability), run lazily so that every failure is collected;
- the dataset's Great Expectations (GX 1.x) suite, given as a plain dict (see
  :func:`build_expectations`) and run in an ephemeral GX context with
  ``result_format="COMPLETE"``, so each failing expectation names its rows.

A row rejected by either validator is quarantined. The table as a whole is
rejected in three cases:

- a required column is missing, an undeclared column is present while the
  schema is ``strict``, or a column holds no value of its declared type at
  all: :class:`~ppdm.exceptions.SchemaMismatchError`, before any row is
  judged. Extra columns are accepted (and kept as they are) when the schema is
  not strict; the project's dataset schemas are strict, so a column nobody
  declared (a name, an ID) cannot slip into a release;
- more than ``max_rejected_fraction`` of the rows are rejected:
  :class:`~ppdm.exceptions.DataValidationError`;
- a table-level expectation fails (row count, a ``mostly`` threshold, a set of
  target classes): :class:`~ppdm.exceptions.DataValidationError`. Column
  expectations with ``mostly`` below 1 tolerate some failing rows by design,
  so they judge the table, not its rows, and never quarantine a row.

Both errors raised after the rows were judged carry the full
:class:`ValidationOutcome` in their ``outcome`` attribute, so the caller can
still write the quarantine artifact.

Examples
--------
>>> import pandas as pd
>>> import pandera.pandas as pa
>>> class People(pa.DataFrameModel):
...     age: pa.typing.Series[int] = pa.Field(ge=17, le=90)
...     sex: pa.typing.Series[str] = pa.Field(isin=["Female", "Male"])
...     class Config:
...         coerce = True
>>> suite = {"name": "people", "expectations": [
...     {"type": "expect_table_row_count_to_be_between", "kwargs": {"min_value": 1}},
...     {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "sex"}}]}
>>> table = pd.DataFrame({"age": ["34", "230", "51", "abc", "29", "62"],
...                       "sex": ["Male", "Female", "X", "Male", None, "Female"]})
>>> outcome = validate_table(table, People, suite, max_rejected_fraction=0.7,
...                          source="people.csv")
>>> outcome.clean
   age     sex
0   34    Male
1   62  Female
>>> rejected = outcome.quarantine
>>> for row, why in zip(rejected["_source_row"], rejected["_reasons"]):
...     print(row, why)
1 age: 230 is not <= 90 [pandera]
2 sex: 'X' is not one of {Female, Male} [pandera]
3 age: 'abc' cannot be read as int64 [pandera]
4 sex: missing value (column is not nullable) [pandera]; sex: missing value [gx]
"""

from __future__ import annotations

import datetime
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa
from pandera.engines import pandas_engine
from pandera.errors import ParserError, SchemaErrors

from ppdm.exceptions import (
    DataValidationError,
    InvalidParameterError,
    SchemaMismatchError,
)
from ppdm.prepare.failure_reasons import (
    gx_reason,
    pandera_reason,
    shown_value,
    value_domain,
)

__all__ = ["ValidationOutcome", "build_expectations", "validate_table"]

logger = logging.getLogger(__name__)

#: Columns added to the quarantine table.
SOURCE_ROW = "_source_row"
REASONS = "_reasons"

_PANDERA, _GX = "pandera", "gx"
_TOP_CHECKS = 5  # failing checks named in an error message
# Every failing index, but no pandas query string (it spells out every failing
# index again, megabytes when a whole column fails).
_GX_RESULT_FORMAT = {
    "result_format": "COMPLETE",
    "return_unexpected_index_query": False,
}
_FAILURES = ["row", "column", "origin", "check", "message"]


@dataclass(frozen=True)
class ValidationOutcome:
    """What the validate step produces.

    Attributes
    ----------
    clean : pandas.DataFrame
        The accepted rows, typed as the schema declares (text columns as the
        pandas ``string`` dtype, as :func:`ppdm.prepare.datasets.load` returns them),
        with a fresh ``RangeIndex``.
    quarantine : pandas.DataFrame
        The rejected rows exactly as they came in, plus ``_source_row`` (the
        0-based row number in the input) and ``_reasons`` (every failed check,
        ``"column: value ... [validator]"``, joined by ``"; "``).
    report : dict
        JSON-serialisable summary: ``source``, ``rows_in``, ``rows_clean``,
        ``rows_rejected``, ``rejected_fraction``, ``limit``, ``passed``,
        ``pandera`` (failing rows per check), ``gx`` (failing rows per
        expectation, table-level failures, GX statistics, one entry per
        expectation).
    clean_source_rows : numpy.ndarray
        For each row of ``clean``, its 0-based row number in the input.
    """

    clean: pd.DataFrame
    quarantine: pd.DataFrame
    report: dict[str, Any]
    clean_source_rows: np.ndarray


def validate_table(
    df: pd.DataFrame,
    schema: pa.DataFrameSchema | type[pa.DataFrameModel],
    suite: Mapping[str, Any],
    *,
    max_rejected_fraction: float = 0.05,
    source: str = "table",
) -> ValidationOutcome:
    """Validate a table with pandera and Great Expectations; quarantine bad rows.

    Parameters
    ----------
    df : pandas.DataFrame
        The raw table; not modified. Its index is ignored: rows are numbered
        0..n-1 in their order.
    schema : pandera.pandas.DataFrameSchema or DataFrameModel class
        The dataset's schema (as read from a dataset folder's ``schema.yaml``);
        with ``coerce=True`` values are converted to the declared types, and a
        value that cannot be is a row failure.
    suite : dict
        The dataset's expectation suite, ``{"name": str, "expectations":
        [{"type": "expect_...", "kwargs": {...}}, ...]}``.
    max_rejected_fraction : float, default=0.05
        The largest fraction of rejected rows the table may have.
    source : str, default="table"
        Names the table in messages (a file name, a masked URL).

    Returns
    -------
    ValidationOutcome

    Raises
    ------
    ppdm.exceptions.SchemaMismatchError
        A required column is missing, an extra column is present under a
        strict schema, or a column has no value of its declared type.
    ppdm.exceptions.DataValidationError
        Too many rows rejected, or a table-level expectation failed; the
        ``outcome`` attribute carries the :class:`ValidationOutcome`.
    ppdm.exceptions.InvalidParameterError
        ``max_rejected_fraction`` is not in [0, 1], or the suite is malformed.
    """
    _check_fraction(max_rejected_fraction)
    frame_schema = _frame_schema(schema)
    raw = df.reset_index(drop=True)
    work = _check_columns(raw, frame_schema, source)
    typed, coerce_failures = _coerce(work, frame_schema, source)
    pandera_failures = _run_pandera(typed, frame_schema, coerce_failures, source)
    gx_failures, gx_report = _run_gx(typed, suite)

    failures = _all_failures(coerce_failures, pandera_failures, gx_failures)
    rejected, keep = _split_rows(failures, len(raw))
    quarantine = _quarantine(raw, failures, list(work.columns), rejected)
    clean = _final_types(typed.iloc[keep].reset_index(drop=True), frame_schema)
    report = _report(
        source=source,
        schema_name=_schema_name(schema, frame_schema),
        suite=suite,
        rows=(len(raw), len(keep), len(rejected)),
        limit=max_rejected_fraction,
        pandera_rows=_failing_rows(failures, _PANDERA),
        gx_rows=_failing_rows(failures, _GX),
        gx_report=gx_report,
    )
    outcome = ValidationOutcome(clean, quarantine, report, keep)
    _conclude(report, source, failures, outcome)
    return outcome


# -- steps shared with the validation of partitions (ppdm.scale.validate_parts) --
def _check_fraction(max_rejected_fraction: Any) -> None:
    if isinstance(max_rejected_fraction, bool) or not (
        isinstance(max_rejected_fraction, (int, float))
        and 0.0 <= max_rejected_fraction <= 1.0
    ):
        raise InvalidParameterError(
            f"max_rejected_fraction must be a number in [0, 1]; "
            f"got {max_rejected_fraction!r}"
        )


def _frame_schema(
    schema: pa.DataFrameSchema | type[pa.DataFrameModel],
) -> pa.DataFrameSchema:
    return schema if isinstance(schema, pa.DataFrameSchema) else schema.to_schema()


def _schema_name(schema: Any, frame_schema: pa.DataFrameSchema) -> str:
    return frame_schema.name or getattr(schema, "__name__", "schema")


def _all_failures(*stages: pd.DataFrame) -> pd.DataFrame:
    """The failures of all stages (coercion, pandera, GX), in that order."""
    return pd.concat(
        [f for f in stages if len(f)] or [_no_failures()], ignore_index=True
    )


def _split_rows(failures: pd.DataFrame, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Row numbers (sorted) of the rejected rows and of the kept ones."""
    # A mask, not np.unique/np.setdiff1d: those sort (hash) all n_rows row
    # numbers, 0.4 s for a 250,000-row part; a mask is one pass.
    failed = np.zeros(n_rows, dtype=bool)
    failed[failures["row"].to_numpy(dtype=np.int64)] = True
    return np.flatnonzero(failed), np.flatnonzero(~failed)


def _quarantine(
    raw: pd.DataFrame, failures: pd.DataFrame, columns: list[str], rejected: np.ndarray
) -> pd.DataFrame:
    """The rejected rows as they came in, with their row numbers and reasons."""
    quarantine = raw.iloc[rejected].reset_index(drop=True)
    quarantine[SOURCE_ROW] = rejected
    quarantine[REASONS] = _reasons(failures, columns, rejected)
    return quarantine


def _report(
    *,
    source: str,
    schema_name: str,
    suite: Mapping[str, Any],
    rows: tuple[int, int, int],
    limit: float,
    pandera_rows: pd.Series,
    gx_rows: pd.Series,
    gx_report: dict[str, Any],
) -> dict[str, Any]:
    """The validation report; ``rows`` = (in, clean, rejected).

    ``pandera_rows`` and ``gx_rows``: failing rows per check label, as
    :func:`_failing_rows` gives them (labels sorted).
    """
    rows_in, rows_clean, rows_rejected = rows
    fraction = rows_rejected / rows_in if rows_in else 0.0
    over_limit = fraction > limit
    return {
        "source": source,
        "schema": schema_name,
        "suite": str(suite.get("name", "")),
        "rows_in": rows_in,
        "rows_clean": rows_clean,
        "rows_rejected": rows_rejected,
        "rejected_fraction": fraction,
        "limit": float(limit),
        "passed": not over_limit and not gx_report["table_failures"],
        "pandera": {"failing_rows_per_check": _ranked(pandera_rows)},
        "gx": {"failing_rows_per_expectation": _ranked(gx_rows), **gx_report},
    }


def _conclude(
    report: dict[str, Any], source: str, failures: pd.DataFrame, outcome: Any
) -> None:
    """Raise :class:`DataValidationError` when the table failed, else log the counts."""
    if not report["passed"]:
        over_limit = report["rejected_fraction"] > report["limit"]
        raise DataValidationError(
            _rejection_message(report, source, over_limit),
            failure_cases=failures,
            outcome=outcome,
        )
    logger.info(
        "%s: %d of %d rows clean, %d quarantined",
        source, report["rows_clean"], report["rows_in"], report["rows_rejected"],
    )  # fmt: skip


# -- columns ------------------------------------------------------------------
def _check_columns(
    frame: pd.DataFrame, frame_schema: pa.DataFrameSchema, source: str
) -> pd.DataFrame:
    problems = [
        f"column '{name}' is missing (expected {column.dtype})"
        for name, column in frame_schema.columns.items()
        if column.required and name not in frame.columns
    ]
    extra = [c for c in frame.columns if c not in frame_schema.columns]
    if extra and frame_schema.strict is True:
        problems += [
            f"column '{c}' is not in the schema, which is strict "
            f"(expected only {', '.join(map(str, frame_schema.columns))})"
            for c in extra
        ]
    if problems:
        raise SchemaMismatchError(f"{source}: " + "; ".join(problems))
    if extra and frame_schema.strict == "filter":
        return frame.drop(columns=extra)
    return frame


# -- coercion -----------------------------------------------------------------
def _coerce(
    frame: pd.DataFrame, frame_schema: pa.DataFrameSchema, source: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Convert each column with pandera's own dtype engine, value by value.

    pandera coerces a column all or nothing: one ``'abc'`` in ``age`` leaves
    the whole column as text, and its range checks then fail with a
    ``TypeError`` for every row instead of naming the bad ones. Coercing the
    non-missing values here, and leaving the cells that cannot be converted
    missing, lets pandera and GX judge every other cell of the column.
    """
    typed, failures, _ = _coerce_columns(frame, frame_schema, source, refuse=True)
    return typed, failures


def _coerce_columns(
    frame: pd.DataFrame,
    frame_schema: pa.DataFrameSchema,
    source: str,
    *,
    refuse: bool,
) -> tuple[pd.DataFrame, pd.DataFrame, list[dict[str, Any]]]:
    """:func:`_coerce`, and per column the cells that could not be converted.

    With ``refuse``, a column none of whose values converts is a
    :class:`SchemaMismatchError` at once; else it is only counted (a
    partition may hold no good value of a column the whole table has), in the
    list returned: one entry per converted column, ``{"column", "dtype",
    "kind", "bad", "present", "first", "shown"}``: its bad and present
    (non-missing) cells, the first bad row and that value as a message shows
    it (None without a bad cell); :func:`_refuse_unconvertible` judges them.
    """
    typed = frame.copy()
    failures = []
    unconvertible = []
    for name, column in frame_schema.columns.items():
        if name not in frame.columns or column.dtype is None:
            continue
        if not (column.coerce or frame_schema.coerce):
            continue
        series = frame[name]
        # Masks and drops copy the column even when they keep every cell:
        # skipped where nothing is missing or dropped (most columns).
        known = series.notna()
        present = series if known.all() else series[known]
        dtype = column.dtype
        # A boolean or a date is not a number: astype(int) would read True as
        # 1 (a CSV column of "true" cells arrives as booleans) and a date as
        # nanoseconds, and a credit amount of "true" would pass as 1.
        not_numbers = (
            _non_numeric_cells(present)
            if _kind_of(dtype) in ("integers", "numbers")
            else pd.Index([], dtype=np.int64)
        )
        candidates = present.drop(not_numbers) if len(not_numbers) else present
        try:
            converted = dtype.try_coerce(candidates)
            bad_index = pd.Index([], dtype=np.int64)
        except ParserError as err:
            if err.failure_cases is None:  # pandera could not tell which cells
                bad_index = candidates.index
            else:
                bad_index = pd.Index(err.failure_cases["index"].astype(np.int64))
            converted = dtype.coerce(candidates.drop(bad_index))
        if pd.api.types.is_integer_dtype(converted.dtype):
            # astype(int) truncates 30.5 to 30 without a word: catch it here
            kept = candidates.drop(bad_index) if len(bad_index) else candidates
            lossy = pd.to_numeric(kept, errors="coerce")
            lossy = lossy[(lossy != converted).to_numpy()].index
            if len(lossy):
                bad_index = bad_index.append(lossy)
                converted = converted.drop(lossy)
        bad_index = bad_index.append(not_numbers)
        first = int(bad_index.min()) if len(bad_index) else None
        unconvertible.append(
            {
                "column": name,
                "dtype": str(dtype),
                "kind": _kind_of(dtype),
                "bad": len(bad_index),
                "present": len(present),
                "first": first,
                "shown": None if first is None else shown_value(present[first]),
            }
        )
        if refuse:
            _refuse_unconvertible(unconvertible[-1:], source)
        if len(converted) == len(series):
            typed[name] = converted
        else:
            typed[name] = converted.reindex(series.index)
        if len(bad_index):
            failures.append(
                pd.DataFrame(
                    {
                        "row": bad_index.to_numpy(),
                        "column": name,
                        "origin": _PANDERA,
                        "check": f"coerce_dtype('{dtype}')",
                        "message": [
                            f"{shown_value(v)} cannot be read as {dtype}"
                            for v in series[bad_index]
                        ],
                    }
                )
            )
    return typed, _stack(failures), unconvertible


def _refuse_unconvertible(columns: list[dict[str, Any]], source: str) -> None:
    """Raise for the first column none of whose values could be converted."""
    for column in columns:
        if column["bad"] and column["bad"] == column["present"]:
            raise SchemaMismatchError(
                f"{source}: column '{column['column']}' cannot be read as "
                f"{column['dtype']}: {column['bad']:,} of {column['present']:,} "
                f"values are not {column['kind']}, e.g. {column['shown']} at row "
                f"{column['first']}"
            )


#: Python types of cells that are not numbers, although pandas converts them.
_NOT_NUMBERS = (
    bool,
    np.bool_,
    datetime.date,
    datetime.time,
    datetime.timedelta,
    np.datetime64,
    np.timedelta64,
    bytes,
    list,
    tuple,
    dict,
    np.ndarray,
)


def _non_numeric_cells(present: pd.Series) -> pd.Index:
    """The index of the cells of ``present`` that hold booleans, dates or containers."""
    dtype = present.dtype
    if (
        pd.api.types.is_bool_dtype(dtype)
        or pd.api.types.is_datetime64_any_dtype(dtype)
        or pd.api.types.is_timedelta64_dtype(dtype)
    ):
        return present.index
    if not pd.api.types.is_object_dtype(dtype) or pd.api.types.infer_dtype(
        present, skipna=True
    ) in ("string", "integer", "floating", "mixed-integer-float", "decimal", "empty"):
        return pd.Index([], dtype=np.int64)
    values = present.to_numpy()
    mask = np.fromiter(
        (isinstance(v, _NOT_NUMBERS) for v in values), dtype=bool, count=len(values)
    )
    return present.index[mask]


def _kind_of(dtype: Any) -> str:
    text = str(dtype)
    if "int" in text:
        return "integers"
    if "float" in text:
        return "numbers"
    if "bool" in text:
        return "booleans"
    if "datetime" in text:
        return "dates"
    return f"{text} values"


# -- pandera ------------------------------------------------------------------
def _run_pandera(
    typed: pd.DataFrame,
    frame_schema: pa.DataFrameSchema,
    coerce_failures: pd.DataFrame,
    source: str,
) -> pd.DataFrame:
    # _coerce has converted every column already. Letting pandera coerce again
    # costs a per-value Python fallback (~0.2 s on Adult) whenever an integer
    # column holds a missing value, only to report what not_nullable reports.
    checks_only = frame_schema.update_columns(
        {name: {"coerce": False} for name in frame_schema.columns}
    )
    checks_only.coerce = False
    try:
        checks_only.validate(typed, lazy=True)
    except SchemaErrors as err:
        # never str(err): it lists every failing value and can run to megabytes
        cases = err.failure_cases
    else:
        return _no_failures()
    table_level = cases[cases["index"].isna()]
    if len(table_level):
        first = table_level.iloc[0]
        raise SchemaMismatchError(
            f"{source}: column '{first['column']}' fails {first['check']} as a "
            f"whole ({_shorten(str(first['failure_case']))})",
            failure_cases=cases,
        )
    cases = cases.assign(row=cases["index"].astype(np.int64))
    # A cell that _coerce left missing already has its reason ("'abc' cannot
    # be read as int64"); pandera's not_nullable on it would only add noise.
    # A missing cell of an integer column also fails the int64 dtype check,
    # which says no more than not_nullable does.
    cells = pd.MultiIndex.from_frame(cases[["row", "column"]])
    masked = pd.MultiIndex.from_frame(coerce_failures[["row", "column"]].astype(object))
    null_cells = pd.MultiIndex.from_frame(
        cases.loc[cases["check"] == "not_nullable", ["row", "column"]]
    )
    redundant = (
        cases["failure_case"].isna()
        & cases["check"].astype(str).str.startswith("dtype(")
        & cells.isin(null_cells)
    )
    cases = cases[~(cells.isin(masked) | redundant)]
    checks = _checks_by_number(frame_schema)
    messages = [
        pandera_reason(checks.get((column, number)), check, value)
        for column, number, check, value in zip(
            cases["column"], cases["check_number"], cases["check"],
            cases["failure_case"],
        )
    ]  # fmt: skip
    failures = pd.DataFrame(
        {
            "row": cases["row"].to_numpy(),
            "column": cases["column"].fillna("<table>").astype(str).to_numpy(),
            "origin": _PANDERA,
            "check": cases["check"].astype(str).to_numpy(),
            "message": messages,
        }
    )
    # a dataframe-wide check reports each bad row once per column
    return failures.drop_duplicates(["row", "check", "message"])


def _checks_by_number(frame_schema: pa.DataFrameSchema) -> dict[tuple, pa.Check]:
    found = {}
    for name, column in frame_schema.columns.items():
        for number, check in enumerate(column.checks):
            found[(name, number)] = check
    return found


# -- Great Expectations -------------------------------------------------------
def build_expectations(suite: Mapping[str, Any]) -> list[Any]:
    """Turn a suite dict into Great Expectations 1.x expectation objects.

    Parameters
    ----------
    suite : dict
        ``{"name": str, "expectations": [{"type": "expect_...", "kwargs":
        {...}, "meta": {...}}, ...]}``; ``type`` is any GX expectation type in
        snake case, ``kwargs`` its arguments as GX documents them.

    Returns
    -------
    list of great_expectations.expectations.Expectation

    Raises
    ------
    ppdm.exceptions.InvalidParameterError
        The suite is not of that shape, names an unknown expectation, or gives
        it arguments GX rejects.
    """
    from great_expectations.expectations.expectation_configuration import (
        ExpectationConfiguration,
    )

    name = suite.get("name", "<unnamed>") if isinstance(suite, Mapping) else None
    entries = suite.get("expectations") if isinstance(suite, Mapping) else None
    if not isinstance(entries, list):
        raise InvalidParameterError(
            "suite must be a dict with an 'expectations' list; "
            f"got {type(suite).__name__}"
        )
    built = []
    for number, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("type"), str):
            raise InvalidParameterError(
                f"suite {name!r}: expectation {number} needs a 'type' string"
            )
        try:
            built.append(
                ExpectationConfiguration(
                    type=entry["type"],
                    kwargs=dict(entry.get("kwargs", {})),
                    meta=dict(entry.get("meta", {})),
                ).to_domain_obj()
            )
        except Exception as exc:  # GX raises many unrelated types here
            raise InvalidParameterError(
                f"suite {name!r}: expectation {number} ({entry['type']}) is "
                f"invalid: {_shorten(str(exc))}"
            ) from exc
    return built


def _run_gx(typed: pd.DataFrame, suite: Mapping[str, Any]) -> tuple[pd.DataFrame, dict]:
    if isinstance(suite.get("expectations"), list) and not suite["expectations"]:
        # Nothing to check: no need to start Great Expectations (seconds of
        # imports) for an empty suite.
        return _no_failures(), _gx_report([], {})
    result = _gx_validate(typed, suite)
    items = [_GxItem.of(item) for item in result.results]
    failures = [
        _gx_row_failures(item, typed)
        for item in items
        if not item.success and item.row_level
    ]
    statistics = {k: _jsonable(v) for k, v in result.statistics.items()}
    return _stack(failures), _gx_report(items, statistics)


def _gx_validate(typed: pd.DataFrame, suite: Mapping[str, Any]) -> Any:
    """Great Expectations' validation of ``typed`` against ``suite`` (a suite result)."""
    expectations = build_expectations(suite)
    _, batch = _gx_batch(typed)
    return _gx_run(batch, suite, expectations)


def _gx_batch(typed: pd.DataFrame) -> tuple[Any, Any]:
    """An ephemeral GX context and the batch of ``typed`` in it."""
    # GX is imported here, not at module level: the import alone costs 2-6 s,
    # which every `import ppdm.prepare.validation` (e.g. the CLI) would otherwise pay.
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")  # in memory; a new one per call
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    batch = (
        context.data_sources.add_pandas(name="memory")
        .add_dataframe_asset(name="table")
        .add_batch_definition_whole_dataframe("whole")
        .get_batch(batch_parameters={"dataframe": typed})
    )
    return context, batch


def _gx_run(batch: Any, suite: Mapping[str, Any], expectations: list[Any]) -> Any:
    import great_expectations as gx

    # Batch.validate with an unsaved suite: a ValidationDefinition would also
    # serialise the suite and the results into the context's stores, which
    # doubles the run time and is thrown away with the ephemeral context.
    gx_suite = gx.ExpectationSuite(
        name=str(suite.get("name") or "suite"), expectations=expectations
    )
    return batch.validate(gx_suite, result_format=_GX_RESULT_FORMAT)


@dataclass(frozen=True)
class _GxItem:
    """What the report needs of one expectation's result (plain, picklable).

    ``result`` is GX's result dict; ``message`` the exception's text when the
    expectation raised.
    """

    kind: str
    kwargs: dict[str, Any]
    success: bool
    result: dict[str, Any]
    raised: bool
    message: str | None
    meta: dict[str, Any]

    @classmethod
    def of(cls, item: Any) -> _GxItem:
        """From a GX ``ExpectationValidationResult``."""
        config = item.expectation_config
        raised = bool(
            item.exception_info and item.exception_info.get("raised_exception")
        )
        return cls(
            kind=config.type,
            kwargs=dict(config.kwargs),
            success=bool(item.success),
            result=dict(item.result or {}),
            raised=raised,
            message=(
                str(item.exception_info.get("exception_message")) if raised else None
            ),
            meta=dict(config.meta or {}),
        )

    @property
    def column(self) -> Any:
        return self.kwargs.get("column")

    @property
    def label(self) -> str:
        return f"{self.kind}({self.column})" if self.column else self.kind

    @property
    def row_level(self) -> bool:
        """Whether a failure names rows (else it judges the table)."""
        return (
            not self.raised
            and self.column is not None
            and self.kwargs.get("mostly", 1) >= 1
            and self.result.get("unexpected_index_list") is not None
        )


def _gx_row_failures(item: _GxItem, typed: pd.DataFrame) -> pd.DataFrame:
    """The failing rows of a failed row-level expectation, with messages."""
    rows = np.asarray(item.result["unexpected_index_list"], dtype=np.int64)
    values = typed[item.column].to_numpy()[rows]
    return pd.DataFrame(
        {
            "row": rows,
            "column": item.column,
            "origin": _GX,
            "check": item.label,
            "message": [gx_reason(item.kind, item.kwargs, v) for v in values],
        }
    )


def _gx_report(items: list[_GxItem], statistics: dict[str, Any]) -> dict[str, Any]:
    """The report's ``gx`` part but the failing rows: entries and table failures."""
    table_failures, entries = [], []
    for item in items:
        entries.append(
            {
                "expectation": item.kind,
                "column": item.column,
                "success": item.success,
                "mostly": _jsonable(item.kwargs.get("mostly")),
                "unexpected_count": _jsonable(item.result.get("unexpected_count")),
                # A column statistic (a maximum, a mean) is a fact about the
                # raw data; the report is published, so only table-level
                # observations (row count, column names) are kept.
                "observed_value": (
                    None
                    if item.column
                    else _jsonable(item.result.get("observed_value"))
                ),
            }
        )
        if item.success or item.row_level:
            continue
        detail = (
            _shorten(str(item.message))
            if item.raised
            else _table_detail(item.kwargs, item.result)
        )
        table_failures.append({"expectation": item.label, "detail": detail})
    return {
        "table_failures": table_failures,
        "statistics": statistics,
        "expectations": entries,
    }


def _table_detail(kwargs: dict, outcome: dict) -> str:
    if "mostly" in kwargs and outcome.get("unexpected_percent") is not None:
        share = 100.0 - float(outcome["unexpected_percent"])
        return (
            f"{share:.2f}% of values pass, fewer than mostly="
            f"{kwargs['mostly']:.2%} requires ({outcome.get('unexpected_count')} fail)"
        )
    wanted = {k: v for k, v in kwargs.items() if k not in ("column", "batch_id")}
    if outcome.get("partial_missing_list"):
        found = f"missing {value_domain(outcome['partial_missing_list'])}"
    else:
        found = f"observed {_shorten(str(_jsonable(outcome.get('observed_value'))))}"
    return f"{found}; expected {_shorten(str(wanted))}"


# -- reasons and report -------------------------------------------------------
def _reasons(failures: pd.DataFrame, columns: list[str], rows: np.ndarray) -> list[str]:
    if not len(rows):
        return []
    order = {name: position for position, name in enumerate(columns)}
    said = failures["column"] + ": " + failures["message"]
    ranked = failures.assign(
        _col=failures["column"].map(order).fillna(len(order)),
        _origin=(failures["origin"] == _GX).astype(np.int8),
        _text=said + " [" + failures["origin"] + "]",
    ).sort_values(["row", "_col", "_origin"], kind="stable")
    joined = ranked.groupby("row", sort=True)["_text"].agg("; ".join)
    return joined.reindex(rows).tolist()


def _failing_rows(failures: pd.DataFrame, origin: str) -> pd.Series:
    """Failing rows per check label of one validator, labels sorted.

    Rows of disjoint parts of a table add up: the sum of the parts' series
    (by label) is the whole table's.
    """
    mine = failures[failures["origin"] == origin]
    if origin == _PANDERA:
        labels = mine["column"] + ": " + mine["check"]
    else:
        labels = mine["check"]
    return mine.assign(_label=labels).groupby("_label")["row"].nunique()


def _ranked(counts: pd.Series) -> dict[str, int]:
    """Most failing rows first; equal counts in label order."""
    counts = counts.sort_values(ascending=False, kind="stable")
    return {str(k): int(v) for k, v in counts.items()}


def _rejection_message(report: dict, source: str, over_limit: bool) -> str:
    parts = []
    if over_limit:
        top = sorted(
            [(n, f"{label} [{_PANDERA}]")
             for label, n in report["pandera"]["failing_rows_per_check"].items()]
            + [(n, f"{label} [{_GX}]")
               for label, n in report["gx"]["failing_rows_per_expectation"].items()],
            key=lambda pair: -pair[0],
        )[:_TOP_CHECKS]  # fmt: skip
        parts.append(
            f"{report['rows_rejected']:,} of {report['rows_in']:,} rows rejected "
            f"(fraction {report['rejected_fraction']:.4f} = "
            f"{report['rejected_fraction']:.2%}), above the limit of "
            f"{report['limit']:.4f} ({report['limit']:.2%}); top failing checks: "
            + ", ".join(f"{label}: {n:,} row{'s' * (n != 1)}" for n, label in top)
        )
    for failure in report["gx"]["table_failures"]:
        parts.append(
            f"table expectation {failure['expectation']} failed [{_GX}]: "
            f"{failure['detail']}"
        )
    return f"{source}: " + "; ".join(parts) + "."


def _final_types(clean: pd.DataFrame, frame_schema: pa.DataFrameSchema) -> pd.DataFrame:
    """Give the accepted rows their declared types, text as pandas ``string``.

    Every failing row is gone and the checks have run, so pandera only sets
    the final dtypes (``coerce_dtype``: the schema's coercion without a second
    run of its checks). pandera 0.35 maps text to pandas' ``str`` dtype
    (missing = NaN) under pandas 3, while the project's tables use ``string``
    (missing = ``pd.NA``) as :func:`ppdm.prepare.datasets.load` does; one astype
    restores that.
    """
    clean = frame_schema.coerce_dtype(clean)
    text = {
        name: "string"
        for name, column in frame_schema.columns.items()
        if name in clean.columns
        and isinstance(column.dtype, pandas_engine.STRING | pandas_engine.NpString)
    }
    return clean.astype(text) if text else clean


# -- small helpers ------------------------------------------------------------
def _no_failures() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "row": pd.Series([], dtype=np.int64),
            **{name: pd.Series([], dtype=object) for name in _FAILURES[1:]},
        }
    )


def _stack(frames: list[pd.DataFrame]) -> pd.DataFrame:
    if not frames:
        return _no_failures()
    stacked = pd.concat(frames, ignore_index=True)
    return stacked.astype({"row": np.int64, "column": object, "message": object})


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, np.ndarray)):
        return [_jsonable(v) for v in value]
    return str(value)


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
