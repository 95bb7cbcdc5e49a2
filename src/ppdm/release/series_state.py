"""The private state of a release series: who was in each release, and what it showed of them.

The composition check (:func:`ppdm.verify.composition.check_composition`) needs,
for every earlier release, each person's record key and the sensitive values
that release left possible for them (:class:`~ppdm.verify.composition.PersonValues`).
The released files do not carry record keys, so this lives in the private
work directory (the artifact store), never in the output directory:

- ``<store>/<sha[:2]>/<sha>.json`` (content-addressed, written by
  :meth:`~ppdm.release.artifacts.ArtifactStore.put_json`): the person values
  by sensitive attribute, and the record keys of the table the release was
  made from, in the order of its rows;
- ``<store>/series/<dataset>/<release digest>.json``: a small link naming
  those artifacts and their sha256, written to a temporary file and renamed.

The release digest (:func:`release_digest`) is the sha256 of the released
files' sha256, the same whether read from the candidate in the store or from
the audit log's entry of the published release. A run that stops after the
link is written but before publication leaves a link no published release
refers to (harmless); a run that stops earlier leaves no link. A link whose
artifacts are missing or changed reads as no state: the check then says that
it could not compare with that release, and why.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ppdm.release.artifacts import (
    ArtifactRef,
    ArtifactStore,
    canonical_json,
    sha256_bytes,
    write_json,
)
from ppdm.verify.composition import PersonValues

__all__ = ["SeriesState", "load_state", "merge", "release_digest", "save_state"]

#: Folder of the links, inside the artifact store.
LINKS = "series"


def release_digest(files: Mapping[str, str]) -> str:
    """The id of a release's content: sha256 over ``{table name: file sha256}``."""
    return sha256_bytes(canonical_json({str(k): str(v) for k, v in files.items()}))


@dataclass(frozen=True)
class SeriesState:
    """What the composition check keeps of one release.

    Attributes
    ----------
    record_key : str
        The column the keys come from.
    keys : ArtifactRef
        The record keys of the owner's table, in the order of its rows (JSON
        list of text).
    values : dict
        Sensitive attribute -> :class:`~ppdm.verify.composition.PersonValues`.
    """

    record_key: str
    keys: ArtifactRef
    values: dict[str, PersonValues]


def _link(store: ArtifactStore, dataset: str, digest: str) -> Path:
    return store.root / LINKS / dataset / f"{digest}.json"


def save_state(
    store: ArtifactStore,
    dataset: str,
    files: Mapping[str, str],
    record_key: str,
    keys: list[str],
    values: Mapping[str, PersonValues],
) -> SeriesState:
    """Keep the state of the release whose files hash to ``files``; return it.

    Idempotent: the same release and state write the same bytes. Two runs
    may publish the same files (a month whose every class was released as
    before); their states are merged (:func:`merge`), so that the persons of
    both stay on record. ``keys`` are this run's, for its verifier.
    """
    earlier = load_state(store, dataset, files)
    if not isinstance(earlier, str):
        values = {
            a: merge(v, earlier.values[a]) if a in earlier.values else v
            for a, v in values.items()
        }
    keys_ref = store.put_json(keys, kind="record-keys")
    values_ref = store.put_json(
        {a: v.to_dict() for a, v in sorted(values.items())}, kind="person-values"
    )
    link = {
        "record_key": record_key,
        "files": dict(sorted(files.items())),
        "keys": _ref(keys_ref),
        "values": _ref(values_ref),
    }
    write_json(_link(store, dataset, release_digest(files)), link)
    return SeriesState(record_key, keys_ref, dict(values))


def merge(one: PersonValues, other: PersonValues) -> PersonValues:
    """The persons of both; a person in both keeps the values both leave possible."""
    keys = np.union1d(one.keys.astype(str), other.keys.astype(str)).astype(object)
    values = sorted(set(one.values) | set(other.values))
    here, a = one.aligned(keys, values)
    there, b = other.aligned(keys, values)
    del here, there  # a person absent from one side has every value there
    return PersonValues(keys, tuple(values), a & b)


def _ref(ref: ArtifactRef) -> dict[str, Any]:
    return {"path": ref.path, "sha256": ref.sha256, "kind": ref.kind}


def load_state(
    store: ArtifactStore, dataset: str, files: Mapping[str, str]
) -> SeriesState | str:
    """The state of the release whose files hash to ``files``, or why there is none."""
    link = _link(store, dataset, release_digest(files))
    if not link.is_file():
        return (
            "no record-key state in the work directory (released without "
            "republication.record_key, or from another work directory)"
        )
    try:
        content = json.loads(link.read_text(encoding="utf-8"))
        refs = {
            part: ArtifactRef(
                content[part]["path"], content[part]["sha256"], content[part]["kind"]
            )
            for part in ("keys", "values")
        }
        for ref in refs.values():
            ref.verify()
        values = json.loads(Path(refs["values"].path).read_text(encoding="utf-8"))
    except Exception as err:  # a damaged state must not stop the check silently
        return f"its record-key state is unreadable ({type(err).__name__}: {err})"
    return SeriesState(
        str(content["record_key"]),
        refs["keys"],
        {a: PersonValues.from_dict(v) for a, v in values.items()},
    )
