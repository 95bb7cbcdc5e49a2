from __future__ import annotations

import pytest
import yaml

from ppdm.config import ConfigError, default_config, load_config, parse_config

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def _with(**changes):
    data = default_config("adult").model_dump(by_alias=True)
    data.update(changes)
    return data


@pytest.mark.parametrize(
    "name", sorted(p.name for p in (ROOT / "configs").glob("*.yaml"))
)
def test_shipped_example_configs_are_valid(name):
    config = load_config(ROOT / "configs" / name)
    assert config.quasi_identifiers and config.target


def test_documented_example_equals_the_cli_default():
    assert load_config(ROOT / "configs" / "adult.yaml") == default_config("adult")


def test_defaults_are_documented_values():
    config = default_config("adult")
    assert (config.k, config.l, config.algorithm, config.target) == (
        10,
        2,
        "mondrian",
        "income",
    )
    assert config.schema == "adult"


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"k": 0}, "k = 0 is not allowed"),
        ({"k": 0}, "an integer >= 1 and <= 1000000"),
        ({"seed": -3}, "seed = -3"),
        ({"suppression_limit": 1.5}, "a number >= 0.0 and <= 1.0"),
        ({"kk": 5}, "unknown key 'kk'"),
        ({"discretize": {"method": "kmeans"}}, "'mdl', 'equal-frequency', 'none'"),
        (
            {"discretize": {"bins": 4}},
            "unknown key 'discretize.bins'; allowed keys: method, n_bins, columns",
        ),
        ({"algorithm": "nope"}, "algorithm 'nope' is not registered; allowed:"),
        ({"source": {"kind": "csv"}}, "needs key(s) ['path']"),
        ({"target": "age"}, "target 'age' is also a quasi-identifier"),
        ({"l": 3, "sensitive_attribute": None}, "l = 3 needs a sensitive_attribute"),
        ({"l_variant": "recursive"}, "l_variant 'recursive' needs c"),
        ({"verification": {"engine": "spark"}}, "'auto', 'pandas', 'dask'"),
        ({"verification": {"memory_limit": "lots"}}, "verification.memory_limit"),
    ],
)
def test_bad_configs_name_the_key_and_the_allowed_range(changes, expected):
    with pytest.raises(ConfigError) as err:
        parse_config(_with(**changes), origin="bad.yaml")
    assert expected in str(err.value)
    assert str(err.value).startswith("config bad.yaml:")


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_config(tmp_path / "absent.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("k: [1, 2\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(broken)


def test_overrides_are_validated_too():
    config = default_config("adult").with_overrides(k=25, seed=7, l=None)
    assert (config.k, config.seed, config.l) == (25, 7, 2)
    with pytest.raises(ConfigError, match="k = -1"):
        default_config("adult").with_overrides(k=-1)


def test_yaml_round_trip(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(default_config("german").model_dump(by_alias=True)))
    assert load_config(path) == default_config("german")
