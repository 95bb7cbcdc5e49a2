"""SafePub: derived parameters, the exponential mechanism, the release, the randomness.

Known answers of Li, Qardaji and Su's ``d(k, beta, epsilon)`` are worked by
hand at ``epsilon = ln 2`` (then ``beta = 1/2`` and ``gamma = 3/4``), and the
implementation is cross-checked against a direct summation of the binomial
terms over a long range of ``n`` (no Chernoff stopping rule).
"""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ppdm.algorithms import get_algorithm
from ppdm.algorithms.safepub import (
    SafePub,
    default_delta,
    delta_for_k,
    derive_parameters,
    exponential_mechanism,
    keyed_generator,
    safepub_search,
)
from ppdm.exceptions import InfeasibleConstraintError, InvalidParameterError
from ppdm.generalization.hierarchies import Hierarchy
from ppdm.model import AnonymizationSpec
from ppdm.privacy import Requirement
from ppdm.privacy.differential import PrivacyCost
from ppdm.release.artifacts import table_to_csv_bytes
from ppdm.verify.differential import check_differential_privacy

KEY_VARIABLE = "PPDM_TEST_SAFEPUB_KEY"


def direct_delta(k: int, beta: float, epsilon: float, n_max: int = 1500) -> float:
    """max over n_m <= n <= n_max of P[Bin(n, beta) > gamma n], term by term.

    Terms in log space (log-gamma), summed for every n: no survival function
    and no stopping rule, unlike the implementation.
    """
    power = math.exp(epsilon)
    gamma = (power - 1 + beta) / power
    n_m = max(math.ceil(k / gamma - 1), 1)
    best = 0.0
    for n in range(n_m, n_max + 1):
        j = np.arange(math.floor(gamma * n) + 1, n + 1)
        log_terms = (
            math.lgamma(n + 1)
            - np.array([math.lgamma(v + 1) + math.lgamma(n - v + 1) for v in j])
            + j * math.log(beta)
            + (n - j) * math.log1p(-beta)
        )
        best = max(best, float(np.exp(log_terms).sum()))
    return best


# ------------------------------------------------------------- parameters
@pytest.mark.parametrize(("k", "expected"), [(1, 1 / 2), (2, 5 / 16), (3, 5 / 16)])
def test_delta_known_answers_at_epsilon_ln2(k: int, expected: float) -> None:
    """beta = 1 - e^-ln2 = 1/2 and gamma = (2 - 1 + 1/2) / 2 = 3/4.

    k = 1: n_m = 1, P[Bin(1, 1/2) > 0] = 1/2 is the largest term. k = 2, 3:
    n_m = 2, 3; the terms are 1/4 (n = 2), 1/8 (n = 3), 6/32 (n = 5), ...
    and at n = 4, where gamma n = 3 is an integer, the implementation counts
    j >= 3 rather than j > 3 (a floor taken low, so that floating-point
    noise can never drop a term): P[Bin(4, 1/2) >= 3] = 5/16, above the
    theorem's 1/16 there, and the largest term for both.
    """
    assert delta_for_k(k, 0.5, math.log(2)) == pytest.approx(expected, rel=1e-9)


def test_derived_k_at_epsilon_ln2() -> None:
    beta, k = derive_parameters(math.log(2), 0.2)
    assert beta == pytest.approx(0.5)
    # n_m = ceil(k / (3/4) - 1); from k = 4 on, n >= 5 and the largest term
    # is P[Bin(5, 1/2) >= 4] = 6/32 <= 0.2 (n = 4 no longer counts).
    assert k == 4
    assert delta_for_k(4, 0.5, math.log(2)) == pytest.approx(6 / 32, rel=1e-9)


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 0.5, 1.0, 2.0])
def test_derived_k_is_the_smallest_meeting_delta(epsilon: float) -> None:
    delta = 1e-6
    beta, k = derive_parameters(epsilon, delta)
    assert beta == pytest.approx(1 - math.exp(-epsilon))
    assert delta_for_k(k, beta, epsilon) <= delta < delta_for_k(k - 1, beta, epsilon)


