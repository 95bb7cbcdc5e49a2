"""The differential privacy entry of a certificate: what is claimed, what is checked.

(epsilon, delta)-differential privacy is a property of the algorithm that
made a release (its sampling and its randomized choices), not of the released
files: no test on the files can confirm it, and the certificate says that it
holds by construction, naming the algorithm and its parameters. What the
files can show is checked afresh:

* every class of every released table, over all of its columns (a class is a
  whole released row: SafePub's guarantee needs each released tuple shared by
  ``k`` records), has at least the ``k`` that (epsilon, delta) imply;
* the released columns are the declared ones (no column beyond those the
  configuration releases).

The entry never claims more than that: it passes when both checks pass, and
its text separates what holds by construction from what was checked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.release.data_files import ReleasedFiles, read_released_table

__all__ = [
    "NOT_COVERED",
    "DifferentialPrivacyCheck",
    "check_differential_privacy",
    "check_released_files",
]


#: What a release directory holds beside the released tables that is computed
#: on the original rows, outside the differentially private mechanism: the
#: guarantee does not extend to it.
NOT_COVERED = (
    "utility.json and report.html (measured on the original rows and a "
    "re-release of a training split), validation.json (row counts of the "
    "source), the certificate's risk figures (against the original rows)"
)


@dataclass(frozen=True)
class DifferentialPrivacyCheck:
    """The differential privacy entry of a certificate.

    Attributes
    ----------
    algorithm : str
    epsilon, delta : float
    k : int
        The class size (epsilon, delta) imply, derived afresh from the
        parameters (not read from the algorithm's evidence).
    beta : float
        The sampling probability (epsilon, delta) imply.
    smallest_class : dict
        Per table, the smallest class over all its columns (0: no row).
    declared_columns : tuple of str
    extra_columns : dict
        Per table, released columns that are not declared.
    """

    algorithm: str
    epsilon: float
    delta: float
    k: int
    beta: float
    smallest_class: Mapping[str, int]
    declared_columns: tuple[str, ...]
    extra_columns: Mapping[str, tuple[str, ...]]

    #: The registered check (:class:`ppdm.privacy.DifferentialPrivacy`).
    name: ClassVar[str] = "differential-privacy"
    kind: ClassVar[str] = "release"

    @property
    def figures(self) -> dict[str, Any]:
        """The guarantee as claimed, and the smallest class the files show."""
        sizes = [s for s in self.smallest_class.values() if s]
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "k": int(self.k),
            "smallest_class": min(sizes, default=0),
        }

    @property
    def required(self) -> dict[str, Any]:
        """The guarantee asked for, and the class size it implies for every
        class of the files."""
        return {"epsilon": self.epsilon, "delta": self.delta, "smallest_class": self.k}

    @property
    def examples(self) -> tuple[dict[str, Any], ...]:
        """The tables at fault: a class below k, or undeclared columns."""
        return tuple(
            {
                "table": name,
                "smallest_class": int(self.smallest_class.get(name, 0)),
                "extra_columns": list(self.extra_columns.get(name, ())),
            }
            for name in sorted({*self.smallest_class, *self.extra_columns})
            if 0 < self.smallest_class.get(name, 0) < self.k
            or self.extra_columns.get(name)
        )

    def summary(self) -> str:
        return self.describe()

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> DifferentialPrivacyCheck:
        """Inverse of :meth:`to_dict` (a certificate read back)."""
        checked = d["checked"]
        return cls(
            algorithm=d["algorithm"],
            epsilon=d["epsilon"],
            delta=d["delta"],
            k=int(checked["k"]),
            beta=checked["beta"],
            smallest_class=dict(checked["smallest_class"]),
            declared_columns=tuple(checked["declared_columns"]),
            extra_columns={
                name: tuple(cols) for name, cols in checked["extra_columns"].items()
            },
        )

    @property
    def classes_passed(self) -> bool:
        return all(size == 0 or size >= self.k for size in self.smallest_class.values())

    @property
    def columns_passed(self) -> bool:
        return not any(self.extra_columns.values())

    @property
    def passed(self) -> bool:
        return self.classes_passed and self.columns_passed

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": "(epsilon, delta)-differential privacy",
            "epsilon": self.epsilon,
            "delta": self.delta,
            "algorithm": self.algorithm,
            "holds": "by construction (sampling and randomized choices of the "
            "algorithm); not testable on the released files",
            "covers": "the released tables (data/)",
            "not_covered": NOT_COVERED,
            "checked": {
                "k": self.k,
                "beta": self.beta,
                "smallest_class": dict(sorted(self.smallest_class.items())),
                "every_class_at_least_k": self.classes_passed,
                "declared_columns": list(self.declared_columns),
                "extra_columns": {
                    name: list(cols)
                    for name, cols in sorted(self.extra_columns.items())
                },
                "columns_declared": self.columns_passed,
            },
            "passed": self.passed,
        }

    def describe(self) -> str:
        """One line: the claim, then the two checks and their outcome."""
        smallest = ", ".join(
            f"{name} {size}" for name, size in sorted(self.smallest_class.items())
        )
        text = (
            f"({self.epsilon:g}, {self.delta:g})-differential privacy by "
            f"construction ({self.algorithm}); checked on the files: every class "
            f"over all columns has >= k={self.k} rows "
            f"({'yes' if self.classes_passed else 'NO'}; smallest: {smallest}), "
            f"released columns are the declared ones "
            f"({'yes' if self.columns_passed else 'NO'})"
        )
        extra = {n: c for n, c in self.extra_columns.items() if c}
        if extra:
            text += "; undeclared: " + "; ".join(
                f"{', '.join(cols)} in {name}" for name, cols in sorted(extra.items())
            )
        return text


def smallest_class(table: pd.DataFrame) -> int:
    """Rows of the smallest class over every column (0 for no row)."""
    if table.empty:
        return 0
    sizes = table.astype(str).groupby(list(table.columns), sort=False).size()
    return int(sizes.min())


def check_differential_privacy(
    tables: Mapping[str, pd.DataFrame],
    algorithm: str,
    params: Mapping[str, Any],
    *,
    declared_columns: Sequence[str],
    n_rows: int | None = None,
    delta: float | None = None,
) -> DifferentialPrivacyCheck | None:
    """The entry for a release of ``algorithm`` with ``params``; None when the
    algorithm is not differentially private.

    ``n_rows`` (the input's rows) sets a default delta; a verifier without
    the input passes the ``delta`` the release recorded instead.
    """
    from ppdm.algorithms import get_algorithm

    made = dict(params)
    if made.get("delta") is None and delta is not None:
        made["delta"] = delta
    if made.get("delta") is None and n_rows is None:
        raise InvalidParameterError(
            f"the differential privacy check of a {algorithm} release needs its "
            "delta or the number of input rows (delta's default depends on it)"
        )
    anonymizer = get_algorithm(algorithm, **made)
    derive = getattr(anonymizer, "parameters", None)
    rows = 1 if n_rows is None else n_rows
    if anonymizer.privacy_cost(rows) is None or derive is None:
        return None
    derived = derive(rows)
    declared = tuple(declared_columns)
    return DifferentialPrivacyCheck(
        algorithm=algorithm,
        epsilon=derived.epsilon,
        delta=derived.delta,
        k=derived.k,
        beta=derived.beta,
        smallest_class={name: smallest_class(t) for name, t in tables.items()},
        declared_columns=declared,
        extra_columns={
            name: tuple(c for c in t.columns if c not in declared)
            for name, t in tables.items()
        },
    )


def check_released_files(
    files: Mapping[str, ReleasedFiles],
    algorithm: str,
    params: Mapping[str, Any],
    *,
    declared_columns: Sequence[str],
    n_rows: int | None = None,
    delta: float | None = None,
) -> DifferentialPrivacyCheck | None:
    """:func:`check_differential_privacy` of the released files (read as text);
    None, without reading them, for an algorithm that is not differentially
    private."""
    from ppdm.algorithms import ALGORITHMS
    from ppdm.algorithms.base import Anonymizer

    cls = ALGORITHMS.get(algorithm)
    if cls is None or cls.privacy_cost is Anonymizer.privacy_cost:
        return None
    tables = {name: read_released_table(path) for name, path in files.items()}
    return check_differential_privacy(
        tables,
        algorithm,
        params,
        declared_columns=declared_columns,
        n_rows=n_rows,
        delta=delta,
    )
