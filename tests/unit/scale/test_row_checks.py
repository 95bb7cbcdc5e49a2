"""ppdm.scale.row_checks: GX's conditions column by column give GX's own partition results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest

from ppdm import resources
from ppdm.exceptions import DataValidationError
from ppdm.prepare import datasets
from ppdm.prepare.dataset_folder import load_contract
from ppdm.scale import validate_parts as vp
from ppdm.scale.ingest_parts import write_part
from ppdm.scale.row_checks import gx_order

SCHEMA = pa.DataFrameSchema(
    {
        "n": pa.Column(float, nullable=True),
        "m": pa.Column(int),
        "s": pa.Column(str, nullable=True),
        "code": pa.Column(str, nullable=True),
    }
)


def _table(seed: int, rows: int = 240) -> pd.DataFrame:
    """Mostly valid rows, with missing cells, out-of-range numbers, odd codes, repeats."""
    rng = np.random.default_rng(seed)
    n = rng.uniform(-5, 105, rows).round(1)
    n[rng.random(rows) < 0.05] = np.nan
    s = rng.choice(["a", "bb", "ccc", "dddd", "x"], rows, p=[0.3, 0.3, 0.3, 0.05, 0.05])
    s = np.where(rng.random(rows) < 0.05, None, s)
    code = np.array([f"{v:05d}" for v in rng.integers(0, 99_999, rows)], dtype=object)
    code[rng.random(rows) < 0.04] = "12a4"
    code[rng.random(rows) < 0.04] = None
    m = rng.permutation(rows * 4)[:rows]
    m[rng.integers(0, rows, 3)] = m[0]  # a few repeats for uniqueness
    return pd.DataFrame({"n": n, "m": m, "s": s, "code": code})


def _suite(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    low = float(rng.integers(-2, 5))
    entries = [
        {"type": "expect_column_values_to_be_between",
         "kwargs": {"column": "n", "min_value": low, "max_value": 100,
                    "strict_min": bool(rng.integers(2))}},
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "s"}},
        {"type": "expect_column_values_to_be_in_set",
         "kwargs": {"column": "s", "value_set": ["a", "bb", "ccc", "dddd"]}},
        {"type": "expect_column_values_to_match_regex",
         "kwargs": {"column": "code", "regex": r"^\d{5}$"}},
        {"type": "expect_table_row_count_to_be_between",
         "kwargs": {"min_value": 1, "max_value": 10_000}},
        {"type": "expect_column_values_to_be_unique", "kwargs": {"column": "m"}},
        {"type": "expect_column_value_lengths_to_be_between",
         "kwargs": {"column": "s", "min_value": 1, "max_value": 3}},
        {"type": "expect_column_values_to_not_be_null",
         "kwargs": {"column": "n", "mostly": 0.9}},
        {"type": "expect_column_values_to_not_match_regex",
         "kwargs": {"column": "s", "regex": "x"}},
        {"type": "expect_column_value_lengths_to_equal",
         "kwargs": {"column": "code", "value": 5, "mostly": 0.5}},
        {"type": "expect_column_values_to_not_be_in_set",
         "kwargs": {"column": "code", "value_set": ["00000", "99998"]}},
        {"type": "expect_column_distinct_values_to_contain_set",
         "kwargs": {"column": "s", "value_set": ["a"]}},
        {"type": "expect_column_values_to_be_between",
         "kwargs": {"column": "m", "min_value": 0}},
    ]  # fmt: skip
    order = rng.permutation(len(entries))  # GX regroups by column: any order
    return {"name": f"random-{seed}", "expectations": [entries[i] for i in order]}


def _parts(table: pd.DataFrame, directory: Path, rows: int) -> list[str]:
    directory.mkdir(parents=True)
    paths = []
    for index, start in enumerate(range(0, len(table), rows)):
        path = directory / f"part-{index:05d}.parquet"
        write_part(table.iloc[start : start + rows].reset_index(drop=True), path)
        paths.append(str(path))
    return paths


def _outcome(parts, suite, out_dir, *, column_conditions):
    try:
        found = vp.validate_partitions(
            parts,
            SCHEMA,
            suite,
            max_rejected_fraction=1.0,
            source="t.csv",
            out_dir=out_dir,
            column_conditions=column_conditions,
        )
        return found, None
    except DataValidationError as err:
        return err.outcome, str(err)


def _assert_same(parts, suite, tmp_path) -> None:
    fast, fast_error = _outcome(parts, suite, tmp_path / "f", column_conditions=True)
    gx, gx_error = _outcome(parts, suite, tmp_path / "g", column_conditions=False)
    assert fast_error == gx_error
    assert fast.report == gx.report
    pd.testing.assert_frame_equal(fast.quarantine, gx.quarantine)
    assert (
        Path(fast.quarantine_path).read_bytes() == Path(gx.quarantine_path).read_bytes()
    )
    for a, b in zip(fast.clean.paths, gx.clean.paths, strict=True):
        assert Path(a).read_bytes() == Path(b).read_bytes()


@pytest.mark.parametrize("seed", [3, 11])
def test_random_tables_and_suites_validate_as_gx_runs_each_partition(seed, tmp_path):
    table = _table(seed)
    suite = _suite(seed)
    plan = vp._Plan.of(suite)
    assert plan.conditions(plan.worker_suite({"m": []})) is not None  # fast route
    parts = _parts(table, tmp_path / "parts", rows=100)
    _assert_same(parts, suite, tmp_path)
    fast, _ = _outcome(parts, suite, tmp_path / "again", column_conditions=True)
    assert len(fast.quarantine) > 0  # the table has rows both routes reject


def test_a_condition_gx_cannot_run_falls_back_to_gx_with_its_message(tmp_path):
    # numbers between on a text column: GX's condition raises a TypeError,
    # which GX records on the result; the partition is then run by GX itself
    suite = {
        "name": "odd",
        "expectations": [
            {"type": "expect_column_values_to_be_between",
             "kwargs": {"column": "s", "min_value": 1, "max_value": 5}},
            {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "code"}},
        ],
    }  # fmt: skip
    parts = _parts(_table(5, rows=120), tmp_path / "parts", rows=60)
    _assert_same(parts, suite, tmp_path)


def test_a_suite_with_a_row_condition_or_other_metric_runs_gx_on_each_partition():
    with_condition = {
        "name": "c",
        "expectations": [
            {"type": "expect_column_values_to_not_be_null",
             "kwargs": {"column": "s", "row_condition": 'code=="00001"',
                        "condition_parser": "pandas"}},
        ],
    }  # fmt: skip
    dates = {
        "name": "d",
        "expectations": [
            {"type": "expect_column_values_to_match_strftime_format",
             "kwargs": {"column": "s", "strftime_format": "%Y"}},
        ],
    }  # fmt: skip
    for suite in (with_condition, dates):
        plan = vp._Plan.of(suite)
        assert plan.conditions(plan.worker_suite({})) is None


def test_adult_suite_runs_column_by_column_in_gx_order():
    suite = load_contract(resources.schema_dir("adult")).suite
    plan = vp._Plan.of(suite)
    worker = plan.worker_suite({})
    assert plan.conditions(worker) is not None
    # the order GX's validator reports results in, read off a real GX run
    typed = datasets.load("adult").head(300)
    shared = {"suite": worker, "aggregates": plan.aggregates, "counted": plan.counted}
    _, items = vp._gx_part(typed, worker, shared["aggregates"], shared["counted"])
    expected = [item["index"] for item in items]
    assert [
        worker["expectations"][p]["meta"][vp._INDEX]
        for p in gx_order(worker["expectations"])
    ] == expected
    assert expected != sorted(expected)  # Adult's suite is regrouped by column
