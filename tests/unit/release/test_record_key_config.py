"""``republication.record_key``: only a column of role ``identifying``, never released."""

from __future__ import annotations

import pytest

from ppdm.config import ConfigError, default_config, parse_config


def _german(**changes):
    data = default_config("german").model_dump(by_alias=True)
    data["columns"] = {**data["columns"], "applicant-id": "identifying"}
    data.update(changes)
    return data


def test_an_identifying_column_is_accepted():
    config = parse_config(_german(republication={"record_key": "applicant-id"}))
    assert config.republication.record_key == "applicant-id"
    assert "applicant-id" not in config.released_columns
    assert default_config("german").republication.record_key is None


@pytest.mark.parametrize(
    ("column", "says"),
    [
        ("telephone", "its role is 'drop'"),
        ("age", "its role is 'quasi_identifier'"),
        ("purpose", "its role is 'sensitive'"),
        ("no-such-column", "no such column"),
    ],
)
def test_another_role_is_refused_naming_the_key_and_the_column(column, says):
    with pytest.raises(ConfigError) as err:
        parse_config(_german(republication={"record_key": column}))
    message = str(err.value)
    assert "republication.record_key" in message and repr(column) in message
    assert says in message and "identifying" in message


def test_a_pseudonymized_record_key_would_be_released_and_is_refused():
    data = _german(republication={"record_key": "applicant-id"}, pseudonymize=True)
    data["pseudonym_key"] = "env:PPDM_TEST_PSEUDONYM_KEY"
    with pytest.raises(ConfigError, match="pseudonymize: true would release it"):
        parse_config(data)
