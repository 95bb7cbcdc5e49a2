"""Embedded default data: UCI Adult and Statlog German credit (CC BY 4.0).

``load(name)`` returns a typed table: integer columns as ``int64``, the rest
as strings, with the source's ``?`` turned into real missing values. The
files ship gzip-compressed with the package; see ``data/LICENSE-DATA.md`` for
the licence and the citations.

Examples
--------
>>> from ppdm.prepare import datasets
>>> adult = datasets.load("adult")
>>> adult.shape
(48842, 15)
>>> int(adult["workclass"].isna().sum())
2799
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import pandas as pd

from ppdm.exceptions import UnknownDatasetError

__all__ = ["DATASETS", "load", "data_path", "ADULT_COLUMNS", "GERMAN_COLUMNS"]

ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
]  # fmt: skip
ADULT_NUMERIC = [
    "age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week",
]  # fmt: skip

GERMAN_COLUMNS = [
    "checking-status", "duration", "credit-history", "purpose", "credit-amount",
    "savings", "employment-since", "installment-rate", "personal-status-sex",
    "other-debtors", "residence-since", "property", "age", "other-installment-plans",
    "housing", "existing-credits", "job", "people-liable", "telephone",
    "foreign-worker", "credit",
]  # fmt: skip
GERMAN_NUMERIC = [
    "duration", "credit-amount", "installment-rate", "residence-since", "age",
    "existing-credits", "people-liable",
]  # fmt: skip


def data_path(filename: str) -> Path:
    """Filesystem path of one of the embedded files."""
    return Path(str(resources.files(__package__) / "data" / filename))


def _read_adult_part(filename: str) -> pd.DataFrame:
    with gzip.open(data_path(filename), "rt", encoding="ascii") as handle:
        frame = pd.read_csv(
            handle,
            header=None,
            names=ADULT_COLUMNS,
            skipinitialspace=True,
            na_values=["?"],
            keep_default_na=False,
            comment="|",  # adult.test opens with "|1x3 Cross validator"
            dtype={c: "int64" for c in ADULT_NUMERIC},
        )
    frame["income"] = frame["income"].str.rstrip(".")
    return frame


def _load_adult(part: str) -> pd.DataFrame:
    parts = {"train": ["adult.data.gz"], "test": ["adult.test.gz"]}
    files = parts.get(part, ["adult.data.gz", "adult.test.gz"])
    frame = pd.concat([_read_adult_part(f) for f in files], ignore_index=True)
    return _typed(frame, ADULT_NUMERIC)


def _load_german(part: str) -> pd.DataFrame:
    with gzip.open(data_path("german.data.gz"), "rt", encoding="ascii") as handle:
        frame = pd.read_csv(
            handle, sep=" ", header=None, names=GERMAN_COLUMNS, dtype=str
        )
    codes = json.loads(data_path("german.codes.json").read_text(encoding="utf-8"))
    for column, meaning in codes.items():
        frame[column] = frame[column].map(meaning)
    for column in GERMAN_NUMERIC:
        frame[column] = frame[column].astype("int64")
    return _typed(frame, GERMAN_NUMERIC)


def _typed(frame: pd.DataFrame, numeric: list[str]) -> pd.DataFrame:
    for column in frame.columns:
        if column not in numeric:
            frame[column] = frame[column].astype("string")
    return frame


DATASETS: dict[str, Callable[[str], pd.DataFrame]] = {
    "adult": _load_adult,
    "german": _load_german,
}


def load(name: str, part: str = "all") -> pd.DataFrame:
    """Load an embedded data set.

    Parameters
    ----------
    name : {"adult", "german"}
    part : {"all", "train", "test"}, default="all"
        For Adult, the UCI training file, the test file or both (48,842 rows).
        German credit has one part (1,000 rows).

    Returns
    -------
    pandas.DataFrame
        Integer columns as int64, others as pandas strings; missing values are NA.
    """
    if name not in DATASETS:
        raise UnknownDatasetError(
            f"unknown embedded dataset {name!r}; available: {', '.join(DATASETS)}"
        )
    if part not in ("all", "train", "test"):
        raise ValueError(f"part must be 'all', 'train' or 'test'; got {part!r}")
    return DATASETS[name](part)
