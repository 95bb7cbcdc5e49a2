"""Is a column usable as the target (the class an analyst predicts)?

Checked where a mistake is cheap: by ``ppdm init`` on the table it profiles,
and by ``ppdm run``'s pre-flight (:mod:`ppdm.preflight`) on the source's
target column alone, before any step starts. Without these checks a wrong
target fails only at the utility report, the seventh step of eight.

A target is refused when

- it looks continuous: more than :data:`TARGET_MAX_CLASSES` distinct values,
  or numbers with fractions (a price, a measurement). The utility report's
  classifiers predict a class; bin the column in the source or pick another;
- a class is too small for the utility report's stratified hold-out split
  (:mod:`ppdm.utility.holdout`): fewer than two rows, or more classes than
  rows in one part of the split.

Rows without a target value cannot train or test a classifier. The
validation step sets them aside in quarantine when the dataset's schema
declares the target not nullable (``ppdm init`` writes it so); when they are
more than the share validation may reject
(``validation.max_rejected_fraction``), the release is refused at once.

Examples
--------
>>> import pandas as pd
>>> check_target_values(pd.Series(["good", "poor"] * 10), target="y", source="t.csv")
>>> check_target_values(pd.Series(range(30)) * 1.5, target="price", source="t.csv")
Traceback (most recent call last):
...
ppdm.exceptions.InfeasibleConstraintError: target 'price' of t.csv looks continuous: \
30 distinct values, numbers with fractions; an analyst's class label has few values: \
bin it in the source or pick another column
"""

from __future__ import annotations

import math

import pandas as pd

from ppdm.config.sections import DEFAULT_TEST_SIZE
from ppdm.exceptions import InfeasibleConstraintError

__all__ = [
    "TARGET_MAX_CLASSES",
    "check_target_values",
    "missing_rows",
]

#: More distinct values than this and a target looks continuous (the limit
#: ``ppdm init`` uses to guess a class label by its values, too).
TARGET_MAX_CLASSES = 20
_SHOWN = 5


def check_target_values(
    values: pd.Series,
    *,
    target: str,
    source: str,
    test_size: float = DEFAULT_TEST_SIZE,
) -> None:
    """Refuse a target that looks continuous or has a class too small to split.

    Parameters
    ----------
    values : pandas.Series
        The target column; missing values are ignored here (see
        :func:`missing_rows`).
    target : str
        Its name, for the message.
    source : str
        The source as messages name it (a file, a masked URL).
    test_size : float, default=0.3
        The utility report's test share.

    Raises
    ------
    InfeasibleConstraintError
        One line naming the target, the source, what was found and what to
        do.
    """
    present = values.dropna()
    distinct = int(present.nunique())
    fractions = pd.api.types.is_float_dtype(present.dtype) and bool(
        (present % 1 != 0).any()
    )
    if distinct > TARGET_MAX_CLASSES or fractions:
        found = f"{distinct:,} distinct values" + (
            ", numbers with fractions" if fractions else ""
        )
        raise InfeasibleConstraintError(
            f"target {target!r} of {source} looks continuous: {found}; an "
            "analyst's class label has few values: bin it in the source or pick "
            "another column"
        )
    _check_split(present.astype(str), target=target, source=source, test_size=test_size)


def _check_split(
    classes: pd.Series, *, target: str, source: str, test_size: float
) -> None:
    """The rule of the utility report's stratified split, without importing it.

    :func:`ppdm.utility.holdout._check_splittable` is the rule (importing it
    would import scikit-learn, a second of a check meant to take less); the
    tests hold the two to the same answers. Validation only removes rows, so
    a class too small here stays too small in the clean table.
    """
    counts = classes.value_counts(sort=True, ascending=True)
    n, n_classes = len(classes), len(counts)
    n_test = math.ceil(test_size * n)
    n_train = n - n_test
    few = counts[counts < 2]
    if len(few):
        shown = ", ".join(f"{name!r}: {count}" for name, count in few.head(5).items())
        more = f" and {len(few) - 5} more" if len(few) > 5 else ""
        raise InfeasibleConstraintError(
            f"target {target!r} of {source}: {len(few)} "
            f"class{'es' * (len(few) != 1)} {'have' if len(few) != 1 else 'has'} "
            f"fewer than 2 rows ({shown}{more}), and the utility report's "
            "stratified hold-out split needs at least 2 rows of every class: merge "
            "the small classes in the source or pick another column"
        )
    if min(n_train, n_test) < n_classes:
        raise InfeasibleConstraintError(
            f"target {target!r} of {source}: its {n} rows split into {n_train} "
            f"training and {n_test} test rows (utility.test_size {test_size:g}), "
            f"fewer than its {n_classes} classes in one part; the utility report's "
            "stratified hold-out split needs every class in each part: more rows, "
            "or fewer classes"
        )


def missing_rows(values: pd.Series, *, csv: bool = False) -> tuple[int, str]:
    """How many values are missing, and where the first ones are, in words.

    ``csv=True`` names file lines (the header is line 1), else row numbers
    counted from 0 (the quarantine's ``_source_row``).

    >>> missing_rows(pd.Series(["a", None, "b", None]), csv=True)
    (2, 'lines 3, 5')
    """
    where = values.index[values.isna().to_numpy()]
    count = len(where)
    if count == 0:
        return 0, ""
    shown = [str(int(i) + (2 if csv else 0)) for i in where[:_SHOWN]]
    more = ", ..." if count > _SHOWN else ""
    noun = "line" if csv else "row"
    return count, f"{noun}{'s' if count > 1 else ''} {', '.join(shown)}{more}"
