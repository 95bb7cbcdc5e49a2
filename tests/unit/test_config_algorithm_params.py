"""Every registered algorithm's parameters are checked when the configuration loads.

As scikit-learn's ``check_param_validation``, for each parameter of each
algorithm in the registry: a value its constraint refuses (out of range, or
not one of its options), written in a configuration's ``params:``, stops the
load in one line naming the file, the algorithm, the parameter, the value and
what is allowed; no step runs. (``tests/test_contracts.py`` checks that each
parameter has a constraint, and that the algorithm itself refuses a value of
the wrong type.)
"""

from __future__ import annotations

import numbers
from pathlib import Path
from typing import Any

import pytest
import yaml

from ppdm.algorithms import ALGORITHMS
from ppdm.config import ConfigError, default_config, load_config
from ppdm.params import Interval, Options

#: Values tried, in order, for a constraint with no bound or option to step past.
_FALLBACKS: tuple[Any, ...] = (-1, "no-such-value", 10**12, -0.5, [])


def _out_of_range(constraint: Any) -> Any:
    """A YAML-writable value ``constraint`` refuses: past a bound, else another kind."""
    options = constraint if isinstance(constraint, tuple) else (constraint,)
    tried: list[Any] = []
    for c in options:
        if isinstance(c, Interval):
            step = 1 if c.kind is numbers.Integral else 0.5
            if c.left is not None:
                tried.append(type(step)(c.left - step))
            if c.right is not None:
                tried.append(type(step)(c.right + step))
        elif isinstance(c, Options):
            tried.append("no-such-option")
    tried += _FALLBACKS
    for value in tried:
        if not any(c is not None and c.accepts(value) for c in options):
            if value is not None:
                return value
    raise AssertionError(f"no value found that {constraint!r} refuses")


CASES = [
    pytest.param(name, parameter, _out_of_range(constraint), id=f"{name}-{parameter}")
    for name, cls in sorted(ALGORITHMS.items())
    for parameter, constraint in sorted(cls._parameter_constraints.items())
]


def test_every_registered_algorithm_is_covered():
    """Cross-check: the cases cover the registry, and each parameter once."""
    covered = {case.values[0] for case in CASES}
    with_params = {n for n, c in ALGORITHMS.items() if c._parameter_constraints}
    assert covered == with_params and len(with_params) >= 5
    assert len(CASES) == sum(len(c._parameter_constraints) for c in ALGORITHMS.values())


@pytest.mark.parametrize(("name", "parameter", "value"), CASES)
def test_an_out_of_range_parameter_stops_the_load_in_one_line(
    tmp_path: Path, name: str, parameter: str, value: Any
) -> None:
    data = default_config("adult").model_dump(by_alias=True)
    data.update(algorithm=name, params={parameter: value}, l=1)
    path = tmp_path / "release.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"config {path}: ")
    assert f"parameter {parameter!r} must be " in message
    assert f"got {value!r}" in message
    assert name in message
