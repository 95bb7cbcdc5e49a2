"""Information-loss metrics against values computed by hand on a 6-row table."""

from __future__ import annotations

import pandas as pd
import pytest

from ppdm.exceptions import InvalidParameterError
from ppdm.model import AnonymizationSpec
from ppdm.utility.loss import (
    classification_metric,
    discernibility_metric,
    information_loss,
    lost_records,
    ncp,
    suppressed_cells,
)

QI = ["age", "sex", "marital"]


@pytest.fixture()
def original() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [20, 30, 40, 50, 60, 70],  # range 50
            "sex": pd.array(list("FMFMFM"), dtype="string"),  # domain 2
            "marital": pd.array(
                ["single", "married", "divorced", "single", "married", "widowed"],
                dtype="string",
            ),  # domain 4
            "income": ["lo", "hi", "lo", "hi", "lo", "lo"],
        }
    )


@pytest.fixture()
def released() -> pd.DataFrame:
    # rows 0-4 released in two classes; row 5 dropped by the algorithm
    return pd.DataFrame(
        {
            "age": ["[20, 30]"] * 2 + ["[40, 60]"] * 3,
            "sex": ["{F|M}"] * 2 + ["*"] * 3,
            "marital": ["{married|single}"] * 2 + ["{divorced|married|single}"] * 3,
            "income": ["lo", "hi", "lo", "hi", "lo"],
        }
    )


def test_ncp_by_hand(original, released):
    result = ncp(original, released, QI)
    # age: 10/50 x2 + 20/50 x3 = 1.6, + 1 for the dropped row
    # sex: {F|M} = (2-1)/(2-1) = 1 x2, "*" = 1 x3 -> 5, + 1
    # marital: (2-1)/(4-1) x2 + (3-1)/(4-1) x3 = 8/3, + 1
    assert result.per_attribute["age"] == pytest.approx(2.6 / 6)
    assert result.per_attribute["sex"] == pytest.approx(6 / 6)
    assert result.per_attribute["marital"] == pytest.approx((8 / 3 + 1) / 6)
    assert result.total == pytest.approx(2.6 + 6 + 11 / 3)
    assert result.n_cells == 18
    assert result.mean == pytest.approx((2.6 + 6 + 11 / 3) / 18)


def test_ncp_is_zero_for_the_original_and_one_for_everything_suppressed(original):
    assert ncp(original, original, QI).total == 0.0
    suppressed = original.assign(**{c: "*" for c in QI})
    assert ncp(original, suppressed, QI).mean == 1.0
    assert ncp(original, original.iloc[:0], QI).mean == 1.0  # all rows dropped


def test_ncp_clips_open_intervals_to_the_observed_range(original):
    released = original.assign(age=["< 25", ">= 25", "(-inf, inf)", "*", "40", ""])
    result = ncp(original, released, ["age"])
    # (-inf,25) -> [20,25]: 0.1; [25,inf) -> [25,70]: 0.9; (-inf,inf): 1; *: 1
    assert result.total == pytest.approx(0.1 + 0.9 + 1 + 1 + 0 + 0)


def test_ncp_unknown_label_costs_one_unless_covers_says_otherwise(original):
    released = original.assign(marital=["Married-any"] * 6)
    assert ncp(original, released, ["marital"]).mean == 1.0
    covers = {"marital": {"Married-any": ["married", "widowed"]}}
    assert ncp(original, released, ["marital"], covers=covers).mean == pytest.approx(
        1 / 3
    )


def test_discernibility_by_hand(original, released):
    # class sizes 2 and 3 -> 4 + 9; one dropped row x 6 original rows
    assert discernibility_metric(original, released, QI) == 19.0
    assert discernibility_metric(original, original, QI) == 6.0


def test_classification_metric_by_hand(original, released):
    # class 1 (lo, hi): 1 minority; class 2 (lo, hi, lo): 1 minority; 1 dropped
    assert classification_metric(original, released, QI, "income") == pytest.approx(
        3 / 6
    )
    assert classification_metric(original, original, QI, "income") == 0.0


def test_suppressed_cells_and_lost_records(original, released):
    everything = suppressed_cells(released)
    assert everything.count == 3
    assert everything.fraction == pytest.approx(3 / 20)
    assert everything.per_column == {"age": 0, "sex": 3, "marital": 0, "income": 0}
    assert suppressed_cells(released, QI).fraction == pytest.approx(3 / 15)
    assert lost_records(original, released) == 1


def test_information_loss_bundle(original, released):
    spec = AnonymizationSpec.of(
        quasi_identifiers=tuple(QI), sensitive_attribute=None, target="income", k=2
    )
    loss = information_loss(original, released, spec)
    assert loss["lost_records"] == 1
    assert loss["discernibility"] == 19.0
    assert loss["classification_metric"] == pytest.approx(0.5)
    assert loss["equivalence_classes"] == 2 and loss["min_class_size"] == 2
    assert loss["ncp"]["total"] == pytest.approx(2.6 + 6 + 11 / 3)
    assert loss["suppressed_cells"]["count"] == 3


def test_missing_columns_are_named(original, released):
    with pytest.raises(InvalidParameterError, match="zip"):
        ncp(original, released, ["zip"])


def test_covers_from_a_real_hierarchy_reads_generalized_labels(original):
    from ppdm.generalization.hierarchies import Hierarchy
    from ppdm.utility.features import CellFeaturizer
    from ppdm.utility.loss import covers_from_hierarchies

    rows = [
        ["single", "Alone", "*"],
        ["divorced", "Alone", "*"],
        ["widowed", "Alone", "*"],
        ["married", "Together", "*"],
    ]
    hierarchy = Hierarchy.from_rows("marital", rows, source="marital.csv")
    covers = covers_from_hierarchies({"marital": hierarchy})
    assert covers == {
        "marital": {
            "Alone": ("single", "divorced", "widowed"),
            "Together": ("married",),
        }
    }
    released = original.assign(
        marital=["Alone", "Together", "Alone", "Alone", "*", "Alone"]
    )
    # Alone covers 3 of 4 values: (3-1)/(4-1); Together 1 value: 0; "*": 1
    expected = (4 * 2 / 3 + 0 + 1) / 6  # four "Alone", one "Together", one "*"
    assert ncp(original, released, ["marital"], covers=covers).mean == pytest.approx(
        expected
    )
    spec = AnonymizationSpec.of(
        quasi_identifiers=("marital",),
        sensitive_attribute=None,
        target="income",
        k=1,
        hierarchies={"marital": hierarchy},
    )
    loss = information_loss(original, released, spec)
    assert loss["ncp"]["mean"] == pytest.approx(expected)
    featurizer = CellFeaturizer(covers=covers).fit(original[["marital"]])
    x = featurizer.transform(released[["marital"]]).toarray()
    # domain sorted: divorced, married, single, widowed
    assert x[0].tolist() == pytest.approx([1 / 3, 0.0, 1 / 3, 1 / 3])
    assert x[1].tolist() == [0.0, 1.0, 0.0, 0.0]
