"""A seeded hospital export as a data owner hands it over: messy on purpose.

Names and e-mail addresses, a patient id and a medical record number, zip
codes with leading zeros, ISO birth dates and admission dates in the German
national format (``DD.MM.YYYY``), numeric stays and visits, an ICD code, a
readmission flag, and a few malformed cells.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

FIRST = ["Ana", "Ben", "Cleo", "Dan", "Eva", "Finn", "Gus", "Hana", "Ivo", "Jana",
         "Karl", "Lena", "Mia", "Noah", "Olga", "Paul", "Rosa", "Sven", "Tara", "Uwe"]  # fmt: skip
LAST = ["Smith", "Jones", "Brown", "Khan", "Meyer", "Rossi", "Novak", "Silva",
        "Weber", "Costa", "Dubois", "Ahmed", "Olsen", "Kowalski"]  # fmt: skip


def messy_hospital(rows: int = 3000, seed: int = 7) -> pd.DataFrame:
    """The table, all cells as text (as a CSV export has them)."""
    rng = np.random.default_rng(seed)
    first = rng.choice(FIRST, rows)
    last = rng.choice(LAST, rows)
    birth = pd.Timestamp("1935-01-01") + pd.to_timedelta(
        rng.integers(0, 365 * 70, rows), unit="D"
    )
    admission = pd.Timestamp("2022-01-01") + pd.to_timedelta(
        rng.integers(0, 365 * 2, rows), unit="D"
    )
    table = pd.DataFrame(
        {
            "patient_id": [f"P{n:06d}" for n in rng.permutation(rows) + 1],
            "name": [f"{a} {b}" for a, b in zip(first, last)],
            "email": [
                f"{a.lower()}.{b.lower()}{n}@mail.example"
                for a, b, n in zip(first, last, rng.integers(1, 999, rows))
            ],
            "zip": [f"{z:05d}" for z in rng.choice(np.arange(1001, 1041), rows)],
            "birth_date": birth.strftime("%Y-%m-%d"),
            "admission_date": admission.strftime("%d.%m.%Y"),
            "sex": rng.choice(["F", "M"], rows),
            "ethnicity": rng.choice(
                ["white", "black", "asian", "hispanic", "other"], rows
            ),
            "insurance": rng.choice(
                ["Medicare", "Medicaid", "Private", "Self Pay"], rows
            ),
            "length_of_stay": rng.integers(1, 30, rows).astype(str),
            "num_prior_visits": rng.integers(0, 12, rows).astype(str),
            "diagnosis_code": rng.choice(
                ["E11.9", "I10", "J45.909", "K21.9", "N39.0", "F32.9"], rows
            ),
            "readmitted": rng.choice(["yes", "no"], rows, p=[0.3, 0.7]),
        }
    )
    broken = rng.choice(rows, 9, replace=False)
    table.loc[broken[:2], "birth_date"] = ["not a date", "1961-13-45"]
    table.loc[broken[2:6], "length_of_stay"] = ["n/a", "-", "three", "-4"]
    table.loc[broken[6:8], "zip"] = ["", "ABCDE"]
    table.loc[broken[8:], "sex"] = ["unknown"]
    return table
