"""The hold-out split's precondition, cross-checked against scikit-learn itself.

``ppdm.utility.holdout`` refuses a table too small for the report's
stratified split before calling scikit-learn, so the user reads which class
of the target is short, not scikit-learn's ValueError. The refusal must be
exact: for random class counts and test sizes it happens if and only if
``train_test_split`` would fail.
"""

from __future__ import annotations

import pandas as pd
import pytest
from fuzz_cases import fuzz
from hypothesis import given
from hypothesis import strategies as st
from sklearn.model_selection import train_test_split

from ppdm.exceptions import InfeasibleConstraintError
from ppdm.utility.holdout import _check_splittable


@fuzz(300)
@given(
    counts=st.lists(st.integers(1, 12), min_size=1, max_size=6),
    test_size=st.sampled_from([0.05, 0.1, 0.25, 0.3, 0.5, 0.7, 0.9, 0.95]),
)
def test_refused_exactly_when_scikit_learn_cannot_split(counts, test_size):
    classes = pd.Series(
        [f"class {i}" for i, n in enumerate(counts) for _ in range(n)], name="y"
    )
    try:
        train_test_split(classes, test_size=test_size, stratify=classes, random_state=0)
    except ValueError:
        with pytest.raises(InfeasibleConstraintError) as refused:
            _check_splittable(classes, "y", test_size)
        message = str(refused.value)
        assert message.startswith(
            "the utility report's stratified hold-out split cannot be made: "
        )
        assert "'y'" in message and "\n" not in message
    else:
        _check_splittable(classes, "y", test_size)  # no refusal


def test_the_message_names_the_short_classes():
    classes = pd.Series(["good"] * 5 + ["bad"], name="credit")
    with pytest.raises(InfeasibleConstraintError) as refused:
        _check_splittable(classes, "credit", 0.3)
    assert str(refused.value) == (
        "the utility report's stratified hold-out split cannot be made: 1 class "
        "of the target 'credit' has fewer than 2 rows ('bad': 1); it needs at "
        "least 2 rows of every class and at least 2 rows in each part (more "
        "rows, or fewer target classes)"
    )
