"""Fuzzing the Parquet route: wrong column types, non-finite and huge values, broken files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fuzz_cases import (
    CATEGORICAL,
    NUMERIC,
    ROWS,
    config_data,
    fresh_dir,
    fuzz,
    judge,
    parse_config,
    table,
)
from hypothesis import given
from hypothesis import strategies as st


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz-parquet")


def _run(root: Path, spoiled: str, build, names=(), **changes):
    case = fresh_dir(root)
    path = case / "german.parquet"
    build(path)
    data = config_data(case, {"kind": "parquet", "path": str(path)}, **changes)
    return judge(
        "parquet",
        spoiled,
        lambda: parse_config(data),
        [str(path), *names],
        case / "out",
    )


def _write(frame: pd.DataFrame) -> callable:
    return lambda path: frame.to_parquet(path, index=False)


def _with_column(frame: pd.DataFrame, column: str, values: pa.Array) -> pa.Table:
    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    position = arrow.schema.get_field_index(column)
    return arrow.set_column(position, column, values)


#: A numeric column stored with another type: every value, in that type.
RETYPED = {
    "text": lambda s: pa.array(s.astype(str) + " years"),
    "text digits": lambda s: pa.array(s.astype(str)),
    "boolean": lambda s: pa.array(s % 2 == 0),
    "float with NaN": lambda s: pa.array(s.astype(float).where(s % 3 != 0)),
    "float fractions": lambda s: pa.array(s.astype(float) + 0.25),
    "timestamp": lambda s: pa.array(pd.to_datetime(s, unit="D")),
    "list": lambda s: pa.array([[int(v)] for v in s]),
    "dictionary": lambda s: pa.array(s.astype(str)).dictionary_encode(),
    "uint64 max": lambda s: pa.array(np.full(len(s), 2**64 - 1, dtype=np.uint64)),
    "int64 min": lambda s: pa.array(np.full(len(s), -(2**63), dtype=np.int64)),
    "float 1e30": lambda s: pa.array(np.full(len(s), 1e30)),
}


@pytest.mark.slow  # long property run: CI's slow stage
@fuzz(16)
@given(column=st.sampled_from(NUMERIC), how=st.sampled_from(sorted(RETYPED)))
def test_numeric_columns_of_other_types(root, column, how):
    frame = table()
    arrow = _with_column(frame, column, RETYPED[how](frame[column]))
    _run(root, "wrong type", lambda p: pq.write_table(arrow, p), [column])


@fuzz(8)
@given(
    column=st.sampled_from(NUMERIC),
    value=st.sampled_from([np.nan, np.inf, -np.inf]),
    share=st.sampled_from([0.1, 1.0]),
)
def test_nan_and_infinity(root, column, value, share):
    frame = table().astype({column: float})
    rows = np.arange(max(1, round(share * ROWS)))
    frame.loc[rows, column] = value
    _run(root, "NaN/inf", _write(frame), [column])


@fuzz(6)
@given(column=st.sampled_from(CATEGORICAL), how=st.sampled_from(["integers", "nulls"]))
def test_categorical_columns_of_other_types(root, column, how):
    frame = table()
    values = (
        pa.array(np.arange(ROWS))
        if how == "integers"
        else pa.nulls(ROWS, type=pa.string())
    )
    arrow = _with_column(frame, column, values)
    _run(root, "wrong type", lambda p: pq.write_table(arrow, p), [column])


@fuzz(6)
@given(how=st.sampled_from(["no rows", "not parquet", "truncated", "csv bytes"]))
def test_empty_and_broken_files(root, how):
    def build(path: Path) -> None:
        if how == "no rows":
            table().iloc[:0].to_parquet(path, index=False)
        elif how == "not parquet":
            path.write_bytes(b"PAR1 but not really\x00\x01")
        elif how == "truncated":
            table().to_parquet(path, index=False)
            data = path.read_bytes()
            path.write_bytes(data[: len(data) // 2])
        else:
            path.write_text(table().to_csv(index=False))

    _run(root, "empty or broken file", build)


@fuzz(8)
@given(
    column=st.sampled_from(list(table().columns)),
    how=st.sampled_from(["duplicate", "missing", "extra", "invisible suffix"]),
)
def test_duplicate_missing_and_unknown_columns(root, column, how):
    frame = table()
    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    if how == "duplicate":
        arrow = arrow.append_column(column, arrow.column(column))
    elif how == "missing":
        arrow = arrow.drop_columns([column])
    elif how == "extra":
        arrow = arrow.append_column("notes", pa.array(["x"] * ROWS))
    else:
        names = [c + "\u200b" if c == column else c for c in arrow.column_names]
        arrow = arrow.rename_columns(names)
    _run(
        root,
        "duplicate or missing column",
        lambda p: pq.write_table(arrow, p),
        [column, "notes"],
    )


@fuzz(4)
@given(extra=st.integers(1, 10**5))
def test_k_above_the_rows(root, extra):
    _run(root, "k > rows", _write(table()), ["k = "], k=ROWS + extra)


@fuzz(4)
@given(kept=st.integers(1, 3), above=st.integers(1, 20))
def test_l_above_the_sensitive_domain(root, kept, above):
    frame = table()
    frame = frame[frame["purpose"].isin(frame["purpose"].value_counts().index[:kept])]
    _run(root, "l > sensitive domain", _write(frame), ["purpose"], l=kept + above, k=2)
