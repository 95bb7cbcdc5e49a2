"""Direct identifiers recognised by what they are, not by how many there are.

HIPAA Safe Harbor (45 CFR 164.514(b)(2)) lists 18 kinds of identifiers a
de-identified table must not hold: names, addresses, dates, phone and fax
numbers, e-mail addresses, social security, medical record, health plan,
account and licence numbers, vehicle and device identifiers, URLs, IP
addresses, biometric identifiers, photographs and any other unique number.
A column is such an identifier whatever its distinct count: 560 names on
50,000 rows single people out just as well as 3,000 names on 3,000 rows.

:func:`identifier_pattern` reads a column's values (the whole column, never a
sample) and names the pattern most of them follow; :func:`looks_identifying`
adds the column's name. ``ppdm init`` proposes such columns ``identifying``,
and the verifier refuses to accept one released as is unless the data owner
acknowledges it explicitly.

>>> import pandas as pd
>>> identifier_pattern(pd.Series(["ana@x.org", "ben@y.com", "cy@z.net", "di@x.org"]))
'e-mail address'
>>> identifier_pattern(pd.Series([f"123-45-678{i}" for i in range(5)]))
'social security number'
>>> identifier_pattern(pd.Series(["2022-01-05", "2021-12-31", "2020-02-29", None]))
>>> identifier_pattern(pd.Series(["flu", "cold", "asthma", "ulcer"])) is None
True
"""

from __future__ import annotations

import re

import pandas as pd

from ppdm.identifier_names import identifier_name

__all__ = ["VALUE_PATTERNS", "identifier_pattern", "looks_identifying"]

#: Share of distinct values above which a column released as is needs an
#: explicit acknowledgement even when accepted.
MOSTLY_UNIQUE_SHARE = 0.5

#: Share of a column's present values that must follow a pattern.
_PATTERN_SHARE = 0.9
#: A column with at most this many distinct values names nobody by its values.
_FEW_VALUES = 3

# A capitalised name: "Ana", "O'Neil", "Meyer-Lang".
_WORD = r"[A-Z][a-z]*(?:['\-][A-Z]?[a-z]+)*"

#: What a value of each kind of identifier looks like (anchored, whole cell).
VALUE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("e-mail address", re.compile(r"^[\w.+'-]+@[\w-]+(\.[\w-]+)+$")),
    ("social security number", re.compile(r"^\d{3}-\d{2}-\d{4}$")),
    ("URL", re.compile(r"^(https?|ftp)://\S+$|^www\.\S+\.\S+$", re.IGNORECASE)),
    (
        "IP address",
        re.compile(
            r"^(\d{1,3}\.){3}\d{1,3}$|^([0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}$",
            re.IGNORECASE,
        ),
    ),
    (
        "phone number",
        re.compile(r"^\+?\(?\d{1,4}\)?([ .\-/]?\(?\d{2,5}\)?){2,5}$"),
    ),
    # Two to four capitalised words of letters: "Ana Smith", "O'Neil, Jo".
    (
        "person's name",
        re.compile(rf"^{_WORD},? ([A-Z]\.? )?{_WORD}( {_WORD})?$"),
    ),
    ("free text", re.compile(r"^\S+(\s+\S+){5,}$")),
)


def looks_identifying(name: str, column: pd.Series) -> str:
    """Why a column released as is looks like a direct identifier ("" if not).

    By its name (:func:`identifier_name`, with more than 10 distinct values),
    by its values (:func:`identifier_pattern`), or because more than half of
    its present values are distinct.
    """
    present = column.dropna()
    distinct = int(present.nunique())
    word = identifier_name(name)
    if word is not None and distinct > 10:
        return f'it is named like an identifier ("{word}")'
    pattern = identifier_pattern(column)
    if pattern is not None:
        return f"its values look like a {pattern}"
    if len(present) and distinct > 10 and distinct / len(present) > MOSTLY_UNIQUE_SHARE:
        return f"{distinct / len(present):.0%} of its values are distinct"
    return ""


def identifier_pattern(column: pd.Series) -> str | None:
    """The kind of identifier most of the column's values look like, or None.

    Every present value is tested (pandas' vectorised ``str.match``); a
    pattern holds when at least 90 % of them follow it and the column has
    more than 3 distinct values. A phone number has at least 8 digits and is
    neither a plain number nor a date; a number column is never text.
    """
    if pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(
        column.dtype
    ):
        return None
    present = column.dropna().astype(str).str.strip()
    present = present[present != ""]
    if len(present) == 0 or present.nunique() <= _FEW_VALUES:
        return None
    # Digits only are counts or codes; dates and ZIP+4 codes have the shape of
    # a phone number but are not one.
    not_phone = present.str.fullmatch(
        r"[+-]?\d+(\.\d+)?|\d{1,4}[-./]\d{1,2}[-./]\d{1,4}|\d{5}-\d{4}"
    )
    for kind, pattern in VALUE_PATTERNS:
        hits = present.str.match(pattern)
        if kind == "phone number":
            hits &= ~not_phone & present.str.count(r"\d").ge(8)
        if float(hits.mean()) >= _PATTERN_SHARE:
            return kind
    return None
