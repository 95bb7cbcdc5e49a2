"""Per-dataset validation contracts: a pandera model and a GX expectation suite.

``get_schema(dataset)`` returns both, ready for
:func:`ppdm.prepare.validation.validate_table`. Suites are JSON files under
``great_expectations/`` next to this file, in the simple form
``{"name": ..., "expectations": [{"type": "expect_...", "kwargs": {...}}]}``;
they are located relative to this package, never the working directory.

The pandera model says what a valid *row* is (types, domains, ranges,
nullability). The suite complements it with what GX expresses better: the
table's shape (row count, column set), ``mostly`` thresholds on missing
values, both target classes present, and dataset-specific bounds such as the
census top-code of capital gains, which the model leaves open.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from pandera.pandas import DataFrameModel

from ppdm.exceptions import UnknownDatasetError
from schemas.adult import AdultSchema
from schemas.german import GermanSchema

__all__ = ["SCHEMAS", "get_schema", "load_suite"]

#: Dataset name -> pandera model; the suite is ``great_expectations/<name>.json``.
SCHEMAS: dict[str, type[DataFrameModel]] = {
    "adult": AdultSchema,
    "german": GermanSchema,
}


def load_suite(dataset: str) -> dict[str, Any]:
    """The expectation suite of a dataset, as a dict read from its JSON file."""
    path = resources.files(__package__) / "great_expectations" / f"{dataset}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def get_schema(dataset: str) -> tuple[type[DataFrameModel], dict[str, Any]]:
    """The pandera model and the GX suite of a dataset.

    Raises
    ------
    KeyError
        No schema is registered under ``dataset``; the message lists the
        known ones.
    """
    if dataset not in SCHEMAS:
        raise UnknownDatasetError(
            f"no schema for dataset {dataset!r}; known: {', '.join(sorted(SCHEMAS))} "
            "(name one with the config key 'schema')"
        )
    return SCHEMAS[dataset], load_suite(dataset)
