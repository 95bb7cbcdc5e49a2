"""The numbers of the utility report: the ``utility.json`` content.

:func:`build_utility` gathers information loss per released table, hold-out
accuracies before and after anonymization, the protocol, suppressed cells,
lost records, every column's role and how it leaves, and the algorithm's
Pareto front when it has one, as a JSON-serialisable dict;
:func:`release_record` the facts that make the page a record of what was
released. Rendering is :mod:`ppdm.utility.report_html`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ppdm.model import AnonymizationSpec
from ppdm.privacy._containment import quasi_identifier_columns
from ppdm.privacy.measures import class_sizes
from ppdm.utility.loss import _json_ready, information_loss, release_loss
from ppdm.utility.report_text import share as _share
from ppdm.verify.figures import check_figures

__all__ = ["build_utility", "column_releases", "release_record", "release_verdict"]


def _class_size_distribution(table: pd.DataFrame, qi: list[str]) -> list[list[int]]:
    sizes = class_sizes(table, qi)
    values, counts = np.unique(sizes, return_counts=True)
    return [[int(v), int(c)] for v, c in zip(values, counts)]


def build_utility(
    original: pd.DataFrame,
    released_tables: Mapping[str, pd.DataFrame],
    spec: AnonymizationSpec,
    holdout: Mapping[str, Any] | None,
    evidence: Mapping[str, Any],
    *,
    risk: Mapping[str, Mapping[str, Any]] | None = None,
    roles: Mapping[str, str] | None = None,
    passthrough: Sequence[Mapping[str, Any]] | None = None,
    pseudonymized: Sequence[str] = (),
) -> dict[str, Any]:
    """The ``utility.json`` content of a release.

    Parameters
    ----------
    original : pandas.DataFrame
        The anonymizer's input table.
    released_tables : mapping of str to pandas.DataFrame
        The release's tables by name (one, or several projections).
    spec : AnonymizationSpec
    holdout : dict or None
        The result of :func:`ppdm.utility.holdout_utility`.
    evidence : mapping
        The algorithm's evidence; its ``"pareto_front"`` (a list of dicts with
        ``"node"``/``"levels"``, metric values and a ``"chosen"`` flag), when
        present, is carried into the report.
    risk : mapping of str to dict, optional
        Re-identification risk per released table, as the verifier measured
        it (the ``risk`` of each table in ``verification.json``); shown so the
        owner sees the privacy side next to the utility side.
    roles : mapping of str to str, optional
        Column -> role (``identifying``, ``quasi_identifier``, ``sensitive``,
        ``insensitive``, ``target``, ``weight``, ``drop``), e.g. the
        configuration's ``columns``. Without it, roles are read from ``spec``
        (quasi-identifiers, sensitive attributes, target) and other columns
        have none.
    passthrough : sequence of dict, optional
        The certificate's ``passthrough`` section: the verifier's figures for
        every column released as is (see :mod:`ppdm.verify.passthrough`).
    pseudonymized : sequence of str, optional
        Identifying columns released as keyed pseudonyms (not in
        ``released_tables``: the learners never see them).

    Returns
    -------
    dict
        ``spec``, ``tables`` (per table: :func:`ppdm.utility.loss.information_loss`
        plus ``class_size_distribution`` as ``[size, n_classes]`` pairs; for a
        table of 0/1 features ``<q>=<value>``, ``class_columns`` names them and
        the class figures are over them as released),
        ``release`` (the whole release, :func:`ppdm.utility.loss.release_loss`:
        every quasi-identifier charged, withheld ones included),
        ``suppressed_cells`` and ``lost_records`` over all tables, ``holdout``,
        ``protocol``, ``pareto_front``, ``risk``, ``columns`` (every column:
        its role, how it leaves and the tables that carry it) and
        ``passthrough``. JSON-serialisable.
    """
    tables: dict[str, Any] = {}
    for name, released in released_tables.items():
        loss = information_loss(original, released, spec)
        qi = list(quasi_identifier_columns(released.columns, spec.quasi_identifiers))
        if qi != loss["quasi_identifiers"]:
            # A feature selection release: its classes are those of the
            # released 0/1 columns as they are (what an attacker who knows a
            # person's quasi-identifiers finds), as the certificate counts them.
            sizes = class_sizes(released, qi)
            loss["class_columns"] = qi
            loss["equivalence_classes"] = len(sizes)
            loss["min_class_size"] = int(sizes.min()) if len(sizes) else 0
            loss["average_class_size"] = (
                float(len(released) / len(sizes)) if len(sizes) else 0.0
            )
        loss["class_size_distribution"] = (
            _class_size_distribution(released, qi) if qi else []
        )
        tables[str(name)] = loss
    pareto = evidence.get("pareto_front") if evidence else None
    utility = {
        "spec": {
            "requirement": spec.requirement.to_dict(),
            "target": spec.target,
            "suppression_limit": float(spec.suppression_limit),
        },
        "rows_original": len(original),
        "tables": tables,
        "release": release_loss(tables, spec.quasi_identifiers, len(original)),
        "suppressed_cells": int(
            sum(t["suppressed_cells"]["count"] for t in tables.values())
        ),
        "lost_records": int(
            max((t["lost_records"] for t in tables.values()), default=0)
        ),
        "holdout": dict(holdout) if holdout is not None else None,
        "protocol": holdout.get("protocol") if holdout is not None else None,
        "pareto_front": list(pareto) if pareto is not None else None,
        "risk": {str(name): dict(r) for name, r in risk.items()} if risk else None,
        "columns": column_releases(
            original, released_tables, spec, roles, pseudonymized=pseudonymized
        ),
        "passthrough": (
            [dict(r) for r in passthrough] if passthrough is not None else None
        ),
        "verdict": release_verdict(
            original, released_tables, spec, pseudonymized=pseudonymized
        ),
    }
    return _json_ready(utility)


def _survived(column: pd.Series, marker: str) -> int:
    """Cells of a released column that still say something (not suppressed,
    not generalized to the hierarchy's root ``*``, not missing)."""
    text = column.astype("string")
    return int((text.notna() & ~text.isin([marker, "*"])).sum())


def release_verdict(
    original: pd.DataFrame,
    released_tables: Mapping[str, pd.DataFrame],
    spec: AnonymizationSpec,
    *,
    pseudonymized: Sequence[str] = (),
) -> dict[str, Any]:
    """What an analyst gets: the share of each quasi-identifier that survived.

    A quasi-identifier survives in a row when the release keeps its cell
    neither suppressed nor generalized to ``*``; its share is over the
    original rows (a record the release dropped kept nothing) and taken in
    the table that keeps it best. A quasi-identifier released as 0/1
    features (feature selection) counts every released row of those
    features.

    Returns
    -------
    dict
        ``quasi_identifiers`` (``{name: share in [0, 1]}``), ``dropped``
        (columns of ``original`` that no table carries), ``released``
        (columns carried by some table), ``warnings`` (sentences: every
        quasi-identifier suppressed; only the target and the sensitive
        attribute released) and ``line`` (all of it in one sentence).
    """
    n = len(original)
    marker = spec.suppression_marker
    shares: dict[str, float] = {}
    for q in spec.quasi_identifiers:
        best = 0
        for table in released_tables.values():
            if q in table.columns:
                best = max(best, _survived(table[q], marker))
            elif any(str(c).startswith(f"{q}=") for c in table.columns):
                best = max(best, len(table))
        shares[q] = best / n if n else 0.0
    released = list(
        dict.fromkeys(
            str(c)
            for table in released_tables.values()
            for c in table.columns
            if str(c) not in pseudonymized
        )
    )
    dropped = [
        str(c)
        for c in original.columns
        if str(c) not in released
        and str(c) not in pseudonymized
        and not any(r.startswith(f"{c}=") for r in released)
    ]
    warnings = []
    if shares and all(share == 0.0 for share in shares.values()):
        warnings.append(
            "every quasi-identifier is suppressed or withheld: the release tells "
            "an analyst nothing about them, and an accuracy 'difference' near "
            "zero here means both models fell back to the class frequencies, "
            "not that nothing was lost"
        )
    kept = {
        spec.target,
        spec.sensitive_attribute,
        *spec.requirement.sensitive_attributes,
    } - {None}
    if released and set(released) <= kept:
        warnings.append(
            "the release holds only the target and the sensitive attribute ("
            + ", ".join(released)
            + "): no column to predict from"
        )
    line = (
        "Quasi-identifiers surviving (not suppressed, not generalized to *): "
        + (", ".join(f"{q} {_share(share)}" for q, share in shares.items()) or "none")
        + ". Dropped columns: "
        + (", ".join(dropped) or "none")
        + "."
        + "".join(f" Warning: {w}." for w in warnings)
    )
    return {
        "quasi_identifiers": shares,
        "dropped": dropped,
        "released": released,
        "warnings": warnings,
        "line": line,
    }


def _leaves(role: str | None, released: bool) -> str:
    """How a column of ``role`` leaves the building, in words."""
    if role == "quasi_identifier":
        if released:
            return "generalized or suppressed (quasi-identifier)"
        return "withheld (a quasi-identifier no table carries)"
    if not released:
        return "dropped (never released)"
    if role == "identifying":
        return "pseudonymized (keyed HMAC-SHA256)"
    if role == "sensitive":
        return "released as is, protected by the privacy models (sensitive)"
    if role in ("insensitive", "target", "weight"):
        return f"released as is on purpose ({role})"
    if role is None:
        return "released as is (no role given)"
    return f"released as is (role {role})"


def column_releases(
    original: pd.DataFrame,
    released_tables: Mapping[str, pd.DataFrame],
    spec: AnonymizationSpec,
    roles: Mapping[str, str] | None = None,
    *,
    pseudonymized: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Every column, its role and how it leaves: the report's column table.

    Columns come in the order of ``roles``, then those released or in
    ``original`` that ``roles`` does not name. Whether a column is released
    is read from the released tables themselves, except ``pseudonymized``
    identifiers, which the report's learners are not given (a pseudonym is a
    row key, not a feature) and which every released table carries.

    Returns
    -------
    list of dict
        ``column``, ``role`` (None when unknown), ``released_as`` (words) and
        ``tables`` (the released tables that carry it).
    """
    known: dict[str, str | None] = {}
    if roles is not None:
        known.update(roles)
    else:
        for q in spec.quasi_identifiers:
            known[q] = "quasi_identifier"
        for a in spec.requirement.sensitive_attributes:
            known[a] = "sensitive"
        if spec.target is not None:
            known[spec.target] = "target"
    order = list(known)
    for frame in (*released_tables.values(), original):
        order += [str(c) for c in frame.columns if c not in known and c not in order]
    # Feature selection releases a quasi-identifier as 0/1 indicator columns
    # named "<quasi-identifier>=<value>", one per selected value.
    feature_of = {
        column: column.split("=", 1)[0]
        for column in order
        if column not in known
        and "=" in column
        and known.get(column.split("=", 1)[0]) == "quasi_identifier"
    }
    out = []
    for column in dict.fromkeys(order):
        tables = [str(n) for n, t in released_tables.items() if column in t.columns]
        if column in pseudonymized:
            tables = [str(n) for n in released_tables]
        role = known.get(column)
        released_as = _leaves(role, bool(tables))
        if column in feature_of:
            role = "quasi_identifier"
            released_as = f"0/1 feature of quasi-identifier {feature_of[column]}"
        elif not tables and column in feature_of.values():
            released_as = "released only as the 0/1 features of its selected values"
        out.append(
            {
                "column": column,
                "role": role,
                "released_as": released_as,
                "tables": tables,
            }
        )
    return out


def release_record(
    certificate: Mapping[str, Any],
    data_files: Mapping[str, str],
    *,
    dataset: str,
    algorithm: str,
    code_version: str,
    library_versions: Mapping[str, str],
    sample: Mapping[str, pd.DataFrame] | None = None,
) -> dict[str, Any]:
    """The facts that make ``report.html`` a record of what was released.

    Only what leaves the building: the released files' hashes, a few released
    rows, the verifier's verdict and the source's hash (never its rows). The
    release id, date, audit sequence number and key id are added when the
    release is published (:func:`ppdm.steps.publish.publish_step` renders the
    published page).
    """
    series = certificate.get("series")
    return {
        "dataset": dataset,
        "algorithm": algorithm,
        "verdict": "passed" if certificate.get("passed") else "failed",
        "requirement": certificate.get("requirement"),
        "source_sha256": certificate.get("input_sha256"),
        "data_files": dict(sorted(data_files.items())),
        "code_version": code_version,
        "library_versions": dict(sorted(library_versions.items())),
        "series": series,
        # Every check with its own figures, as the other displays show them.
        "checks": [row.to_dict() for row in check_figures(certificate)],
        "sample": {
            name: frame.head(5).astype(str).to_dict(orient="split")
            for name, frame in sorted((sample or {}).items())
        },
    }
