"""Differencing between two releases, on hand-computed examples and a brute-force oracle."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.privacy import Requirement
from ppdm.verify.differencing import check_against, class_changes


def _table(rows):
    return pd.DataFrame(rows, columns=["age", "zip", "dx"]).astype(str)


REQ = Requirement.of(("age", "zip"), "dx", k=3, l=2)


def test_growth_by_one_newcomer_is_a_leak():
    # Month 1: a 3-anonymous, 2-diverse class. Month 2: one newcomer with flu.
    month1 = _table([("[20, 29]", "130**", d) for d in ("flu", "cold", "flu")])
    month2 = _table([("[20, 29]", "130**", d) for d in ("flu", "cold", "flu", "flu")])
    assert all(r.passed for r in REQ.check(month2))  # each release alone is fine
    (result,) = check_against({"r": month2}, {"r": month1}, REQ, against="m1")
    assert result.rows_added == 1 and result.rows_removed == 0
    assert result.n_leaking_classes == 1 and result.rows_exposed == 1
    assert result.examples[0] == {
        "age": "[20, 29]",
        "zip": "130**",
        "added": 1,
        "removed": 0,
    }
    assert not result.passed


def test_shrinkage_reveals_who_left_and_what_they_had():
    month1 = _table([("[20, 29]", "130**", d) for d in ("flu", "cold", "flu", "hiv")])
    month2 = _table([("[20, 29]", "130**", d) for d in ("flu", "cold", "flu")])
    (result,) = check_against({"r": month2}, {"r": month1}, REQ, against="m1")
    assert (result.rows_added, result.rows_removed, result.rows_exposed) == (0, 1, 1)
    assert result.leaks


def test_enough_diverse_newcomers_do_not_leak():
    old = [("[20, 29]", "130**", d) for d in ("flu", "cold", "flu")]
    new = old + [("[20, 29]", "130**", d) for d in ("hiv", "flu", "cold")]
    (result,) = check_against({"r": _table(new)}, {"r": _table(old)}, REQ, against="m1")
    assert result.rows_added == 3 and not result.leaks and result.passed


def test_newcomers_sharing_one_value_leak_by_diversity():
    old = [("[20, 29]", "130**", d) for d in ("flu", "cold", "flu")]
    new = old + [("[20, 29]", "130**", "hiv")] * 3  # 3 >= k, but one value
    (result,) = check_against({"r": _table(new)}, {"r": _table(old)}, REQ, against="m1")
    assert result.leaks and result.rows_exposed == 3


def test_classes_in_one_release_only_are_not_compared():
    old = [("[20, 29]", "130**", d) for d in ("flu", "cold", "flu")]
    new = [("[30, 39]", "130**", d) for d in ("flu", "cold", "flu")]
    (result,) = check_against({"r": _table(new)}, {"r": _table(old)}, REQ, against="m1")
    assert result.n_common_classes == 0 and not result.leaks


def test_an_accepted_risk_passes_but_is_recorded():
    month1 = _table([("[20, 29]", "130**", d) for d in ("flu", "cold", "flu")])
    month2 = _table([("[20, 29]", "130**", d) for d in ("flu", "cold", "flu", "flu")])
    (result,) = check_against(
        {"r": month2}, {"r": month1}, REQ, against="m1", accepted=True
    )
    assert result.passed and result.leaks
    assert result.to_dict()["accepted_risk"] is True


def _oracle(new: pd.DataFrame, old: pd.DataFrame, k: int, l: int):
    """Plain-Python differencing: per common class, added/removed multisets."""
    qis = ["age", "zip"]
    rows_new = Counter(map(tuple, new.to_numpy()))
    rows_old = Counter(map(tuple, old.to_numpy()))
    classes = {r[:2] for r in rows_new} & {r[:2] for r in rows_old}
    leaking = set()
    for c in classes:
        for a, b in ((rows_new, rows_old), (rows_old, rows_new)):
            diff = Counter({r: a[r] - b.get(r, 0) for r in a if r[:2] == c})
            diff = +diff
            size = sum(diff.values())
            values = {r[2] for r in diff}
            if size and (size < k or len(values) < l):
                leaking.add(c)
    assert qis
    return len(classes), leaking


cells = st.tuples(
    st.sampled_from(["a", "b", "*"]),
    st.sampled_from(["x", "y"]),
    st.sampled_from(["flu", "cold", "hiv"]),
)


# Many random tables (about 12 s): in the slow stage, so the default run keeps
# its 10-minute budget beside a busy core.
@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    st.lists(cells, min_size=1, max_size=40),
    st.lists(cells, min_size=1, max_size=40),
    st.integers(1, 4),
    st.integers(1, 3),
)
def test_differencing_matches_a_brute_force_oracle(new, old, k, l):
    new, old = _table(new), _table(old)
    req = Requirement.of(("age", "zip"), "dx", k=k, l=l)
    (result,) = check_against({"r": new}, {"r": old}, req, against="e")
    n_common, leaking = _oracle(new, old, k, l)
    assert result.n_common_classes == n_common
    assert result.n_leaking_classes == len(leaking)
    change = class_changes(new, old, ("age", "zip"))
    assert len(change.added) == result.rows_added
    added = Counter(map(tuple, change.added[["age", "zip", "dx"]].to_numpy()))
    for row, n in added.items():
        assert n == Counter(map(tuple, new.to_numpy()))[row] - Counter(
            map(tuple, old.to_numpy())
        ).get(row, 0)
    assert np.all(change.added["_class"].to_numpy() >= 0)


def _rows(age, zip_, values):
    return [(age, zip_, v) for v in values]


def test_a_class_cut_in_two_rolls_up_and_leaks_its_newcomer():
    # Month 1: ages 20-39 one class; month 2: cut in two, one newcomer more.
    month1 = _table(
        _rows("[20, 39]", "130**", ["flu", "cold", "flu", "hiv", "cold", "flu"])
    )
    month2 = _table(
        _rows("[20, 29]", "130**", ["flu", "cold", "flu", "hiv"])
        + _rows("[30, 39]", "130**", ["cold", "flu", "hiv"])
    )
    (result,) = check_against({"r": month2}, {"r": month1}, REQ, against="m1")
    assert result.n_common_classes == 0  # no class matches exactly
    assert result.n_rollups == 1 and result.n_leaking_rollups == 1
    assert result.rows_exposed == 1 and result.leaks


def test_a_roll_up_with_enough_diverse_newcomers_passes():
    month1 = _table(_rows("[20, 39]", "130**", ["flu", "cold", "flu"]))
    month2 = _table(
        _rows("[20, 29]", "130**", ["flu", "cold", "flu", "hiv"])
        + _rows("[30, 39]", "130**", ["cold", "flu", "hiv"])
    )
    req = Requirement.of(("age", "zip"), "dx", k=3, l=2)
    (result,) = check_against({"r": month2}, {"r": month1}, req, against="m1")
    assert result.n_rollups == 1 and not result.leaks  # 4 added: hiv, cold, flu, hiv


def test_hierarchy_levels_roll_up_with_the_covers():
    covers = {"zip": {"130**": ["13053", "13068"]}}
    month1 = _table(
        _rows("[20, 29]", "130**", ["flu", "cold", "flu", "hiv", "cold", "flu"])
    )
    month2 = _table(
        _rows("[20, 29]", "13053", ["flu", "cold", "flu"])
        + _rows("[20, 29]", "13068", ["hiv", "cold", "flu", "flu"])
    )
    (without,) = check_against({"r": month2}, {"r": month1}, REQ, against="m1")
    assert without.n_rollups == 0  # the labels are unrelated text without covers
    (result,) = check_against(
        {"r": month2}, {"r": month1}, REQ, against="m1", covers=covers
    )
    assert result.n_rollups == 1 and result.n_leaking_rollups == 1


def test_overlapping_ranges_that_do_not_nest_are_not_a_roll_up():
    month1 = _table(_rows("[20, 34]", "130**", ["flu", "cold", "flu"]))
    month2 = _table(_rows("[25, 39]", "130**", ["flu", "cold", "flu", "hiv"]))
    (result,) = check_against({"r": month2}, {"r": month1}, REQ, against="m1")
    assert result.n_rollups == 0 and not result.leaks  # documented as uncovered


def test_suppressed_cells_hold_every_class():
    month1 = _table(_rows("*", "*", ["flu", "cold", "flu", "hiv"]))
    month2 = _table(_rows("[20, 29]", "130**", ["flu", "cold", "flu", "hiv", "flu"]))
    (result,) = check_against({"r": month2}, {"r": month1}, REQ, against="m1")
    assert result.n_rollups == 1 and result.n_leaking_rollups == 1


def test_an_earlier_release_in_the_bracket_form_is_compared_class_by_class(tmp_path):
    # A release written before open intervals became comparisons; this month
    # the same classes, written now, and one newcomer with flu: a leak.
    from ppdm.release.data_files import read_released_table

    rows = [("(-inf, 23.5)", "130**", d) for d in ("flu", "cold", "flu")]
    rows += [("[39.5, inf)", "130**", d) for d in ("flu", "hiv", "cold")]
    _table(rows).to_csv(tmp_path / "old.csv", index=False)
    now = _table(
        [("< 23.5", "130**", d) for d in ("flu", "cold", "flu", "flu")]
        + [(">= 39.5", "130**", d) for d in ("flu", "hiv", "cold")]
    )
    as_released = read_released_table(tmp_path / "old.csv")
    (raw,) = check_against({"r": now}, {"r": as_released}, REQ, against="m1")
    assert raw.n_common_classes == 0 and raw.passed  # as text: the leak is missed
    earlier = read_released_table(tmp_path / "old.csv", current_labels=True)
    assert earlier["age"].tolist() == ["< 23.5"] * 3 + [">= 39.5"] * 3
    (result,) = check_against({"r": now}, {"r": earlier}, REQ, against="m1")
    assert result.n_common_classes == 2
    assert (result.rows_added, result.rows_removed, result.rows_exposed) == (1, 0, 1)
    assert result.examples[0]["age"] == "< 23.5" and not result.passed
