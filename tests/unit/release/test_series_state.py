"""The private state of a release series: kept, found again, merged, never half-written."""

from __future__ import annotations

import json

import numpy as np

from ppdm.release.artifacts import ArtifactStore
from ppdm.release.series_state import (
    LINKS,
    load_state,
    merge,
    release_digest,
    save_state,
)
from ppdm.verify.composition import PersonValues

FILES = {"release": "ab" * 32}


def _values(keys, values, rows) -> PersonValues:
    return PersonValues(
        np.asarray(keys, dtype=object), tuple(values), np.asarray(rows, dtype=bool)
    )


ONE = _values(["a", "b"], ["flu", "hiv"], [[1, 1], [0, 1]])


def test_a_kept_state_is_found_by_the_released_files(tmp_path):
    store = ArtifactStore(tmp_path / "work")
    save_state(store, "clinic", FILES, "pid", ["b", "a"], {"dx": ONE})
    state = load_state(store, "clinic", FILES)
    assert not isinstance(state, str)
    assert state.record_key == "pid"
    assert state.values["dx"].to_dict() == ONE.to_dict()
    assert json.loads(open(state.keys.path).read()) == ["b", "a"]
    # Only the link and the two content-addressed artifacts; no temporary file.
    link = tmp_path / "work" / LINKS / "clinic" / f"{release_digest(FILES)}.json"
    assert link.is_file()
    assert not [p for p in link.parent.iterdir() if p.suffix == ".tmp"]


def test_other_files_or_another_dataset_have_no_state(tmp_path):
    store = ArtifactStore(tmp_path / "work")
    save_state(store, "clinic", FILES, "pid", ["a", "b"], {"dx": ONE})
    assert "no record-key state" in load_state(store, "clinic", {"release": "cd" * 32})
    assert "no record-key state" in load_state(store, "other", FILES)


def test_a_changed_artifact_reads_as_no_state_and_says_why(tmp_path):
    store = ArtifactStore(tmp_path / "work")
    state = save_state(store, "clinic", FILES, "pid", ["a", "b"], {"dx": ONE})
    with open(state.keys.path, "a") as handle:
        handle.write(" ")
    found = load_state(store, "clinic", FILES)
    assert isinstance(found, str) and "unreadable" in found and "changed" in found


def test_saving_the_same_state_twice_writes_the_same_bytes(tmp_path):
    store = ArtifactStore(tmp_path / "work")
    save_state(store, "clinic", FILES, "pid", ["a", "b"], {"dx": ONE})
    link = tmp_path / "work" / LINKS / "clinic" / f"{release_digest(FILES)}.json"
    before = link.read_bytes()
    save_state(store, "clinic", FILES, "pid", ["a", "b"], {"dx": ONE})
    assert link.read_bytes() == before


def test_two_runs_publishing_the_same_files_keep_the_persons_of_both(tmp_path):
    # Month 3 released every class as before: the same files as month 2, other
    # persons (c arrived and was held back; a left).
    store = ArtifactStore(tmp_path / "work")
    save_state(store, "clinic", FILES, "pid", ["a", "b"], {"dx": ONE})
    later = _values(["b", "c"], ["hiv", "ulcer"], [[1, 0], [1, 1]])
    save_state(store, "clinic", FILES, "pid", ["b", "c"], {"dx": later})
    kept = load_state(store, "clinic", FILES).values["dx"]
    rows = {
        k: {v for v, ok in zip(kept.values, row, strict=True) if ok}
        for k, row in zip(kept.keys, kept.possible, strict=True)
    }
    # a: only in the first run; c: only in the second; b: values both allow.
    assert rows == {"a": {"flu", "hiv"}, "b": {"hiv"}, "c": {"hiv", "ulcer"}}


def test_merge_is_idempotent_and_symmetric():
    other = _values(["b", "c"], ["hiv", "ulcer"], [[1, 1], [0, 1]])
    both = merge(ONE, other)
    assert merge(both, other).to_dict() == both.to_dict()
    assert merge(other, ONE).to_dict() == both.to_dict()
