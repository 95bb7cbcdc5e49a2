"""The independent verifier: checks released files against the requirement.

The verifier reads what will be published (CSV files with a header row,
``*`` for a suppressed cell, an empty field for a missing value) and never the
algorithm's internal state or evidence. Every privacy model of the
:class:`Requirement` is checked on every released table with the measures of
:mod:`ppdm.measures`, and the outcome is a :class:`Certificate`: the content of
``verification.json``, equal for equal releases (no timestamps).

>>> import pandas as pd
>>> from ppdm.verify import Requirement, verify_tables
>>> t = pd.DataFrame({"age": ["[20, 29]", "[20, 29]", "*"], "income": ["a", "b", "a"]})
>>> cert = verify_tables({"release.csv": t}, Requirement(("age",), "income", k=2))
>>> print(cert.summary())  # doctest: +NORMALIZE_WHITESPACE
FAILED: 2-anonymity not met in release.csv: achieved k=1;
1 violating class, e.g. {age: *} (1 row)
"""

from __future__ import annotations

import hashlib
import json
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

import ppdm
from ppdm.exceptions import InvalidParameterError, SourceError, VerificationError
from ppdm.measures import ClassPartition
from ppdm.model import SUPPRESSED, AnonymizationSpec
from ppdm.privacy import (
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    PrivacyModel,
    PrivacyResult,
    RecursiveCLDiversity,
    TCloseness,
)
from ppdm.privacy.base import json_value
from ppdm.privacy.risk import RiskReport, reidentification_risk

#: ``{attribute: {generalized label: raw values it covers}}``.
Covers = Mapping[str, Mapping[str, Sequence[str]]]

__all__ = [
    "Requirement",
    "TableVerification",
    "Certificate",
    "read_released_table",
    "sha256_file",
    "verify_tables",
    "verify_files",
    "verify_partition",
    "certificate_of",
    "VERIFIER_NAME",
]

VERIFIER_NAME = "ppdm.verify"
L_VARIANTS = ("distinct", "entropy", "recursive")
#: Default c of the recursive (c, l) measure reported when the requirement
#: asks for another l variant (the certificate always lists the three).
DEFAULT_C = 2.0
_HASH_CHUNK = 1 << 20


