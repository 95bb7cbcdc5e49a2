from __future__ import annotations

import errno

import pytest

from ppdm.exceptions import (
    InfeasibleConstraintError,
    SourceError,
    StorageError,
    is_retryable,
    storage_error,
)


@pytest.mark.parametrize(
    ("code", "fix"),
    [
        (errno.ENOSPC, "free space"),
        (errno.EROFS, "writable file system"),
        (errno.EACCES, "writable for this user"),
        (errno.ENOTDIR, "is a file"),
        (errno.EISDIR, "name a file"),
    ],
)
def test_deterministic_file_system_errors_name_path_meaning_and_fix(code, fix):
    wrapped = storage_error(OSError(code, "raw", "/out/german/x.csv"))
    assert isinstance(wrapped, StorageError) and wrapped.errno == code
    text = str(wrapped)
    assert text.startswith("cannot write /out/german/x.csv: ")
    assert f"({errno.errorcode[code]})" in text and fix in text
    assert "Errno" not in text and not is_retryable(wrapped)


def test_transient_errors_are_retried_and_deterministic_ones_are_not():
    assert storage_error(OSError(errno.EIO, "I/O error", "/x")) is None
    assert is_retryable(OSError(errno.EIO, "I/O error"))
    assert is_retryable(ConnectionRefusedError(errno.ECONNREFUSED, "refused"))
    assert is_retryable(TimeoutError())
    assert not is_retryable(OSError(errno.ENOSPC, "full"))
    assert not is_retryable(FileNotFoundError(errno.ENOENT, "gone", "/x"))
    assert not is_retryable(InfeasibleConstraintError("k above rows"))
    assert not is_retryable(ValueError("bad"))
    # a source error caused by a refused connection is worth a retry
    try:
        try:
            raise ConnectionRefusedError(errno.ECONNREFUSED, "refused")
        except ConnectionRefusedError as cause:
            raise SourceError("source sql:postgresql://db: cannot connect") from cause
    except SourceError as err:
        assert is_retryable(err)
    assert not is_retryable(SourceError("source x.csv: the file holds no rows"))
