"""A configuration is read and validated once; its overrides are applied in one place.

The counts come from :class:`parse_counter.ParseCounter`, which watches the
real code run: nothing is replaced.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pydantic
import pytest
import yaml
from parse_counter import ParseCounter

from ppdm.config import (
    ConfigError,
    ReleaseConfig,
    apply_overrides,
    default_config,
    load_config,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def german_yaml(tmp_path) -> Path:
    path = tmp_path / "german.yaml"
    shutil.copy(ROOT / "configs" / "german.yaml", path)
    return path


def test_the_counter_sees_a_read_and_a_validation(german_yaml):
    """Cross-check of the counter: a file read counts one of each; a copy with
    another k, one validation."""
    with ParseCounter() as counter:
        config = load_config(german_yaml)
    assert counter.counts == {"yaml": 1, "validated": 1}
    with ParseCounter() as counter:
        config.with_overrides(k=8)  # a new configuration: validated in full
    assert counter.counts == {"yaml": 0, "validated": 1}


def test_overrides_are_applied_before_the_one_validation(german_yaml):
    flags = {"k": 7, "seed": 3, "algorithm": "mondrian", "l": None}
    with ParseCounter() as counter:
        config = load_config(german_yaml, flags)
    assert counter.counts == {"yaml": 1, "validated": 1}
    # The same configuration as the file's, then replaced (a second validation).
    assert config == load_config(german_yaml).with_overrides(**flags)
    assert (config.k, config.seed) == (7, 3)


def test_a_role_override_moves_the_roles_as_on_a_loaded_configuration(german_yaml):
    data = yaml.safe_load(german_yaml.read_text(encoding="utf-8"))
    loaded = load_config(german_yaml)
    new_qis = loaded.quasi_identifiers[:2]
    once = load_config(german_yaml, {"quasi_identifiers": new_qis})
    twice = loaded.with_overrides(quasi_identifiers=new_qis)
    assert once == twice
    dropped = set(loaded.quasi_identifiers) - set(new_qis)
    assert dropped and all(once.columns[c] == "drop" for c in dropped)
    # A file that names its quasi-identifiers by the key alone: the ones left
    # out keep a role (drop), so the source check finds every column a role.
    data["quasi_identifiers"] = list(loaded.quasi_identifiers)
    data["columns"] = {
        c: r for c, r in data["columns"].items() if r != "quasi_identifier"
    }
    moved = apply_overrides(data, {"quasi_identifiers": new_qis})
    assert {c for c, r in moved["columns"].items() if r == "drop"} >= dropped
    assert moved["quasi_identifiers"] == new_qis


def test_a_refused_override_is_named_as_the_files_key(german_yaml):
    with pytest.raises(ConfigError, match=rf"^config {german_yaml}: k = 0 "):
        load_config(german_yaml, {"k": 0})


def test_a_configuration_given_again_is_not_validated_again():
    """A flow's parameter, or a field holding a configuration, takes it as it is."""
    config = default_config("german", {"k": 7})
    holder = pydantic.create_model("Holder", config=(ReleaseConfig, ...))
    with ParseCounter() as counter:
        assert ReleaseConfig.model_validate(config) is config
        assert holder.model_validate({"config": config}).config is config
        assert config.with_overrides(k=None, seed=None) is config
    assert counter.counts == {"yaml": 0, "validated": 0}
    # A mapping (a served run's JSON parameter) is still validated, in full.
    with ParseCounter() as counter:
        again = holder.model_validate({"config": config.model_dump(by_alias=True)})
    assert again.config == config and counter.counts["validated"] == 1
    with pytest.raises(pydantic.ValidationError, match="k"):
        holder.model_validate({"config": {**config.model_dump(by_alias=True), "k": 0}})