@pytest.mark.parametrize(("k", "epsilon"), [(5, 0.5), (12, 1.0), (30, 2.0)])
def test_delta_agrees_with_direct_summation(k: int, epsilon: float) -> None:
    beta = 1 - math.exp(-epsilon)
    assert delta_for_k(k, beta, epsilon) == pytest.approx(
        direct_delta(k, beta, epsilon), rel=1e-6
    )


def test_default_delta_is_below_one_over_n() -> None:
    assert default_delta(30_162) == pytest.approx(1e-6)
    assert default_delta(1_000) == pytest.approx(1e-4)
    for n in (1, 9, 10, 11, 999, 123_456):
        assert default_delta(n) <= 1 / (10 * n)


def test_privacy_cost_is_epsilon_and_resolved_delta() -> None:
    assert SafePub(epsilon=0.5).privacy_cost(30_162) == PrivacyCost(0.5, 1e-6)
    assert SafePub(epsilon=2.0, delta=1e-8).privacy_cost(10) == PrivacyCost(2.0, 1e-8)
    with pytest.raises(InvalidParameterError, match="'epsilon'"):
        SafePub(epsilon=0).privacy_cost(100)


# ------------------------------------------------------------- mechanism
def test_exponential_mechanism_frequencies_match_its_distribution() -> None:
    scores = np.array([0.0, 1.0, 2.5, 4.0])
    epsilon, sensitivity, draws = 1.0, 1.0, 20_000
    rng = np.random.default_rng(20240517)
    picked = [
        exponential_mechanism(scores, epsilon, sensitivity, rng) for _ in range(draws)
    ]
    observed = np.bincount(picked, minlength=len(scores))
    weights = np.exp(epsilon * scores / (2 * sensitivity))
    expected = draws * weights / weights.sum()
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    # and the mechanism is not uniform: the test could fail
    assert stats.chisquare(observed).pvalue < 1e-6


def test_first_search_step_on_a_toy_lattice_follows_the_mechanism() -> None:
    """Lattice 2 x 2: from the top (1, 1) the candidates are (0, 1) and (1, 0)."""
    table = {(0, 1): 0.0, (1, 0): 3.0, (1, 1): 1.0, (0, 0): 0.0}
    epsilon, sensitivity, runs = 4.0, 1.0, 4_000
    rng = np.random.default_rng(7)
    first = [
        safepub_search(
            (1, 1),
            table.__getitem__,
            epsilon=epsilon,
            sensitivity=sensitivity,
            steps=1,
            rng=rng,
        ).pivots[1]
        for _ in range(runs)
    ]
    per_draw = epsilon / 2  # steps + 1 draws
    weights = np.exp(per_draw * np.array([0.0, 3.0]) / (2 * sensitivity))
    observed = [first.count((0, 1)), first.count((1, 0))]
    assert stats.chisquare(observed, runs * weights / weights.sum()).pvalue > 1e-3


def test_search_with_no_step_returns_the_top() -> None:
    result = safepub_search(
        (3, 1, 2),
        lambda node: 0.0,
        epsilon=1.0,
        sensitivity=1.0,
        steps=0,
        rng=np.random.default_rng(0),
    )
    assert result.levels == (3, 1, 2) and result.draws == 1


# ------------------------------------------------------------- release
def person_table(n: int = 3000, seed: int = 3) -> tuple[pd.DataFrame, dict]:
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 80, n)
    sex = rng.choice(["F", "M"], n)
    zip_ = rng.choice(["1301", "1302", "1481", "1482"], n)
    # the label depends on age, so the classification score has something to find
    y = np.where(rng.random(n) < (age - 20) / 60, "high", "low")
    table = pd.DataFrame(
        {
            "age": pd.array(age, dtype="int64"),
            "sex": pd.array(sex, dtype="string"),
            "zip": pd.array(zip_, dtype="string"),
            "y": pd.array(y, dtype="string"),
        }
    )
    hierarchies = {
        "age": Hierarchy.from_rows(
            "age",
            [
                [str(a), f"{a // 10 * 10}-{a // 10 * 10 + 9}", "*"]
                for a in range(20, 80)
            ],
            source="age",
        ),
        "sex": Hierarchy.from_rows("sex", [["F", "*"], ["M", "*"]], source="sex"),
        "zip": Hierarchy.from_rows(
            "zip",
            [[z, z[:3] + "*", "*"] for z in ("1301", "1302", "1481", "1482")],
            source="zip",
        ),
    }
    return table, hierarchies


