"""Fuzzing the CSV route: every spoiled file ends in a named error or a verified release."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
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
    write_csv,
)
from hypothesis import given
from hypothesis import strategies as st

#: Characters that look like nothing or like a space, and direction marks.
INVISIBLE = ["\u00a0", "\u200b", "\u200f", "\u200e", "\ufeff", "\u2060", "\u0301"]
#: Shares of rows spoiled: well above the 5% validation limit (the case ends in
#: validation; a few spoiled rows, a verified release, are in test_fuzz_release).
SHARES = st.sampled_from([0.1, 0.5, 1.0])


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz-csv")


def _rows(share: float, seed: int) -> np.ndarray:
    count = max(1, round(share * ROWS))
    return np.random.default_rng(seed).choice(ROWS, size=count, replace=False)


def _spoil_cells(
    frame: pd.DataFrame, column: str, values: list, share: float, seed: int
) -> pd.DataFrame:
    frame = frame.astype({column: object})
    rows = _rows(share, seed)
    frame.loc[rows, column] = [values[i % len(values)] for i in range(len(rows))]
    return frame


def _run(root: Path, spoiled: str, build, names=(), **changes):
    case = fresh_dir(root)
    path = case / "german.csv"
    build(path)
    data = config_data(case, {"kind": "csv", "path": str(path)}, **changes)
    return judge(
        "csv",
        spoiled,
        lambda: parse_config(data),
        [str(path), *names],
        case / "out",
    )


WRONG_TYPES = st.sampled_from(["abc", "true", "30.5", "1,000", "12 years", "0x1F", "-"])
NON_FINITE = st.sampled_from(
    ["nan", "NaN", "inf", "-inf", "Infinity", "1e400", "-1e400", "1e-400"]
)
HUGE = st.integers(min_value=19, max_value=80).flatmap(
    lambda e: st.sampled_from([10**e, -(10**e), 2**63, 2**64 + 1])
)


@fuzz(14)
@given(
    column=st.sampled_from(NUMERIC),
    value=WRONG_TYPES,
    share=SHARES,
    seed=st.integers(0, 99),
)
def test_wrong_types_in_numeric_columns(root, column, value, share, seed):
    frame = _spoil_cells(table(), column, [value], share, seed)
    _run(root, "wrong type", lambda p: write_csv(frame, p), [column])


@fuzz(10)
@given(
    column=st.sampled_from(NUMERIC),
    value=NON_FINITE,
    share=SHARES,
    seed=st.integers(0, 99),
)
def test_nan_and_infinity(root, column, value, share, seed):
    frame = _spoil_cells(table(), column, [value], share, seed)
    _run(root, "NaN/inf", lambda p: write_csv(frame, p), [column])


@fuzz(10)
@given(
    column=st.sampled_from(NUMERIC), value=HUGE, share=SHARES, seed=st.integers(0, 99)
)
def test_huge_integers(root, column, value, share, seed):
    frame = _spoil_cells(table(), column, [value], share, seed)
    _run(root, "huge integer", lambda p: write_csv(frame, p), [column])


EMPTY = {
    "zero bytes": b"",
    "newline only": b"\n",
    "blank lines": b"\n\n\n",
    "UTF-8 BOM only": b"\xef\xbb\xbf",
    "spaces only": b"   \n  \n",
}


@fuzz(8)
@given(variant=st.sampled_from([*EMPTY, "header only", "header and blank lines"]))
def test_empty_and_header_only_files(root, variant):
    header = ",".join(table().columns)

    def build(path: Path) -> None:
        if variant in EMPTY:
            path.write_bytes(EMPTY[variant])
        else:
            tail = "\n\n\n" if "blank" in variant else "\n"
            path.write_text(header + tail)

    _run(root, "empty or header only", build)


@fuzz(8)
@given(
    column=st.sampled_from(list(table().columns)),
    how=st.sampled_from(["duplicate", "missing", "extra", "renamed", "blank name"]),
)
def test_duplicate_missing_and_unknown_columns(root, column, how):
    frame = table()
    header = list(frame.columns)
    position = header.index(column)
    if how == "duplicate":
        frame.insert(position + 1, column + "__copy", frame[column])
        header.insert(position + 1, column)
    elif how == "missing":
        frame = frame.drop(columns=[column])
        header.remove(column)
    elif how == "extra":
        frame["notes"] = "free text"
        header.append("notes")
    elif how == "renamed":
        header[position] = column.upper()
    else:
        header[position] = ""
    _run(
        root,
        "duplicate or missing column",
        lambda p: write_csv(frame, p, header=header),
        [column, "notes", column.upper(), "Unnamed"],
    )


@fuzz(8)
@given(
    encoding=st.sampled_from(["latin-1", "utf-16", "cp1252", "utf-16-le"]),
    where=st.sampled_from(["value", "header"]),
    column=st.sampled_from(CATEGORICAL),
)
def test_other_encodings(root, encoding, where, column):
    frame = table()
    header = list(frame.columns)
    if where == "value":
        frame = _spoil_cells(frame, column, ["Café société"], 0.5, 1)
    else:
        header[header.index(column)] = column + "é"
    _run(
        root,
        "encoding",
        lambda p: write_csv(frame, p, encoding=encoding, header=header),
        [column],
    )


@fuzz(4)
@given(sep=st.sampled_from([";", "\t", "|"]))
def test_other_delimiters(root, sep):
    _run(root, "delimiter", lambda p: write_csv(table(), p, sep=sep))


@fuzz(10)
@given(
    char=st.sampled_from(INVISIBLE),
    column=st.sampled_from(list(table().columns)),
    where=st.sampled_from(["name prefix", "name suffix", "values"]),
)
def test_invisible_and_direction_characters(root, char, column, where):
    frame = table()
    header = list(frame.columns)
    if where == "values":
        # after the first character: a leading BOM or space is stripped by design
        spoiled = frame[column].astype(str).map(lambda v: v[:1] + char + v[1:])
        frame = frame.assign(**{column: spoiled})
    elif where == "name prefix":
        header[header.index(column)] = char + column
    else:
        header[header.index(column)] = column + char
    _run(
        root,
        "unicode tricks",
        lambda p: write_csv(frame, p, header=header),
        [column],
    )


@fuzz(4)
@given(column=st.sampled_from(CATEGORICAL), copies=st.sampled_from([4, 20]))
def test_enormous_category_counts(root, column, copies):
    """A categorical column with a distinct value on every row (600 or 3,000 rows)."""
    frame = pd.concat([table()] * copies, ignore_index=True)
    frame[column] = [f"category {i}" for i in range(len(frame))]
    _run(root, "enormous category count", lambda p: write_csv(frame, p), [column])


@fuzz(6)
@given(
    how=st.sampled_from(["unbalanced quote", "extra field", "missing fields"]),
    share=SHARES,
    seed=st.integers(0, 99),
)
def test_ragged_and_badly_quoted_rows(root, how, share, seed):
    def build(path: Path) -> None:
        lines = write_csv(table(), path).read_text().splitlines()
        for row in _rows(share, seed) + 1:  # line 0 is the header
            if how == "unbalanced quote":
                lines[row] = '"' + lines[row]
            elif how == "extra field":
                lines[row] += ",surplus"
            else:
                lines[row] = lines[row].rsplit(",", 3)[0]
        path.write_text("\n".join(lines) + "\n")

    _run(root, "ragged rows", build, ["credit", "foreign-worker", "job"])


@fuzz(6)
@given(extra=st.integers(1, 10**6))
def test_k_above_the_rows(root, extra):
    k = min(ROWS + extra, 1_000_000)
    _run(root, "k > rows", lambda p: write_csv(table(), p), ["k = "], k=k)


@fuzz(6)
@given(kept=st.integers(1, 3), above=st.integers(1, 20))
def test_l_above_the_sensitive_domain(root, kept, above):
    frame = table()
    values = frame["purpose"].value_counts().index[:kept]
    frame = frame[frame["purpose"].isin(values)]
    _run(
        root,
        "l > sensitive domain",
        lambda p: write_csv(frame, p),
        ["purpose"],
        l=kept + above,
        k=2,
    )
