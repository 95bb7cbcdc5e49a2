"""What of a validated table may leave the building, by each column's role.

The validate step keeps only the columns a release may carry (see
:attr:`ppdm.config.ReleaseConfig.released_columns`): quasi-identifiers,
sensitive attributes, the target, columns released as is on purpose, and
identifying columns only as keyed pseudonyms. Identifiers, weights and
dropped columns stop here, so no later step (nor its artifacts) holds them.

A pseudonym is HMAC-SHA256 of the value under a secret key, labelled with
its column: the same person gets the same pseudonym in every release made
with the key (linkable by whoever holds the key, by no one else), and
without the key a pseudonym cannot be recomputed from a name or an id.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

import pandas as pd

from ppdm.exceptions import InvalidParameterError

__all__ = ["PSEUDONYM_HEX_CHARS", "pseudonyms", "release_bound"]

#: Hex characters kept of each HMAC-SHA256 (128 bits: collisions negligible).
PSEUDONYM_HEX_CHARS = 32


def pseudonyms(values: pd.Series, key: bytes, *, column: str) -> pd.Series:
    """Keyed pseudonyms of a column's values; missing values stay missing.

    Each distinct value is hashed once (identifiers are mostly distinct, so
    this is one HMAC per row at worst; ``hmac`` has no vectorised form).
    """
    if not key:
        raise InvalidParameterError("the pseudonym key is empty")
    present = values.dropna()
    label = column.encode("utf-8") + b"\x00"
    mapping = {
        value: hmac.new(
            key, label + str(value).encode("utf-8"), hashlib.sha256
        ).hexdigest()[:PSEUDONYM_HEX_CHARS]
        for value in pd.unique(present)
    }
    return values.map(mapping).astype("string")


def release_bound(
    table: pd.DataFrame,
    columns: Sequence[str],
    *,
    pseudonymized: Sequence[str] = (),
    key: bytes | None = None,
) -> pd.DataFrame:
    """The columns of ``table`` a release may carry, in the table's order.

    Parameters
    ----------
    table : pandas.DataFrame
        The validated table.
    columns : sequence of str
        Columns that leave the building (the configuration's
        ``released_columns``), pseudonymized ones included.
    pseudonymized : sequence of str
        Identifying columns replaced by :func:`pseudonyms`.
    key : bytes, optional
        The pseudonym key; required when ``pseudonymized`` is not empty.
    """
    wanted = set(columns)
    kept = [c for c in table.columns if c in wanted]
    out = table[kept].copy()
    if pseudonymized:
        if key is None:
            raise InvalidParameterError("pseudonymized columns need a pseudonym key")
        for column in pseudonymized:
            out[column] = pseudonyms(table[column], key, column=column)
    return out
