"""ppdm.params: parameter constraints and the "did you mean" of a near miss."""

from __future__ import annotations

import pytest

from ppdm.config import ConfigError, default_config, parse_config
from ppdm.exceptions import InvalidParameterError
from ppdm.params import Options, did_you_mean, validate_params


def test_a_near_miss_is_named_and_a_far_one_is_not():
    assert did_you_mean("mondrain", ["kactus", "mondrian", "dmpd"]) == (
        "did you mean 'mondrian'?"
    )
    assert did_you_mean("Marital-Status", ["age", "marital_status"]) == (
        "did you mean 'marital_status'?"
    )
    assert did_you_mean("income", ["age", "sex"]) == ""
    assert did_you_mean(3, ["age"]) == ""


def test_an_option_value_names_the_closest_option():
    constraints = {"method": Options({"greedy", "maximal"})}
    with pytest.raises(InvalidParameterError) as err:
        validate_params("fs-anonymity", {"method": "gready"}, constraints)
    assert str(err.value) == (
        "fs-anonymity: parameter 'method' must be one of 'greedy', 'maximal'; got "
        "'gready' (did you mean 'greedy'?)"
    )


def test_an_algorithm_parameter_value_in_a_config_names_the_closest():
    data = default_config("german").model_dump(by_alias=True)
    data.update(algorithm="fs-anonymity", params={"method": "maximl"})
    with pytest.raises(ConfigError, match=r"got 'maximl' \(did you mean 'maximal'\?\)"):
        parse_config(data)