def read_released_table(path: str | Path) -> pd.DataFrame:
    """Read a released CSV exactly as written: every cell is text.

    ``*`` (suppressed) and the empty string (missing) are kept as values, so
    they form equivalence classes of their own and no row is dropped.

    Raises
    ------
    SourceError
        The file is missing, unreadable or not a CSV with a header row.
    """
    path = Path(path)
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
    except FileNotFoundError as exc:
        raise SourceError(f"released table {str(path)!r} does not exist") from exc
    except (OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise SourceError(f"cannot read released table {str(path)!r}: {exc}") from exc
    except pd.errors.EmptyDataError as exc:
        raise SourceError(
            f"released table {str(path)!r} is empty (no header row)"
        ) from exc


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for chunk in iter(lambda: handle.read(_HASH_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


@dataclass(frozen=True)
class Requirement:
    """The privacy requirement a release must meet.

    Parameters
    ----------
    quasi_identifiers : tuple of str
    sensitive_attribute : str or None
    k : int
        ``k >= 1``.
    l : int, default=1
        Diversity of ``sensitive_attribute`` per class (1 = none required).
    l_variant : {"distinct", "entropy", "recursive"}, default="distinct"
    c : float or None
        The ``c`` of recursive (c, l)-diversity; required for that variant.
    t : float or None
        t-closeness of ``sensitive_attribute`` is required when set.
    suppression_marker : str, default="*"
    """

    quasi_identifiers: tuple[str, ...]
    sensitive_attribute: str | None
    k: int
    l: int = 1  # noqa: E741 - the literature's name
    l_variant: str = "distinct"
    c: float | None = None
    t: float | None = None
    suppression_marker: str = SUPPRESSED

    def __post_init__(self) -> None:
        if isinstance(self.quasi_identifiers, str):
            raise InvalidParameterError(
                "quasi_identifiers must be a sequence of column names, not a string; "
                f"got {self.quasi_identifiers!r}"
            )
        object.__setattr__(self, "quasi_identifiers", tuple(self.quasi_identifiers))
        if not self.quasi_identifiers:
            raise InvalidParameterError(
                "quasi_identifiers must name at least one column"
            )
        if not _is_int(self.k) or self.k < 1:
            raise InvalidParameterError(f"k must be an integer >= 1; got {self.k!r}")
        if not _is_int(self.l) or self.l < 1:
            raise InvalidParameterError(f"l must be an integer >= 1; got {self.l!r}")
        if self.l_variant not in L_VARIANTS:
            raise InvalidParameterError(
                f"l_variant must be one of {list(L_VARIANTS)}; got {self.l_variant!r}"
            )
        if self.l_variant == "recursive" and self.c is None:
            raise InvalidParameterError("l_variant='recursive' needs c (a number > 0)")
        if self.c is not None and (not _is_number(self.c) or not self.c > 0):
            raise InvalidParameterError(f"c must be a number > 0; got {self.c!r}")
        if self.t is not None and (not _is_number(self.t) or not 0 <= self.t <= 1):
            raise InvalidParameterError(f"t must be a number in [0, 1]; got {self.t!r}")
        if self.sensitive_attribute is None and (self.l > 1 or self.t is not None):
            raise InvalidParameterError(
                "l > 1 or t needs a sensitive_attribute; got sensitive_attribute=None"
            )
        if self.sensitive_attribute in self.quasi_identifiers:
            raise InvalidParameterError(
                f"sensitive_attribute {self.sensitive_attribute!r} is also a "
                "quasi-identifier"
            )

    @classmethod
    def from_spec(cls, spec: AnonymizationSpec, **extra: Any) -> Requirement:
        """The requirement of an :class:`~ppdm.model.AnonymizationSpec`."""
        return cls(
            quasi_identifiers=tuple(spec.quasi_identifiers),
            sensitive_attribute=spec.sensitive_attribute,
            k=spec.k,
            l=spec.l,
            suppression_marker=spec.suppression_marker,
            **extra,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form, in a fixed key order."""
        return {
            "quasi_identifiers": list(self.quasi_identifiers),
            "sensitive_attribute": self.sensitive_attribute,
            "k": int(self.k),
            "l": int(self.l),
            "l_variant": self.l_variant,
            "c": None if self.c is None else float(self.c),
            "t": None if self.t is None else float(self.t),
            "suppression_marker": self.suppression_marker,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Requirement:
        """Inverse of :meth:`to_dict`; unknown keys are an error."""
        known = {
            "quasi_identifiers", "sensitive_attribute", "k", "l", "l_variant",
            "c", "t", "suppression_marker",
        }  # fmt: skip
        unknown = sorted(set(d) - known)
        if unknown:
            raise InvalidParameterError(f"unknown requirement keys {unknown}")
        args = dict(d)
        args["quasi_identifiers"] = tuple(args.get("quasi_identifiers", ()))
        return cls(**args)

    def models(self) -> list[PrivacyModel]:
        """The privacy models this requirement asks for, k first."""
        out: list[PrivacyModel] = [KAnonymity(int(self.k))]
        sa = self.sensitive_attribute
        if sa is not None:
            if self.l_variant == "distinct":
                out.append(DistinctLDiversity(sa, int(self.l)))
            elif self.l_variant == "entropy":
                out.append(EntropyLDiversity(sa, float(self.l)))
            else:
                assert self.c is not None
                out.append(RecursiveCLDiversity(sa, float(self.c), int(self.l)))
            if self.t is not None:
                out.append(TCloseness(sa, float(self.t)))
        return out


@dataclass(frozen=True)
class TableVerification:
    """The verification of one released table.

    Attributes
    ----------
    name : str
    rows : int
    quasi_identifiers : tuple of str
        The requirement's QIs present in the table (those checked).
    missing_quasi_identifiers : tuple of str
    sensitive_attribute_present : bool
    results : tuple of PrivacyResult
        One per privacy model checked (the sensitive-attribute models only
        when the table carries that attribute).
    measures : dict
        Achieved k and, with a sensitive attribute, distinct / entropy /
        recursive l and t, whatever the requirement asks.
    risk : RiskReport
    sha256 : str or None
        Hash of the released file (None for in-memory tables).
    """

    name: str
    rows: int
    quasi_identifiers: tuple[str, ...]
    missing_quasi_identifiers: tuple[str, ...]
    sensitive_attribute_present: bool
    results: tuple[PrivacyResult, ...]
    measures: dict[str, Any]
    risk: RiskReport
    sha256: str | None = None

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    def to_dict(self) -> dict[str, Any]:
        notes = []
        if self.missing_quasi_identifiers:
            notes.append(
                "checked on the quasi-identifiers present; missing: "
                + ", ".join(self.missing_quasi_identifiers)
            )
        if not self.sensitive_attribute_present:
            notes.append("sensitive attribute not released in this table")
        return {
            "sha256": self.sha256,
            "rows": int(self.rows),
            "passed": self.passed,
            "quasi_identifiers": list(self.quasi_identifiers),
            "missing_quasi_identifiers": list(self.missing_quasi_identifiers),
            "sensitive_attribute_present": bool(self.sensitive_attribute_present),
            "notes": notes,
            "measures": {k: json_value(v) for k, v in self.measures.items()},
            "models": [r.to_dict() for r in self.results],
            "risk": self.risk.to_dict(),
        }


@dataclass(frozen=True)
class Certificate:
    """The verification certificate of a release (``verification.json``).

    Attributes
    ----------
    passed : bool
        Every model holds on every table.
    requirement : Requirement
    tables : tuple of TableVerification
        Sorted by table name.
    input_sha256 : str or None
        Hash of the input the release was made from, as given by the caller.
    verifier : dict
        ``{"name": "ppdm.verify", "version": ppdm.__version__}``.
    """

    passed: bool
    requirement: Requirement
    tables: tuple[TableVerification, ...]
    input_sha256: str | None = None
    verifier: dict[str, str] = field(
        default_factory=lambda: {"name": VERIFIER_NAME, "version": ppdm.__version__}
    )

    @property
    def release_sha256(self) -> dict[str, str | None]:
        """Hash of every released file, by table name."""
        return {t.name: t.sha256 for t in self.tables}

    @property
    def achieved(self) -> dict[str, dict[str, Any]]:
        """Achieved measures by table name."""
        return {t.name: dict(t.measures) for t in self.tables}

    def table(self, name: str) -> TableVerification:
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """The JSON content: deterministic key order, no timestamps."""
        return {
            "verifier": dict(self.verifier),
            "passed": bool(self.passed),
            "requirement": self.requirement.to_dict(),
            "input_sha256": self.input_sha256,
            "release_sha256": self.release_sha256,
            "rows": {t.name: int(t.rows) for t in self.tables},
            "tables": {t.name: t.to_dict() for t in self.tables},
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as indented JSON text (ends with a newline)."""
        return json.dumps(self.to_dict(), indent=2, allow_nan=False) + "\n"

    def summary(self) -> str:
        """Human text: one line per failed model, or one PASSED line."""
        if self.passed:
            parts = []
            for t in self.tables:
                achieved = ", ".join(
                    f"{r.model} ({r.measure}={_fmt(r.achieved)})" for r in t.results
                )
                parts.append(f"{t.name} ({t.rows} rows): {achieved}")
            return "PASSED: " + "; ".join(parts)
        lines = []
        for t in self.tables:
            for r in t.results:
                if r.passed:
                    continue
                line = (
                    f"FAILED: {r.model} not met in {t.name}: achieved "
                    f"{r.measure}={_fmt(r.achieved)}"
                )
                if r.n_violating_classes:
                    noun = "class" if r.n_violating_classes == 1 else "classes"
                    line += f"; {r.n_violating_classes} violating {noun}"
                    if r.examples:
                        line += ", e.g. " + _describe_class(r.examples[0], r.measure)
                lines.append(line)
        return "\n".join(lines)

    def raise_for_failure(self) -> None:
        """Raise :class:`~ppdm.exceptions.VerificationError` unless passed."""
        if not self.passed:
            raise VerificationError(self.summary(), self.to_dict())


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _describe_class(example: Mapping[str, Any], measure: str) -> str:
    cells = {k: v for k, v in example.items() if k not in ("size", measure)}
    inside = ", ".join(f"{k}: {'' if v is None else v}" for k, v in cells.items())
    size = example["size"]
    return f"{{{inside}}} ({size} row{'s' if size != 1 else ''})"


def _verify_table(
    name: str,
    table: pd.DataFrame,
    requirement: Requirement,
    original: pd.DataFrame | None,
    sha256: str | None,
    covers: Covers | None = None,
) -> TableVerification:
    qis = tuple(q for q in requirement.quasi_identifiers if q in table.columns)
    partition = ClassPartition.of(table, qis)
    return verify_partition(
        name,
        partition,
        table.columns,
        requirement,
        original=original,
        sha256=sha256,
        covers=covers,
    )


def verify_partition(
    name: str,
    partition: ClassPartition,
    columns: Sequence[str],
    requirement: Requirement,
    *,
    original: pd.DataFrame | None = None,
    sha256: str | None = None,
    covers: Covers | None = None,
) -> TableVerification:
    """Verify one table given its equivalence classes.

    The in-memory and the out-of-core (:mod:`ppdm.verify_dask`) paths both end
    here, so they compute every figure with the same code. ``columns`` are the
    table's column names; ``partition`` is over the requirement's
    quasi-identifiers that are among them.
    """
    qis = partition.quasi_identifiers
    missing = tuple(q for q in requirement.quasi_identifiers if q not in columns)
    sa = requirement.sensitive_attribute
    has_sa = sa is not None and sa in columns
    results = []
    for model in requirement.models():
        if model.uses_sensitive_attribute and not has_sa:
            continue
        results.append(model.check(partition, qis))
    measures: dict[str, Any] = {"k": _achieved(results, "k-anonymity", partition)}
    if has_sa and partition.n_classes:
        assert sa is not None
        counts = partition.sensitive(sa)
        c = requirement.c if requirement.c is not None else DEFAULT_C
        measures["distinct_l"] = int(counts.distinct_per_class().min())
        measures["entropy_l"] = float(counts.entropy_l_per_class().min())
        measures["recursive_c"] = float(c)
        measures["recursive_l"] = int(counts.recursive_l_per_class(c).min())
        if requirement.t is not None:
            measures["t"] = float(counts.emd_per_class().max())
            measures["t_ordered"] = counts.ranks is not None
    risk = reidentification_risk(
        partition,
        qis,
        population=original,
        suppression_marker=requirement.suppression_marker,
        covers=covers,
    )
    return TableVerification(
        name=name,
        rows=partition.n_rows,
        quasi_identifiers=qis,
        missing_quasi_identifiers=missing,
        sensitive_attribute_present=has_sa,
        results=tuple(results),
        measures=measures,
        risk=risk,
        sha256=sha256,
    )


def _achieved(
    results: Sequence[PrivacyResult], name: str, partition: ClassPartition
) -> int:
    for r in results:
        if r.requirement["model"] == name:
            return int(r.achieved)
    return int(partition.sizes.min()) if partition.n_classes else 0


def certificate_of(
    checked: Sequence[TableVerification],
    requirement: Requirement,
    input_sha256: str | None = None,
) -> Certificate:
    """Assemble the certificate of verified tables (sorted by name)."""
    if not checked:
        raise InvalidParameterError("nothing to verify: no released tables given")
    tables = tuple(sorted(checked, key=lambda t: t.name))
    return Certificate(
        passed=all(t.passed for t in tables),
        requirement=requirement,
        tables=tables,
        input_sha256=input_sha256,
    )


def verify_tables(
    tables: Mapping[str, pd.DataFrame],
    requirement: Requirement,
    *,
    original: pd.DataFrame | None = None,
    input_sha256: str | None = None,
    covers: Covers | None = None,
) -> Certificate:
    """Verify in-memory released tables (cells as released: text).

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        Table name -> released table.
    requirement : Requirement
    original : pandas.DataFrame, optional
        The original table, used as the population for journalist and
        marketer risk.
    input_sha256 : str, optional
        Recorded in the certificate.
    covers : mapping, optional
        Hierarchy labels -> raw values, per attribute, so the population risk
        can read hierarchy-generalized cells (see
        :func:`ppdm.privacy.risk.reidentification_risk`).

    Returns
    -------
    Certificate
    """
    checked = [
        _verify_table(name, table, requirement, original, None, covers)
        for name, table in tables.items()
    ]
    return certificate_of(checked, requirement, input_sha256)


def verify_files(
    files: Mapping[str, Path],
    requirement: Requirement,
    *,
    original: pd.DataFrame | None = None,
    input_sha256: str | None = None,
    covers: Covers | None = None,
) -> Certificate:
    """Verify released CSV files as they will be published.

    Each file is read with :func:`read_released_table` and hashed (sha256);
    every privacy model of ``requirement`` is checked on every table. A table
    lacking some quasi-identifiers is checked on those it has, and a table
    without the sensitive attribute only on k; the certificate says so.

    Parameters
    ----------
    files : mapping of str to pathlib.Path
        Table name -> released CSV file.
    requirement : Requirement
    original : pandas.DataFrame, optional
        The original table (population for journalist / marketer risk).
    input_sha256 : str, optional
        Hash of the pipeline's input, recorded in the certificate.
    covers : mapping, optional
        Hierarchy labels -> raw values, as for :func:`verify_tables`.

    Returns
    -------
    Certificate

    Raises
    ------
    SourceError
        A file cannot be read.
    """
    checked = []
    for name, path in files.items():
        table = read_released_table(path)
        checked.append(
            _verify_table(name, table, requirement, original, sha256_file(path), covers)
        )
    return certificate_of(checked, requirement, input_sha256)
