"""One reader for every published format: a CSV and its Parquet parts read alike."""

from __future__ import annotations

import pandas as pd
import pytest

from ppdm.exceptions import SourceError
from ppdm.release.data_files import (
    read_released_table,
    released_sha256,
    released_tables,
)
from ppdm.verify.out_of_core import verify_parquet


@pytest.fixture
def table() -> pd.DataFrame:
    # Typed columns, a missing value and a suppressed cell, as a Parquet part
    # of the Dask engine holds them.
    return pd.DataFrame(
        {
            "age": pd.array(["[20, 29]", "*", "[30, 39]", None], dtype="string"),
            "children": pd.array([0, 2, None, 1], dtype="Int64"),
            "income": [">50K", "<=50K", "<=50K", ">50K"],
        }
    )


def _as_csv(table: pd.DataFrame, path):
    table.astype("string").fillna("").to_csv(path, index=False)
    return path


def test_a_csv_and_its_parquet_parts_read_as_the_same_text(table, tmp_path):
    csv = _as_csv(table, tmp_path / "release.csv")
    parts = tmp_path / "release"
    parts.mkdir()
    table.iloc[:2].to_parquet(parts / "part-00000.parquet")
    table.iloc[2:].to_parquet(parts / "part-00001.parquet")
    from_csv = read_released_table(csv)
    assert from_csv["age"].tolist() == ["[20, 29]", "*", "[30, 39]", ""]
    assert from_csv["children"].tolist() == ["0", "2", "", "1"]
    # The directory, the parts in any order, one Parquet file: the same frame.
    listed = [parts / "part-00001.parquet", parts / "part-00000.parquet"]
    for given in (parts, listed, [str(p) for p in listed]):
        pd.testing.assert_frame_equal(read_released_table(given), from_csv)
    one = tmp_path / "one.parquet"
    table.to_parquet(one)
    pd.testing.assert_frame_equal(read_released_table(one), from_csv)


def test_released_tables_groups_the_parts_of_a_table():
    listed = [
        "data/release/part-00001.parquet",
        "data/release/part-00000.parquet",
        "data/projection_1.csv",
    ]
    grouped = released_tables(listed)
    assert list(grouped) == ["projection_1", "release"]
    assert [p.as_posix() for p in grouped["projection_1"]] == ["data/projection_1.csv"]
    assert [p.as_posix() for p in grouped["release"]] == [
        "data/release/part-00000.parquet",
        "data/release/part-00001.parquet",
    ]
    # As an audit entry lists them (relative to the output directory).
    entry = [
        "ds/r1/data/release/part-00000.parquet",
        "ds/r1/data/release/part-00001.parquet",
    ]
    assert list(released_tables(entry)) == ["release"]
    assert list(released_tables(["release.csv"])) == ["release"]


def test_the_hash_of_parts_is_the_out_of_core_verifiers(table, tmp_path):
    from ppdm.privacy import Requirement

    parts = tmp_path / "release"
    parts.mkdir()
    table.iloc[:2].to_parquet(parts / "part-00000.parquet")
    table.iloc[2:].to_parquet(parts / "part-00001.parquet")
    listed = sorted(parts.iterdir())
    assert released_sha256(listed) == released_sha256(parts)
    certificate = verify_parquet(listed, Requirement.of(("age",), k=1), engine="pandas")
    assert certificate.tables[0].name == "release"
    assert certificate.release_sha256 == {"release": released_sha256(parts)}


def test_an_unreadable_table_is_one_error_naming_the_file(tmp_path):
    with pytest.raises(SourceError, match="does not exist"):
        read_released_table(tmp_path / "absent.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(SourceError, match="empty.csv.*no header row"):
        read_released_table(empty)
    broken = tmp_path / "part-00000.parquet"
    broken.write_bytes(b"PAR1 not really")
    with pytest.raises(SourceError, match="cannot read released table.*part-00000"):
        read_released_table(broken)
    (tmp_path / "nothing").mkdir()
    with pytest.raises(SourceError, match="no .parquet files"):
        read_released_table(tmp_path / "nothing")
