"""Key specs ``prefect-secret:<block name>``: a key kept in a Prefect Secret block.

Importing :mod:`tasks` registers the scheme with :mod:`ppdm.release.keys`
(the core library never imports Prefect). Make the block once, e.g.::

    from prefect.blocks.system import Secret
    Secret(value="<64 hex digits>").save("ppdm-audit-key")

and name it where a key spec is asked for: ``prefect-secret:ppdm-audit-key``.
"""

from __future__ import annotations

from prefect.blocks.system import Secret

from ppdm.release.keys import KeyConfigError, register_key_resolver

__all__ = ["SCHEME", "secret_block_key"]

SCHEME = "prefect-secret"


def secret_block_key(name: str) -> bytes | None:
    """The value of the Prefect Secret block ``name`` (None: no such block).

    The stored string is used as it is: ``Secret.get`` would read a value of
    digits as a number.
    """
    try:
        block = Secret.load(name)
    except ValueError:  # "Unable to find block document named ..."
        return None
    value = block.value.get_secret_value()
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bytes):
        return value
    raise KeyConfigError(
        f"Prefect Secret block {name} holds a {type(value).__name__}, not a string; "
        "a key is a string (e.g. 64 hex digits)"
    )


register_key_resolver(SCHEME, secret_block_key, source="Prefect Secret block")
