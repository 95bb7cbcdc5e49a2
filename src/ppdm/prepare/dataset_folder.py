"""A dataset as a folder of files: its validation contract is data, not code.

A dataset folder holds

- ``schema.yaml``: what a valid row is (types, domains, ranges, nullability),
  in pandera's own serialisation (``DataFrameSchema.to_yaml()``), read back
  with ``DataFrameSchema.from_yaml``;
- ``suite.json``: the Great Expectations suite, in the simple form
  ``{"name": ..., "expectations": [{"type": "expect_...", "kwargs": {...}}]}``
  that :func:`ppdm.prepare.validation.validate_table` runs;
- optionally ``hierarchies/`` (one ``<attribute>.csv`` or ``.json`` each) and
  the release configuration ``<name>.yaml``, as ``ppdm init`` writes them.

The datasets that ship with ppdm (Adult, German) are such folders, found by
name through :func:`ppdm.resources.schema_dir`; a data owner's own dataset is
named by its path. The pandera schema says what a valid *row* is; the suite
complements it with what GX expresses better: the table's shape (row count,
column set), ``mostly`` thresholds on missing values, both target classes
present, and bounds such as the census top-code of capital gains.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ppdm import resources
from ppdm.exceptions import UnknownDatasetError

__all__ = [
    "SCHEMA_FILE",
    "SUITE_FILE",
    "DatasetContract",
    "contract_fingerprint",
    "load_contract",
    "resolve_schema_dir",
]

SCHEMA_FILE = "schema.yaml"
SUITE_FILE = "suite.json"


@dataclass(frozen=True)
class DatasetContract:
    """The pandera schema and the GX suite of one dataset folder."""

    schema: Any  # pandera.pandas.DataFrameSchema (imported lazily: it is slow)
    suite: dict[str, Any]
    folder: Path

    @property
    def columns(self) -> list[str]:
        """The columns the schema declares, in its order."""
        return [str(name) for name in self.schema.columns]


def resolve_schema_dir(value: str, base_dir: Path | None = None) -> Path:
    """The dataset folder a configuration's ``schema`` key names.

    A folder (relative paths are read from ``base_dir``, the configuration
    file's folder, else the working directory) holding ``schema.yaml`` wins;
    otherwise ``value`` is the name of a shipped dataset.

    Raises
    ------
    UnknownDatasetError
        Neither a dataset folder nor a shipped name; the message lists both
        what was looked for and the shipped names.
    """
    path = Path(value).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    if (path / SCHEMA_FILE).is_file():
        return path.resolve()
    if "/" not in value and value not in (".", ".."):
        try:
            return resources.schema_dir(value)
        except UnknownDatasetError:
            pass
    raise UnknownDatasetError(
        f"schema {value!r}: no dataset folder {path} with a {SCHEMA_FILE}, and no "
        f"shipped schema of that name (shipped: {', '.join(resources.schema_names())}"
        "); write one with `ppdm init SOURCE --dataset NAME`"
    )


def contract_fingerprint(folder: Path | str) -> str:
    """sha256 over the schema and suite files: equal contracts, equal hash."""
    digest = hashlib.sha256()
    for name in (SCHEMA_FILE, SUITE_FILE):
        data = (Path(folder) / name).read_bytes()
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def load_contract(folder: Path | str) -> DatasetContract:
    """Read ``schema.yaml`` and ``suite.json`` of a dataset folder.

    Raises
    ------
    UnknownDatasetError
        A file is missing, or not a valid schema or suite; the message names
        the file and what is wrong.
    """
    import pandera.pandas as pa
    import yaml

    folder = Path(folder)
    schema_path, suite_path = folder / SCHEMA_FILE, folder / SUITE_FILE
    for path in (schema_path, suite_path):
        if not path.is_file():
            raise UnknownDatasetError(
                f"dataset folder {folder}: {path.name} is missing"
            )
    try:
        schema = pa.DataFrameSchema.from_yaml(schema_path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, ValueError, TypeError, KeyError, AttributeError) as err:
        raise UnknownDatasetError(
            f"{schema_path}: not a pandera schema in YAML form ({err})"
        ) from None
    if not isinstance(schema, pa.DataFrameSchema):
        raise UnknownDatasetError(f"{schema_path}: not a pandera DataFrameSchema")
    try:
        suite = json.loads(suite_path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise UnknownDatasetError(f"{suite_path}: not valid JSON ({err})") from None
    if not isinstance(suite, dict) or not isinstance(suite.get("expectations"), list):
        raise UnknownDatasetError(
            f"{suite_path}: expected {{'name': ..., 'expectations': [...]}}"
        )
    return DatasetContract(schema=schema, suite=suite, folder=folder.resolve())
