"""The policy consistent: rows recoded into the classes of the latest earlier release."""

from __future__ import annotations

import pandas as pd
import pytest

from ppdm.config import ConfigError, default_config, parse_config
from ppdm.privacy import Requirement
from ppdm.release.series import consistent_recoding, failing_classes

EARLIER = pd.DataFrame(
    {
        "age": ["[20, 29]"] * 3 + ["[30, 39]"] * 3 + ["*"] * 3,
        "zip": ["130"] * 3 + ["{130|148}"] * 3 + ["150"] * 3,
        "dx": ["flu", "cold", "flu", "hiv", "flu", "cold", "flu", "hiv", "hiv"],
    }
)


def test_rows_take_the_cells_of_the_class_that_contains_them():
    people = pd.DataFrame(
        {
            "age": ["25", "31", "35", "45", "62", "22"],
            "zip": ["130"] * 3 + ["148", "150", "148"],
        }
    )
    rows = people.assign(dx=["a", "b", "c", "d", "e", "f"])
    recoded, unmatched = consistent_recoding(people, rows, EARLIER, ("age", "zip"))
    # 25/130: in [20, 29] x 130. 31/130: in [30, 39] x {130|148}, also... only
    # that one. 45/148 and 22/148: no class holds them. 62/150: in * x 150.
    assert recoded.to_dict(orient="list") == {
        "age": ["[20, 29]", "[30, 39]", "[30, 39]", "*"],
        "zip": ["130", "{130|148}", "{130|148}", "150"],
        "dx": ["a", "b", "c", "e"],
    }
    assert unmatched.tolist() == [3, 5]


def test_a_row_several_classes_contain_takes_the_first_in_cell_order():
    earlier = pd.DataFrame({"age": ["[20, 39]", "[20, 29]"], "dx": ["x", "y"]})
    people = pd.DataFrame({"age": ["25"]})
    recoded, unmatched = consistent_recoding(
        people, people.assign(dx=["z"]), earlier, ("age",)
    )
    assert recoded["age"].tolist() == ["[20, 29]"] and not len(unmatched)


def test_failing_classes_are_those_the_requirement_refuses_alone():
    requirement = Requirement.of(("age", "zip"), "dx", k=3, l=2)
    table = pd.concat([EARLIER, EARLIER.iloc[[0]]], ignore_index=True)
    failing = failing_classes(table.iloc[[0, 1, 2, 3, 4]], requirement)
    assert failing.to_dict(orient="list") == {"age": ["[30, 39]"], "zip": ["{130|148}"]}
    assert failing_classes(table, requirement).empty


def test_consistent_is_refused_for_an_algorithm_that_releases_projections():
    data = default_config("german").model_dump(by_alias=True)
    data.update(algorithm="dmpd", republication={"policy": "consistent"})
    with pytest.raises(
        ConfigError, match="policy 'consistent'.*'dmpd' releases projections"
    ):
        parse_config(data)
    data.update(algorithm="mondrian")
    assert parse_config(data).republication.policy == "consistent"
