"""What leaves the validate step: released columns only, identifiers as keyed pseudonyms."""

from __future__ import annotations

import hashlib
import hmac

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.exceptions import InvalidParameterError
from ppdm.prepare.roles import PSEUDONYM_HEX_CHARS, pseudonyms, release_bound

KEY = b"a key only the data owner holds"


@pytest.fixture
def people() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    n = 40
    return pd.DataFrame(
        {
            "name": [f"Person {i}" for i in range(n)],
            "age": rng.integers(18, 90, n),
            "weight": rng.uniform(100, 900, n),
            "notes": ["free text"] * n,
            "outcome": rng.choice(["yes", "no"], n),
        }
    )


def test_only_released_columns_survive_in_table_order(people):
    out = release_bound(people, ["outcome", "age"])
    assert list(out.columns) == ["age", "outcome"]
    pd.testing.assert_frame_equal(out, people[["age", "outcome"]])


def test_identifiers_become_keyed_pseudonyms(people):
    out = release_bound(
        people, ["name", "age", "outcome"], pseudonymized=["name"], key=KEY
    )
    expected = [
        hmac.new(KEY, b"name\x00" + v.encode(), hashlib.sha256).hexdigest()[
            :PSEUDONYM_HEX_CHARS
        ]
        for v in people["name"]
    ]
    assert out["name"].tolist() == expected
    assert not set(people["name"]) & set(out["name"])
    other = release_bound(people, ["name"], pseudonymized=["name"], key=b"other")
    assert not set(other["name"]) & set(out["name"])


def test_a_pseudonym_needs_a_key(people):
    with pytest.raises(InvalidParameterError, match="key"):
        release_bound(people, ["name"], pseudonymized=["name"])
    with pytest.raises(InvalidParameterError, match="empty"):
        pseudonyms(people["name"], b"", column="name")


@settings(max_examples=50, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=8)), min_size=1, max_size=30))
def test_pseudonyms_are_a_function_of_the_value_and_keep_missing(values):
    series = pd.Series(values, dtype="object")
    out = pseudonyms(series, KEY, column="id")
    assert out.isna().tolist() == series.isna().tolist()
    present = series.notna()
    pairs = set(zip(series[present], out[present], strict=True))
    # equal values, equal pseudonyms; different values, different pseudonyms
    assert len({v for v, _ in pairs}) == len(pairs) == len({p for _, p in pairs})
    # the column label matters: the same value in another column differs
    elsewhere = pseudonyms(series, KEY, column="other")
    assert not (set(elsewhere[present]) & set(out[present]))
