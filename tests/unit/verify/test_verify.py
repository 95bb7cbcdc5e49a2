"""The verifier on released CSV files: certificates, failures, determinism."""

from __future__ import annotations

import hashlib
import json

import pandas as pd
import pytest

import ppdm
from ppdm.exceptions import InvalidParameterError, SourceError, VerificationError
from ppdm.model import AnonymizationSpec
from ppdm.privacy import (
    DistinctLDiversity,
    KAnonymity,
    RecursiveCLDiversity,
    Requirement,
    TCloseness,
)
from ppdm.privacy.measures import distinct_l_diversity, k_anonymity
from ppdm.verify import (
    PassthroughPolicy,
    VerifyOptions,
    read_released_table,
    verify_files,
    verify_tables,
)

QI = ("age", "sex")
GOOD = pd.DataFrame(
    {
        "age": ["[17, 25]"] * 3 + ["[26, 40]"] * 3 + ["*"] * 2,
        "sex": ["Male"] * 3 + ["Female"] * 3 + ["*"] * 2,
        "income": ["<=50K", ">50K", "<=50K", ">50K", "<=50K", ">50K", "<=50K", ">50K"],
    }
)
BAD = pd.DataFrame(
    {
        "age": ["[17, 25]", "[17, 25]", "[26, 40]", "[26, 40]", "[26, 40]", "", "*"],
        "sex": ["Male", "Male", "Female", "Female", "Female", "Female", "*"],
        "income": ["<=50K", "<=50K", "<=50K", ">50K", ">50K", ">50K", "<=50K"],
    }
)


def write(path, frame):
    frame.to_csv(path, index=False)
    return path


def test_read_released_table_keeps_marker_and_missing(tmp_path):
    path = tmp_path / "release.csv"
    path.write_text("age,sex\n*,Male\n,Female\nNA,null\n")
    table = read_released_table(path)
    assert table["age"].tolist() == ["*", "", "NA"]
    assert table["sex"].tolist() == ["Male", "Female", "null"]
    assert k_anonymity(table, ["age"]) == 1 and len(table) == 3


def test_read_released_table_errors_name_the_file(tmp_path):
    with pytest.raises(SourceError, match="nowhere.csv"):
        read_released_table(tmp_path / "nowhere.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(SourceError, match="empty.csv"):
        read_released_table(empty)
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"\xff\xfe\x00\x81\x82\n\x00")
    with pytest.raises(SourceError, match="binary.csv"):
        read_released_table(binary)


def test_failing_file_names_the_violating_classes(tmp_path):
    path = write(tmp_path / "release.csv", BAD)
    cert = verify_files({"release.csv": path}, Requirement.of(QI, "income", k=2, l=2))
    assert not cert.passed
    k_result, l_result = cert.tables[0].results
    assert (k_result.achieved, k_result.n_violating_classes) == (1, 2)
    # missing age ("") and the suppressed row are separate singleton classes
    assert {(e["age"], e["sex"], e["size"]) for e in k_result.examples} == {
        ("", "Female", 1),
        ("*", "*", 1),
    }
    # [17, 25]/Male holds only "<=50K"
    assert {(e["age"], e["sex"]) for e in l_result.examples} == {
        ("[17, 25]", "Male"),
        ("", "Female"),
        ("*", "*"),
    }
    text = cert.summary()
    assert text.splitlines()[0].startswith(
        "FAILED: 2-anonymity not met in release.csv: achieved k=1; "
        "2 violating classes, e.g. {age: "
    )
    assert "distinct 2-diversity of income not met in release.csv: achieved l=1" in text
    assert "{age: [17, 25], sex: Male} (2 rows)" in text
    with pytest.raises(VerificationError) as info:
        cert.raise_for_failure()
    assert info.value.certificate == cert.to_dict()


def test_passing_release_certificate(tmp_path):
    path = write(tmp_path / "release.csv", GOOD)
    requirement = Requirement.of(QI, "income", k=2, l=2, t=0.5)
    cert = verify_files(
        {"release.csv": path}, requirement, VerifyOptions(input_sha256="ab" * 32)
    )
    assert cert.passed, cert.summary()
    assert cert.summary().startswith("PASSED: release.csv (8 rows): 2-anonymity (k=2)")
    d = cert.to_dict()
    assert list(d) == [
        "verifier", "passed", "requirement", "input_sha256", "release_sha256",
        "rows", "tables", "passthrough",
    ]  # fmt: skip
    assert d["passthrough"] is None  # no columns released as is were declared
    assert d["verifier"] == {"name": "ppdm.verify", "version": ppdm.__version__}
    assert d["input_sha256"] == "ab" * 32
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert d["release_sha256"]["release.csv"] == digest
    assert d["rows"] == {"release.csv": 8}
    table = d["tables"]["release.csv"]
    assert table["measures"]["k"] == 2
    assert table["measures"]["distinct_l"] == 2
    assert table["measures"]["entropy_l"] == pytest.approx(1.8898815748)
    # classes 2:1 and 1:2 against 4:4 overall -> EMD 1/6; the * class 0
    assert table["measures"]["t"] == pytest.approx(1 / 6)
    assert [m["model"] for m in table["models"]] == [
        "2-anonymity",
        "distinct 2-diversity of income",
        "0.5-closeness of income",
    ]
    assert table["risk"]["prosecutor_max"] == 0.5
    json.dumps(d, allow_nan=False)
    assert measures_equal_independent(read_released_table(path))


