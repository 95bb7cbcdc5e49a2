"""Fuzzing the SQL route (SQLite): loosely typed columns, odd values, bad queries."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
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
    rows_of,
    table,
    write_sqlite,
)
from hypothesis import given
from hypothesis import strategies as st


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz-sql")


def _run(root, spoiled, frame=None, *, query="SELECT * FROM t", names=(), build=None,
         **changes):  # fmt: skip
    case = fresh_dir(root)
    path = case / "german.db"
    if build is not None:
        build(path)
        url = f"sqlite:///{path}"
    else:
        frame = table() if frame is None else frame
        url = write_sqlite(rows_of(frame), list(frame.columns), path)
    source = {"kind": "sql", "url": url, "query": query}
    data = config_data(case, source, **changes)
    return judge(
        "sql",
        spoiled,
        lambda: parse_config(data),
        [str(path), *names],
        case / "out",
    )


#: Values SQLite stores in an untyped column as they are (its "type affinity"
#: is none): text in a number column, REAL infinities, blobs, 64-bit extremes.
ODD = st.sampled_from(
    [
        "abc",
        "",
        " 36 ",
        "1e30",
        math.inf,
        -math.inf,
        1e30,
        2**63 - 1,
        -(2**63),
        b"\x00\xff",
        3.5,
        None,
        True,
    ]
)


@pytest.mark.slow  # long property run: CI's slow stage
@fuzz(18)
@given(
    column=st.sampled_from(NUMERIC),
    value=ODD,
    share=st.sampled_from([0.1, 0.5, 1.0]),
    seed=st.integers(0, 99),
)
def test_odd_values_in_number_columns(root, column, value, share, seed):
    frame = table().astype({column: object})
    rows = np.random.default_rng(seed).choice(
        ROWS, size=max(1, round(share * ROWS)), replace=False
    )
    frame.loc[rows, column] = [value] * len(rows)
    _run(root, "odd values", frame, names=[column])


@fuzz(6)
@given(
    column=st.sampled_from(CATEGORICAL), value=st.sampled_from([7, 2.5, b"yes", None])
)
def test_odd_values_in_text_columns(root, column, value):
    frame = table().astype({column: object})
    frame.loc[: ROWS // 2, column] = value
    _run(root, "odd values", frame, names=[column])


QUERIES = {
    "unknown table": "SELECT * FROM applicants",
    "syntax error": "SELEC * FROM t",
    "unknown column": "SELECT nothing FROM t",
    "no rows": "SELECT * FROM t WHERE 1 = 0",
    "a column twice": "SELECT *, age FROM t",
    "a column missing": 'SELECT "checking-status", duration FROM t',
    "an extra column": "SELECT *, 1 AS one FROM t",
    "renamed column": 'SELECT *, age AS "age\u200f" FROM t',
    "two statements": "SELECT * FROM t; DROP TABLE t",
}


@fuzz(9)
@given(query=st.sampled_from(sorted(QUERIES)))
def test_queries_that_do_not_return_the_table(root, query):
    _run(root, "bad query", query=QUERIES[query], names=["age", "one", "checking"])


@fuzz(4)
@given(how=st.sampled_from(["not a database", "empty file", "no such file"]))
def test_files_that_are_not_databases(root, how):
    def build(path: Path) -> None:
        if how == "not a database":
            path.write_text("checking-status,duration\n")
        elif how == "empty file":
            path.write_bytes(b"")

    _run(root, "not a database", build=build)


@fuzz(4)
@given(extra=st.integers(1, 10**5))
def test_k_above_the_rows(root, extra):
    _run(root, "k > rows", names=["k = "], k=ROWS + extra)


@fuzz(4)
@given(kept=st.integers(1, 3), above=st.integers(1, 20))
def test_l_above_the_sensitive_domain(root, kept, above):
    values = table()["purpose"].value_counts().index[:kept]
    listed = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
    _run(
        root,
        "l > sensitive domain",
        query=f"SELECT * FROM t WHERE purpose IN ({listed})",
        names=["purpose"],
        l=kept + above,
        k=2,
    )
