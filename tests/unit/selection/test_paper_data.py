"""The paper's binary Adult and German credit tables: shape and share of ones."""

from __future__ import annotations

import numpy as np

from ppdm.selection import paper_adult, paper_german


def test_adult_is_19_dense_binary_features_as_in_the_paper():
    table = paper_adult()
    n, d = table.matrix.shape
    assert (n, d) == (48_842, 19)  # paper section 5.4: 19 features
    assert len(table.names) == 19 and len(set(table.names)) == 19
    # paper: 27.9% of the values are non-zero; the reconstruction: 27.0%
    assert abs(100 * table.matrix.mean() - 27.9) < 1.0
    ones = table.matrix.sum(axis=1)
    # five grouped attributes set exactly one column each; two capital flags
    grouped = table.matrix[:, :17].reshape(n, 17)
    assert (grouped.sum(axis=1) == 5).all()
    # no row has both a capital gain and a capital loss in Adult
    assert ones.min() == 5 and ones.max() == 6
    assert abs(table.y.mean() - 0.239) < 0.001  # >50K share of the 48,842 rows
    # the capital flags are the source's, cross-checked on the raw columns
    from ppdm.prepare import datasets

    raw = datasets.load("adult")
    gain = table.names.index("capital-gain>0")
    np.testing.assert_array_equal(table.matrix[:, gain], raw["capital-gain"] > 0)


def test_german_keeps_all_20_attributes():
    table = paper_german()
    attributes = {name.split("=", 1)[0] for name in table.names}
    assert len(attributes) == 20 and "credit" not in attributes
    assert table.matrix.shape == (1_000, 80)
    # one 1 per attribute and row (German credit has no missing values)
    assert (table.matrix.sum(axis=1) == 20).all()
    assert table.y.sum() == 300  # 300 bad credits