def spec_of(hierarchies: dict, k: int = 2) -> AnonymizationSpec:
    return AnonymizationSpec(
        Requirement.of(("age", "sex", "zip"), k=k), "y", 0.0, hierarchies
    )


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_VARIABLE, "safepub-test-key-0123456789abcdef")
    return f"env:{KEY_VARIABLE}"


@pytest.mark.parametrize("score", ["classification", "loss"])
def test_every_released_class_has_the_derived_k(score: str, key: str) -> None:
    table, hierarchies = person_table()
    # Few steps: the output is drawn among few pivots near the top, so this
    # small table releases something (a long search may end where all is
    # suppressed, which is a correct outcome but not this test's subject).
    algorithm = SafePub(epsilon=1.0, steps=3, score=score, randomness="keyed", key=key)
    release = algorithm.anonymize(table, spec_of(hierarchies), np.random.default_rng(1))
    evidence = release.evidence
    n = len(table)
    beta, k = derive_parameters(0.9, default_delta(n))
    assert evidence["k_derived"] == k and evidence["beta"] == pytest.approx(beta)
    # re-read as published: every cell text, classes over every column
    published = pd.read_csv(
        io.BytesIO(table_to_csv_bytes(release.table)), dtype=str, keep_default_na=False
    )
    assert len(published) > 0
    assert published.groupby(list(published.columns)).size().min() >= k
    # sampling keeps about beta n rows at most (suppression removes more)
    assert len(published) <= n * beta + 4 * math.sqrt(n * beta * (1 - beta))
    check = check_differential_privacy(
        {"release": published},
        "safepub",
        release.params,
        declared_columns=list(table.columns),
        n_rows=n,
    )
    assert check is not None and check.passed and check.k == k
    # the evidence holds nothing the release does not show: no sample size, no score
    assert not {"sampled", "sample_rows", "scores", "suppressed"} & set(evidence)


def test_certificate_check_fails_on_a_small_class_and_an_extra_column() -> None:
    rows = pd.DataFrame({"a": ["x"] * 40 + ["y"] * 3, "b": ["1"] * 43})
    check = check_differential_privacy(
        {"release": rows},
        "safepub",
        {"epsilon": 1.0, "delta": 1e-6},
        declared_columns=["a"],
    )
    assert check is not None
    assert not check.classes_passed and check.smallest_class == {"release": 3}
    assert not check.columns_passed and check.extra_columns == {"release": ("b",)}
    assert "NO" in check.describe() and not check.passed


def test_requirement_k_above_the_derived_k_is_enforced(key: str) -> None:
    table, hierarchies = person_table()
    algorithm = SafePub(epsilon=0.5, steps=0, randomness="keyed", key=key)
    release = algorithm.anonymize(
        table, spec_of(hierarchies, k=120), np.random.default_rng(1)
    )
    assert release.evidence["k"] == 120 > release.evidence["k_derived"]
    assert release.table.groupby(list(release.table.columns)).size().min() >= 120


# ------------------------------------------------------------- randomness
def test_keyed_randomness_replays_and_fresh_randomness_does_not(key: str) -> None:
    table, hierarchies = person_table()
    spec = spec_of(hierarchies)

    def csv(**params) -> bytes:
        # No search step: the output is the top node whatever the draws, so a
        # run with fresh randomness always releases; only the sample differs.
        release = get_algorithm("safepub", epsilon=1.0, steps=0, **params).anonymize(
            table, spec, np.random.default_rng(11)
        )
        return table_to_csv_bytes(release.table)

    keyed = csv(randomness="keyed", key=key)
    assert csv(randomness="keyed", key=key) == keyed  # the owner re-runs it
    # the same seed without the key (fresh randomness) gives another sample
    assert csv() != keyed and csv() != csv()


