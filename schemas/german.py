"""pandera schema of Statlog German credit as :func:`ppdm.prepare.datasets.load` returns it.

Value domains are the meanings of the UCI attribute codes, read from the same
``german.codes.json`` that :mod:`ppdm.prepare.datasets` decodes the file with, so the
two can never disagree. Numeric ranges follow the UCI documentation: the
ordinal codes are 1..4 (installment rate, present residence, existing credits)
and 1..2 (people liable); duration, amount and age have no documented bound,
so they get plausible ones (a loan of 1 to 120 months, a positive amount, an
adult applicant of 18 to 100 years; observed 4..72, 250..18,424 and 19..75).
No column has missing values. The schema is strict.

References
----------
.. [1] H. Hofmann, "Statlog (German Credit Data)", UCI Machine Learning
   Repository, 1994, https://doi.org/10.24432/C5NC77.
"""

from __future__ import annotations

import json

import pandera.pandas as pa
from pandera.typing.pandas import Series

from ppdm.prepare.datasets import data_path

__all__ = ["GermanSchema"]

_CODES: dict[str, dict[str, str]] = json.loads(
    data_path("german.codes.json").read_text(encoding="utf-8")
)


def _domain(column: str) -> list[str]:
    return sorted(_CODES[column].values())


class GermanSchema(pa.DataFrameModel):
    """One row per credit applicant (1,000 rows); ``credit`` is good or bad."""

    checking_status: Series[str] = pa.Field(
        alias="checking-status", isin=_domain("checking-status")
    )
    duration: Series[int] = pa.Field(in_range={"min_value": 1, "max_value": 120})
    credit_history: Series[str] = pa.Field(
        alias="credit-history", isin=_domain("credit-history")
    )
    purpose: Series[str] = pa.Field(isin=_domain("purpose"))
    credit_amount: Series[int] = pa.Field(alias="credit-amount", ge=1)
    savings: Series[str] = pa.Field(isin=_domain("savings"))
    employment_since: Series[str] = pa.Field(
        alias="employment-since", isin=_domain("employment-since")
    )
    installment_rate: Series[int] = pa.Field(
        alias="installment-rate", in_range={"min_value": 1, "max_value": 4}
    )
    personal_status_sex: Series[str] = pa.Field(
        alias="personal-status-sex", isin=_domain("personal-status-sex")
    )
    other_debtors: Series[str] = pa.Field(
        alias="other-debtors", isin=_domain("other-debtors")
    )
    residence_since: Series[int] = pa.Field(
        alias="residence-since", in_range={"min_value": 1, "max_value": 4}
    )
    property: Series[str] = pa.Field(isin=_domain("property"))
    age: Series[int] = pa.Field(in_range={"min_value": 18, "max_value": 100})
    other_installment_plans: Series[str] = pa.Field(
        alias="other-installment-plans", isin=_domain("other-installment-plans")
    )
    housing: Series[str] = pa.Field(isin=_domain("housing"))
    existing_credits: Series[int] = pa.Field(
        alias="existing-credits", in_range={"min_value": 1, "max_value": 4}
    )
    job: Series[str] = pa.Field(isin=_domain("job"))
    people_liable: Series[int] = pa.Field(
        alias="people-liable", in_range={"min_value": 1, "max_value": 2}
    )
    telephone: Series[str] = pa.Field(isin=_domain("telephone"))
    foreign_worker: Series[str] = pa.Field(
        alias="foreign-worker", isin=_domain("foreign-worker")
    )
    credit: Series[str] = pa.Field(isin=_domain("credit"))

    class Config:
        name = "german"
        coerce = True
        strict = True
