"""k-anonymity by containment: the guarantee of a feature-selection release.

A feature-selection release (:class:`ppdm.algorithms.fs_anonymity.FsAnonymity`)
publishes 0/1 columns, each saying whether a person has one value of a
quasi-identifier (``education=Bachelors``). An attacker who knows which of
the published features the target has can narrow the target down to the rows
whose published features contain the target's: its containment set.

Which columns are read: the model judges what a release tells about the
quasi-identifiers, as the class models do. In every released table it reads

* the binary feature columns, named ``<quasi-identifier>=<value>`` (the
  naming of :func:`ppdm.selection.binary_encode`); each must hold only 0/1
  (as released: ``"0"``/``"1"``), otherwise the check fails naming it;
* a quasi-identifier released whole (a column named like it), one feature per
  distinct value (missing and suppressed cells are values of their own).

Every other column (the target, sensitive or insensitive columns) is not a
feature. Released tables are judged separately: their rows are not linked
(the pipeline shuffles each), so the release achieves the smallest AC of its
tables.

References
----------
.. [1] Zhang, Y., Mohammed, N., Dave, M., Al Hasan, M.: Feature Selection for
   Classification under Anonymity Constraint. Transactions on Data Privacy
   10(1):1-25 (2017); arXiv:1512.07158 ("k-anonymity by selection" in v1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ppdm._lazy import pandas as pd
from ppdm.privacy.base import MAX_EXAMPLES, KParameter, PrivacyResult
from ppdm.privacy.release_model import ReleaseModel
from ppdm.selection._bitsets import containment_sizes

__all__ = [
    "ATTACKER",
    "KAnonymityByContainment",
    "containment_features",
    "feature_attribute",
    "quasi_identifier_columns",
]

#: Whom containment protects against, in words; the certificate prints it
#: next to the exact-class figures of the same columns.
ATTACKER = (
    "k-anonymity by containment holds against an attacker who knows only which "
    "of the released features a person has; one who knows the person's "
    "quasi-identifiers knows the zeros too and finds the person in an exact "
    "class of the released feature vectors"
)

_ONE = frozenset({"1", "1.0", "True", "true"})
_ZERO = frozenset({"0", "0.0", "False", "false"})


def feature_attribute(column: str, quasi_identifiers: Sequence[str]) -> str | None:
    """The quasi-identifier a 0/1 feature column ``<q>=<value>`` is about, or None.

    The longest matching name wins, so ``a=b=c`` of quasi-identifier ``a=b``
    is not read as one of ``a``.

    >>> feature_attribute("education=Bachelors", ["age", "education"])
    'education'
    >>> feature_attribute("income", ["age"]) is None
    True
    """
    for q in sorted(quasi_identifiers, key=len, reverse=True):
        if column.startswith(f"{q}="):
            return q
    return None


def quasi_identifier_columns(
    columns: Sequence[str], quasi_identifiers: Sequence[str]
) -> tuple[str, ...]:
    """The released columns an attacker reads as quasi-identifiers.

    Every quasi-identifier released whole (in the requirement's order), then
    every 0/1 feature column ``<q>=<value>`` of one (in the table's order). A
    feature release's exact classes are over its feature vectors as they
    are: whoever knows a person's quasi-identifiers knows each feature, the
    zeros included.

    >>> quasi_identifier_columns(["sex=F", "age", "y", "job=a"], ["age", "sex", "job"])
    ('age', 'sex=F', 'job=a')
    """
    names = [str(c) for c in columns]
    whole = [q for q in quasi_identifiers if q in names]
    features = [
        c
        for c in names
        if c not in quasi_identifiers and feature_attribute(c, quasi_identifiers)
    ]
    return (*whole, *features)


def containment_features(
    table: pd.DataFrame, quasi_identifiers: Sequence[str]
) -> tuple[np.ndarray, list[str], list[str]]:
    """The 0/1 feature matrix a containment check reads from one table.

    Returns
    -------
    (matrix, names, problems)
        ``matrix`` (n, d) bool; ``names`` the feature of each column
        (``q=value``); ``problems`` the binary columns holding other values.
    """
    qis = sorted(quasi_identifiers, key=len, reverse=True)
    blocks: list[np.ndarray] = []
    names: list[str] = []
    problems: list[str] = []
    for column in table.columns:
        name = str(column)
        if name in quasi_identifiers:
            text = table[column].astype("string").fillna("").to_numpy(dtype=object)
            values, codes = np.unique(text.astype(str), return_inverse=True)
            blocks.append(
                np.asarray(codes).reshape(-1)[:, None] == np.arange(len(values))
            )
            names.extend(f"{name}={v}" for v in values)
            continue
        if not any(name.startswith(f"{q}=") for q in qis):
            continue
        text = table[column].astype("string").fillna("").to_numpy(dtype=object)
        text = text.astype(str)
        ones = np.isin(text, list(_ONE))
        zeros = np.isin(text, list(_ZERO))
        if not (ones | zeros).all():
            problems.append(name)
        blocks.append(ones[:, None])
        names.append(name)
    n = len(table)
    matrix = np.hstack(blocks) if blocks else np.zeros((n, 0), dtype=bool)
    return matrix, names, problems


@dataclass(frozen=True)
class KAnonymityByContainment(KParameter, ReleaseModel):
    """Every row's published features are contained in those of ``>= k`` rows.

    For the released 0/1 features S and a row e, ``AC_S(e)`` is the number of
    rows that have every feature e has (e included; n when e has none). The
    release satisfies the model when ``min_e AC_S(e) >= k``. Ordinary
    k-anonymity of the same columns implies it; the converse fails.

    Parameters
    ----------
    k : int
        Smallest allowed containment size, ``k >= 1``.

    References
    ----------
    .. [1] Zhang, Y., Mohammed, N., Dave, M., Al Hasan, M.: Feature Selection
       for Classification under Anonymity Constraint. Transactions on Data
       Privacy 10(1):1-25 (2017).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"q=a": [1, 1, 0, 0], "q=b": [0, 0, 1, 1], "y": list("pnpn")})
    >>> r = KAnonymityByContainment(2).check(t, ["q"])
    >>> str(KAnonymityByContainment(2)), r.achieved, r.passed
    ('2-anonymity by containment', 2, True)
    """

    k: int

    name: ClassVar[str] = "k-anonymity-by-containment"
    measure: ClassVar[str] = "k"
    monotonic_under_suppression: ClassVar[bool] = False
    uses_sensitive_attribute: ClassVar[bool] = False

    def __str__(self) -> str:
        return f"{self.k}-anonymity by containment"

    def check_release(
        self,
        tables: Mapping[str, pd.DataFrame],
        quasi_identifiers: Sequence[str],
    ) -> PrivacyResult:
        """AC of every released table over its quasi-identifier features."""
        achieved: int | None = None
        n_classes = violating = violating_rows = 0
        examples: list[tuple[int, int, str, dict[str, Any]]] = []
        problems: list[dict[str, Any]] = []
        for table_name in sorted(tables):
            table = tables[table_name]
            matrix, names, bad = containment_features(table, quasi_identifiers)
            problems.extend(
                {"table": table_name, "column": c, "error": "not 0/1"} for c in bad
            )
            if len(table) == 0:
                achieved = 0 if achieved is None else min(achieved, 0)
                continue
            sizes = containment_sizes(matrix)
            lowest = int(sizes.min())
            achieved = lowest if achieved is None else min(achieved, lowest)
            packed = np.packbits(matrix, axis=1)
            _, first, inverse, counts = np.unique(
                packed,
                axis=0,
                return_index=True,
                return_inverse=True,
                return_counts=True,
            )
            inverse = np.asarray(inverse).reshape(-1)
            n_classes += len(first)
            ac = sizes[first]
            failing = np.flatnonzero(ac < self.k)
            violating += len(failing)
            violating_rows += int(counts[failing].sum())
            for p in failing:
                pattern = (
                    ", ".join(names[j] for j in np.flatnonzero(matrix[first[p]]))
                    or "(no feature)"
                )
                examples.append(
                    (
                        int(ac[p]),
                        -int(counts[p]),
                        pattern,
                        {
                            "table": table_name,
                            "features": pattern,
                            "size": int(counts[p]),
                            "k": int(ac[p]),
                        },
                    )
                )
        examples.sort(key=lambda e: e[:3])
        shown = tuple([*problems, *(e[3] for e in examples)][:MAX_EXAMPLES])
        value = 0 if achieved is None else achieved
        passed = (
            achieved is not None
            and value >= self.k
            and not problems
            and any(len(t) for t in tables.values())
        )
        return PrivacyResult(
            model=str(self),
            requirement=self.describe(),
            measure=self.measure,
            achieved=value,
            passed=bool(passed),
            n_classes=n_classes,
            n_violating_classes=violating + len(problems),
            n_violating_rows=violating_rows,
            examples=shown,
            kind=self.kind,
        )
