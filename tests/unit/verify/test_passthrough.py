"""The pass-through check of columns released as is (issue #11).

Known answers on hand-made releases, a plain-Python oracle on random tables
(dict of tuples for the below-k figures, sets of covered values for the
proxy shares), shuffle invariance, the certificate, ``ppdm verify`` of a
published release and the Dask path.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.exceptions import InvalidParameterError
from ppdm.privacy import Requirement
from ppdm.verify import VerifyOptions, verify_files, verify_tables
from ppdm.verify.out_of_core import verify_parquet, verify_tables_out_of_core
from ppdm.verify.passthrough import (
    FIX,
    FIX_IDENTIFIER,
    PassthroughPolicy,
    canonical_text,
    check_passthrough,
)
from ppdm.verify.release_check import check_release

EDUCATION = ["Preschool", "HS-grad", "Some-college", "Bachelors", "Masters", "PhD"]
CODE = {e: i + 1 for i, e in enumerate(EDUCATION)}


def adult_like(rng: np.random.Generator, n: int = 600) -> pd.DataFrame:
    """An original table: two QIs, a 1:1 code of one of them, and more."""
    education = rng.choice(EDUCATION, n)
    return pd.DataFrame(
        {
            "age": rng.integers(20, 60, n),
            "education": education,
            "education-num": [CODE[e] for e in education],  # 1:1 recoding
            "weight": rng.permutation(n) * 7 + 1000,  # unique per row
            "constant": "x",
            "flag": rng.choice(["yes", "no"], n),
            "income": rng.choice(["<=50K", ">50K"], n),
        }
    )


def release_of(original: pd.DataFrame, keep_education: np.ndarray) -> pd.DataFrame:
    """Age to decades, education kept where asked and suppressed elsewhere."""
    decade = original["age"] // 10 * 10
    return pd.DataFrame(
        {
            "age": [f"[{d}, {d + 9}]" for d in decade],
            "education": np.where(keep_education, original["education"], "*"),
            **{
                c: original[c].astype(str)
                for c in ("education-num", "weight", "constant", "flag", "income")
            },
        }
    )


QI = ("age", "education")
REQ = Requirement.of(QI, k=5)


def shuffled(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    order = np.random.default_rng(seed).permutation(len(frame))
    return frame.iloc[order].reset_index(drop=True)


def by_column(results):
    return {r.column: r for r in results}


# -- known answers ---------------------------------------------------------------
def test_a_one_to_one_code_of_a_qi_fails_naming_the_column():
    rng = np.random.default_rng(1)
    original = adult_like(rng)
    # a coarse release that passes k: the decade class only, education hidden
    released = shuffled(release_of(original, np.zeros(len(original), bool)), 3)
    policy = PassthroughPolicy(columns=("education-num",))
    cert = verify_tables(
        {"release.csv": released},
        REQ,
        VerifyOptions(original=original, passthrough=policy),
    )
    [result] = cert.passthrough
    assert result.proxy_shares["education"] == 1.0  # every row's education leaks
    assert result.proxy_attribute == "education"
    assert result.proxy_shares["age"] == 0.0  # the code says nothing of age
    assert result.exceeds == ("proxy_share",)  # the classes stay >= k
    assert not cert.passed and not result.passed
    summary = cert.summary()
    assert "'education-num'" in summary and "education" in summary
    assert FIX in summary and "100%" in summary


def test_the_proxy_share_counts_only_rows_the_release_generalized():
    rng = np.random.default_rng(2)
    original = adult_like(rng)
    keep = rng.random(len(original)) < 0.7
    released = shuffled(release_of(original, keep), 4)
    [result] = check_passthrough(
        released, REQ, PassthroughPolicy(columns=("education-num",)), original
    )
    # each education-num value holds about 100 rows (>= k), one education each
    assert result.proxy_shares["education"] == pytest.approx(
        (~keep).sum() / len(original), abs=0
    )


def test_a_near_unique_column_fails_on_below_k():
    rng = np.random.default_rng(5)
    original = adult_like(rng)
    released = shuffled(release_of(original, np.ones(len(original), bool)), 6)
    policy = PassthroughPolicy(columns=("weight",))
    cert = verify_tables(
        {"t": released}, REQ, VerifyOptions(original=original, passthrough=policy)
    )
    [result] = cert.passthrough
    assert result.unique_share == 1.0 and result.below_k_share == 1.0
    assert result.classes_below_k == result.classes == len(original)
    assert result.exceeds == ("below_k_share",)  # unique, but pins nothing
    assert not cert.passed
    assert "column 'weight' released as is in t" in cert.summary()
    assert "below k=5 (100% of rows, 100% unique)" in cert.summary()


def test_harmless_columns_pass():
    n_classes, size = 12, 20
    classes = np.repeat(np.arange(n_classes), size)
    original = pd.DataFrame(
        {
            "zip": 1000 + classes,
            "sex": np.where(classes % 2 == 0, "F", "M"),
            "constant": 7,
            # binary, split 10/10 inside every class: no small class
            "smoker": np.tile(np.repeat(["yes", "no"], size // 2), n_classes),
        }
    )
    low = original["zip"] // 4 * 4
    zips = [f"[{z}, {z + 3}]" for z in low]
    released = shuffled(original.astype(str).assign(zip=zips), 8)
    requirement = Requirement.of(("zip", "sex"), k=10)
    policy = PassthroughPolicy(columns=("constant", "smoker"))
    cert = verify_tables(
        {"t": released},
        requirement,
        VerifyOptions(original=original, passthrough=policy),
    )
    assert cert.passed
    for result in cert.passthrough:
        assert result.classes_below_k == 0 and result.unique_share == 0.0
        assert result.proxy_share == 0.0 and result.status == "within limits"
    assert cert.summary().endswith("released as is: constant in t, smoker in t")


def test_accepted_columns_pass_flagged():
    rng = np.random.default_rng(9)
    original = adult_like(rng)
    released = release_of(original, np.zeros(len(original), bool))
    # weight is distinct for every row: accepted only with an acknowledgement
    policy = PassthroughPolicy(
        columns=("weight", "education-num", "flag"),
        accepted=("weight", "flag"),
        acknowledged=("weight",),
    )
    cert = verify_tables(
        {"t": released}, REQ, VerifyOptions(original=original, passthrough=policy)
    )
    results = by_column(cert.passthrough)
    assert results["weight"].accepted and results["weight"].flagged
    assert results["weight"].passed
    assert results["weight"].status == "accepted by the data owner"
    assert not results["education-num"].passed  # not accepted
    assert not cert.passed
    only_accepted = PassthroughPolicy(
        columns=("weight",), accepted=("weight",), acknowledged=("weight",)
    )
    cert = verify_tables(
        {"t": released},
        REQ,
        VerifyOptions(original=original, passthrough=only_accepted),
    )
    assert cert.passed
    assert "weight in t (acknowledged by the data owner" in cert.summary()
    entry = cert.to_dict()["passthrough"][0]
    assert entry["accepted"] is True and entry["exceeds"] == ["below_k_share"]
    assert entry["status"] == "accepted by the data owner"
    assert entry["acknowledged"] is True
    assert entry["identifier"] == "100% of its values are distinct"


def test_accepting_a_column_that_looks_like_an_identifier_is_refused():
    rng = np.random.default_rng(9)
    original = adult_like(rng)
    n = len(original)
    last = ("Smith", "Khan", "Rossi", "Meyer")
    names = np.array([f"{a} {b}" for a in ("Ana", "Ben", "Jo") for b in last])
    original = original.assign(patient=names[np.arange(n) % len(names)])  # 12 names
    released = release_of(original, np.zeros(n, bool)).assign(
        patient=original["patient"].to_numpy()
    )
    for column, why in (
        ("weight", "100% of its values are distinct"),
        ("patient", "its values look like a person's name"),
    ):
        policy = PassthroughPolicy(columns=(column,), accepted=(column,))
        cert = verify_tables(
            {"t": released}, REQ, VerifyOptions(original=original, passthrough=policy)
        )
        [result] = cert.passthrough
        assert result.accepted and not result.passed and not cert.passed
        assert result.identifier == why and result.status == "looks like an identifier"
        summary = cert.summary()
        # the advice never leads to releasing it
        assert why in summary and "accept_passthrough does not release" in summary
        assert summary.endswith("declare it identifying, or drop it (role drop)")
        acknowledged = PassthroughPolicy(
            columns=(column,), accepted=(column,), acknowledged=(column,)
        )
        cert = verify_tables(
            {"t": released},
            REQ,
            VerifyOptions(original=original, passthrough=acknowledged),
        )
        assert cert.passed and cert.passthrough[0].acknowledged
    # a name within the limits is no better than one above them
    policy = PassthroughPolicy(columns=("patient",))
    cert = verify_tables(
        {"t": released}, REQ, VerifyOptions(original=original, passthrough=policy)
    )
    assert not cert.passed and cert.passthrough[0].refused


def test_without_the_original_the_proxy_is_not_measured():
    rng = np.random.default_rng(10)
    original = adult_like(rng)
    released = release_of(original, np.zeros(len(original), bool))
    [result] = check_passthrough(
        released, REQ, PassthroughPolicy(columns=("education-num",))
    )
    assert not result.proxy_measured and result.proxy_share is None
    assert result.passed  # the code splits no class: below k holds
    assert "re-verification" in result.note
    assert "proxy not measured" in result.describe()
    assert result.to_dict()["proxy_shares"] is None


def test_a_qi_the_table_withholds_is_hidden():
    """A projection without education still leaks it through its code."""
    rng = np.random.default_rng(11)
    original = adult_like(rng)
    projection = release_of(original, np.ones(len(original), bool)).drop(
        columns="education"
    )
    [result] = check_passthrough(
        projection, REQ, PassthroughPolicy(columns=("education-num",)), original
    )
    assert result.quasi_identifiers == ("age",)
    assert result.proxy_shares["education"] == 1.0


def test_hierarchy_labels_read_through_covers():
    original = pd.DataFrame(
        {
            "education": ["Bachelors"] * 6 + ["Masters"] * 6 + ["PhD"] * 6,
            "code": [13] * 6 + [14] * 6 + [16] * 6,
        }
    )
    # Bachelors and Masters become "Graduate"; PhD's label covers PhD alone
    released = original.astype(str).assign(
        education=["Graduate"] * 12 + ["Doctorate"] * 6
    )
    covers = {
        "education": {"Graduate": ("Bachelors", "Masters"), "Doctorate": ("PhD",)}
    }
    requirement = Requirement.of(("education",), k=6)
    policy = PassthroughPolicy(columns=("code",))
    [result] = check_passthrough(released, requirement, policy, original, covers)
    assert result.proxy_shares["education"] == pytest.approx(12 / 18, abs=0)
    # groups smaller than k pin nothing
    [small] = check_passthrough(
        released, Requirement.of(("education",), k=7), policy, original, covers
    )
    assert small.proxy_shares["education"] == 0.0


def test_numbers_meet_across_writers(tmp_path):
    """A column written as 2.0 by a CSV writer meets the original integer 2."""
    rng = np.random.default_rng(12)
    original = adult_like(rng)
    released = release_of(original, np.zeros(len(original), bool)).assign(
        **{"education-num": original["education-num"].astype(float)}
    )
    path = tmp_path / "release.csv"
    released.to_csv(path, index=False)
    assert "1.0" in path.read_text()
    policy = PassthroughPolicy(columns=("education-num",))
    cert = verify_files(
        {"release": path}, REQ, VerifyOptions(original=original, passthrough=policy)
    )
    assert cert.passthrough[0].proxy_shares["education"] == 1.0
    document = json.loads(cert.to_json())
    assert document["passthrough"][0]["column"] == "education-num"
    assert document["passthrough"][0]["proxy_share"] == 1.0
    assert canonical_text([2, 2.0, "2.0", "02", None, "b"]).tolist() == [
        "2", "2", "2", "2", "", "b",
    ]  # fmt: skip


def test_a_released_value_written_as_a_float_shows_the_integer():
    original = pd.DataFrame({"age": [30] * 5 + [40] * 5, "code": [1] * 5 + [2] * 5})
    requirement = Requirement.of(("age",), k=5)
    policy = PassthroughPolicy(columns=("code",))
    as_float = pd.DataFrame(
        {"age": ["30.0"] * 5 + ["40.0"] * 5, "code": ["1"] * 5 + ["2"] * 5}
    )
    [shown] = check_passthrough(as_float, requirement, policy, original)
    assert shown.proxy_shares == {"age": 0.0}
    # an interval holding one original value shows it; "*" hides it
    hidden = as_float.assign(age=["[30, 39]"] * 5 + ["*"] * 5)
    [result] = check_passthrough(hidden, requirement, policy, original)
    assert result.proxy_shares == {"age": 0.5}


@pytest.mark.parametrize(
    "below, above", [("< 35", ">= 35"), ("(-inf, 35)", "[35, inf)"), ("<= 30", "> 30")]
)
def test_open_intervals_hold_the_raw_values_they_cover(below, above):
    # The verifier reads a comparison (and an earlier release's bracket form)
    # as the interval it is: "< 35" holds only the 30s, so it shows them; one
    # open interval over both values shows neither.
    original = pd.DataFrame({"age": [30] * 5 + [40] * 5, "code": [1] * 5 + [2] * 5})
    requirement = Requirement.of(("age",), k=5)
    policy = PassthroughPolicy(columns=("code",))
    released = pd.DataFrame(
        {"age": [below] * 5 + [above] * 5, "code": ["1"] * 5 + ["2"] * 5}
    )
    [shown] = check_passthrough(released, requirement, policy, original)
    assert shown.proxy_shares == {"age": 0.0}
    half = released.assign(age=[below] * 5 + ["*"] * 5)
    [result] = check_passthrough(half, requirement, policy, original)
    assert result.proxy_shares == {"age": 0.5}
    wide = released.assign(age=["< 45"] * 10)
    [hidden] = check_passthrough(wide, requirement, policy, original)
    assert hidden.proxy_shares == {"age": 1.0}


def test_without_a_policy_nothing_is_checked():
    released = release_of(adult_like(np.random.default_rng(13)), np.ones(600, bool))
    cert = verify_tables({"t": released}, REQ)
    assert cert.passthrough is None and cert.to_dict()["passthrough"] is None


# -- the policy ----------------------------------------------------------------------
def test_policy_round_trip_and_errors():
    policy = PassthroughPolicy(
        columns=["a", "b"], accepted=["b"], max_below_k_share=0.1, max_proxy_share=0
    )
    assert policy.columns == ("a", "b") and policy.max_proxy_share == 0.0
    assert PassthroughPolicy.from_dict(policy.to_dict()) == policy
    assert PassthroughPolicy.from_dict({"columns": ["a"]}).max_proxy_share == 0.01
    assert PassthroughPolicy.from_dict({}) == PassthroughPolicy()  # nothing as is
    released = release_of(adult_like(np.random.default_rng(18)), np.ones(600, bool))
    cert = verify_tables(
        {"t": released}, REQ, VerifyOptions(passthrough=PassthroughPolicy())
    )
    assert cert.passed and cert.to_dict()["passthrough"] == []  # checked, none
    with pytest.raises(InvalidParameterError, match="max_proxy_share.*got 1.5"):
        PassthroughPolicy(columns=("a",), max_proxy_share=1.5)
    with pytest.raises(InvalidParameterError, match="unknown pass-through policy keys"):
        PassthroughPolicy.from_dict({"columns": [], "limit": 1})
    with pytest.raises(InvalidParameterError, match="columns lists a column twice"):
        PassthroughPolicy(columns=("a", "a"))
    with pytest.raises(InvalidParameterError, match="sequence of column names"):
        PassthroughPolicy(columns="a")
    table = pd.DataFrame({"age": ["1"], "education": ["x"]})
    with pytest.raises(InvalidParameterError, match="'age' is both released as is"):
        check_passthrough(table, REQ, PassthroughPolicy(columns=("age",)))


# -- a plain-Python oracle on random tables ----------------------------------------
def oracle(released, original, column, qis, k):
    """Below-k figures from a dict of tuples; proxy shares from sets of values."""
    present = [q for q in qis if q in released.columns]
    sizes = Counter(
        tuple(row) for row in released[[column, *present]].itertuples(index=False)
    )
    n = len(released)
    below = {key: size for key, size in sizes.items() if size < k}
    figures = {
        "classes": len(sizes),
        "classes_below_k": len(below),
        "below_k_share": sum(below.values()) / n,
        "unique_share": sum(1 for s in sizes.values() if s == 1) / n,
    }

    def text(value):
        return str(int(float(value)))  # the test's values are integers or letters

    shares = {}
    for q in qis:
        values = {str(v) for v in original[q]}

        def covered(cell, values=values):
            if cell == "*":
                return set(values)
            if cell.startswith("{"):
                return values & set(cell[1:-1].split("|"))
            if cell.startswith("["):
                lo, hi = (int(x) for x in cell[1:-1].split(", "))
                return {v for v in values if v.isdigit() and lo <= int(v) <= hi}
            return values & {cell}

        groups = defaultdict(list)
        for v, x in zip(original[column], original[q]):
            groups[text(v)].append(str(x))
        pins = {
            v: xs[0] for v, xs in groups.items() if len(xs) >= k and len(set(xs)) == 1
        }
        cells = released[q] if q in released.columns else ["*"] * n
        hidden = sum(
            1
            for v, cell in zip(released[column], cells)
            if text(v) in pins and covered(cell) != {pins[text(v)]}
        )
        shares[q] = hidden / n
    return figures, shares


@st.composite
def random_release(draw):
    n = draw(st.integers(1, 60))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n_codes = draw(st.integers(1, 6))
    age = rng.integers(20, 20 + draw(st.integers(1, 5)), n)
    letters = np.array(list("abcd"))[: draw(st.integers(1, 4))]
    grade = rng.choice(letters, n)
    code = rng.integers(0, n_codes, n)
    if draw(st.booleans()):  # a code that pins age sometimes
        code = age - 20
    original = pd.DataFrame({"age": age, "grade": grade, "code": code})
    # generalize cell by cell: kept, an interval / a set holding it, or "*"
    age_cells = [
        rng.choice(
            [str(a), f"[{a - rng.integers(0, 2)}, {a + rng.integers(0, 2)}]", "*"]
        )
        for a in age
    ]
    grade_cells = [
        rng.choice(
            [g, "{" + "|".join(sorted({g, str(rng.choice(letters))})) + "}", "*"]
        )
        for g in grade
    ]
    writes_float = draw(st.booleans())
    released = pd.DataFrame(
        {
            "age": age_cells,
            "grade": grade_cells,
            "code": [f"{c}.0" if writes_float else str(c) for c in code],
        }
    )
    if draw(st.booleans()):
        released = released.drop(columns=draw(st.sampled_from(["age", "grade"])))
    return original, shuffled(released, seed), draw(st.integers(1, 6))


@settings(max_examples=80, deadline=None)
@given(random_release())
def test_figures_match_a_plain_python_count(case):
    original, released, k = case
    requirement = Requirement.of(("age", "grade"), k=k)
    policy = PassthroughPolicy(columns=("code",))
    [result] = check_passthrough(released, requirement, policy, original)
    figures, shares = oracle(released, original, "code", ("age", "grade"), k)
    assert result.classes == figures["classes"]
    assert result.classes_below_k == figures["classes_below_k"]
    assert result.below_k_share == pytest.approx(figures["below_k_share"], abs=1e-12)
    assert result.unique_share == pytest.approx(figures["unique_share"], abs=1e-12)
    assert result.proxy_shares == pytest.approx(shares, abs=1e-12)
    # the row order of either table changes nothing
    again = check_passthrough(
        shuffled(released, 1), requirement, policy, shuffled(original, 2)
    )
    assert [r.to_dict() for r in again] == [result.to_dict()]


def test_shuffling_changes_no_figure():
    rng = np.random.default_rng(14)
    original = adult_like(rng)
    released = release_of(original, rng.random(len(original)) < 0.5)
    policy = PassthroughPolicy(columns=("education-num", "weight", "flag"))
    first = check_passthrough(released, REQ, policy, original)
    for seed in range(3):
        other = check_passthrough(
            shuffled(released, seed), REQ, policy, shuffled(original, seed + 10)
        )
        assert [r.to_dict() for r in other] == [r.to_dict() for r in first]
    assert first[0].proxy_shares["education"] > 0.4  # not a trivial zero


# -- ppdm verify of a published release ----------------------------------------------
def publish(directory, released, policy=None):
    directory.mkdir()
    path = directory / "release.csv"
    released.to_csv(path, index=False)
    manifest = {
        "release_id": "r1",
        "dataset": "test",
        "algorithm": "hand",
        "requirement": REQ.to_dict(),
        "files": [
            {
                "path": "release.csv",
                "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            }
        ],
    }
    if policy is not None:
        manifest["passthrough"] = policy.to_dict()
    (directory / "manifest.json").write_text(json.dumps(manifest))
    return directory


def test_release_check_re_measures_below_k_from_the_manifest(tmp_path):
    released = release_of(adult_like(np.random.default_rng(15)), np.ones(600, bool))
    failing = publish(
        tmp_path / "failing", released, PassthroughPolicy(columns=("weight",))
    )
    outcome = check_release(failing)
    assert not outcome.passed and outcome.lines[-1] == "FAIL"
    text = "\n".join(outcome.lines)
    assert "column 'weight' released as is in release" in text
    # weight is distinct for every row: the advice never offers accepting it
    assert "proxy not measured" in text and FIX_IDENTIFIER in text
    assert FIX not in text
    refused = publish(
        tmp_path / "refused",
        released,
        PassthroughPolicy(columns=("weight",), accepted=("weight",)),
    )
    assert not check_release(refused).passed
    accepted = publish(
        tmp_path / "accepted",
        released,
        PassthroughPolicy(
            columns=("weight",), accepted=("weight",), acknowledged=("weight",)
        ),
    )
    outcome = check_release(accepted)
    assert outcome.passed
    assert any(line.endswith("accepted by the data owner") for line in outcome.lines)
    older = check_release(publish(tmp_path / "older", released))
    assert older.passed
    assert "columns released as is: not checked" in "\n".join(older.lines)


# -- the Dask path ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def dask_client():
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=1,
            threads_per_worker=2,
            processes=False,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


def test_dask_paths_give_the_in_memory_figures(tmp_path, dask_client):
    rng = np.random.default_rng(16)
    original = adult_like(rng)
    released = shuffled(release_of(original, rng.random(len(original)) < 0.6), 17)
    csv = tmp_path / "release.csv"
    released.to_csv(csv, index=False)
    parquet = tmp_path / "release.parquet"
    released.to_parquet(parquet, index=False)
    policy = PassthroughPolicy(
        columns=("education-num", "weight", "flag", "constant"), accepted=("flag",)
    )
    options = VerifyOptions(original=original, passthrough=policy)
    in_memory = verify_files({"release": csv}, REQ, options)
    out_of_core = verify_tables_out_of_core(
        {"release": csv}, REQ, options, client=dask_client
    )
    assert out_of_core.to_json() == in_memory.to_json()
    from_parquet = verify_parquet(
        parquet,
        REQ,
        options,
        engine="dask",
        name="release",
        client=dask_client,
    )
    pandas_parquet = verify_parquet(
        parquet, REQ, options, engine="pandas", name="release"
    )
    assert from_parquet.to_json() == pandas_parquet.to_json()
    assert from_parquet.to_dict()["passthrough"] == in_memory.to_dict()["passthrough"]
    results = by_column(in_memory.passthrough)
    assert results["education-num"].proxy_shares["education"] > 0.3
    assert results["weight"].unique_share == 1.0
    # without the original, Dask measures below k only
    bare = verify_tables_out_of_core(
        {"release": csv}, REQ, VerifyOptions(passthrough=policy), client=dask_client
    )
    assert all(not r.proxy_measured for r in bare.passthrough)
    assert [r.below_k_share for r in bare.passthrough] == [
        r.below_k_share for r in in_memory.passthrough
    ]
