"""Seeded tables shaped like the ones data owners bring, besides the hospital export.

- :func:`titanic_like`: the passenger list analysts know (seaborn's
  ``titanic`` layout): a 0/1 target, a passenger class twice (``pclass`` and
  ``class``, the second named like a class label), ages with fractions and
  gaps, a continuous fare, a mostly empty deck, booleans and a duplicate of
  the target (``alive``);
- :func:`hr_like`: an employee table (the IBM attrition layout): an employee
  number, continuous pay figures, many small integer scores and a yes/no
  attrition target.

The values are drawn from seeded generators, never copied from a dataset.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def titanic_like(rows: int = 891, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    pclass = rng.choice([1, 2, 3], rows, p=[0.24, 0.21, 0.55])
    sex = rng.choice(["male", "female"], rows, p=[0.65, 0.35])
    age = np.round(rng.gamma(6.0, 5.0, rows).clip(0.42, 80), 1)
    age[rng.random(rows) < 0.2] = np.nan
    survived = (rng.random(rows) < np.where(sex == "female", 0.74, 0.19)).astype(int)
    fare = np.round(rng.lognormal(2.7, 0.9, rows) * (4 - pclass), 4)
    embarked = rng.choice(["S", "C", "Q"], rows, p=[0.72, 0.19, 0.09]).astype(object)
    embarked[rng.choice(rows, 2, replace=False)] = None
    deck = rng.choice(list("ABCDEFG"), rows).astype(object)
    deck[rng.random(rows) < 0.77] = None
    sibsp = rng.choice([0, 1, 2, 3, 4], rows, p=[0.68, 0.23, 0.04, 0.03, 0.02])
    parch = rng.choice([0, 1, 2, 3], rows, p=[0.76, 0.13, 0.09, 0.02])
    adult = np.nan_to_num(age, nan=30) >= 16
    who = np.where(~adult, "child", np.where(sex == "male", "man", "woman"))
    town = {"S": "Southampton", "C": "Cherbourg", "Q": "Queenstown"}
    return pd.DataFrame(
        {
            "survived": survived,
            "pclass": pclass,
            "sex": sex,
            "age": age,
            "sibsp": sibsp,
            "parch": parch,
            "fare": fare,
            "embarked": embarked,
            "class": pd.Series(pclass).map({1: "First", 2: "Second", 3: "Third"}),
            "who": who,
            "adult_male": (who == "man"),
            "deck": deck,
            "embark_town": [town.get(e) if e else None for e in embarked],
            "alive": np.where(survived == 1, "yes", "no"),
            "alone": (sibsp + parch) == 0,
        }
    )


def hr_like(rows: int = 1470, seed: int = 9) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 61, rows)
    level = rng.choice([1, 2, 3, 4, 5], rows, p=[0.37, 0.36, 0.15, 0.07, 0.05])
    income = np.round(1000 + level * 2800 + rng.normal(0, 900, rows)).clip(1009)
    attrition = rng.random(rows) < np.where(age < 30, 0.28, 0.12)
    return pd.DataFrame(
        {
            "EmployeeNumber": rng.permutation(np.arange(1, 3 * rows, 3))[:rows],
            "Age": age,
            "Attrition": np.where(attrition, "Yes", "No"),
            "BusinessTravel": rng.choice(
                ["Travel_Rarely", "Travel_Frequently", "Non-Travel"],
                rows,
                p=[0.71, 0.19, 0.10],
            ),
            "DailyRate": rng.integers(102, 1500, rows),
            "Department": rng.choice(
                ["Research & Development", "Sales", "Human Resources"],
                rows,
                p=[0.65, 0.31, 0.04],
            ),
            "DistanceFromHome": rng.integers(1, 30, rows),
            "Education": rng.integers(1, 6, rows),
            "Gender": rng.choice(["Male", "Female"], rows, p=[0.6, 0.4]),
            "JobLevel": level,
            "MaritalStatus": rng.choice(
                ["Married", "Single", "Divorced"], rows, p=[0.46, 0.32, 0.22]
            ),
            "MonthlyIncome": income.astype(int),
            "HourlyRate": np.round(rng.uniform(30, 100, rows), 2),
            "OverTime": rng.choice(["Yes", "No"], rows, p=[0.28, 0.72]),
            "JobSatisfaction": rng.integers(1, 5, rows),
            "YearsAtCompany": np.minimum(rng.poisson(7, rows), age - 18),
        }
    )
