"""The embedded Adult and German credit data as binary tables for the paper's experiments.

Zhang et al. (TDP 2017, section 5) use Adult as 19 binary features of which
27.9% of the cells are 1 ("low dimensional and dense"), and German credit
"binarised". Neither list of features is published, so both encodings here
are reconstructions. Their cut points come from the whole table (Adult's age
quartiles written out below, German's equal-frequency bins), not from a
cross-validation fold, as a published binary table's would; their shape is
what the tests check against the paper.

* :func:`paper_adult`: the 48,842 rows of Adult (training and test files).
  The paper takes Adult from the k-anonymisation literature (Iyengar, KDD
  2002); its 19 features here are five attributes in coarse groups, one 0/1
  column per group (age 4, education 4, marital status 3, occupation 3,
  work class 3; a missing work class or occupation falls in the "other"
  group, so each of these attributes sets exactly one column), and two
  indicators, capital gain > 0 and capital loss > 0. A row has 5 ones plus
  its capital indicators: 27.0% of the cells (paper: 27.9%). Only five
  whole attributes fit in 19 columns at that density (six would give about
  31%), so the rest of the census attributes (sex, race, native country,
  relationship, hours, the sampling weight) are left out.
* :func:`paper_german`: the 1,000 rows of German credit with all 20
  attributes: one 0/1 column per value, the three numeric attributes with
  many values (duration, credit amount, age) in 4 equal-frequency bins, the
  small counts (installment rate, residence, existing credits, people
  liable) by value; 80 features, 25.0% of cells are 1.

Positive class: Adult ``>50K``; German ``bad`` credit (the class the data set
is about; ROC AUC does not depend on which class is called positive).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "ADULT_GROUPS",
    "PaperTable",
    "paper_adult",
    "paper_german",
]


@dataclass(frozen=True)
class PaperTable:
    """A binary table and its two-class target.

    Attributes
    ----------
    matrix : numpy.ndarray of bool, shape (n, d)
    y : numpy.ndarray of bool, shape (n,)
        True for the positive class.
    names : list of str
        One name per column, ``attribute=group``.
    """

    matrix: np.ndarray
    y: np.ndarray
    names: list[str]


_NO_HIGH_SCHOOL = (
    "Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th",
)  # fmt: skip

#: Adult's grouped attributes: attribute -> {group: values}; a value in no
#: group (a missing one included) belongs to the last group.
ADULT_GROUPS: dict[str, dict[str, tuple[str, ...]]] = {
    "education": {
        "no-high-school": _NO_HIGH_SCHOOL,
        "high-school": ("HS-grad",),
        "some-college": ("Some-college", "Assoc-voc", "Assoc-acdm"),
        "degree": ("Bachelors", "Masters", "Prof-school", "Doctorate"),
    },
    "marital-status": {
        "married": ("Married-civ-spouse", "Married-AF-spouse"),
        "never-married": ("Never-married",),
        "previously-married": (
            "Divorced",
            "Separated",
            "Widowed",
            "Married-spouse-absent",
        ),  # fmt: skip
    },
    "occupation": {
        "white-collar": (
            "Exec-managerial",
            "Prof-specialty",
            "Adm-clerical",
            "Sales",
            "Tech-support",
        ),  # fmt: skip
        "blue-collar": (
            "Craft-repair",
            "Machine-op-inspct",
            "Transport-moving",
            "Handlers-cleaners",
            "Farming-fishing",
        ),  # fmt: skip
        "service-or-other": (),
    },
    "workclass": {
        "private": ("Private",),
        "self-employed": ("Self-emp-not-inc", "Self-emp-inc"),
        "government-or-other": (),
    },
}
#: Age groups: upper bounds (inclusive) of the first three, the quartiles of
#: the 48,842 rows.
ADULT_AGE_BOUNDS = (28, 37, 48)


def _grouped(column: pd.Series, groups: dict[str, tuple[str, ...]]) -> np.ndarray:
    """One 0/1 column per group; unlisted and missing values go to the last."""
    values = column.astype(object).where(column.notna(), None).to_numpy()
    out = np.zeros((len(values), len(groups)), dtype=bool)
    listed = np.zeros(len(values), dtype=bool)
    for j, members in enumerate(list(groups.values())[:-1]):
        hit = np.isin(values, list(members))
        out[:, j] = hit
        listed |= hit
    out[:, -1] = ~listed
    return out


def paper_adult() -> PaperTable:
    """Adult as 19 binary features (see the module docstring)."""
    from ppdm.prepare import datasets

    table = datasets.load("adult")
    age = table["age"].to_numpy()
    edges = (-np.inf, *ADULT_AGE_BOUNDS, np.inf)
    blocks = [
        np.column_stack(
            [(age > lo) & (age <= hi) for lo, hi in zip(edges[:-1], edges[1:])]
        )
    ]
    names = [
        "age<=28",
        "age=29-37",
        "age=38-48",
        "age>=49",
    ]
    for attribute, groups in ADULT_GROUPS.items():
        blocks.append(_grouped(table[attribute], groups))
        names.extend(f"{attribute}={g}" for g in groups)
    blocks.append(
        np.column_stack(
            [
                table["capital-gain"].to_numpy() > 0,
                table["capital-loss"].to_numpy() > 0,
            ]
        )
    )
    names.extend(["capital-gain>0", "capital-loss>0"])
    matrix = np.hstack(blocks)
    y = (table["income"] == ">50K").to_numpy(dtype=bool)
    return PaperTable(matrix, y, names)


#: German's numeric attributes with many values, put in 4 equal-frequency bins.
GERMAN_BINNED = ("duration", "credit-amount", "age")


def paper_german() -> PaperTable:
    """German credit, all 20 attributes binary-encoded (see the module docstring)."""
    from ppdm.prepare import datasets
    from ppdm.prepare.discretize import discretize
    from ppdm.selection._encoding import binary_encode

    table = datasets.load("german")
    table = discretize(
        table, list(GERMAN_BINNED), None, method="equal-frequency", n_bins=4
    ).table
    attributes = [c for c in table.columns if c != "credit"]
    encoding = binary_encode(table, attributes)
    y = (table["credit"] == "bad").to_numpy(dtype=bool)
    return PaperTable(encoding.matrix, y, list(encoding.names))