def measures_equal_independent(table):
    return (
        k_anonymity(table, list(QI)) == 2
        and distinct_l_diversity(table, list(QI), "income") == 2
    )


def test_certificates_are_deterministic(tmp_path):
    a = write(tmp_path / "a.csv", GOOD)
    b = write(tmp_path / "b.csv", BAD)
    req = Requirement.of(QI, "income", k=2, l=2, t=0.2)
    first = verify_files({"a.csv": a, "b.csv": b}, req, VerifyOptions(original=GOOD))
    second = verify_files({"b.csv": b, "a.csv": a}, req, VerifyOptions(original=GOOD))
    assert first.to_json() == second.to_json()
    assert list(first.to_dict()["tables"]) == ["a.csv", "b.csv"]
    # the pass-through results follow the table names too
    policy = PassthroughPolicy(columns=("income",))
    req_k = Requirement.of(QI, k=2)
    first = verify_files(
        {"b.csv": b, "a.csv": a}, req_k, VerifyOptions(passthrough=policy)
    )
    second = verify_files(
        {"a.csv": a, "b.csv": b}, req_k, VerifyOptions(passthrough=policy)
    )
    assert first.to_json() == second.to_json()
    assert [r["table"] for r in first.to_dict()["passthrough"]] == ["a.csv", "b.csv"]


def test_table_without_some_qis_or_sensitive_attribute(tmp_path):
    projection = write(tmp_path / "p1.csv", GOOD[["age", "income"]])
    no_sa = write(tmp_path / "p2.csv", BAD[["age", "sex"]])
    cert = verify_files(
        {"p1.csv": projection, "p2.csv": no_sa}, Requirement.of(QI, "income", k=2, l=2)
    )
    p1, p2 = cert.tables
    assert p1.quasi_identifiers == ("age",) and p1.missing_quasi_identifiers == ("sex",)
    assert "missing: sex" in p1.to_dict()["notes"][0]
    assert p1.passed
    assert [r.measure for r in p2.results] == ["k"]
    assert "sensitive attribute not released" in p2.to_dict()["notes"][0]
    assert not p2.passed and not cert.passed


def test_verify_tables_with_original_population():
    original = pd.DataFrame(
        {"age": [18, 20, 24, 30, 33, 39, 50, 60], "sex": ["Male"] * 3 + ["Female"] * 5}
    )
    requirement = Requirement.of(QI, "income", k=2)
    cert = verify_tables(
        {"release": GOOD}, requirement, VerifyOptions(original=original)
    )
    risk = cert.tables[0].risk
    # [17,25]/Male covers 3 people, [26,40]/Female 3, */* all 8
    assert risk.journalist_max == pytest.approx(1 / 3)
    assert risk.marketer == pytest.approx((3 / 3 + 3 / 3 + 2 / 8) / 8)


def test_requirement_round_trip_models_and_validation():
    req = Requirement.of(QI, "income", k=5, l=3, l_variant="recursive", c=2.5, t=0.2)
    assert Requirement.from_dict(json.loads(json.dumps(req.to_dict()))) == req
    assert req.models == (
        KAnonymity(5),
        RecursiveCLDiversity("income", 2.5, 3),
        TCloseness("income", 0.2),
    )
    assert Requirement.of(list(QI), None, k=3).models == (KAnonymity(3),)
    distinct = Requirement.of(QI, "income", k=3, l=2).models[1]
    assert distinct == DistinctLDiversity("income", 2)
    spec = AnonymizationSpec.of(QI, "income", "target", k=4, l=2)
    assert spec.requirement == Requirement.of(QI, "income", k=4, l=2)
    for bad, match in [
        (dict(k=0), "k must be"),
        (dict(k=2, l=0), "l must be"),
        (dict(k=2, l=2, l_variant="fancy"), "l_variant"),
        (dict(k=2, l=2, l_variant="recursive"), "needs c"),
        (dict(k=2, t=2.0), "t must be"),
    ]:
        with pytest.raises(InvalidParameterError, match=match):
            Requirement.of(QI, "income", **bad)
    with pytest.raises(InvalidParameterError, match="also a quasi-identifier"):
        Requirement.of(QI, "age", k=2, l=2)
    with pytest.raises(InvalidParameterError, match="sensitive_attribute"):
        Requirement.of(QI, None, k=2, l=2)
    with pytest.raises(InvalidParameterError, match="unknown requirement keys"):
        Requirement.from_dict({**req.to_dict(), "when": "now"})
    with pytest.raises(InvalidParameterError, match="no released tables"):
        verify_tables({}, req)


def test_distinct_value_bounds_are_per_sensitive_attribute():
    req = Requirement(
        QI,
        (KAnonymity(2), DistinctLDiversity("a", 3), TCloseness("b", 0.5)),
    )
    assert req.minimal_distinct_values_of("a") == 3
    assert req.minimal_distinct_values_of("b") == 1
    assert req.minimal_distinct_values == 3
