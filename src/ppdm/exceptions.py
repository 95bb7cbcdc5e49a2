"""Every error and warning the core library raises, under one base class.

A specific error also subclasses the matching builtin, so callers may catch
either (``except ValueError`` keeps working).
"""

from __future__ import annotations

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
    "ArtifactIntegrityError",
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
    outcome : ppdm.validation.ValidationOutcome or None
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


class ArtifactIntegrityError(AnonymizationError):
    """A stored file or audit-log entry no longer matches its recorded hash."""


class PPDMWarning(UserWarning):
    """Warnings issued by :mod:`ppdm`."""
