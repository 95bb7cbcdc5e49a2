"""Privacy model objects: known answers, parameters, registry, examples."""

from __future__ import annotations

import dataclasses
import json

import pandas as pd
import pytest

from ppdm.exceptions import InvalidParameterError
from ppdm.privacy import (
    PRIVACY_MODELS,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    PrivacyModel,
    RecursiveCLDiversity,
    TCloseness,
)
from ppdm.privacy._containment import KAnonymityByContainment
from ppdm.privacy._set_anonymity import PartitionAnonymity, SetAnonymity
from ppdm.privacy.measures import ClassPartition

# classes over (zip, age): A (4 rows), B (2 rows), C (3 rows), * (1 row)
TABLE = pd.DataFrame(
    {
        "zip": ["130**"] * 4 + ["148**"] * 2 + ["130**"] * 3 + ["*"],
        "age": ["<30"] * 4 + [">=40"] * 2 + ["3*"] * 3 + ["*"],
        "disease": ["flu", "flu", "cold", "hiv"]
        + ["flu", "flu"]
        + ["cold", "cold", "flu"]
        + ["hiv"],
    }
)
QI = ["zip", "age"]


def test_registry_is_literal_and_complete():
    assert PRIVACY_MODELS == {
        "k-anonymity": KAnonymity,
        "distinct-l-diversity": DistinctLDiversity,
        "entropy-l-diversity": EntropyLDiversity,
        "recursive-cl-diversity": RecursiveCLDiversity,
        "t-closeness": TCloseness,
        "set-anonymity": SetAnonymity,
        "partition-anonymity": PartitionAnonymity,
        "k-anonymity-by-containment": KAnonymityByContainment,
    }
    for name, cls in PRIVACY_MODELS.items():
        assert cls.name == name
        assert issubclass(cls, PrivacyModel)
        assert cls.__doc__ and "References" in cls.__doc__


def test_k_anonymity_known_answer_and_examples():
    result = KAnonymity(2).check(TABLE, QI)
    assert (result.achieved, result.passed) == (1, False)
    assert result.n_classes == 4
    assert result.n_violating_classes == 1
    assert result.n_violating_rows == 1
    assert result.examples == ({"zip": "*", "age": "*", "size": 1, "k": 1},)
    assert KAnonymity(1).check(TABLE, QI).passed
    three = KAnonymity(3).check(TABLE, QI)
    # worst first: the singleton, then the class of two
    assert [e["size"] for e in three.examples] == [1, 2]
    assert three.examples[1] == {"zip": "148**", "age": ">=40", "size": 2, "k": 2}


def test_distinct_l_diversity():
    result = DistinctLDiversity("disease", 2).check(TABLE, QI)
    assert result.achieved == 1
    # B (flu, flu) and * (hiv) have one value each
    assert result.n_violating_classes == 2
    assert result.n_violating_rows == 3
    assert {e["zip"] for e in result.examples} == {"148**", "*"}


def test_entropy_l_diversity():
    two = pd.DataFrame({"q": ["a"] * 4 + ["b"] * 3, "s": list("xyxy") + list("xyz")})
    result = EntropyLDiversity("s", 2).check(two, ["q"])
    assert result.achieved == pytest.approx(2.0)
    assert result.passed  # exp(ln 2) is accepted despite rounding
    assert not EntropyLDiversity("s", 2.5).check(two, ["q"]).passed
    assert EntropyLDiversity("s", 2.5).check(two, ["q"]).n_violating_classes == 1


def test_recursive_cl_diversity():
    frame = pd.DataFrame({"q": ["a"] * 10, "s": list("xxxxxyyyzw")})
    assert RecursiveCLDiversity("s", c=3, l=3).check(frame, ["q"]).passed
    result = RecursiveCLDiversity("s", c=2, l=3).check(frame, ["q"])
    assert (result.achieved, result.passed) == (2, False)


def test_t_closeness():
    result = TCloseness("disease", 0.3).check(TABLE, QI)
    # class *: hiv only; whole table hiv share 0.2 -> EMD = 0.8
    assert result.achieved == pytest.approx(0.8)
    assert result.examples[0]["zip"] == "*"
    assert TCloseness("disease", 0.8).check(TABLE, QI).passed


def test_shared_partition_gives_the_same_results():
    partition = ClassPartition.of(TABLE, QI)
    for model in [
        KAnonymity(2),
        DistinctLDiversity("disease", 2),
        TCloseness("disease", 0.5),
    ]:
        assert model.check(partition, QI) == model.check(TABLE, QI)
    with pytest.raises(InvalidParameterError, match="partition is over"):
        KAnonymity(2).check(partition, ["zip"])


def test_text_description_and_immutability():
    assert str(KAnonymity(5)) == "5-anonymity"
    assert str(DistinctLDiversity("income", 2)) == "distinct 2-diversity of income"
    recursive = RecursiveCLDiversity("income", 3, 2)
    assert str(recursive) == "recursive (3, 2)-diversity of income"
    assert str(TCloseness("income", 0.2)) == "0.2-closeness of income"
    for model in [
        KAnonymity(5),
        DistinctLDiversity("s", 2),
        EntropyLDiversity("s", 1.5),
        RecursiveCLDiversity("s", 2.0, 2),
        TCloseness("s", 0.1),
    ]:
        json.dumps(model.describe())
        assert model.describe()["model"] == model.name
        with pytest.raises(dataclasses.FrozenInstanceError):
            model.l = 3  # type: ignore[misc]
    assert KAnonymity(5).minimal_class_size == 5
    assert DistinctLDiversity("s", 3).minimal_class_size == 3
    assert KAnonymity.monotonic_under_suppression
    assert not DistinctLDiversity.monotonic_under_suppression
    assert TCloseness.monotonic_under_generalization


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: KAnonymity(0), "k must be >= 1"),
        (lambda: KAnonymity(2.5), "integer"),
        (lambda: KAnonymity(True), "integer"),
        (lambda: DistinctLDiversity("s", 0), "l must be"),
        (lambda: DistinctLDiversity("", 2), "attribute"),
        (lambda: EntropyLDiversity("s", 0.5), "l must be"),
        (lambda: RecursiveCLDiversity("s", 0, 2), "c must be"),
        (lambda: TCloseness("s", 1.5), r"t must be a number in \[0, 1\]"),
        (lambda: TCloseness("s", 0.2, ordered="yes"), "ordered"),
    ],
)
def test_invalid_parameters_are_named(make, match):
    with pytest.raises(InvalidParameterError, match=match):
        make()


def test_empty_table_fails():
    empty = pd.DataFrame({"q": pd.Series([], dtype=str)})
    result = KAnonymity(1).check(empty, ["q"])
    assert (result.achieved, result.passed) == (0, False)
