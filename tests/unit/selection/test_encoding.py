"""The binary encoding and its way back; the seeded generator; RF."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdm.selection import (
    binary_encode,
    decode_features,
    projection_groups,
    randomization_flipping,
    sparse_binary_table,
)


def test_encoding_is_one_column_per_value_and_reversible():
    table = pd.DataFrame(
        {
            "age": pd.Categorical(
                ["[0, 30)", ">= 30", None, "[0, 30)"],
                categories=["[0, 30)", ">= 30"],
                ordered=True,
            ),
            "job": ["b", "a", "c", "a"],
            "y": list("pnpn"),
        }
    )
    enc = binary_encode(table, ["age", "job"])
    assert enc.names == ["age=[0, 30)", "age=>= 30", "job=a", "job=b", "job=c"]
    assert enc.features[2] == ("job", "a")
    assert enc.domains == {"age": ["[0, 30)", ">= 30"], "job": ["a", "b", "c"]}
    # one 1 per attribute, none for a missing value
    np.testing.assert_array_equal(enc.matrix[:, :2].sum(axis=1), [1, 1, 0, 1])
    np.testing.assert_array_equal(enc.matrix[:, 2:].sum(axis=1), [1, 1, 1, 1])
    released = enc.frame([2, 0]).assign(y=table["y"])
    assert list(released.columns) == ["job=a", "age=[0, 30)", "y"]
    decoded = decode_features(released, enc.domains)
    assert decoded["job"].tolist() == ["{b|c}", "a", "{b|c}", "a"]
    assert decoded["age"].tolist() == ["[0, 30)", ">= 30", ">= 30", "[0, 30)"]
    assert decoded["y"].tolist() == list("pnpn")
    assert set(decoded.columns) == {"job", "age", "y"}


def test_generator_is_seeded_and_sparse():
    a = sparse_binary_table(500, 300, density=0.01, seed=3)
    b = sparse_binary_table(500, 300, density=0.01, seed=3)
    c = sparse_binary_table(500, 300, density=0.01, seed=4)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])
    assert 0.005 < a[0].mean() < 0.015
    assert 0.3 < a[1].mean() < 0.7


def test_randomization_flipping_makes_rows_k_anonymous():
    x, _ = sparse_binary_table(300, 40, density=0.1, seed=1)
    result = randomization_flipping(x, 5, np.random.default_rng(0))
    ids = projection_groups(result.matrix, range(x.shape[1]))
    assert np.bincount(ids).min() >= 5
    assert result.flipped_cells == int((result.matrix != x).sum()) > 0
    assert result.flipped_share == result.flipped_cells / x.size
    again = randomization_flipping(x, 5, np.random.default_rng(0))
    np.testing.assert_array_equal(again.matrix, result.matrix)
