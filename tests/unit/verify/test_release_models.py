"""Release models: judged on all released tables together by the verifier.

A test-only release model (every table must hold the same number of rows, a
property no single table shows) exercises the plumbing: the requirement keeps
it apart from the class models, the certificate carries its result (and only
then a ``release`` key), a failure fails the certificate with a readable
line, the out-of-core verifier refuses it, and an algorithm's
``adapt_requirement`` puts it into the configuration's requirement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import pandas as pd
import pytest
from toy_algorithms import TwoProjections

from ppdm.config import default_config
from ppdm.exceptions import InvalidParameterError
from ppdm.privacy import PRIVACY_MODELS, KAnonymity, Requirement
from ppdm.privacy.release_model import ReleaseModel
from ppdm.privacy.result import PrivacyResult
from ppdm.verify import verify_files, verify_tables
from ppdm.verify.out_of_core import verify_tables_out_of_core


@dataclass(frozen=True)
class EqualRows(ReleaseModel):
    """Every released table has the same number of rows (test-only)."""

    name: ClassVar[str] = "equal-rows"
    measure: ClassVar[str] = "tables"

    def __str__(self) -> str:
        return "equal rows"

    def describe(self) -> dict[str, Any]:
        return {"model": self.name}

    def check_release(
        self, tables: Mapping[str, pd.DataFrame], quasi_identifiers: Sequence[str]
    ) -> PrivacyResult:
        rows = {name: len(t) for name, t in tables.items()}
        passed = len(set(rows.values())) <= 1
        return PrivacyResult(
            model=str(self),
            requirement=self.describe(),
            measure=self.measure,
            achieved=len(rows),
            passed=passed,
            n_classes=0,
            n_violating_classes=0,
            n_violating_rows=0,
            examples=() if passed else ({"rows": str(sorted(rows.items()))},),
        )


@pytest.fixture
def equal_rows(monkeypatch):
    monkeypatch.setitem(PRIVACY_MODELS, EqualRows.name, EqualRows)


def _tables(second_rows: int) -> dict[str, pd.DataFrame]:
    return {
        "projection-1": pd.DataFrame({"age": ["a"] * 4, "y": list("ynyn")}),
        "projection-2": pd.DataFrame(
            {"zip": ["z"] * second_rows, "y": ["y"] * second_rows}
        ),
    }


def test_the_requirement_keeps_release_models_apart_from_class_models(equal_rows):
    req = Requirement(("age", "zip"), (KAnonymity(2), EqualRows()))
    assert req.class_models == (KAnonymity(2),)
    assert req.release_models == (EqualRows(),)
    assert req.minimal_class_size == 2
    assert req.decided_by_bounds
    assert Requirement.from_dict(req.to_dict()) == req
    only = Requirement(("age",), (EqualRows(),))
    assert only.minimal_class_size == 1 and only.l == 1


def test_the_certificate_carries_release_results_and_fails_on_them(equal_rows):
    req = Requirement(("age", "zip"), (KAnonymity(2), EqualRows()))
    good = verify_tables(_tables(4), req)
    assert good.passed
    assert [r.model for r in good.release_results] == ["equal rows"]
    assert good.to_dict()["release"][0]["passed"] is True
    assert "all tables together: equal rows" in good.summary()

    bad = verify_tables(_tables(3), req)
    assert not bad.passed
    assert all(t.passed for t in bad.tables)  # no single table shows it
    assert "equal rows not met by the released tables together" in bad.summary()
    assert "projection-2" in bad.summary()


def test_a_certificate_without_release_models_has_no_release_key():
    req = Requirement(("age", "zip"), (KAnonymity(2),))
    assert "release" not in verify_tables(_tables(3), req).to_dict()


def test_files_are_checked_together(equal_rows, tmp_path):
    req = Requirement(("age", "zip"), (KAnonymity(2), EqualRows()))
    files = {}
    for name, table in _tables(3).items():
        files[name] = tmp_path / f"{name}.csv"
        table.to_csv(files[name], index=False)
    certificate = verify_files(files, req)
    assert not certificate.passed and not certificate.release_results[0].passed
    with pytest.raises(InvalidParameterError, match="judge.*together"):
        verify_tables_out_of_core(files, req)


class EqualRowsProjections(TwoProjections):
    """Two projections whose releases are also checked for equal rows."""

    name: ClassVar[str] = "equal-rows-projections"
    supported_models: ClassVar[frozenset[str]] = frozenset(
        {"k-anonymity", "distinct-l-diversity", "equal-rows"}
    )

    @classmethod
    def adapt_requirement(cls, requirement, *, target):
        return Requirement(
            requirement.quasi_identifiers,
            (*requirement.models, EqualRows()),
            requirement.suppression_marker,
        )


def test_the_configuration_takes_the_algorithms_adapted_requirement(
    equal_rows, monkeypatch
):
    from ppdm.algorithms import ALGORITHMS

    monkeypatch.setitem(ALGORITHMS, EqualRowsProjections.name, EqualRowsProjections)
    plain = default_config("german")
    assert plain.requirement.release_models == ()
    config = plain.with_overrides(algorithm=EqualRowsProjections.name)
    assert config.requirement.release_models == (EqualRows(),)
    assert config.requirement.class_models == plain.requirement.class_models
