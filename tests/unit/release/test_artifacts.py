from __future__ import annotations

import hashlib
import os

import pandas as pd
import pytest

from ppdm.exceptions import ArtifactIntegrityError
from ppdm.release.artifacts import (
    ArtifactStore,
    canonical_json,
    sha256_file,
    write_atomic,
)


def test_store_is_content_addressed_and_round_trips_dtypes(tmp_path, tiny_people):
    store = ArtifactStore(tmp_path)
    table = tiny_people.assign(
        band=pd.Categorical(
            ["low", "low", "mid", "mid", "mid", "high", "high", "high"],
            categories=["low", "mid", "high"],
            ordered=True,
        )
    )
    first = store.put_table(table, kind="t")
    second = store.put_table(table.copy(), kind="t")
    assert first == second
    assert first.sha256 == sha256_file(first.path)
    assert first.path.endswith(f"{first.sha256}.parquet")
    back = store.read_table(first)
    pd.testing.assert_frame_equal(back, table)
    assert back["band"].cat.ordered


def test_changed_artifact_is_detected(tmp_path):
    store = ArtifactStore(tmp_path)
    ref = store.put_json({"a": 1}, kind="j")
    with open(ref.path, "ab") as handle:
        handle.write(b" ")
    with pytest.raises(ArtifactIntegrityError, match="changed"):
        store.read_json(ref)
    os.remove(ref.path)
    with pytest.raises(ArtifactIntegrityError, match="missing"):
        ref.verify()


def test_atomic_write_leaves_no_partial_file_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "out.json"
    write_atomic(target, b"old")

    def exploding_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", exploding_replace)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, b"new content")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_canonical_json_is_order_independent():
    assert canonical_json({"b": 1, "a": [1, 2]}) == canonical_json(
        {"a": [1, 2], "b": 1}
    )
    assert (
        hashlib.sha256(canonical_json({"x": 1})).hexdigest()
        == hashlib.sha256(b'{\n  "x": 1\n}\n').hexdigest()
    )


def test_a_full_disk_during_an_atomic_write_names_the_file(tmp_path, monkeypatch):
    """An OS error inside an open file names no file; the one being written is named."""
    import errno

    def full(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError) as raised:
        write_atomic(tmp_path / "report.html", b"<html>")
    assert raised.value.errno == errno.ENOSPC
    assert raised.value.filename == str(tmp_path / "report.html")
    assert list(tmp_path.iterdir()) == []
