from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdm.exceptions import ArtifactIntegrityError
from ppdm.release.artifacts import (
    ArtifactStore,
    canonical_json,
    json_text,
    sha256_file,
    write_atomic,
    write_json,
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


def _strict(text: str):
    """Parse as a strict JSON reader does: NaN and Infinity are not JSON."""

    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_non_finite_numbers_are_written_as_null_in_every_layout():
    value = {
        "nan": float("nan"),
        "inf": [float("inf"), -math.inf],
        "numpy": {"f64": np.float64("nan"), "f32": np.float32("-inf")},
        "kept": [1.5, np.float64(0.25), 0, True, None, "NaN"],
    }
    expected = {
        "inf": [None, None],
        "kept": [1.5, 0.25, 0, True, None, "NaN"],
        "nan": None,
        "numpy": {"f32": None, "f64": None},
    }
    for layout in ("indented", "line", "compact"):
        assert _strict(json_text(value, layout=layout)) == expected
    assert _strict(canonical_json(value).decode()) == expected
    assert json_text(value, layout="compact").startswith('{"inf":[null,null],')
    assert "\n" not in json_text(value, layout="line")


def test_json_text_keeps_the_bytes_of_finite_content():
    """The layouts are the ones the artifacts, audit lines and hashes always had."""
    value = {"b": [1, 2.5], "a": {"z": "Zürich", "y": None}, "t": (1, 2)}
    old_file = json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False)
    old_line = json.dumps(value, sort_keys=True, ensure_ascii=False)
    old_hash = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    assert canonical_json(value) == (old_file + "\n").encode()
    assert json_text(value, layout="line") == old_line
    assert json_text(value, layout="compact") == old_hash
    # Types JSON has no number for are written as text, as before.
    assert json_text({"p": Path("a/b"), "i": np.int64(3)}, layout="line") == (
        '{"i": "3", "p": "a/b"}'
    )


def test_write_json_replaces_a_file_whole(tmp_path):
    target = tmp_path / "out.json"
    write_json(target, {"b": float("nan"), "a": 1})
    assert target.read_bytes() == b'{\n  "a": 1,\n  "b": null\n}\n'
    # Content JSON cannot hold fails before anything is written: the old file stays.
    with pytest.raises(TypeError):
        write_json(target, {1: "a", "b": 2})
    assert target.read_bytes() == b'{\n  "a": 1,\n  "b": null\n}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
