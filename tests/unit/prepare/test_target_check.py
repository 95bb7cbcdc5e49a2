"""ppdm.prepare.target_check: a target the utility report could not use."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.exceptions import InfeasibleConstraintError
from ppdm.prepare.target_check import (
    TARGET_MAX_CLASSES,
    check_target_values,
    missing_rows,
)
from ppdm.utility.holdout import _check_splittable


def _refusal(values: pd.Series, test_size: float = 0.3) -> str | None:
    try:
        check_target_values(values, target="y", source="t.csv", test_size=test_size)
    except InfeasibleConstraintError as err:
        return str(err)
    return None


def test_a_class_label_passes():
    assert _refusal(pd.Series(["good", "poor", "fair"] * 10)) is None
    # Integers read as floats because a value is missing are not fractions.
    assert _refusal(pd.Series([0.0, 1.0, np.nan] * 10)) is None


def test_many_values_or_fractions_look_continuous():
    many = pd.Series([f"c{i}" for i in range(TARGET_MAX_CLASSES + 1)] * 3)
    assert _refusal(many) == (
        "target 'y' of t.csv looks continuous: 21 distinct values; an analyst's "
        "class label has few values: bin it in the source or pick another column"
    )
    assert "numbers with fractions" in _refusal(pd.Series([0.5, 1.5] * 20))
    assert _refusal(pd.Series([f"c{i}" for i in range(20)] * 5)) is None  # 20: a label


@pytest.mark.parametrize("seed", range(40))
def test_the_split_rule_gives_the_utility_reports_answers(seed):
    """Restated without scikit-learn, the rule refuses exactly what the report would."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    classes = int(rng.integers(1, 8))
    values = pd.Series(rng.integers(0, classes, n)).map(lambda c: f"class{c}")
    test_size = float(rng.choice([0.1, 0.3, 0.5, 0.9]))
    try:
        _check_splittable(values.astype(str), "y", test_size)
        report_refuses = False
    except InfeasibleConstraintError:
        report_refuses = True
    assert (_refusal(values, test_size) is not None) == report_refuses


def test_a_single_row_class_is_named():
    values = pd.Series(["a"] * 30 + ["b"] * 30 + ["rare"])
    assert _refusal(values) == (
        "target 'y' of t.csv: 1 class has fewer than 2 rows ('rare': 1), and the "
        "utility report's stratified hold-out split needs at least 2 rows of every "
        "class: merge the small classes in the source or pick another column"
    )


def test_missing_rows_are_counted_and_located():
    values = pd.Series(["a", None, "b", None, "c", None, None, None, None, "d"])
    assert missing_rows(values) == (6, "rows 1, 3, 5, 6, 7, ...")
    assert missing_rows(values, csv=True) == (6, "lines 3, 5, 7, 8, 9, ...")
    assert missing_rows(pd.Series(["a", "b"])) == (0, "")
