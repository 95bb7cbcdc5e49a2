"""ppdm.scale.csv_ranges: chunks parsed from byte ranges equal the one-process chunks."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdm.exceptions import SourceError
from ppdm.prepare.ingest import files
from ppdm.scale import csv_ranges
from ppdm.scale.chunk_readers import first_row
from ppdm.scale.csv_ranges import parse_ranges, record_starts
from ppdm.scale.ingest_parts import ingest_partitions

OPTIONS = files._csv_options(None)


def _pickling(fn, items):
    """A mapper that sends each item and result through pickle, as a cluster does."""
    return [
        pickle.loads(pickle.dumps(fn(pickle.loads(pickle.dumps(i))))) for i in items
    ]


class _Counting:
    """A pickling mapper that counts the ranges it parsed."""

    def __init__(self) -> None:
        self.ranges = 0

    def __call__(self, fn, items):
        if fn is csv_ranges.parse_range:
            self.ranges += len(items)
        return _pickling(fn, items)


def _one_process(path: Path, rows: int) -> list[pd.DataFrame]:
    with pd.read_csv(path, chunksize=rows, **OPTIONS) as reader:
        return list(reader)


def _ranges(path: Path, rows: int, tmp_path: Path) -> list[pd.DataFrame] | None:
    keep = tmp_path / "keep"
    keep.mkdir(exist_ok=True)
    columns = list(pd.read_csv(path, nrows=0, **OPTIONS).columns)
    found = parse_ranges(
        path,
        options=OPTIONS,
        rows=rows,
        columns=columns,
        keep=lambda i: keep / f"{i}.pkl",
        witness=first_row,
        map_parts=_pickling,
    )
    if found is None:
        return None
    chunks = []
    for index in range(len(found)):
        with open(keep / f"{index}.pkl", "rb") as handle:
            chunks.append(pickle.load(handle))  # noqa: S301 - written just above
    return chunks


@pytest.mark.parametrize(
    ("text", "starts"),
    [
        (b"a,b\n1,2\n3,4\n5,6\n", [4, 12]),
        (b'a,b\n1,"x\ny"\n3,"p""\nq"\n5,6', [4, 22]),  # quoted breaks, "" inside
        (b"a,b\r\n1,2\r\n3,4\r\n5,6\r\n", [5, 15]),
        (b'"a\nb",c\n1,2\n3,4\n5,6\n', [8, 16]),  # a break in the header's quotes
    ],
)
def test_record_starts_are_the_offsets_of_every_nth_record(text, starts, tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(text)
    assert record_starts(path, 2) == starts


@pytest.mark.parametrize(
    "text",
    [
        b"a,b\n1,2\n\n3,4\n",  # a blank line: pandas skips it, it is no record
        b"\na,b\n1,2\n",  # a blank first line
        b"a,b\r1,2\r3,4\r",  # lone carriage returns end lines for pandas
        b'a,b\n1,"x\n',  # ends inside quotes: the reader's error to give
        b"a,b",  # no line break after the header
    ],
)
def test_record_starts_declines_what_it_cannot_count(text, tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(text)
    assert record_starts(path, 2) is None


def test_a_block_edge_between_carriage_return_and_line_feed(tmp_path, monkeypatch):
    path = tmp_path / "t.csv"
    text = b"a,b\r\n" + b"".join(b"%d,%d\r\n" % (i, i) for i in range(40))
    path.write_bytes(text)
    expected = record_starts(path, 3)
    for block in (3, 4, 5, 7):  # every edge position, "\r" | "\n" among them
        monkeypatch.setattr(csv_ranges, "_BLOCK", block)
        assert record_starts(path, 3) == expected
    assert expected[0] == 5 and len(expected) == 14


def _messy_table(rng: np.random.Generator, n: int) -> pd.DataFrame:
    words = ["plain", "with, comma", 'say "hi"', "two\nlines", "", "caf\u00e9", " x"]
    return pd.DataFrame(
        {
            "id": np.arange(n),
            "note": rng.choice(words, n),
            "code": [f"{v:05d}" for v in rng.integers(0, 3000, n)],
            "value": np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n)),
            "mixed": rng.choice(["1", "2", "abc", ""], n, p=[0.6, 0.3, 0.05, 0.05]),
        }
    )


@pytest.mark.parametrize("seed", range(6))
def test_ranges_give_the_one_process_chunks_on_random_messy_files(seed, tmp_path):
    """Quoted commas, quotes and line breaks, CRLF or LF, with or without a
    last line break: each chunk (values, dtypes, index) is the one-process one."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 400))
    rows = int(rng.integers(3, 60))
    path = tmp_path / "messy.csv"
    _messy_table(rng, n).to_csv(
        path, index=False, lineterminator="\r\n" if seed % 2 else "\n"
    )
    if seed % 3 == 0:  # no line break after the last record
        path.write_bytes(path.read_bytes().rstrip(b"\r\n"))
    expected = _one_process(path, rows)
    found = _ranges(path, rows, tmp_path)
    assert found is not None and len(found) == len(expected)
    for got, want in zip(found, expected, strict=True):
        pd.testing.assert_frame_equal(got, want)


