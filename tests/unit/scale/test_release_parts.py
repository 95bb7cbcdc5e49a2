"""Releasing a partitioned table: recode each part, shuffle across parts, store whole."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdm.exceptions import ArtifactIntegrityError
from ppdm.release.artifacts import ArtifactStore, sha256_parts
from ppdm.scale import steps
from ppdm.scale.engine import ClusterSettings, cluster, map_parts, using
from ppdm.scale.frequency import FrequencyTable
from ppdm.scale.recoding import Recoding


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "row": np.arange(n),
            "age": rng.integers(20, 30, size=n),
            "sex": rng.choice(["F", "M"], size=n),
            "income": rng.choice(["<=50K", ">50K"], size=n),
        }
    )


def _parts(table: pd.DataFrame, directory: Path, rows: int) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, start in enumerate(range(0, len(table), rows)):
        path = directory / f"part-{i:05d}.parquet"
        table.iloc[start : start + rows].to_parquet(path, index=False)
        paths.append(path)
    return paths


def _decade_recoding(table: pd.DataFrame) -> Recoding:
    """Ages to their half-decade; age 29 women dropped (a stand-in suppression)."""
    keys = FrequencyTable.of(table, ["age", "sex"]).keys
    low = (keys["age"] // 5) * 5
    released = pd.DataFrame(
        {
            "age": pd.array([f"[{a}, {a + 4}]" for a in low], dtype="string"),
            "sex": pd.array(keys["sex"], dtype="string"),
        }
    )
    women = (keys["sex"] == "F").fillna(False)
    kept = ~((keys["age"] == 29) & women).to_numpy(dtype=bool)
    return Recoding(("age", "sex"), keys, released, kept, "test", len(table))


def _read_all(directory: Path) -> pd.DataFrame:
    files = sorted(directory.glob("part-*.parquet"))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def test_released_rows_are_the_recoded_rows_shuffled_across_parts(tmp_path):
    table = _table(1_000)
    parts = _parts(table, tmp_path / "in", 97)
    recoding = _decade_recoding(table)
    out = tmp_path / "out"
    rows = steps.release_parts(parts, recoding, out, seed=3)
    released = _read_all(out)
    expected = recoding.apply(table)
    assert rows == len(released) == len(expected) < len(table)
    pd.testing.assert_frame_equal(
        released.sort_values("row", ignore_index=True),
        expected.sort_values("row", ignore_index=True),
    )
    # No row keeps its position, nor (for most rows) its input part.
    assert not np.array_equal(released["row"], expected["row"])
    in_part = expected["row"].to_numpy() // 97
    out_part = np.repeat(
        np.arange(len(parts)),
        [len(pd.read_parquet(f)) for f in sorted(out.glob("part-*.parquet"))],
    )
    same_part = in_part[np.searchsorted(expected["row"], released["row"])] == out_part
    assert same_part.mean() < 0.3
    assert not (tmp_path / "out.pieces").exists()


def test_same_seed_same_bytes_other_seed_other_order(tmp_path):
    table = _table(600, seed=1)
    parts = _parts(table, tmp_path / "in", 150)
    recoding = _decade_recoding(table)
    first, again, other = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    steps.release_parts(parts, recoding, first, seed=5)
    steps.release_parts(parts, recoding, again, seed=5)
    steps.release_parts(parts, recoding, other, seed=6)
    assert sha256_parts(first) == sha256_parts(again)
    assert sha256_parts(first) != sha256_parts(other)
    assert sorted(_read_all(first)["row"]) == sorted(_read_all(other)["row"])


def test_on_a_cluster_the_same_bytes_as_in_process(tmp_path):
    table = _table(400, seed=2)
    parts = _parts(table, tmp_path / "in", 100)
    recoding = _decade_recoding(table)
    steps.release_parts(parts, recoding, tmp_path / "here", seed=9)
    settings = ClusterSettings(workers=1, threads_per_worker=2, memory_limit="1GB")
    with cluster(settings) as running, using(running):
        assert map_parts(abs, [-1, -2, 3]) == [1, 2, 3]
        steps.release_parts(parts, recoding, tmp_path / "there", seed=9)
        with steps.scattered(
            parts, ["age", "sex", "income"], tmp_path / "pieces", seed=9
        ) as shuffled:
            frequencies = shuffled.frequencies
    assert sha256_parts(tmp_path / "here") == sha256_parts(tmp_path / "there")
    assert frequencies.frame.equals(
        FrequencyTable.of(table, ["age", "sex", "income"]).frame
    )


def test_one_read_gives_the_frequency_table_and_the_release(tmp_path):
    table = _table(900, seed=6).assign(
        # text with missing cells, and a categorical: read as dictionaries
        sex=lambda t: t["sex"].astype("string").mask(t["row"] % 11 == 0),
        income=lambda t: t["income"].astype("category"),
    )
    parts = _parts(table, tmp_path / "in", 200)
    columns = ["age", "sex", "income"]
    pieces = tmp_path / "pieces"
    with steps.scattered(parts, columns, pieces, seed=4) as shuffled:
        pd.testing.assert_frame_equal(
            shuffled.frequencies.frame, FrequencyTable.of(table, columns).frame
        )
        recoding = _decade_recoding(table)
        rows = steps.release_scattered(shuffled, recoding, tmp_path / "out")
    assert not pieces.exists()
    released = _read_all(tmp_path / "out")
    expected = recoding.apply(table)
    assert rows == len(expected)
    pd.testing.assert_frame_equal(
        released.sort_values("row", ignore_index=True),
        expected.sort_values("row", ignore_index=True),
    )


def test_the_shuffled_rows_are_removed_when_the_algorithm_fails(tmp_path):
    parts = _parts(_table(300), tmp_path / "in", 100)
    pieces = tmp_path / "pieces"
    with pytest.raises(RuntimeError, match="no recoding"):
        with steps.scattered(parts, ["age"], pieces, seed=1):
            assert len(list(pieces.glob("from-*.arrow"))) == 3
            raise RuntimeError("no recoding")
    assert not pieces.exists()


def test_sample_is_seeded_and_about_the_asked_size(tmp_path):
    table = _table(5_000, seed=4)
    parts = _parts(table, tmp_path / "in", 700)
    first = steps.sample_parts(parts, 1_000, seed=1)
    assert first.equals(steps.sample_parts(parts, 1_000, seed=1))
    assert not first.equals(steps.sample_parts(parts, 1_000, seed=2))
    assert 850 < len(first) < 1_150
    assert first["row"].is_unique and set(first["row"]) <= set(table["row"])
    whole = steps.sample_parts(parts, 10_000, seed=1)
    pd.testing.assert_frame_equal(whole, table)


def test_the_store_keeps_parts_whole_and_notices_a_change(tmp_path):
    store = ArtifactStore(tmp_path / "store")
    staging = store.staging()
    _parts(_table(300), staging, 100)
    ref = steps.put_parts(store, staging, kind="clean-table")
    assert ref.partitioned and ref.rows == 300 and not staging.exists()
    assert [p.name for p in ref.parts] == [f"part-{i:05d}.parquet" for i in range(3)]
    again = store.staging()
    _parts(_table(300), again, 100)
    assert steps.put_parts(store, again, kind="clean-table") == ref
    ref.verify()
    ref.parts[1].write_bytes(b"changed")
    with pytest.raises(ArtifactIntegrityError, match="changed"):
        ref.verify()


def test_parts_too_small_to_reach_every_output_part_lose_and_repeat_no_row(tmp_path):
    # 2 rows a part, 20 parts: most input parts send nothing to most output
    # parts, and each output part must still read its own batch of each.
    table = _table(40, seed=8)
    parts = _parts(table, tmp_path / "in", 2)
    recoding = _decade_recoding(table)
    rows = steps.release_parts(parts, recoding, tmp_path / "out", seed=2)
    released = _read_all(tmp_path / "out")
    expected = recoding.apply(table)
    assert rows == len(released) == len(expected)
    assert released["row"].is_unique
    pd.testing.assert_frame_equal(
        released.sort_values("row", ignore_index=True),
        expected.sort_values("row", ignore_index=True),
    )
