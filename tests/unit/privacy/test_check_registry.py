"""The registry of privacy checks: three kinds, one result shape, figures from each result.

Small tables whose answers are counted by hand: a class of four rows that
gains one row leaks by differencing (a group of one, below k=2); a person
whose two releases leave one common value is brought below l=2 by
composition. Every result, written to a certificate and read back, states the
same figures, verdict and summary.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.privacy import (
    CHECK_KINDS,
    CLASS_MODELS,
    PRIVACY_CHECKS,
    PRIVACY_MODELS,
    CheckResult,
    Composition,
    Differencing,
    PrivacyModel,
    Requirement,
    SameRows,
)
from ppdm.verify import verify_tables
from ppdm.verify.certificate import checks_of
from ppdm.verify.composition import CompositionCheck, PersonValues
from ppdm.verify.differencing import SeriesCheck
from ppdm.verify.differential import DifferentialPrivacyCheck
from ppdm.verify.same_rows import SameRowsCheck

REQ = Requirement.of(("age",), "dx", k=2, l=2)
EARLIER = pd.DataFrame({"age": ["[20, 29]"] * 4, "dx": ["flu", "cold", "flu", "cold"]})
#: One newcomer in the only class: alone, below k=2.
LATER = pd.concat(
    [EARLIER, pd.DataFrame({"age": ["[20, 29]"], "dx": ["flu"]})], ignore_index=True
)


def test_the_registry_has_three_kinds_and_derives_the_model_lists():
    assert {check.kind for check in PRIVACY_CHECKS.values()} == set(CHECK_KINDS)
    for name, check in PRIVACY_CHECKS.items():
        assert check.name == name
    assert CLASS_MODELS == {n for n, c in PRIVACY_CHECKS.items() if c.kind == "class"}
    assert set(PRIVACY_MODELS) == {
        n for n, c in PRIVACY_CHECKS.items() if issubclass(c, PrivacyModel)
    }
    assert {n for n, c in PRIVACY_CHECKS.items() if c.kind == "series"} == {
        "differencing",
        "same-rows",
        "composition",
    }
    assert PRIVACY_CHECKS["differential-privacy"].kind == "release"


def test_differencing_states_the_rows_it_exposes_and_an_accepted_risk():
    (result,) = Differencing(REQ).check({"t": LATER}, {"t": EARLIER}, against="r1")
    assert isinstance(result, CheckResult)
    assert (result.name, result.kind, result.passed) == (
        "differencing",
        "series",
        False,
    )
    assert result.figures == {
        "n_leaking_classes": 1,
        "n_leaking_rollups": 0,
        "rows_exposed": 1,
    }
    assert result.examples == ({"age": "[20, 29]", "added": 1, "removed": 0},)
    assert "1 class(es) and 0 roll-up(s) leak by differencing" in result.summary()
    (accepted,) = Differencing(REQ, accepted=True).check(
        {"t": LATER}, {"t": EARLIER}, against="r1"
    )
    assert accepted.passed and accepted.figures == result.figures
    assert accepted.summary().endswith(
        "accepted by the data owner (republication policy off)"
    )
    # The same release again: nothing added, nothing exposed.
    (same,) = Differencing(REQ).check({"t": EARLIER}, {"t": EARLIER}, against="r1")
    assert same.passed and same.figures["rows_exposed"] == 0


def test_same_rows_groups_persons_by_their_class_in_each_release():
    people = pd.DataFrame(
        {"age": ["21", "22", "23", "24"], "dx": ["flu", "cold", "flu", "cold"]}
    )
    finer = pd.DataFrame(
        {"age": ["[20, 21]", "[22, 23]", "[22, 23]", "[24, 29]"], "dx": people["dx"]}
    )
    (result,) = SameRows(REQ, people).check({"t": finer}, {"t": EARLIER}, against="r1")
    assert (result.name, result.kind) == ("same-rows", "series")
    # Persons 21 and 24 are alone in their pair of classes; 22 and 23 share one
    # with flu and cold: two groups of one below k=2.
    assert result.figures == {"n_leaking_groups": 2, "rows_exposed": 2}
    assert not result.passed and len(result.examples) == 2


def test_composition_counts_the_persons_brought_below_l():
    keys = np.array(["a", "b"], dtype=object)
    now = PersonValues(keys, ("cold", "flu"), np.array([[True, False], [True, True]]))
    before = PersonValues(keys, ("cold", "flu"), np.array([[True, True], [True, True]]))
    (result,) = Composition(REQ).check({"dx": now}, [("r1", {"dx": before})])
    assert (result.name, result.kind) == ("composition", "series")
    assert result.figures == {"n_exposed": 1, "n_below_l": 1, "n_certain": 1}
    assert not result.passed and result.examples == ()
    assert "brings 1 person(s) below l=2" in result.summary()


@pytest.mark.parametrize(
    "result",
    [
        SeriesCheck("t", "r1", 3, 2, 1, 1, 2, ({"age": "1", "added": 2},), True, 1, 0),
        SameRowsCheck("t", "r1", 4, 1, 1, ({"persons": 1},), False),
        CompositionCheck("dx", ("r1", "r2"), 2, 10, 3, 1, 0, True),
        DifferentialPrivacyCheck(
            "safepub", 1.0, 1e-6, 40, 0.1, {"t": 12}, ("age", "dx"), {"t": ("x",)}
        ),
    ],
    ids=lambda r: r.name,
)
def test_a_result_read_back_from_its_certificate_entry_is_the_same(result):
    again = type(result).from_dict(result.to_dict())
    assert again.to_dict() == result.to_dict()
    assert (again.figures, again.passed, again.summary(), again.examples) == (
        result.figures,
        result.passed,
        result.summary(),
        result.examples,
    )


def test_the_dp_entry_names_the_tables_at_fault():
    dp = DifferentialPrivacyCheck(
        "safepub",
        1.0,
        1e-6,
        40,
        0.1,
        {"a": 12, "b": 50},
        ("age",),
        {"a": (), "b": ("x",)},
    )
    assert dp.figures == {"epsilon": 1.0, "delta": 1e-6, "k": 40, "smallest_class": 12}
    assert dp.examples == (
        {"table": "a", "smallest_class": 12, "extra_columns": []},
        {"table": "b", "smallest_class": 50, "extra_columns": ["x"]},
    )
    assert not dp.passed and "NO" in dp.summary()


def test_the_certificate_lists_every_check_with_where_it_ran():
    certificate = verify_tables({"t": LATER}, REQ)
    (result,) = Differencing(REQ).check({"t": LATER}, {"t": EARLIER}, against="r1")
    certificate = certificate.with_series([result])
    listed = [(where, r.name, r.kind) for where, r in certificate.checks()]
    assert listed == [
        ("t", "k-anonymity", "class"),
        ("t", "distinct-l-diversity", "class"),
        ("against release r1", "differencing", "series"),
    ]
    # Read back from its JSON: the same results, in the same order.
    again = checks_of(certificate.to_dict())
    assert [(w, r.name, r.kind, r.figures, r.summary()) for w, r in again] == [
        (w, r.name, r.kind, r.figures, r.summary()) for w, r in certificate.checks()
    ]
    assert not certificate.passed
    assert f"FAILED: {result.summary()}" in certificate.summary().splitlines()


def test_every_release_model_names_the_function_that_judges_it():
    """A release model names its check as ``module:function``; each resolves, and
    the named function gives the model's own result on a release it fails."""
    import importlib

    from ppdm.privacy.release_model import ReleaseModel

    release = {
        name: check
        for name, check in PRIVACY_MODELS.items()
        if issubclass(check, ReleaseModel)
    }
    assert sorted(release) == [
        "k-anonymity-by-containment",
        "partition-anonymity",
        "set-anonymity",
    ]
    # One row per person: every containment set, class and join has one row.
    table = pd.DataFrame({"q": ["a", "b"], "q=a": ["1", "0"], "y": ["0", "1"]})
    for name, check in release.items():
        module, _, function = check.judged_by.partition(":")
        judge = getattr(importlib.import_module(module), function)
        model = check(k=2)
        result = judge(model, {"t": table}, ["q"])
        assert result == model.check_release({"t": table}, ["q"]), name
        assert (result.name, result.passed, result.achieved) == (name, False, 1)