@pytest.mark.parametrize(
    "damage",
    [
        lambda lines: lines.insert(9, ""),  # a blank line
        lambda lines: lines.insert(9, "   "),  # a line of spaces (pandas skips it)
        lambda lines: lines.__setitem__(5, lines[5] + 'x"y'),  # a stray quote
    ],
)
def test_ranges_decline_files_whose_lines_are_not_records(damage, tmp_path):
    lines = ["a,b"] + [f"{i},{i * 2}" for i in range(40)]
    damage(lines)
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    assert _ranges(path, 4, tmp_path) is None


def _wide_file(path: Path, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Eight columns: 65,536-row parser blocks, so chunks of 65,536 rows."""
    frame = _messy_table(rng, n)
    for i in range(3):
        frame[f"n{i}"] = rng.integers(0, 100, n).astype(object)
    frame.loc[n - 5, "n0"] = "late text"  # a type only the last chunk shows
    frame.to_csv(path, index=False)
    return frame


def test_ingest_on_workers_parses_ranges_and_writes_the_one_process_bytes(tmp_path):
    path = tmp_path / "wide.csv"
    _wide_file(path, 150_000, np.random.default_rng(11))
    one = ingest_partitions(
        "csv", path, out_dir=tmp_path / "one", partition_rows=70_000
    )
    farm = _Counting()
    farmed = ingest_partitions(
        "csv", path, out_dir=tmp_path / "farmed", partition_rows=70_000, map_parts=farm
    )
    # 150,000 rows in chunks of 131,072 (two parser blocks), parsed on workers;
    # twice, as "code" is read again as text (codes with leading zeros)
    assert farm.ranges == 4
    assert (
        one.part_rows == farmed.part_rows and one.source_sha256 == farmed.source_sha256
    )
    for left, right in zip(one.paths, farmed.paths, strict=True):
        assert Path(left).read_bytes() == Path(right).read_bytes()
    assert farmed.read(2)["n0"].dtype == "string"
    assert not list(tmp_path.glob(".farmed.spool-*"))


def test_a_file_the_ranges_decline_is_read_in_one_process_with_its_error(tmp_path):
    """A malformed row deep in the file: the same one-line error either way;
    a blank line: the ranges are declined and the bytes are the one-process ones."""
    rng = np.random.default_rng(12)
    bad = tmp_path / "bad.csv"
    _wide_file(bad, 140_000, rng)
    lines = bad.read_text().split("\n")
    at = next(
        i
        for i in range(100_000, len(lines))
        if lines[i][:1].isdigit() and lines[i + 1][:1].isdigit()
    )  # a whole record on one line
    lines[at] += ",surplus,fields"
    bad.write_text("\n".join(lines))
    errors = []
    for mapper in (None, _Counting()):
        with pytest.raises(SourceError) as caught:
            ingest_partitions(
                "csv", bad, out_dir=tmp_path / "b", partition_rows=70_000,
                map_parts=mapper,
            )  # fmt: skip
        errors.append(str(caught.value))
    assert errors[0] == errors[1] and "bad.csv" in errors[0]

    blank = tmp_path / "blank.csv"
    _wide_file(blank, 140_000, rng)
    text = blank.read_text().split("\n")
    text.insert(80_000, "")
    blank.write_text("\n".join(text))
    farm = _Counting()
    one = ingest_partitions("csv", blank, out_dir=tmp_path / "o", partition_rows=70_000)
    farmed = ingest_partitions(
        "csv", blank, out_dir=tmp_path / "f", partition_rows=70_000, map_parts=farm
    )
    assert farm.ranges == 0  # declined before any parse: the blank line was seen
    for left, right in zip(one.paths, farmed.paths, strict=True):
        assert Path(left).read_bytes() == Path(right).read_bytes()
