"""Attribute roles: every column has one, the shorthand keys agree with them."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from ppdm import resources
from ppdm.config import (
    ROLES,
    ConfigError,
    check_source_columns,
    default_config,
    load_config,
    parse_config,
)


def _config(**changes):
    data = {
        "dataset": "clinic",
        "source": {"kind": "csv", "path": "clinic.csv"},
        "schema": "german",
        "columns": {
            "name": "identifying",
            "age": "quasi_identifier",
            "zip": "quasi_identifier",
            "diagnosis": "sensitive",
            "visits": "insensitive",
            "wgt": "weight",
            "notes": "drop",
            "outcome": "target",
        },
        "k": 2,
    }
    data.update(changes)
    return parse_config(data)


def test_the_shorthand_keys_are_derived_from_the_roles():
    config = _config()
    assert config.quasi_identifiers == ["age", "zip"]
    assert config.sensitive_attribute == "diagnosis"
    assert config.target == "outcome"
    assert config.released_columns == ["age", "zip", "diagnosis", "visits", "outcome"]
    assert config.released_as_is == ["visits"]
    assert config.pseudonymized == []


def test_kept_weights_and_pseudonyms_are_released_on_request():
    config = _config(keep_weights=["wgt"], pseudonymize=True)
    assert config.released_as_is == ["visits", "wgt"]
    assert config.pseudonymized == ["name"]
    assert "name" in config.released_columns and "notes" not in config.released_columns


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"quasi_identifiers": ["age", "visits"]}, "'visits', whose role .* 'insensitive'"),
        ({"quasi_identifiers": ["age"]}, "'zip' has the role 'quasi_identifier' but is not"),
        ({"target": "age"}, "'age', whose role under 'columns' is 'quasi_identifier'"),
        ({"keep_weights": ["visits"]}, "keep_weights names 'visits'.*role is 'insensitive'"),
        ({"accept_passthrough": ["nope"]}, "accept_passthrough names 'nope'"),
        ({"columns": {"age": "quasi_identifier", "x": "idenifying", "y": "target"}}, "idenifying"),
        ({"pseudonymize": True, "columns": {"age": "quasi_identifier", "y": "target"}},
         "no column has the role 'identifying'"),
    ],
)  # fmt: skip
def test_contradictions_are_config_errors(changes, message):
    with pytest.raises(ConfigError, match=message):
        _config(**changes)


def test_a_bad_role_lists_the_allowed_ones():
    with pytest.raises(ConfigError) as err:
        _config(columns={"age": "secret", "y": "target"})
    assert all(role in str(err.value) for role in ROLES)


def test_overriding_the_quasi_identifiers_moves_the_roles():
    config = _config().with_overrides(quasi_identifiers=["age", "visits"])
    assert config.quasi_identifiers == ["age", "visits"]
    assert config.columns["zip"] == "drop"  # never released as is by accident
    assert config.columns["visits"] == "quasi_identifier"
    assert "zip" not in config.released_columns


def test_a_source_column_without_a_role_stops_the_run_naming_it(tmp_path):
    source = tmp_path / "clinic.csv"
    pd.DataFrame(
        {c: [1] for c in ["name", "age", "zip", "diagnosis", "ssn", "outcome"]}
    ).to_csv(source, index=False)
    columns = {
        "name": "identifying",
        "age": "quasi_identifier",
        "zip": "quasi_identifier",
        "diagnosis": "sensitive",
        "outcome": "target",
    }
    config = _config(source={"kind": "csv", "path": str(source)}, columns=columns)
    with pytest.raises(ConfigError, match="'ssn' of the source has no role"):
        check_source_columns(config)


def test_a_typo_names_the_closest_column(tmp_path):
    source = tmp_path / "clinic.csv"
    pd.DataFrame({c: [1] for c in ["age", "zipcode", "outcome"]}).to_csv(
        source, index=False
    )
    config = _config(
        source={"kind": "csv", "path": str(source)},
        columns={"age": "quasi_identifier", "zipcod": "quasi_identifier",
                 "outcome": "target"},
    )  # fmt: skip
    with pytest.raises(ConfigError, match="'zipcod'.*did you mean 'zipcode'"):
        check_source_columns(config)


def test_every_shipped_config_gives_every_column_a_role():
    for name in resources.config_names():
        config = load_config(resources.config_file(name))
        if config.source.kind != "embedded":
            continue
        assert check_source_columns(config) == list(config.columns), name


def test_dataset_folder_paths_are_read_from_the_config_file(tmp_path, monkeypatch):
    folder = tmp_path / "clinic"
    shutil.copytree(resources.schema_dir("german"), folder)
    shutil.copytree(resources.hierarchies_dir("german"), folder / "hierarchies")
    german = default_config("german")
    text = (
        "dataset: clinic\nschema: .\nhierarchies: hierarchies\n"
        "source: {kind: embedded, name: german}\ncolumns:\n"
        + "".join(f"  {c}: {r}\n" for c, r in german.columns.items())
        + "algorithm: lattice-optimal\n"
    )
    (folder / "clinic.yaml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path.parent)  # anywhere but the folder
    config = load_config(folder / "clinic.yaml")
    assert config.schema_dir == folder.resolve()
    assert config.hierarchy_dir == (folder / "hierarchies").resolve()
    # Several sensitive columns: the one the privacy models protect is named.
    assert config.sensitive_attribute is None
    with pytest.raises(ConfigError, match="sensitive"):
        config.with_overrides(l=2)
    assert config.with_overrides(sensitive_attribute="purpose", l=2).requirement.l == 2


def test_a_column_named_like_an_identifier_is_not_accepted_as_is_without_a_reason():
    columns = {**_config().columns, "name": "insensitive"}
    refused = (
        r"accept_passthrough names 'name', which is named like a direct identifier"
    )
    with pytest.raises(ConfigError, match=refused + r".*role identifying or drop"):
        _config(columns=columns, accept_passthrough=["name"])
    with pytest.raises(ConfigError, match="must say in the data owner's words"):
        _config(
            columns=columns,
            accept_passthrough=["name"],
            acknowledge_identifier_passthrough={"name": "yes"},
        )
    with pytest.raises(ConfigError, match="'visits', which is not listed in accept"):
        _config(acknowledge_identifier_passthrough={"visits": "a count of visits"})
    config = _config(
        columns=columns,
        accept_passthrough=["name"],
        acknowledge_identifier_passthrough={"name": "these are ward names, not people"},
    )
    assert config.released_as_is == ["name", "visits"]
