"""pandera schema of UCI Adult as :func:`ppdm.prepare.datasets.load` returns it.

Domains are the UCI ``adult.names`` values; ranges are those of the census
extract (ages 17 to 90, hours per week 1 to 99, education-num 1 to 16). The
three columns where the source writes ``?`` (workclass, occupation,
native-country) are nullable; every other column must be present in every
row. The schema is strict: a column it does not declare is refused, so an
identifier cannot slip into a release.

References
----------
.. [1] R. Kohavi, "Scaling up the accuracy of naive-Bayes classifiers: a
   decision-tree hybrid", Proc. 2nd International Conference on Knowledge
   Discovery and Data Mining (KDD), 202-207, 1996.
.. [2] B. Becker, R. Kohavi, "Adult", UCI Machine Learning Repository, 1996,
   https://doi.org/10.24432/C5XW20.
"""

from __future__ import annotations

import pandera.pandas as pa
from pandera.typing.pandas import Series

__all__ = ["AdultSchema"]

WORKCLASS = [
    "Federal-gov", "Local-gov", "Never-worked", "Private", "Self-emp-inc",
    "Self-emp-not-inc", "State-gov", "Without-pay",
]  # fmt: skip
EDUCATION = [
    "Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th",
    "HS-grad", "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters",
    "Prof-school", "Doctorate",
]  # fmt: skip
MARITAL_STATUS = [
    "Divorced", "Married-AF-spouse", "Married-civ-spouse", "Married-spouse-absent",
    "Never-married", "Separated", "Widowed",
]  # fmt: skip
OCCUPATION = [
    "Adm-clerical", "Armed-Forces", "Craft-repair", "Exec-managerial",
    "Farming-fishing", "Handlers-cleaners", "Machine-op-inspct", "Other-service",
    "Priv-house-serv", "Prof-specialty", "Protective-serv", "Sales", "Tech-support",
    "Transport-moving",
]  # fmt: skip
RELATIONSHIP = [
    "Husband", "Not-in-family", "Other-relative", "Own-child", "Unmarried", "Wife",
]  # fmt: skip
RACE = ["Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"]
SEX = ["Female", "Male"]
NATIVE_COUNTRY = [
    "Cambodia", "Canada", "China", "Columbia", "Cuba", "Dominican-Republic",
    "Ecuador", "El-Salvador", "England", "France", "Germany", "Greece", "Guatemala",
    "Haiti", "Holand-Netherlands", "Honduras", "Hong", "Hungary", "India", "Iran",
    "Ireland", "Italy", "Jamaica", "Japan", "Laos", "Mexico", "Nicaragua",
    "Outlying-US(Guam-USVI-etc)", "Peru", "Philippines", "Poland", "Portugal",
    "Puerto-Rico", "Scotland", "South", "Taiwan", "Thailand", "Trinadad&Tobago",
    "United-States", "Vietnam", "Yugoslavia",
]  # fmt: skip
INCOME = ["<=50K", ">50K"]


class AdultSchema(pa.DataFrameModel):
    """One row per person of the 1994 US census extract (48,842 rows)."""

    age: Series[int] = pa.Field(in_range={"min_value": 17, "max_value": 90})
    workclass: Series[str] = pa.Field(isin=WORKCLASS, nullable=True)
    fnlwgt: Series[int] = pa.Field(ge=1)
    education: Series[str] = pa.Field(isin=EDUCATION)
    education_num: Series[int] = pa.Field(
        alias="education-num", in_range={"min_value": 1, "max_value": 16}
    )
    marital_status: Series[str] = pa.Field(alias="marital-status", isin=MARITAL_STATUS)
    occupation: Series[str] = pa.Field(isin=OCCUPATION, nullable=True)
    relationship: Series[str] = pa.Field(isin=RELATIONSHIP)
    race: Series[str] = pa.Field(isin=RACE)
    sex: Series[str] = pa.Field(isin=SEX)
    capital_gain: Series[int] = pa.Field(alias="capital-gain", ge=0)
    capital_loss: Series[int] = pa.Field(alias="capital-loss", ge=0)
    hours_per_week: Series[int] = pa.Field(
        alias="hours-per-week", in_range={"min_value": 1, "max_value": 99}
    )
    native_country: Series[str] = pa.Field(
        alias="native-country", isin=NATIVE_COUNTRY, nullable=True
    )
    income: Series[str] = pa.Field(isin=INCOME)

    class Config:
        name = "adult"
        coerce = True
        strict = True
