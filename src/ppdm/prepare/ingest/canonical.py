"""The canonical table every reader returns: numpy numbers, pandas ``string`` text.

So one table read from a CSV file, a Parquet file or a database comes out
identical, and its fingerprint is the same whichever route it took.
"""

from __future__ import annotations

from typing import Any

import pandas as pd


def _canonical(frame: pd.DataFrame) -> pd.DataFrame:
    """One representation whatever the reader: text as pandas ``string``.

    A column that no typed array can hold, such as an integer beyond 64 bits
    in a CSV file (``age`` = 10^30) or a SQLite column mixing numbers and
    text, is kept as the text of its values: nothing is rounded or dropped
    here, and validation then judges each value against the column's
    declared type (the 10^30 row is quarantined as not an int64).
    """
    frame = frame.reset_index(drop=True)
    text = [
        column
        for column in frame.columns
        if _may_be_text(frame[column].dtype)
        and (
            pd.api.types.infer_dtype(frame[column], skipna=True) in _TEXT_INFERRED
            or not _storable(frame[column])
        )
    ]
    return _as_string(frame, text)


#: What :func:`pandas.api.types.infer_dtype` says of a column that is text.
_TEXT_INFERRED = ("string", "empty")


def _may_be_text(dtype: Any) -> bool:
    """Whether :func:`_canonical` considers a column of this dtype for text."""
    return not isinstance(dtype, pd.CategoricalDtype) and (
        pd.api.types.is_string_dtype(dtype) or pd.api.types.is_object_dtype(dtype)
    )


def _as_string(
    frame: pd.DataFrame, text: list, *, one_by_one: bool | None = None
) -> pd.DataFrame:
    """``frame`` with the ``text`` columns as pandas ``string``.

    ``one_by_one`` converts each value with :func:`_as_text` (bytes that are
    not UTF-8 kept as escapes); None does so only when the plain conversion
    fails, which is what :func:`_canonical` does with a whole table.
    """
    if not text:
        return frame
    if not one_by_one:
        try:
            return frame.astype(dict.fromkeys(text, "string"))
        except (TypeError, ValueError):  # bytes that are not UTF-8: one by one
            if one_by_one is False:
                raise
    return frame.assign(
        **{
            column: frame[column].map(_as_text, na_action="ignore").astype("string")
            for column in text
        }
    )


def _as_text(value: Any) -> str:
    """A cell's text: bytes decoded (undecodable bytes as escapes), else ``str``."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="backslashreplace")
    return str(value)


def _storable(column: pd.Series) -> bool:
    """Whether a typed (Arrow) array can hold the column's values as they are."""
    import pyarrow as pa

    try:
        pa.array(column, from_pandas=True)
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        return False
    return True