def test_keyed_generator_depends_on_the_key_not_only_on_the_seed() -> None:
    def draws(key: bytes, seed: int) -> np.ndarray:
        return keyed_generator(np.random.default_rng(seed), key).random(4)

    a = b"first-key-0123456789abcdef"
    assert np.array_equal(draws(a, 5), draws(a, 5))
    assert not np.array_equal(draws(a, 5), draws(b"other-key-0123456789abcdef", 5))
    assert not np.array_equal(draws(a, 5), np.random.default_rng(5).random(4))


def test_evidence_names_the_source_never_a_replayable_value(key: str) -> None:
    table, hierarchies = person_table(600)
    spec = spec_of(hierarchies)
    fresh = SafePub(epsilon=2.0, delta=1e-3, steps=0).anonymize(
        table, spec, np.random.default_rng(0)
    )
    assert fresh.evidence["randomness"].startswith("os:")
    keyed = SafePub(
        epsilon=2.0, delta=1e-3, steps=0, randomness="keyed", key=key
    ).anonymize(table, spec, np.random.default_rng(0))
    assert keyed.evidence["randomness"].startswith("keyed:")
    assert "safepub-test-key" not in str(keyed.evidence)


def test_missing_key_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_VARIABLE, raising=False)
    table, hierarchies = person_table(200)
    algorithm = SafePub(randomness="keyed", key=f"env:{KEY_VARIABLE}")
    with pytest.raises(InvalidParameterError, match=KEY_VARIABLE):
        algorithm.anonymize(table, spec_of(hierarchies), np.random.default_rng(0))


@pytest.mark.parametrize("score", ["classification", "loss"])
@pytest.mark.parametrize("k", [1, 2, 5])
def test_one_record_moves_a_score_by_at_most_its_sensitivity(
    score: str, k: int
) -> None:
    """Brute force on small tables: every node, every added record."""
    from ppdm.algorithms.safepub import _SampleScorer

    rng = np.random.default_rng(k)
    table, hierarchies = person_table(400, seed=k)
    qis = ["age", "sex", "zip"]
    chain = [hierarchies[q] for q in qis]
    nodes = [(a, s, z) for a in range(3) for s in range(2) for z in range(3)]
    largest = 0.0
    for _ in range(6):
        base = table.iloc[rng.choice(len(table), 25, replace=False)]
        extra = table.iloc[[int(rng.integers(len(table)))]]
        before = _SampleScorer(base, qis, chain, "y", k)
        after = _SampleScorer(pd.concat([base, extra]), qis, chain, "y", k)
        sensitivity = before.sensitivity(score)
        for node in nodes:
            change = abs(after.score(node, score) - before.score(node, score))
            assert change <= sensitivity + 1e-9, (node, change, sensitivity)
            largest = max(largest, change)
    assert largest > 0  # the scores do move: the check could fail


def test_columns_released_as_they_are_that_split_below_k_are_refused_first(
    key: str,
) -> None:
    """A sensitive column of many values splits every class below the derived k
    whatever the generalization: one line names it and the remedy, before any
    draw (the secret generator is never asked)."""
    table, hierarchies = person_table()
    table["dx"] = pd.array([f"D{i % 300:03d}" for i in range(len(table))], "string")
    algorithm = SafePub(epsilon=1.0, randomness="keyed", key=key)
    with pytest.raises(InfeasibleConstraintError) as refused:
        algorithm.anonymize(table, spec_of(hierarchies), np.random.default_rng(1))
    line = str(refused.value)
    assert "\n" not in line
    assert "dx (300 values)" in line and "y (2 values)" in line
    assert "make them quasi-identifiers with a hierarchy" in line
    # Without the column, the same table is released (few steps, as above).
    few = SafePub(epsilon=1.0, steps=3, randomness="keyed", key=key)
    released = few.anonymize(
        table.drop(columns="dx"), spec_of(hierarchies), np.random.default_rng(1)
    )
    assert len(released.table) > 0
