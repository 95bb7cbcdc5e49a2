"""fs-anonymity: the release, its stated guarantee, refusals, determinism."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ppdm.algorithms import ALGORITHMS, get_algorithm
from ppdm.algorithms.fs_anonymity import FsAnonymity
from ppdm.exceptions import (
    InfeasibleConstraintError,
    InvalidParameterError,
    UnsupportedRequirementError,
)
from ppdm.model import AnonymizationSpec
from ppdm.prepare import datasets
from ppdm.prepare.discretize import discretize
from ppdm.privacy import KAnonymityByContainment, Requirement
from ppdm.release.artifacts import table_to_csv_bytes
from ppdm.selection import containment_brute_force, projection_groups
from ppdm.verify import verify_tables

QIS = (
    "age",
    "personal-status-sex",
    "job",
    "housing",
    "foreign-worker",
    "employment-since",
)


@pytest.fixture(scope="module")
def german() -> pd.DataFrame:
    table = datasets.load("german")
    return discretize(table, ["age"], None, method="equal-frequency", n_bins=4).table


def _spec(k: int, *, adapt: bool = True) -> AnonymizationSpec:
    """The requirement at k; ``adapt``: as a containment configuration states it."""
    requirement = Requirement.of(QIS, k=k)
    if adapt:
        requirement = FsAnonymity(criterion="containment").adapt_requirement(
            requirement, target="credit"
        )
    return AnonymizationSpec(requirement, "credit")


def _published(frame: pd.DataFrame) -> pd.DataFrame:
    import io

    return pd.read_csv(
        io.BytesIO(table_to_csv_bytes(frame)), dtype=str, keep_default_na=False
    )


def test_registered_and_the_requirement_states_containment_only_when_chosen():
    assert ALGORITHMS["fs-anonymity"] is FsAnonymity
    adapted = _spec(5).requirement
    assert adapted.models == (KAnonymityByContainment(5),)
    assert adapted.release_models == adapted.models
    assert str(adapted).startswith("5-anonymity by containment")
    # the default criterion keeps ordinary k-anonymity of the feature vectors
    plain = Requirement.of(QIS, k=5)
    assert FsAnonymity().adapt_requirement(plain, target="credit") == plain


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"objective": "hamdist"},
        {"stopping": "literal"},
        {"method": "maximal", "maximal_mode": "frequent"},
        {"method": "maximal", "budget": 200},
    ],
    ids=["distcnt", "hamdist", "literal", "frequent", "exact-budget"],
)
def test_release_is_the_selected_features_and_verifies(german, params):
    spec = _spec(5)
    params = {**params, "criterion": "containment"}
    release = get_algorithm("fs-anonymity", **params).anonymize(
        german, spec, np.random.default_rng(0)
    )
    table = release.table
    features = release.evidence["selected_features"]
    assert list(table.columns) == [*features, "credit"]
    assert features and all(f.split("=", 1)[0] in QIS for f in features)
    assert table["credit"].tolist() == german["credit"].tolist()
    bits = table[features].to_numpy() == 1
    assert containment_brute_force(bits).min() >= 5
    assert (
        release.evidence["achieved_containment"] == containment_brute_force(bits).min()
    )
    certificate = verify_tables({"release": _published(table)}, spec.requirement)
    assert certificate.passed, certificate.summary()
    assert certificate.release_results[0].achieved >= 5
    # the exact classes of the same columns are reported beside containment,
    # with the attacker containment assumes
    classes = certificate.tables[0].feature_classes
    exact = np.unique(bits, axis=0, return_counts=True)[1]
    assert classes["k"] == exact.min() == certificate.tables[0].measures["k"]
    assert classes["n_classes"] == len(exact)
    assert "knows only which" in classes["attacker"]
    assert "knows only which" in certificate.summary()
    json.dumps(dict(release.evidence), allow_nan=False)
    if params.get("method") == "maximal":
        assert release.evidence["n_maximal_sets"] >= 1
        if params.get("budget") == 200:
            assert release.evidence["fallback"] is True
            assert release.evidence["maximal_mode"] == "frequent"


def test_same_seed_same_bytes_and_row_order_does_not_matter(german):
    spec = _spec(8)
    algorithm = FsAnonymity()
    first = algorithm.anonymize(german, spec, np.random.default_rng(1))
    again = algorithm.anonymize(german, spec, np.random.default_rng(1))
    assert table_to_csv_bytes(first.table) == table_to_csv_bytes(again.table)
    assert first.evidence == again.evidence
    order = np.random.default_rng(5).permutation(len(german))
    shuffled = algorithm.anonymize(german.iloc[order], spec, np.random.default_rng(2))
    assert shuffled.evidence["selected_features"] == first.evidence["selected_features"]
    assert shuffled.evidence["objective_trace"] == first.evidence["objective_trace"]


@pytest.mark.parametrize(
    "params",
    [{}, {"method": "maximal"}, {"method": "maximal", "budget": 20}],
    ids=["greedy", "maximal", "maximal-budget"],
)
def test_plain_k_anonymity_is_the_default_and_verifies(german, params):
    spec = _spec(5, adapt=False)
    release = FsAnonymity(**params).anonymize(german, spec, np.random.default_rng(0))
    features = release.evidence["selected_features"]
    assert release.evidence["constraint"] == "k-anonymity"
    assert features
    ids = projection_groups(
        release.table[features].to_numpy() == 1, range(len(features))
    )
    assert np.bincount(ids).min() >= 5 and release.evidence["achieved_k"] >= 5
    certificate = verify_tables(
        {"release": _published(release.table)}, spec.requirement
    )
    assert certificate.passed, certificate.summary()
    assert certificate.tables[0].measures["k"] == np.bincount(ids).min()
    assert certificate.tables[0].feature_classes["attacker"] is None
    if params.get("budget") == 20:
        assert release.evidence["fallback"] is True
        assert release.evidence["maximal_mode"] == "partial"
    contained = FsAnonymity(criterion="containment", **params).anonymize(
        german, _spec(5), np.random.default_rng(0)
    )
    if "budget" not in params:  # the fallbacks differ, so sizes may not compare
        assert len(contained.evidence["selected_features"]) >= len(features)


def test_training_view_reads_the_features_as_quasi_identifier_cells(german):
    release = FsAnonymity().anonymize(german, _spec(5), np.random.default_rng(0))
    (view,) = FsAnonymity().training_views(release)
    domains = release.evidence["encoding"]
    attributes = {f.split("=", 1)[0] for f in release.evidence["selected_features"]}
    assert set(view.columns) == attributes | {"credit"}
    for attribute in attributes:
        original = german[attribute].astype(str).to_numpy()
        for cell, value in zip(view[attribute], original):
            assert (
                cell == value
                or (cell.startswith("{") and value in cell[1:-1].split("|"))
                or (cell in domains[attribute] and cell == value)
            )


def test_refusals_name_what_is_wrong(german):
    with_l = Requirement.of(QIS, "purpose", k=5, l=2)
    adapted = FsAnonymity(criterion="containment").adapt_requirement(
        with_l, target="credit"
    )
    with pytest.raises(
        UnsupportedRequirementError, match="distinct-l-diversity.*l = 1"
    ):
        FsAnonymity.check_requirement(adapted, target="credit")
    three = german.assign(credit=np.resize(["a", "b", "c"], len(german)))
    with pytest.raises(InvalidParameterError, match="two classes.*'credit' has 3"):
        FsAnonymity().anonymize(three, _spec(5), np.random.default_rng(0))
    with pytest.raises(InfeasibleConstraintError, match="1000"):
        FsAnonymity().anonymize(german, _spec(1001), np.random.default_rng(0))
    with pytest.raises(UnsupportedRequirementError, match="'exact'"):
        FsAnonymity(method="maximal", maximal_mode="frequent").anonymize(
            german, _spec(5, adapt=False), np.random.default_rng(0)
        )
    with pytest.raises(InvalidParameterError, match="'objective'"):
        FsAnonymity(objective="cm").anonymize(
            german, _spec(5), np.random.default_rng(0)
        )


def test_one_class_releases_only_the_target(german):
    single = german.assign(credit="good")
    release = FsAnonymity().anonymize(single, _spec(5), np.random.default_rng(0))
    assert list(release.table.columns) == ["credit"]
    assert release.evidence["selected_features"] == []
