"""A trial release at ``ppdm init``: would the columns released as is pass the verifier?

``ppdm init`` guesses a role for every column. A column guessed
``insensitive`` is released as is, and the verifier's pass-through check
(:mod:`ppdm.verify.passthrough`) stops a run when such a column, added to the
released quasi-identifiers, leaves a class below k (with the default limit of
0 %, nearly any column of more than a couple of values does once classes are
near k). A first ``ppdm run`` that fails on the guesses of ``ppdm init`` is
the product failing its user, so init measures before it writes:

1. the table is validated against the schema init proposes (the rows a
   release would quarantine are left out, as the validate step leaves them
   out);
2. it is anonymized with the algorithm and requirement init writes
   (Mondrian, k = 5, l = 2 over a sensitive column): Mondrian cuts classes
   down to near k, the finest release any algorithm makes of the table, so
   a column that passes here passes with the coarser ones too in all but
   rare cases;
3. the candidate table goes through a CSV file and the verifier's reader,
   and every column released as is is measured by the verifier's own
   :func:`~ppdm.verify.passthrough.check_passthrough`, with the same
   limits.

A column that fails is proposed as a ``quasi_identifier`` (generalized,
still useful to an analyst) when it has few values and there is room (at
most eight quasi-identifiers, the columns that tell most of the target
first), else ``drop``; a copy of the target is dropped; with the
quasi-identifiers the owner named (which are complete) it is dropped.
The trial runs again with the new roles (adding a quasi-identifier changes
the classes), up to three times; a column still failing then is dropped.
Nothing of the trial is written anywhere but a temporary directory, removed
at the end.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ppdm.algorithms import get_algorithm
from ppdm.exceptions import AnonymizationError
from ppdm.model import AnonymizationSpec
from ppdm.prepare.contract import build_schema
from ppdm.prepare.profile import HierarchyPlan, TableProfile
from ppdm.prepare.validation import validate_table
from ppdm.release.data_files import read_released_table
from ppdm.utility.loss import covers_from_hierarchies
from ppdm.verify.passthrough import (
    PassthroughPolicy,
    PassthroughResult,
    check_passthrough,
)

__all__ = ["TrialOutcome", "passthrough_trial"]

#: Rounds of the trial (each may turn failing columns into quasi-identifiers).
ROUNDS = 3
#: A failing column with at most this many values becomes a quasi-identifier.
_QI_MAX_VALUES = 50
#: The most quasi-identifiers the trial leaves (see :func:`_new_roles`).
MAX_QUASI_IDENTIFIERS = 8


@dataclass(frozen=True)
class TrialOutcome:
    """What the trial found.

    Attributes
    ----------
    roles : dict of str to (str, str)
        Column -> (new role, reason) for every column the trial moved.
    results : tuple of PassthroughResult
        The last round's figures of every column still released as is.
    rounds : int
        Trial releases run.
    note : str
        Why the trial could not run ("" when it ran).
    """

    roles: dict[str, tuple[str, str]]
    results: tuple[PassthroughResult, ...]
    rounds: int
    note: str = ""


def passthrough_trial(
    frame: pd.DataFrame,
    profile_of: Callable[[Mapping[str, tuple[str, str]]], TableProfile],
    hierarchies_of: Callable[[TableProfile], Mapping[str, HierarchyPlan]],
    *,
    k: int,
    l: int | None,  # noqa: E741 - the literature's name
    algorithm: str = "mondrian",
    seed: int = 0,
    owner_named_quasi_identifiers: bool = False,
) -> TrialOutcome:
    """Run trial releases until every column released as is passes (or is moved).

    Parameters
    ----------
    frame : pandas.DataFrame
        The source table, as read.
    profile_of : callable
        ``profile_of(overrides)``: the table's profile with the trial's roles
        (column -> (role, reason)) winning over the guesses.
    hierarchies_of : callable
        The hierarchy plans of a profile's quasi-identifiers.
    k, l : int
        The requirement init writes (``l`` None without a sensitive column).
    algorithm : str, default="mondrian"
    seed : int, default=0
    owner_named_quasi_identifiers : bool, default=False
        The owner named the quasi-identifiers: a failing column is dropped,
        never added to them.

    Returns
    -------
    TrialOutcome
    """
    moved: dict[str, tuple[str, str]] = {}
    results: tuple[PassthroughResult, ...] = ()
    for round_ in range(1, ROUNDS + 1):
        profile = profile_of(moved)
        as_is = profile.having("insensitive")
        if not as_is or not profile.quasi_identifiers:
            return TrialOutcome(moved, (), round_ - 1)
        plans = hierarchies_of(profile)
        try:
            results, clean = _one_trial(frame, profile, plans, k, l, algorithm, seed)
        except (AnonymizationError, ValueError, KeyError) as err:
            note = f"the trial release could not run ({_first_line(err)})"
            return TrialOutcome(moved, (), round_ - 1, note)
        failing = [r for r in results if not r.passed]
        if not failing:
            return TrialOutcome(moved, results, round_)
        moved.update(
            _new_roles(
                failing,
                profile,
                clean,
                algorithm,
                drop=round_ == ROUNDS or owner_named_quasi_identifiers,
            )
        )
    return TrialOutcome(moved, results, ROUNDS)


def _one_trial(
    frame: pd.DataFrame,
    profile: TableProfile,
    plans: Mapping[str, HierarchyPlan],
    k: int,
    l: int | None,  # noqa: E741
    algorithm: str,
    seed: int,
) -> tuple[tuple[PassthroughResult, ...], pd.DataFrame]:
    """One trial release: the pass-through figures of its columns released as is,
    and the validated table it released."""
    # The schema's row checks (types, ranges, value sets, formats) decide
    # which rows a release keeps; the suite's row checks repeat them, and its
    # table checks judge the table, not a row: pandera alone is the trial's
    # validator (Great Expectations takes seconds to start).
    schema = build_schema(frame, profile)
    clean = validate_table(
        frame,
        schema,
        {"name": profile.dataset, "expectations": []},
        max_rejected_fraction=1.0,
        source=profile.dataset,
    ).clean
    hierarchies = {
        name: plan.build() for name, plan in plans.items() if plan.kind != "none"
    }
    sensitive = profile.sensitive_attributes
    sensitive_attribute = (
        sensitive[0] if sensitive and l and clean[sensitive[0]].nunique() >= 2 else None
    )
    spec = AnonymizationSpec.of(
        profile.quasi_identifiers,
        sensitive_attribute,
        profile.target,
        k=k,
        l=l if sensitive_attribute else 1,
        hierarchies=hierarchies or None,
    )
    kept = [
        c.name
        for c in profile.columns
        if c.role in ("quasi_identifier", "sensitive", "insensitive", "target")
    ]
    release = get_algorithm(algorithm).anonymize(
        clean[kept], spec, np.random.default_rng(seed)
    )
    policy = PassthroughPolicy(columns=tuple(profile.having("insensitive")))
    covers = covers_from_hierarchies(hierarchies) if hierarchies else None
    results: list[PassthroughResult] = []
    with tempfile.TemporaryDirectory(prefix="ppdm-init-trial-") as scratch:
        for name, table in sorted(release.tables.items()):
            path = Path(scratch) / f"{name}.csv"
            table.to_csv(path, index=False)
            released = read_released_table(path)
            present = [c for c in policy.columns if c in released.columns]
            if not present:
                continue
            results += check_passthrough(
                released,
                spec.requirement,
                PassthroughPolicy(columns=tuple(present)),
                clean,
                covers,
                table=name,
            )
    return tuple(results), clean


def _new_roles(
    failing: list[PassthroughResult],
    profile: TableProfile,
    clean: pd.DataFrame,
    algorithm: str,
    *,
    drop: bool,
) -> dict[str, tuple[str, str]]:
    """A role for every failing column: generalized where it is worth it, else dropped.

    Every quasi-identifier multiplies the combinations a class must share, so
    each costs rows and detail of all the others; past
    :data:`MAX_QUASI_IDENTIFIERS` the lattice algorithms have too many
    generalizations to search. The failing columns of few values are ranked
    by what they tell of the target (mutual information, the analyst's
    reason to keep a column) and become quasi-identifiers while there is
    room; a copy of the target (each determines the other) is dropped, since
    it would only repeat the label.
    """
    target = profile.target
    room = MAX_QUASI_IDENTIFIERS - len(profile.quasi_identifiers)
    ranked: list[tuple[float, str]] = []
    roles: dict[str, tuple[str, str]] = {}
    for result in failing:
        column = profile[result.column]
        failed = (
            f"{column.distinct:,} distinct values; released as is it failed the "
            f"pass-through check of a trial release ({algorithm}, k={result.k}): "
            + _figures(result)
        )
        if target is not None and _copies(clean, column.name, target):
            roles[column.name] = ("drop", f"{failed}; a copy of the target: dropped")
        elif drop or column.distinct > _QI_MAX_VALUES:
            roles[column.name] = (
                "drop",
                f"{failed}: dropped (make it a quasi_identifier to release it "
                "generalized)",
            )
        else:
            score = _information(clean, column.name, target)
            ranked.append((-score, column.name))
            roles[column.name] = ("quasi_identifier", f"{failed}: generalized instead")
    for position, (_, name) in enumerate(sorted(ranked)):
        if position >= room:
            reason = roles[name][1].replace(": generalized instead", "")
            roles[name] = (
                "drop",
                f"{reason}: dropped, as {MAX_QUASI_IDENTIFIERS} quasi-identifiers are "
                "the most a release keeps useful (it tells less of the target than "
                "those kept; make it a quasi_identifier in place of another)",
            )
    return roles


def _figures(result: PassthroughResult) -> str:
    """The verifier's sentence of a failing column, without its name or a clause that passed."""
    parts = result.describe().split(": ", 1)[-1].split("; ")
    return "; ".join(
        [parts[0], *(p for p in parts[1:] if p.startswith("it reveals the original"))]
    )


def _copies(clean: pd.DataFrame, column: str, target: str) -> bool:
    """Whether ``column`` and ``target`` determine each other (one is a relabelling)."""
    pair = clean[[column, target]].astype("string").fillna("\0")
    return bool(
        (pair.groupby(column)[target].nunique() == 1).all()
        and (pair.groupby(target)[column].nunique() == 1).all()
    )


def _information(clean: pd.DataFrame, column: str, target: str | None) -> float:
    """Mutual information of ``column`` with the target (0 without one)."""
    if target is None:
        return 0.0
    from sklearn.metrics import mutual_info_score

    codes = [
        pd.factorize(clean[c].astype("string").fillna("\0"))[0]
        for c in (column, target)
    ]
    return float(mutual_info_score(*codes))


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__
