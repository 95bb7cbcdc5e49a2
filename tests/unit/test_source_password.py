"""A database password named by a key spec: configuration, init, manifest, release id."""

from __future__ import annotations

import pytest

from ppdm.config import default_config
from ppdm.exceptions import InvalidParameterError
from ppdm.prepare.init_folder import source_entry
from ppdm.release import manifest
from ppdm.release.keys import KeyConfigError, MissingKeyError, resolve_secret

URL = "postgresql+psycopg://ann@db.example:5432/clinic"


def _sql_config(**source):
    return default_config("adult").with_overrides(
        source={"kind": "sql", "query": "SELECT * FROM adult", **source}
    )


def test_a_short_password_resolves_from_the_environment(monkeypatch):
    monkeypatch.setenv("PPDM_TEST_DB_PASSWORD", "pw")  # no minimum length
    assert resolve_secret("env:PPDM_TEST_DB_PASSWORD", purpose="x") == "pw"
    monkeypatch.delenv("PPDM_TEST_DB_PASSWORD")
    with pytest.raises(MissingKeyError, match="PPDM_TEST_DB_PASSWORD holds nothing"):
        resolve_secret("env:PPDM_TEST_DB_PASSWORD", purpose="the password")
    with pytest.raises(KeyConfigError, match="unknown scheme 'vault'"):
        resolve_secret("vault:db", purpose="the password")


def test_init_records_where_the_password_is():
    entry = source_entry(URL, query="SELECT 1", password="env:CLINIC_DB")
    assert entry == {
        "kind": "sql",
        "url": URL,
        "query": "SELECT 1",
        "password": "env:CLINIC_DB",
    }
    with pytest.raises(InvalidParameterError, match="holds a password and --password"):
        source_entry(URL.replace("ann@", "ann:pw@"), query="q", password="env:X")
    with pytest.raises(InvalidParameterError, match="must name where the password is"):
        source_entry(URL, query="q", password="hunter2")
    with pytest.raises(InvalidParameterError, match="--password is for database URLs"):
        source_entry("clinic.csv", password="env:X")


def test_a_configuration_without_password_serialises_as_before():
    dumped = _sql_config(url=URL).model_dump(mode="json")
    assert "password" not in dumped["source"]
    assert _sql_config(url=URL, password="env:A").model_dump(mode="json")["source"][
        "password"
    ] == ("env:A")


def test_the_manifest_masks_a_urls_password_and_the_release_id_ignores_the_spec():
    inline = manifest.public_config(_sql_config(url=URL.replace("ann@", "ann:pw@")))
    assert inline["source"]["url"] == URL.replace("ann@", "ann:***@")
    plain = _sql_config(url=URL)
    assert manifest.public_config(plain)["source"]["url"] == URL  # as written
    one = manifest.identity_config(
        manifest.public_config(_sql_config(url=URL, password="env:A"))
    )
    other = manifest.identity_config(
        manifest.public_config(_sql_config(url=URL, password="prefect-secret:b"))
    )
    assert one == other == manifest.identity_config(manifest.public_config(plain))
