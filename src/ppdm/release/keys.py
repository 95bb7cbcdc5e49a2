"""Secret keys named by a spec: where a key comes from, and how it is named in the open.

A *key spec* is ``"<scheme>:<name>"``. The core library knows one scheme,
``env`` (an environment variable: ``"env:PPDM_AUDIT_KEY"``); an upper layer
registers more with :func:`register_key_resolver` (the Prefect tasks register
``prefect-secret``, a Prefect Secret block by name). The core never imports
them.

A key is the bytes of the secret (a string is UTF-8 encoded) and must be at
least :data:`MIN_KEY_BYTES` long; make one with
``python -c "import secrets; print(secrets.token_hex(32))"``.

:func:`key_id` names a key in files that may be shared (the audit log records
which key signed each entry) without revealing it: an HMAC of a fixed label,
so nobody without the key can tell which key has a given id.

Keys are used for the audit log's MACs (``PPDM_AUDIT_KEY``, see
:mod:`ppdm.release.audit`) and for keyed pseudonyms of identifying columns
(``PPDM_PSEUDONYM_KEY``). Use a different key for each purpose.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Callable
from dataclasses import dataclass

from ppdm.exceptions import InvalidParameterError

__all__ = [
    "MIN_KEY_BYTES",
    "KeyConfigError",
    "MissingKeyError",
    "KeyResolver",
    "register_key_resolver",
    "key_schemes",
    "resolve_key",
    "resolve_secret",
    "optional_key",
    "key_id",
]

#: The shortest key accepted, in bytes (128 bits when random).
MIN_KEY_BYTES = 16

#: ``resolver(name)`` returns the key, or None when nothing has that name.
KeyResolver = Callable[[str], "bytes | str | None"]

_KEY_ID_LABEL = b"ppdm key id v1"


class KeyConfigError(InvalidParameterError):
    """A key spec is malformed, names an unknown scheme, or its key is unusable."""


class MissingKeyError(KeyConfigError):
    """A key spec is well formed but nothing holds a key under that name."""


@dataclass(frozen=True)
class _Scheme:
    resolve: KeyResolver
    source: str  # what the name after the colon names, for messages


def _from_environment(name: str) -> str | None:
    return os.environ.get(name) or None  # an empty variable is no key


_SCHEMES: dict[str, _Scheme] = {
    "env": _Scheme(_from_environment, "environment variable")
}


def register_key_resolver(
    scheme: str, resolver: KeyResolver, *, source: str | None = None
) -> None:
    """Make ``"<scheme>:<name>"`` specs resolve through ``resolver(name)``.

    Parameters
    ----------
    scheme : str
        Letters, digits and ``-``; registering a scheme again replaces it.
    resolver : callable
        ``resolver(name)`` returns the key (bytes, or a string to UTF-8
        encode), or None when nothing holds a key under ``name``; it may raise
        :class:`KeyConfigError` with a message of its own.
    source : str, optional
        What ``name`` names, for messages ("Prefect Secret block").
    """
    if not scheme or not all(c.isalnum() or c == "-" for c in scheme):
        raise KeyConfigError(
            f"key scheme {scheme!r} must be letters, digits and '-' (like 'env')"
        )
    if not callable(resolver):
        raise KeyConfigError(
            f"the resolver of key scheme {scheme!r} must be callable, got "
            f"{type(resolver).__name__}"
        )
    _SCHEMES[scheme] = _Scheme(resolver, source or f"{scheme} key")


def key_schemes() -> tuple[str, ...]:
    """The registered schemes, sorted."""
    return tuple(sorted(_SCHEMES))


def _split(spec: str) -> tuple[str, str]:
    if not isinstance(spec, str) or ":" not in spec:
        raise KeyConfigError(
            f"key spec {spec!r} must be '<scheme>:<name>', e.g. 'env:PPDM_AUDIT_KEY'; "
            f"schemes: {', '.join(key_schemes())}"
        )
    scheme, name = spec.split(":", 1)
    if scheme not in _SCHEMES:
        hint = (
            " (the Prefect layer registers it: import tasks)"
            if scheme == "prefect-secret"
            else ""
        )
        raise KeyConfigError(
            f"key spec {spec!r}: unknown scheme {scheme!r}{hint}; registered "
            f"schemes: {', '.join(key_schemes())}"
        )
    if not name:
        raise KeyConfigError(f"key spec {spec!r} names no {_SCHEMES[scheme].source}")
    return scheme, name


def resolve_key(spec: str, *, purpose: str = "a secret key") -> bytes:
    """The key that ``spec`` names.

    Parameters
    ----------
    spec : str
        ``"env:NAME"`` or ``"<scheme>:<name>"`` of a registered scheme.
    purpose : str
        What the key is for, in the message when it is missing ("the key that
        signs the audit log").

    Returns
    -------
    bytes

    Raises
    ------
    MissingKeyError
        Nothing holds a key under that name; the message names the variable
        or block and what the key is for.
    KeyConfigError
        The spec is malformed or its scheme unknown, or the key is shorter
        than :data:`MIN_KEY_BYTES`.

    Examples
    --------
    >>> import os
    >>> os.environ["PPDM_DOCTEST_KEY"] = "0123456789abcdef0123"
    >>> resolve_key("env:PPDM_DOCTEST_KEY")
    b'0123456789abcdef0123'
    >>> del os.environ["PPDM_DOCTEST_KEY"]
    """
    scheme, name = _split(spec)
    found = _SCHEMES[scheme].resolve(name)
    source = _SCHEMES[scheme].source
    if found is None:
        raise MissingKeyError(
            f"{source} {name} holds no key (key spec {spec!r}); it is {purpose}. "
            f"Set it to a secret of at least {MIN_KEY_BYTES} bytes, e.g. the output "
            'of: python -c "import secrets; print(secrets.token_hex(32))"'
        )
    key = found.encode("utf-8") if isinstance(found, str) else bytes(found)
    if len(key) < MIN_KEY_BYTES:
        raise KeyConfigError(
            f"{source} {name} (key spec {spec!r}) holds {len(key)} bytes; it is "
            f"{purpose} and must be at least {MIN_KEY_BYTES} bytes long"
        )
    return key


def resolve_secret(spec: str, *, purpose: str) -> str:
    """The secret text that ``spec`` names, such as a database password.

    As :func:`resolve_key`, with the same schemes (``env:NAME``, and
    ``prefect-secret:<block>`` once the Prefect layer registered it), but for
    a secret chosen elsewhere (a password set by a database administrator):
    no minimum length, and the value is text.

    Raises
    ------
    MissingKeyError
        Nothing holds a secret under that name; the message names the
        variable or block and what the secret is for.
    KeyConfigError
        The spec is malformed or its scheme unknown.

    Examples
    --------
    >>> import os
    >>> os.environ["PPDM_DOCTEST_PASSWORD"] = "s3cret"
    >>> resolve_secret("env:PPDM_DOCTEST_PASSWORD", purpose="a password")
    's3cret'
    >>> del os.environ["PPDM_DOCTEST_PASSWORD"]
    """
    scheme, name = _split(spec)
    found = _SCHEMES[scheme].resolve(name)
    if found is None:
        raise MissingKeyError(
            f"{_SCHEMES[scheme].source} {name} holds nothing ({spec!r}); it is "
            f"{purpose}: set it, or name where the secret is"
        )
    if isinstance(found, bytes):
        return found.decode("utf-8", errors="strict")
    return str(found)


def optional_key(spec: str, *, purpose: str = "a secret key") -> bytes | None:
    """Like :func:`resolve_key`, but None when nothing holds the key.

    A malformed spec, an unknown scheme or a too short key still raise.
    """
    try:
        return resolve_key(spec, purpose=purpose)
    except MissingKeyError:
        return None


def key_id(key: bytes) -> str:
    """A public name of ``key``: HMAC-SHA256 of a fixed label, 16 hex digits.

    >>> key_id(b"0123456789abcdef")
    '4ee4754b6fc2fa92'
    """
    return hmac.new(key, _KEY_ID_LABEL, hashlib.sha256).hexdigest()[:16]
