"""Key specs: where the audit (and pseudonym) keys come from, and their public ids."""

from __future__ import annotations

import doctest
import hashlib
import hmac
from pathlib import Path

import pytest
from prefect.blocks.system import Secret

from ppdm.release import keys
from ppdm.release.keys import (
    KeyConfigError,
    MissingKeyError,
    key_id,
    key_schemes,
    optional_key,
    register_key_resolver,
    resolve_key,
)


def test_the_module_examples_hold() -> None:
    result = doctest.testmod(keys)
    assert result.attempted >= 2 and result.failed == 0


def test_an_environment_variable_holds_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPDM_TEST_KEY", "ünïcode-key-of-some-length")
    assert resolve_key("env:PPDM_TEST_KEY") == "ünïcode-key-of-some-length".encode()


@pytest.mark.parametrize("value", [None, ""])
def test_a_missing_key_names_the_variable_and_its_purpose(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv("PPDM_TEST_KEY", raising=False)
    else:
        monkeypatch.setenv("PPDM_TEST_KEY", value)
    with pytest.raises(MissingKeyError) as raised:
        resolve_key("env:PPDM_TEST_KEY", purpose="the key that signs the audit log")
    message = str(raised.value)
    assert message.startswith(
        "environment variable PPDM_TEST_KEY holds no key (key spec "
        "'env:PPDM_TEST_KEY'); it is the key that signs the audit log."
    )
    assert "secrets.token_hex(32)" in message
    assert optional_key("env:PPDM_TEST_KEY") is None


def test_a_short_key_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPDM_TEST_KEY", "x" * 15)
    with pytest.raises(KeyConfigError, match="holds 15 bytes; .* at least 16 bytes"):
        resolve_key("env:PPDM_TEST_KEY")
    with pytest.raises(KeyConfigError):  # not merely missing
        optional_key("env:PPDM_TEST_KEY")
    monkeypatch.setenv("PPDM_TEST_KEY", "x" * 16)
    assert resolve_key("env:PPDM_TEST_KEY") == b"x" * 16


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("PPDM_AUDIT_KEY", "must be '<scheme>:<name>'"),
        ("vault:audit", "unknown scheme 'vault'; registered schemes: "),
        ("env:", "names no environment variable"),
    ],
)
def test_a_malformed_spec_is_refused(spec: str, message: str) -> None:
    with pytest.raises(KeyConfigError, match=message):
        resolve_key(spec)
    assert not issubclass(KeyConfigError, MissingKeyError)


def test_a_registered_scheme_resolves_and_the_core_registers_env_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(keys, "_SCHEMES", dict(keys._SCHEMES))
    vault = {"audit": b"from-the-vault-0123456789"}
    register_key_resolver("vault", vault.get, source="vault entry")
    assert "vault" in key_schemes()
    assert resolve_key("vault:audit") == b"from-the-vault-0123456789"
    with pytest.raises(MissingKeyError, match="^vault entry other holds no key"):
        resolve_key("vault:other")
    with pytest.raises(KeyConfigError, match="letters, digits and '-'"):
        register_key_resolver("no spaces", vault.get)
    with pytest.raises(KeyConfigError, match="must be callable"):
        register_key_resolver("vault", "not a function")  # type: ignore[arg-type]


def test_key_id_is_an_hmac_of_a_fixed_label() -> None:
    key = b"0123456789abcdef-some-key"
    expected = hmac.new(key, b"ppdm key id v1", hashlib.sha256).hexdigest()[:16]
    assert key_id(key) == expected
    assert key_id(key) != key_id(key + b"!") and len(key_id(key)) == 16
    assert key.hex() not in key_id(key)


# -- the Prefect layer: prefect-secret:<block> ------------------------------------
@pytest.fixture
def secret_blocks(monkeypatch: pytest.MonkeyPatch) -> dict[str, Secret]:
    """Secret blocks by name, as ``Secret.load`` finds them on a server."""
    import ppdm.tasks.keys

    blocks: dict[str, Secret] = {}

    def load(name: str, *args: object, **kwargs: object) -> Secret:
        if name not in blocks:  # Prefect's own message for a missing block
            raise ValueError(f"Unable to find block document named {name}")
        return blocks[name]

    monkeypatch.setattr(ppdm.tasks.keys.Secret, "load", load)
    return blocks


def test_importing_tasks_registers_prefect_secret(
    secret_blocks: dict[str, Secret],
) -> None:
    assert "prefect-secret" in key_schemes()
    # digits only: Secret.get() would read it as a number; the key is the string
    secret_blocks["ppdm-audit-key"] = Secret(value="12345678901234567890")
    assert resolve_key("prefect-secret:ppdm-audit-key") == b"12345678901234567890"
    with pytest.raises(MissingKeyError) as raised:
        resolve_key("prefect-secret:absent", purpose="the key that signs the audit log")
    assert str(raised.value).startswith(
        "Prefect Secret block absent holds no key (key spec 'prefect-secret:absent'); "
        "it is the key that signs the audit log."
    )


def test_a_secret_block_holding_a_mapping_is_refused(
    secret_blocks: dict[str, Secret],
) -> None:
    secret_blocks["structured"] = Secret(value={"key": "0123456789abcdef0123"})
    with pytest.raises(KeyConfigError, match="holds a dict, not a string"):
        resolve_key("prefect-secret:structured")


def test_a_resolved_audit_key_never_shows_in_a_repr() -> None:
    from ppdm.release.audit import AuditLog, audit_key

    secret = b"do-not-print-this-key-0123"
    signer = audit_key(secret)
    log = AuditLog(Path("out"), signer=signer, keys={key_id(secret): secret})
    for text in (repr(signer), repr(log), str(log)):
        assert "do-not-print" not in text and secret.hex() not in text
    assert signer.id == key_id(secret) and signer.key == secret
