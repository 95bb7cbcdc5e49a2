"""Content hashes of a source: of a table's cells, and of a file's bytes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd

from ppdm.exceptions import SourceError
from ppdm.release.artifacts import sha256_file

__all__ = [
    "file_sha256",
    "fingerprint",
]


def fingerprint(frame: pd.DataFrame) -> str:
    """Content hash of a table: column names, dtypes and values, in order.

    The hash is the sha256 of a JSON header (column names, dtypes, row count)
    followed by one 64-bit hash per cell from
    :func:`pandas.util.hash_pandas_object`, column by column. That function
    uses a fixed key, so the fingerprint is the same in every process and on
    every machine with the same pandas major version. The index is not part of
    the content.

    Parameters
    ----------
    frame : pandas.DataFrame

    Returns
    -------
    str
        64 hexadecimal digits.

    Examples
    --------
    >>> import pandas as pd
    >>> a = pd.DataFrame({"age": [30, 41], "sex": ["Male", "Female"]})
    >>> fingerprint(a) == fingerprint(a.copy())
    True
    >>> fingerprint(a) == fingerprint(a.assign(age=[30, 42]))
    False
    """
    digest = hashlib.sha256()
    header = {
        "columns": [str(column) for column in frame.columns],
        "dtypes": [str(dtype) for dtype in frame.dtypes],
        "rows": len(frame),
    }
    digest.update(json.dumps(header, sort_keys=True).encode("utf-8"))
    for position in range(frame.shape[1]):
        hashes = pd.util.hash_pandas_object(
            frame.iloc[:, position], index=False, categorize=True
        )
        digest.update(np.ascontiguousarray(hashes.to_numpy(), dtype="<u8").tobytes())
    return digest.hexdigest()


def file_sha256(path: str | Path) -> str:
    """sha256 of a file's bytes, read in 1 MiB chunks.

    Raises
    ------
    ppdm.exceptions.SourceError
        The file does not exist or cannot be read.
    """
    try:
        return sha256_file(path)
    except OSError as exc:
        raise SourceError(f"source {path}: cannot be read ({exc.strerror})") from exc
