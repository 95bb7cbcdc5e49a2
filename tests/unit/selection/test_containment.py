"""k-anonymity by containment: the bit-set computation against the definition.

Checks 1-4 and 9 of the implementation notes: the fast containment sizes equal
the O(n^2 d) definition; AC never grows when features are added and is n for
no feature; ordinary k-anonymity implies containment (not conversely, the
{a},{a},{b},{b} example); every frequent-mode set is feasible; the privacy
model reads released files (text cells) and names what fails.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from selection_tables import PROPERTY, binary_tables

from ppdm.exceptions import InvalidParameterError
from ppdm.privacy import PRIVACY_MODELS, KAnonymityByContainment, model_from_description
from ppdm.selection import (
    Groups,
    achieved_containment,
    containment_brute_force,
    containment_sizes,
    maximal_sets_frequent,
    pack_columns,
    projection_groups,
)
from ppdm.selection._bitsets import (
    extension_ac,
    extension_supports,
    group_feature_counts,
)


@PROPERTY
@given(table=binary_tables(max_rows=40, max_features=9))
def test_bitset_containment_equals_the_definition(table):
    x, _ = table
    np.testing.assert_array_equal(containment_sizes(x), containment_brute_force(x))


def test_bitsets_span_several_words():
    rng = np.random.default_rng(3)
    x = rng.random((200, 6)) < 0.6  # 200 rows: four 64-bit words per column
    np.testing.assert_array_equal(containment_sizes(x), containment_brute_force(x))
    bits = pack_columns(x)
    assert bits.shape == (6, 4) and bits.dtype == np.uint64
    counts = np.bitwise_count(bits).sum(axis=1)
    np.testing.assert_array_equal(counts, x.sum(axis=0))


@PROPERTY
@given(table=binary_tables(), data=st.data())
def test_containment_is_downward_closed(table, data):
    x, _ = table
    n, d = x.shape
    inner = [j for j in range(d) if data.draw(st.booleans(), label=f"S has {j}")]
    outer = sorted({*inner, *(j for j in range(d) if data.draw(st.booleans()))})
    assert achieved_containment(x[:, inner]) >= achieved_containment(x[:, outer])
    assert achieved_containment(x[:, []]) == n
    assert (
        containment_brute_force(x[:, inner]) >= containment_brute_force(x[:, outer])
    ).all()


@PROPERTY
@given(table=binary_tables())
def test_ordinary_k_anonymity_implies_containment(table):
    x, _ = table
    ids = projection_groups(x, range(x.shape[1]))
    class_size = np.bincount(ids)[ids]
    assert (containment_sizes(x) >= class_size).all()


def test_containment_can_exceed_the_smallest_class():
    x = np.array([[1, 0], [1, 0], [0, 1], [0, 1]], dtype=bool)
    assert achieved_containment(x) == 2
    both = np.array([[1, 1], [1, 0], [0, 1], [0, 0]], dtype=bool)
    assert achieved_containment(both) == 1
    # {a} is contained in {a, b}: a row with a alone hides among two rows
    np.testing.assert_array_equal(containment_sizes(both), [1, 2, 2, 4])


@PROPERTY
@given(table=binary_tables(max_rows=30, max_features=8), k=st.integers(1, 6))
def test_frequent_sets_are_feasible(table, k):
    x, _ = table
    if k > len(x):
        return
    for s in maximal_sets_frequent(x, k):
        assert achieved_containment(x[:, list(s)]) >= k


@PROPERTY
@given(table=binary_tables(), data=st.data())
def test_incremental_extension_ac_equals_recomputation(table, data):
    x, _ = table
    n, d = x.shape
    bits = pack_columns(x)
    groups = Groups.start(n)
    chosen: list[int] = []
    for j in range(d):
        if data.draw(st.booleans(), label=f"add {j}"):
            groups = groups.add(x[:, j], bits[j])
            chosen.append(j)
    assert groups.ac == achieved_containment(x[:, chosen])
    counts = group_feature_counts(groups.ids, groups.n_groups, x)
    supports = extension_supports(groups.tids, bits)
    got = extension_ac(groups, counts, supports)
    expected = [achieved_containment(x[:, [*chosen, u]]) for u in range(d)]
    np.testing.assert_array_equal(got, expected)


def test_model_reads_released_text_and_raw_quasi_identifiers():
    table = pd.DataFrame(
        {"q=a": ["1", "1", "0", "0"], "q=b": ["0", "0", "1", "1"], "y": list("pnpn")}
    )
    model = KAnonymityByContainment(2)
    result = model.check(table, ["q"])
    assert result.passed and result.achieved == 2
    assert not KAnonymityByContainment(3).check(table, ["q"]).passed
    raw = pd.DataFrame({"q": ["x", "x", "x", "z"], "y": list("pnpn")})
    failed = model.check(raw, ["q"])
    assert not failed.passed and failed.achieved == 1
    assert failed.examples[0]["features"] == "q=z" and failed.examples[0]["size"] == 1
    # the target is not a feature; a non-0/1 feature column fails by name
    bad = table.assign(**{"q=a": ["1", "2", "0", "0"]})
    broken = model.check(bad, ["q"])
    assert not broken.passed and broken.examples[0]["column"] == "q=a"


def test_model_takes_the_smallest_table_and_round_trips():
    model = KAnonymityByContainment(2)
    tables = {
        "a": pd.DataFrame({"q=a": ["1", "1", "0"]}),
        "b": pd.DataFrame({"q=a": ["1", "0", "0"]}),
    }
    result = model.check_release(tables, ["q"])
    assert result.achieved == 1 and not result.passed
    assert PRIVACY_MODELS["k-anonymity-by-containment"] is KAnonymityByContainment
    assert model_from_description(model.describe()) == model
    assert str(KAnonymityByContainment(5)) == "5-anonymity by containment"
    for bad in (0, -1, 2.5, True, "3"):
        with pytest.raises(InvalidParameterError, match="k"):
            KAnonymityByContainment(bad)
