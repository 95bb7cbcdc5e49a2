"""Every error and warning the core library raises, under one base class.

A specific error also subclasses the matching builtin, so callers may catch
either (``except ValueError`` keeps working).
"""

from __future__ import annotations

import errno
import os
from typing import Any

__all__ = [
    "AnonymizationError",
    "InvalidParameterError",
    "UnknownAlgorithmError",
    "UnknownDatasetError",
    "UnsupportedRequirementError",
    "InfeasibleConstraintError",
    "DataValidationError",
    "SchemaMismatchError",
    "SourceError",
    "VerificationError",
    "OutOfMemoryError",
    "ArtifactIntegrityError",
    "AuditLogError",
    "StorageError",
    "storage_error",
    "is_retryable",
    "PPDMWarning",
]


class AnonymizationError(Exception):
    """Base class of every error raised by :mod:`ppdm`."""


class InvalidParameterError(AnonymizationError, ValueError):
    """A parameter is out of its allowed range or of the wrong type."""


class UnknownAlgorithmError(AnonymizationError, KeyError):
    """No algorithm is registered under the requested name."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class UnknownDatasetError(AnonymizationError, KeyError):
    """No embedded dataset, schema or hierarchy set exists under that name."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class UnsupportedRequirementError(InvalidParameterError):
    """An algorithm is asked for a privacy model or an input it does not support."""


class InfeasibleConstraintError(AnonymizationError, ValueError):
    """The algorithm cannot meet the privacy requirement on this table."""


class DataValidationError(AnonymizationError, ValueError):
    """Input rows or columns violate the dataset's schema.

    Attributes
    ----------
    failure_cases : pandas.DataFrame or None
        pandera's failure cases (column, check, failure_case, index), when any.
    outcome : ppdm.prepare.validation.ValidationOutcome or None
        The full outcome (clean table, quarantine, report) when the table was
        validated but rejected as a whole, so the caller can still write the
        quarantine artifact.
    """

    def __init__(
        self, message: str, failure_cases: Any = None, outcome: Any = None
    ) -> None:
        super().__init__(message)
        self.failure_cases = failure_cases
        self.outcome = outcome


class SchemaMismatchError(DataValidationError):
    """A required column is missing or cannot be coerced to its declared type."""


class SourceError(AnonymizationError, OSError):
    """The data source cannot be read, or it holds no rows."""


class VerificationError(AnonymizationError):
    """A release candidate does not meet its privacy requirement.

    Attributes
    ----------
    certificate : dict
        The verification certificate that failed.
    """

    def __init__(self, message: str, certificate: dict | None = None) -> None:
        super().__init__(message)
        self.certificate = certificate or {}


class OutOfMemoryError(AnonymizationError, MemoryError):
    """A step needs more memory than the process may have.

    The message names the step (and the column, where one column's data is
    what did not fit) and how much was asked for; the run stops there, with
    nothing published.
    """


class ArtifactIntegrityError(AnonymizationError):
    """A stored file or audit-log entry no longer matches its recorded hash."""


class AuditLogError(ArtifactIntegrityError, ValueError):
    """A complete line of the audit log is not an entry: the log was edited."""


#: File-system failures that a retry cannot mend, with what the operator can do.
_DETERMINISTIC_ERRNOS: dict[int, str] = {
    errno.ENOSPC: "free space on that file system or choose another directory",
    errno.EDQUOT: "free space within the quota or choose another directory",
    errno.EROFS: "choose a directory on a writable file system",
    errno.EACCES: "make the directory writable for this user or choose another",
    errno.EPERM: "make the directory writable for this user or choose another",
    errno.ENOTDIR: "a path component is a file: choose another directory",
    errno.EISDIR: "the path is a directory, not a file: name a file",
}


class StorageError(AnonymizationError, OSError):
    """A file-system failure that retrying cannot mend (full disk, read-only, ...).

    The message names the path, the meaning of the errno and the fix.
    """

    def __str__(self) -> str:
        return str(self.strerror)


def storage_error(err: OSError, action: str = "write") -> StorageError | None:
    """The :class:`StorageError` for a deterministic ``OSError``, else None.

    >>> import errno
    >>> e = storage_error(OSError(errno.ENOSPC, "No space left", "/out/x.csv"))
    >>> str(e).split(";")[0]
    'cannot write /out/x.csv: no space left on device (ENOSPC)'
    """
    if isinstance(err, StorageError):
        return err
    if err.errno not in _DETERMINISTIC_ERRNOS:
        return None
    path = err.filename if err.filename is not None else "(unknown path)"
    meaning = os.strerror(err.errno).lower()
    name = errno.errorcode.get(err.errno, str(err.errno))
    wrapped = StorageError(
        err.errno,
        f"cannot {action} {path}: {meaning} ({name}); {_DETERMINISTIC_ERRNOS[err.errno]}",
    )
    wrapped.filename = err.filename
    return wrapped


def is_retryable(exc: BaseException) -> bool:
    """Whether retrying a step could mend ``exc``: transient I/O only.

    Transient: a dropped or refused connection, a time-out, a database that is
    not answering, an I/O error without a deterministic cause, found on the
    exception or on what caused it. Not transient: the project's own errors
    (bad input, an infeasible requirement, a failed verification) unless a
    transient error caused them, a missing file, and the file-system failures
    of :class:`StorageError` (full disk, read-only, no permission).
    """
    for error in (exc, exc.__cause__, exc.__context__):
        if error is None:
            continue
        if isinstance(error, ConnectionError | TimeoutError):
            return True
        if type(error).__name__ == "OperationalError":  # a database not answering
            return True
        if (
            isinstance(error, OSError)
            and not isinstance(error, AnonymizationError)
            and error.errno is not None
            and error.errno not in _DETERMINISTIC_ERRNOS
            and error.errno != errno.ENOENT
        ):
            return True
    return False


class PPDMWarning(UserWarning):
    """Warnings issued by :mod:`ppdm`."""
