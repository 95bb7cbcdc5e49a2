"""Test-only algorithms, registered by a fixture and never by the package.

:class:`TwoProjections` releases two projections of a table, as feature-set
partitioning does, so the contract suite and the whole-flow tests have an
algorithm with ``releases="projections"`` however the package's registry
changes. Register it for one test with the ``toy_algorithms`` fixture of
``tests/conftest.py`` (or :func:`register_toy_algorithms` and a
``monkeypatch``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest

from ppdm.algorithms import ALGORITHMS, Anonymizer
from ppdm.exceptions import InfeasibleConstraintError, InvalidParameterError
from ppdm.model import AnonymizationSpec, Release
from ppdm.params import Options
from ppdm.privacy import Requirement
from ppdm.privacy.evaluation import EncodedSensitive
from ppdm.privacy.measures import equivalence_classes

__all__ = ["TOY_ALGORITHMS", "TwoProjections", "register_toy_algorithms"]


class TwoProjections(Anonymizer):
    """Two projections, each k-anonymous (and l-diverse) by suppressing classes.

    The quasi-identifiers are split into two halves (the first ``ceil(n/2)``
    and the rest, or alternately with ``split="alternate"``); each projection
    holds one half, the sensitive attribute (when the requirement has one) and
    the target. In each projection the classes over its half (over its half
    and the target when the requirement protects a sensitive attribute: the
    projections can be joined on the target) that the requirement refuses
    are suppressed (every quasi-identifier of the half
    becomes the marker); when the suppressed rows do not form an acceptable
    class themselves, the smallest accepted classes join them until they do.
    No row is dropped, so the sensitive attribute's whole-table distribution
    is the input's.

    The method works for any model, but the class declares k-anonymity and
    distinct l-diversity only, so that the contract suite has models this
    algorithm refuses.

    Parameters
    ----------
    split : {"half", "alternate"}, default="half"
        How the quasi-identifiers are divided between the two projections.
    """

    name: ClassVar[str] = "two-projections"
    summary: ClassVar[str] = (
        "Test-only: two projections of the quasi-identifiers, small classes suppressed"
    )
    supported_models: ClassVar[frozenset[str]] = frozenset(
        {"k-anonymity", "distinct-l-diversity"}
    )
    needs_target: ClassVar[bool] = True
    numeric_input: ClassVar[str] = "either"
    releases: ClassVar[str] = "projections"
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "split": Options({"half", "alternate"}),
    }

    def __init__(self, *, split: str = "half") -> None:
        self.split = split

    def halves(self, quasi_identifiers: tuple[str, ...]) -> list[list[str]]:
        """The two groups of quasi-identifiers, in input order."""
        qis = list(quasi_identifiers)
        if self.split == "alternate":
            return [qis[0::2], qis[1::2]]
        middle = (len(qis) + 1) // 2
        return [qis[:middle], qis[middle:]]

    def _anonymize(
        self, table: pd.DataFrame, spec: AnonymizationSpec, rng: np.random.Generator
    ) -> Release:
        if len(spec.quasi_identifiers) < 2:
            raise InvalidParameterError(
                f"{self.name} needs at least 2 quasi-identifiers to split; got "
                f"{list(spec.quasi_identifiers)}"
            )
        requirement = spec.requirement
        encoded = requirement.encode(table)
        extra = [a for a in (spec.sensitive_attribute, spec.target) if a is not None]
        tables: dict[str, pd.DataFrame] = {}
        suppressed_rows: dict[str, int] = {}
        for number, half in enumerate(self.halves(spec.quasi_identifiers), start=1):
            name = f"projection-{number}"
            # Projections are joined on the target: the sensitive models must
            # hold over (half, target), the classes an attacker sees then.
            joined = spec.target if requirement.sensitive_attributes else None
            suppress = _suppressed_rows(table, half, requirement, encoded, joined)
            projection = pd.DataFrame(index=table.index)
            for q in half:
                column = table[q].astype("string")
                projection[q] = column.mask(suppress, spec.suppression_marker)
            for attribute in extra:
                projection[attribute] = table[attribute]
            tables[name] = projection.reset_index(drop=True)
            suppressed_rows[name] = int(suppress.sum())
        evidence = {
            "split": self.split,
            "projections": {
                name: list(frame.columns) for name, frame in sorted(tables.items())
            },
            "suppressed_rows": suppressed_rows,
        }
        return Release(
            tables=tables,
            algorithm=self.name,
            params=self.get_params(),
            evidence=evidence,
            suppression_marker=spec.suppression_marker,
            records_in=len(table),
        )


def _suppressed_rows(
    table: pd.DataFrame,
    half: list[str],
    requirement: Requirement,
    encoded: dict[str, EncodedSensitive],
    target: str | None = None,
) -> np.ndarray:
    """Rows to suppress so that every class over ``half`` (and ``target``) is accepted."""
    keys = [*half, target] if target is not None else half
    ids, n_classes = equivalence_classes(table, keys)
    accepted = requirement.accepts_groups(ids, n_classes, encoded)
    sizes = np.bincount(ids, minlength=n_classes)
    chosen = ~accepted
    # Accepted classes that may join the suppressed rows, smallest first.
    donors = [int(c) for c in np.argsort(sizes, kind="stable") if accepted[c]]
    while chosen.any():
        suppress = chosen[ids]
        rows = np.flatnonzero(suppress)
        if target is None:
            groups, n_groups = np.zeros(len(rows), dtype=np.int64), 1
        else:  # the suppressed rows form one class per target value
            groups, n_groups = equivalence_classes(table.iloc[rows], [target])
        group = requirement.accepts_groups(groups, n_groups, encoded, rows)
        if group.all():
            break
        if not donors:
            raise InfeasibleConstraintError(
                f"two-projections: even suppressing every class over {half} "
                f"does not meet {requirement}"
            )
        chosen[donors.pop(0)] = True
    return chosen[ids]


#: The test-only algorithms, by registry name.
TOY_ALGORITHMS: dict[str, type[Anonymizer]] = {TwoProjections.name: TwoProjections}


def register_toy_algorithms(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register :data:`TOY_ALGORITHMS` in the package registry for one test."""
    for name, cls in TOY_ALGORITHMS.items():
        monkeypatch.setitem(ALGORITHMS, name, cls)
