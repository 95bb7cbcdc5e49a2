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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from ppdm.privacy.base import KParameter
from ppdm.privacy.release_model import ReleaseModel

__all__ = [
    "ATTACKER",
    "KAnonymityByContainment",
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
    judged_by: ClassVar[str] = "ppdm.privacy._containment_check:containment_result"

    def __str__(self) -> str:
        return f"{self.k}-anonymity by containment"
