"""Parts read with their text as dictionaries are the frames pandas reads."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from ppdm.scale.part_files import decoded, parquet_rows, read_part, read_part_table


def _frame(seed: int, n: int = 500) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    missing = rng.random(n) < 0.1
    return pd.DataFrame(
        {
            "zip": pd.Series(
                [f"{z:05d}" for z in rng.integers(0, 3_000, n)], dtype="string"
            ).where(~missing),
            "city": rng.choice(["Åre", "Köln", "São Paulo", ""], n).astype(object),
            "band": pd.Categorical(
                rng.choice(["low", "mid", "high"], n),
                categories=["low", "mid", "high"],
                ordered=True,
            ),
            "age": rng.integers(17, 90, n),
            "visits": pd.Series(rng.integers(0, 5, n), dtype="Int64").where(~missing),
            "weight": rng.normal(70, 12, n),
            "smoker": rng.random(n) < 0.3,
            "admitted": pd.Timestamp("2024-01-01")
            + pd.to_timedelta(rng.integers(0, 700, n), unit="D"),
        }
    )


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("columns", [None, ["zip", "band", "visits"], ["city"]])
def test_the_same_frame_as_pandas_reads(tmp_path, seed, columns):
    path = tmp_path / "part.parquet"
    _frame(seed).to_parquet(path, index=False)
    expected = pd.read_parquet(path, columns=columns)
    pd.testing.assert_frame_equal(read_part(path, columns), expected)
    assert parquet_rows(path) == len(expected)


def test_rows_taken_on_the_codes_are_the_rows_taken_from_the_frame(tmp_path):
    path = tmp_path / "part.parquet"
    _frame(7).to_parquet(path, index=False)
    table = read_part_table(path)
    assert pa.types.is_dictionary(table.schema.field("zip").type)
    order = np.random.default_rng(1).permutation(table.num_rows)
    pd.testing.assert_frame_equal(
        decoded(table.take(order), path),
        pd.read_parquet(path).iloc[order].reset_index(drop=True),
    )
    coded = decoded(table, path, coded=["zip"])
    assert isinstance(coded["zip"].dtype, pd.CategoricalDtype)
    assert coded["zip"].astype("string").equals(pd.read_parquet(path)["zip"])
