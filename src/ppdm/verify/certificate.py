"""Released tables checked against the requirement; the verification certificate.

The verifier reads what will be published (CSV files with a header row,
``*`` for a suppressed cell, an empty field for a missing value) and never the
algorithm's internal state or evidence. Every privacy model of the
:class:`Requirement` is checked on every released table with the measures of
:mod:`ppdm.privacy.measures`, and the outcome is a :class:`Certificate`: the content of
``verification.json``, equal for equal releases (no timestamps).

>>> import pandas as pd
>>> from ppdm.privacy import Requirement
>>> from ppdm.verify import verify_tables
>>> t = pd.DataFrame({"age": ["[20, 29]", "[20, 29]", "*"], "income": ["a", "b", "a"]})
>>> cert = verify_tables({"release.csv": t}, Requirement.of(("age",), k=2))
>>> print(cert.summary())  # doctest: +NORMALIZE_WHITESPACE
FAILED: 2-anonymity not met in release.csv: achieved k=1;
1 violating class, e.g. {age: *} (1 row)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

import ppdm
from ppdm.exceptions import InvalidParameterError, VerificationError
from ppdm.privacy import (
    CheckResult,
    KAnonymityByContainment,
    Requirement,
)
from ppdm.privacy._containment import ATTACKER, quasi_identifier_columns
from ppdm.privacy.measures import ClassPartition
from ppdm.privacy.result import PrivacyResult, json_value
from ppdm.privacy.risk import RiskReport, reidentification_risk
from ppdm.release.artifacts import canonical_json
from ppdm.release.data_files import (
    ReleasedFiles,
    read_released_table,
    released_header,
    released_sha256,
)
from ppdm.verify.passthrough import (
    PassthroughPolicy,
    PassthroughResult,
    check_passthrough,
)

#: ``{attribute: {generalized label: raw values it covers}}``.
Covers = Mapping[str, Mapping[str, Sequence[str]]]

__all__ = [
    "TableVerification",
    "Certificate",
    "VerifyOptions",
    "read_released_table",
    "verify_tables",
    "verify_files",
    "verify_partition",
    "certificate_of",
    "check_release_models",
    "checks_in",
    "checks_of",
    "ALL_TABLES",
    "VERIFIER_NAME",
]

VERIFIER_NAME = "ppdm.verify"
#: Default c of the recursive (c, l) measure reported when the requirement
#: asks for another l variant (the certificate always lists the three).
DEFAULT_C = 2.0


# eq=False: the original is a DataFrame, whose ``==`` is elementwise.
@dataclass(frozen=True, eq=False)
class VerifyOptions:
    """What a verification reads besides the released tables and the requirement.

    Attributes
    ----------
    original : pandas.DataFrame, optional
        The original table, the population of the journalist and marketer
        risks and of the proxy part of the pass-through check.
    input_sha256 : str, optional
        Hash of the pipeline's input, recorded in the certificate.
    covers : mapping, optional
        Hierarchy labels -> raw values, per attribute, so the population risk
        can read hierarchy-generalized cells (see
        :func:`ppdm.privacy.risk.reidentification_risk`).
    passthrough : PassthroughPolicy, optional
        Columns released as is and the limits they must keep
        (:mod:`ppdm.verify.passthrough`); a column above a limit fails the
        certificate unless the policy accepts it by name. Without
        ``original`` only the below-k part is measured. None: not checked.
    """

    original: pd.DataFrame | None = None
    input_sha256: str | None = None
    covers: Covers | None = None
    passthrough: PassthroughPolicy | None = None


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
        recursive l and t (the largest EMD of a class to the whole table;
        ``t_ordered``: over the values' numeric order, else equal distance),
        whatever the requirement asks.
    risk : RiskReport
    sha256 : str or None
        Hash of the released file (None for in-memory tables).
    feature_classes : dict or None
        For a table of 0/1 feature columns ``<q>=<value>`` (a feature
        selection release): its exact classes over those columns as released
        (``k``, classes, classes of one row, classes and rows below the
        requirement's k, and per other column the classes below k holding
        one value of it); ``attacker`` states, when the requirement is
        k-anonymity by containment, whom that weaker model protects against.
        None for other tables (their certificate keeps its bytes).
    join_columns : tuple of str
        Columns this table shares with another released table (a projection's
        target): when the table holds the sensitive attribute, its sensitive
        models are checked over the quasi-identifiers plus these, the class
        an attacker sees after joining the tables on them.
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
    feature_classes: dict[str, Any] | None = None
    join_columns: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    def describe_feature_classes(self) -> str:
        """The exact classes of a feature table in words ('' for other tables)."""
        f = self.feature_classes
        if f is None:
            return ""
        text = (
            f"exact classes of the released feature vectors: k={f['k']}, "
            f"{f['n_classes']} classes, {f['single_row_classes']} of one row, "
            f"{f['below_k_classes']} below k={f['below_of']} "
            f"({f['below_k_rows']} rows)"
        )
        for column, count in f["below_k_one_value"].items():
            text += f", {count} of them with one {column} value"
        if f.get("attacker"):
            text += f" ({f['attacker']})"
        return text

    def to_dict(self) -> dict[str, Any]:
        notes = []
        if self.missing_quasi_identifiers:
            notes.append(
                "checked on the quasi-identifiers present; missing: "
                + ", ".join(self.missing_quasi_identifiers)
            )
        if not self.sensitive_attribute_present:
            notes.append("sensitive attribute not released in this table")
        if self.feature_classes is not None:
            notes.append(self.describe_feature_classes())
        if self.join_columns and self.sensitive_attribute_present:
            notes.append(
                "sensitive-attribute models checked over "
                + ", ".join((*self.quasi_identifiers, *self.join_columns))
                + ": the classes an attacker sees after joining the released "
                "tables on " + ", ".join(self.join_columns)
            )
        content = {
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
        if self.feature_classes is not None:
            content["feature_classes"] = {
                k: json_value(v) if not isinstance(v, dict) else dict(v)
                for k, v in self.feature_classes.items()
            }
        return content


@dataclass(frozen=True)
class Certificate:
    """The verification certificate of a release (``verification.json``).

    Attributes
    ----------
    passed : bool
        Every model holds on every table, and no column released as is
        exceeds a pass-through limit unless the data owner accepted it.
    requirement : Requirement
    tables : tuple of TableVerification
        Sorted by table name.
    input_sha256 : str or None
        Hash of the input the release was made from, as given by the caller.
    verifier : dict
        ``{"name": "ppdm.verify", "version": ppdm.__version__}``.
    passthrough : tuple of PassthroughResult, or None
        The pass-through check of the columns released as is (by table name,
        then in the policy's order); None when no policy was given (not
        checked).
    release_results : tuple of PrivacyResult
        The requirement's release models (:attr:`Requirement.release_models`),
        each checked on all released tables together; empty when it has none.
    """

    passed: bool
    requirement: Requirement
    tables: tuple[TableVerification, ...]
    input_sha256: str | None = None
    verifier: dict[str, str] = field(
        default_factory=lambda: {"name": VERIFIER_NAME, "version": ppdm.__version__}
    )
    passthrough: tuple[PassthroughResult, ...] | None = None
    release_results: tuple[PrivacyResult, ...] = ()
    series: tuple[Any, ...] | None = None
    composition: Any = None
    #: :class:`ppdm.verify.differential.DifferentialPrivacyCheck` of a
    #: differentially private release; None for the others.
    differential_privacy: Any = None

    def with_differential_privacy(self, check: Any) -> Certificate:
        """This certificate with the differential privacy entry ``check`` (or
        unchanged for None); a failed check fails the certificate."""
        if check is None:
            return self
        return replace(
            self, differential_privacy=check, passed=self.passed and check.passed
        )

    def with_series(
        self, results: Sequence[Any], composition: Any = None
    ) -> Certificate:
        """This certificate with the series checks against earlier releases.

        ``results`` are :class:`ppdm.verify.differencing.SeriesCheck` objects
        (differencing); ``composition`` a
        :class:`ppdm.verify.composition.CompositionReport`. A leak the data owner
        did not accept fails the certificate.
        """
        results = tuple(results)
        passed = all(r.passed for r in results)
        if composition is not None:
            passed = passed and composition.passed
        return replace(
            self,
            series=results,
            composition=composition,
            passed=self.passed and passed,
        )

    @property
    def release_sha256(self) -> dict[str, str | None]:
        """Hash of every released file, by table name."""
        return {t.name: t.sha256 for t in self.tables}

    def table(self, name: str) -> TableVerification:
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(name)

    def checks(self) -> tuple[tuple[str, CheckResult], ...]:
        """Every registered check's result, with what it was checked on.

        Each table's class models (``where`` is the table's name), the
        release models and the differential privacy entry (``"all tables
        together"``), the series checks against earlier releases and the
        composition check (``"against release <id>"``, or ``"no earlier
        release"`` when none was compared), in that order. Every
        result states its own figures and summary
        (:class:`~ppdm.privacy.base.CheckResult`): readers show these and
        name no model.
        """
        return checks_in(
            self.tables,
            self.release_results,
            self.differential_privacy,
            self.series,
            None if self.composition is None else self.composition.results,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON content: deterministic key order, no timestamps.

        ``release`` (the release models' results) appears only when the
        requirement has release models, so other certificates keep their bytes.
        """
        content = {
            "verifier": dict(self.verifier),
            "passed": bool(self.passed),
            "requirement": self.requirement.to_dict(),
            "input_sha256": self.input_sha256,
            "release_sha256": self.release_sha256,
            "rows": {t.name: int(t.rows) for t in self.tables},
            "tables": {t.name: t.to_dict() for t in self.tables},
            "passthrough": (
                None
                if self.passthrough is None
                else [r.to_dict() for r in self.passthrough]
            ),
        }
        if self.release_results:
            content["release"] = [r.to_dict() for r in self.release_results]
        if self.differential_privacy is not None:
            content["differential_privacy"] = self.differential_privacy.to_dict()
        if self.series is not None:
            content["series"] = {
                "checked_against": sorted({r.against for r in self.series}),
                "results": [r.to_dict() for r in self.series],
            }
            if self.composition is not None:
                content["series"]["composition"] = self.composition.to_dict()
        return content

    def to_json(self) -> str:
        """:meth:`to_dict` as the text of ``verification.json`` (ends with a newline)."""
        return canonical_json(self.to_dict()).decode("utf-8")

    def summary(self) -> str:
        """Human text: one line per failed model or column, or one PASSED line.

        A column released as is that exceeds a pass-through limit is named
        with its figures and what the data owner can do about it; when
        passed, the columns released as is are listed, the accepted ones
        flagged.
        """
        if self.passed:
            parts = []
            for t in self.tables:
                achieved = ", ".join(
                    [r.summary() for r in t.results]
                    + ([t.describe_feature_classes()] if t.feature_classes else [])
                )
                parts.append(f"{t.name} ({t.rows} rows): {achieved}")
            parts.extend(
                f"all tables together: {r.summary()}" for r in self.release_results
            )
            if self.differential_privacy is not None:
                parts.append(self.differential_privacy.summary())
            text = "PASSED: " + "; ".join(parts)
            for r in self.series or ():
                text += "; " + r.summary()
            if self.composition is not None:
                text += "".join("; " + line for line in self.composition.describe())
            if self.passthrough:
                text += "; released as is: " + ", ".join(
                    f"{r.column} in {r.table}"
                    + (
                        " (acknowledged by the data owner although it looks like "
                        "an identifier)"
                        if r.identifier
                        else " (accepted by the data owner)"
                        if r.flagged
                        else ""
                    )
                    for r in self.passthrough
                )
            return text
        # Failures in the order the checks ran: each table's models, the
        # release models, the series, differential privacy, composition.
        lines = [
            f"FAILED: {r.summary(f' in {t.name}')}"
            for t in self.tables
            for r in t.results
            if not r.passed
        ]
        lines.extend(
            f"FAILED: {r.summary(' by the released tables together')}"
            for r in self.release_results
            if not r.passed
        )
        for r in (*(self.series or ()), self.differential_privacy):
            if r is not None and not r.passed:
                lines.append(f"FAILED: {r.summary()}")
        if self.composition is not None and not self.composition.passed:
            lines.extend(
                f"FAILED: {r.summary()}"
                for r in self.composition.results
                if not r.passed
            )
            if not self.composition.consistent:
                lines.append(f"FAILED: {self.composition.describe()[-1]}")
        for r in self.passthrough or ():
            if not r.passed:
                lines.append(f"FAILED: {r.describe()}; {r.fix}")
        return "\n".join(lines)

    def raise_for_failure(self) -> None:
        """Raise :class:`~ppdm.exceptions.VerificationError` unless passed."""
        if not self.passed:
            raise VerificationError(self.summary(), self.to_dict())


#: Where the checks of the released tables together ran, in :meth:`Certificate.checks`.
ALL_TABLES = "all tables together"


def checks_in(
    tables: Iterable[TableVerification],
    release_results: Iterable[CheckResult],
    differential_privacy: CheckResult | None,
    series: Iterable[CheckResult] | None,
    composition: Iterable[CheckResult] | None,
) -> tuple[tuple[str, CheckResult], ...]:
    """``(where, result)`` of every check, in :meth:`Certificate.checks`' order."""
    found: list[tuple[str, CheckResult]] = [
        (t.name, r) for t in tables for r in t.results
    ]
    found += [(ALL_TABLES, r) for r in release_results]
    if differential_privacy is not None:
        found.append((ALL_TABLES, differential_privacy))
    for r in (*(series or ()), *(composition or ())):
        against = getattr(r, "against", ())
        ids = [against] if isinstance(against, str) else list(against)
        where = f"against release {', '.join(ids)}" if ids else "no earlier release"
        found.append((where, r))
    return tuple(found)


def checks_of(content: Mapping[str, Any]) -> tuple[tuple[str, CheckResult], ...]:
    """:meth:`Certificate.checks` of a certificate read back (``verification.json``).

    The results are rebuilt from their JSON entries, so a reader of the file
    (the run log, the UI) shows each check's own figures and summary.
    """
    from ppdm.verify.composition import CompositionCheck
    from ppdm.verify.differencing import SeriesCheck
    from ppdm.verify.differential import DifferentialPrivacyCheck
    from ppdm.verify.same_rows import SameRowsCheck

    tables = [
        _ReadTable(name, tuple(PrivacyResult.from_dict(m) for m in table["models"]))
        for name, table in sorted(content.get("tables", {}).items())
    ]
    release = [
        PrivacyResult.from_dict(r, "release") for r in content.get("release", ())
    ]
    dp = content.get("differential_privacy")
    series = content.get("series") or {}
    composition = (series.get("composition") or {}).get("results", ())
    return checks_in(
        tables,  # type: ignore[arg-type]
        release,
        None if dp is None else DifferentialPrivacyCheck.from_dict(dp),
        [
            SameRowsCheck.from_dict(r)
            if r.get("check") == "same-source"
            else SeriesCheck.from_dict(r)
            for r in series.get("results", ())
        ],
        [CompositionCheck.from_dict(r) for r in composition],
    )


@dataclass(frozen=True)
class _ReadTable:
    """A table's name and class-model results, as a certificate file holds them."""

    name: str
    results: tuple[PrivacyResult, ...]


def _verify_table(
    name: str,
    table: pd.DataFrame,
    requirement: Requirement,
    options: VerifyOptions,
    sha256: str | None,
    others: Sequence[Sequence[str]] = (),
) -> TableVerification:
    """One table; ``others``: the columns of every other released table."""
    # A feature selection release publishes 0/1 columns ``<q>=<value>``:
    # its classes are over those columns as released, not over none.
    qis = quasi_identifier_columns(table.columns, requirement.quasi_identifiers)
    partition = ClassPartition.of(table, qis)
    join = join_columns(table.columns, others, qis, requirement)
    sensitive = ClassPartition.of(table, (*qis, *join)) if join else None
    return verify_partition(
        name,
        partition,
        table.columns,
        requirement,
        options,
        sha256=sha256,
        sensitive_partition=sensitive,
    )


def join_columns(
    columns: Sequence[str],
    others: Sequence[Sequence[str]],
    quasi_identifiers: Sequence[str],
    requirement: Requirement,
) -> tuple[str, ...]:
    """Columns of a table holding the sensitive attribute that another table shares.

    Projections released together (DMPD) can be joined on the columns they
    share (the target): an attacker then sees each row of this table in the
    class of its quasi-identifiers *and* those columns, whatever the other
    table adds, since the sensitive values of a join class are those of that
    class. Empty when the table holds no sensitive attribute or shares nothing.
    """
    sensitive = set(requirement.sensitive_attributes)
    if not sensitive & {str(c) for c in columns}:
        return ()
    shared = {str(c) for other in others for c in other}
    return tuple(
        str(c)
        for c in columns
        if str(c) in shared and c not in quasi_identifiers and str(c) not in sensitive
    )


def verify_partition(
    name: str,
    partition: ClassPartition,
    columns: Sequence[str],
    requirement: Requirement,
    options: VerifyOptions = VerifyOptions(),
    *,
    sha256: str | None = None,
    sensitive_partition: ClassPartition | None = None,
) -> TableVerification:
    """Verify one table given its equivalence classes.

    The in-memory and the out-of-core (:mod:`ppdm.verify.out_of_core`) paths both end
    here, so they compute every figure with the same code. ``columns`` are the
    table's column names; ``partition`` is over the requirement's
    quasi-identifiers that are among them. ``sensitive_partition``, when
    given, is over those plus the columns the table shares with other
    released tables (:func:`join_columns`): the sensitive-attribute models
    and measures are checked on it. Of ``options`` the original (the risk's
    population) and the covers are read here; ``sha256`` is the table's own.
    """
    qis = partition.quasi_identifiers
    features = [q for q in qis if q not in requirement.quasi_identifiers]
    missing = tuple(
        q
        for q in requirement.quasi_identifiers
        if q not in columns and not any(f.startswith(f"{q}=") for f in features)
    )
    present = set(columns)
    joined = sensitive_partition if sensitive_partition is not None else partition
    results = [
        (
            model.check(joined, joined.quasi_identifiers)
            if model.uses_sensitive_attribute
            else model.check(partition, qis)
        )
        for model in requirement.class_models
        if not model.uses_sensitive_attribute or model.sensitive_attribute in present
    ]
    sa = requirement.sensitive_attribute
    has_sa = sa is not None and sa in present
    # A table holding no quasi-identifier is one class; its size is not an
    # achieved k unless k-anonymity is asked for (a release judged by a
    # release model only, such as containment, would otherwise show k = rows).
    measures: dict[str, Any] = {}
    if qis or "k-anonymity" in requirement.model_names:
        measures["k"] = _achieved(results, "k-anonymity", partition)
    if has_sa and partition.n_classes:
        assert sa is not None
        counts = joined.sensitive(sa)
        c = next((float(m.c) for m in requirement.models if hasattr(m, "c")), DEFAULT_C)
        measures["distinct_l"] = int(counts.distinct_per_class().min())
        measures["entropy_l"] = float(counts.entropy_l_per_class().min())
        measures["recursive_c"] = float(c)
        measures["recursive_l"] = int(counts.recursive_l_per_class(c).min())
        # Achieved t whether or not a t is required: an auditor asks for it
        # next to l, and it costs one pass over the (class, value) counts.
        measures["t"] = float(counts.emd_per_class().max())
        measures["t_ordered"] = counts.ranks is not None
    risk = reidentification_risk(
        partition,
        qis,
        population=options.original,
        suppression_marker=requirement.suppression_marker,
        covers=options.covers,
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
        feature_classes=(
            _feature_classes(partition, columns, requirement) if features else None
        ),
        join_columns=(
            tuple(q for q in joined.quasi_identifiers if q not in set(qis))
            if sensitive_partition is not None
            else ()
        ),
    )


def _feature_classes(
    partition: ClassPartition, columns: Sequence[str], requirement: Requirement
) -> dict[str, Any]:
    """Exact-class figures of a table of 0/1 features (see TableVerification)."""
    sizes = partition.sizes
    containment = [
        int(m.k)
        for m in requirement.release_models
        if m.name == KAnonymityByContainment.name
    ]
    k = max([requirement.k, *containment])
    below = sizes < k
    homogeneous: dict[str, int] = {}
    for column in columns:
        if column in partition.quasi_identifiers or not partition.n_classes:
            continue
        try:
            distinct = partition.sensitive(str(column)).distinct_per_class()
        except InvalidParameterError:  # aggregated partition: no rows to read
            continue
        homogeneous[str(column)] = int((below & (distinct == 1)).sum())
    return {
        "k": int(sizes.min()) if partition.n_classes else 0,
        "n_classes": int(partition.n_classes),
        "single_row_classes": int((sizes == 1).sum()),
        "below_of": int(k),
        "below_k_classes": int(below.sum()),
        "below_k_rows": int(sizes[below].sum()),
        "below_k_one_value": homogeneous,
        "attacker": ATTACKER if containment else None,
    }


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
    passthrough: Sequence[PassthroughResult] | None = None,
    release_results: Sequence[PrivacyResult] = (),
) -> Certificate:
    """Assemble the certificate of verified tables (sorted by name).

    ``passthrough`` are the pass-through results of every table (None: not
    checked); they are ordered by table name, keeping each table's order.
    ``release_results`` are the release models' results
    (:func:`check_release_models`).
    """
    if not checked:
        raise InvalidParameterError("nothing to verify: no released tables given")
    tables = tuple(sorted(checked, key=lambda t: t.name))
    columns = None
    if passthrough is not None:
        columns = tuple(sorted(passthrough, key=lambda r: r.table or ""))
    return Certificate(
        passed=all(t.passed for t in tables)
        and all(r.passed for r in columns or ())
        and all(r.passed for r in release_results),
        requirement=requirement,
        tables=tables,
        input_sha256=input_sha256,
        passthrough=columns,
        release_results=tuple(release_results),
    )


def check_release_models(
    tables: Mapping[str, pd.DataFrame], requirement: Requirement
) -> tuple[PrivacyResult, ...]:
    """Every release model of ``requirement`` checked on all ``tables`` at once."""
    if not requirement.release_models:
        return ()
    ordered = {name: tables[name] for name in sorted(tables)}
    # Each result carries its model's kind, whoever built it.
    return tuple(
        replace(
            model.check_release(ordered, requirement.quasi_identifiers),  # type: ignore[attr-defined]
            kind=model.kind,
        )
        for model in requirement.release_models
    )


def verify_tables(
    tables: Mapping[str, pd.DataFrame],
    requirement: Requirement,
    options: VerifyOptions = VerifyOptions(),
) -> Certificate:
    """Verify in-memory released tables (cells as released: text).

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        Table name -> released table.
    requirement : Requirement
    options : VerifyOptions, optional
        The original table, the input's hash, the hierarchy covers and the
        pass-through policy (columns released as is, checked by
        :func:`ppdm.verify.passthrough.check_passthrough` in every table that
        carries them); none by default.

    Returns
    -------
    Certificate
    """
    return _verify_each(
        ((name, table, None) for name, table in tables.items()),
        {name: [str(c) for c in table.columns] for name, table in tables.items()},
        requirement,
        options,
    )


def _verify_each(
    read: Iterable[tuple[str, pd.DataFrame, str | None]],
    headers: Mapping[str, Sequence[str]],
    requirement: Requirement,
    options: VerifyOptions,
) -> Certificate:
    """The certificate of tables given one at a time, ``(name, table, sha256
    of its file)``; ``headers`` are every table's columns (by name).

    Each table is verified and dropped, unless the requirement has release
    models, which read every table at once.
    """
    checked = []
    passthrough = options.passthrough
    columns: list[PassthroughResult] | None = None if passthrough is None else []
    kept: dict[str, pd.DataFrame] = {}
    for name, table, sha256 in read:
        if requirement.release_models:
            kept[name] = table
        others = [h for n, h in headers.items() if n != name]
        checked.append(_verify_table(name, table, requirement, options, sha256, others))
        if passthrough is not None and columns is not None:
            columns.extend(
                check_passthrough(
                    table,
                    requirement,
                    passthrough,
                    options.original,
                    options.covers,
                    table=name,
                )
            )
    return certificate_of(
        checked,
        requirement,
        options.input_sha256,
        columns,
        check_release_models(kept, requirement),
    )


def verify_files(
    files: Mapping[str, ReleasedFiles],
    requirement: Requirement,
    options: VerifyOptions = VerifyOptions(),
) -> Certificate:
    """Verify released CSV files as they will be published.

    Each file is read with :func:`read_released_table` and hashed (sha256);
    every privacy model of ``requirement`` is checked on every table. A table
    lacking some quasi-identifiers is checked on those it has, and a table
    without the sensitive attribute only on k; the certificate says so.

    Parameters
    ----------
    files : mapping of str to released files
        Table name -> released CSV file, or the Parquet parts of the table
        (anything :func:`ppdm.release.data_files.read_released_table` reads).
    requirement : Requirement
    options : VerifyOptions, optional
        The original table, the input's hash, the hierarchy covers and the
        pass-through policy (:class:`VerifyOptions`); none by default.

    Returns
    -------
    Certificate

    Raises
    ------
    SourceError
        A file cannot be read.
    InvalidParameterError
        A column of ``passthrough`` is a quasi-identifier or sensitive
        attribute.
    """
    # One file read at a time, each hashed after it was read.
    return _verify_each(
        (
            (name, read_released_table(path), released_sha256(path))
            for name, path in files.items()
        ),
        {name: released_header(path) for name, path in files.items()},
        requirement,
        options,
    )
