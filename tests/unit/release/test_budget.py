"""A dataset's differential privacy budget, read from the verified keyed audit log.

The releases are made by the real publisher (:func:`publish_directory`,
keyed with the test suite's ``PPDM_AUDIT_KEY``), with the spend a
differentially private algorithm writes into its manifest and entry; the
ledger is read back from the log. Known answers: k releases at epsilon each
spend k * epsilon under basic composition, and advanced composition gives
the value of Dwork, Rothblum and Vadhan's formula computed by hand. A
publisher killed (SIGKILL) at every write point, then run again, spends the
release's epsilon once, against a budget of exactly that epsilon.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import publish_fault_points as fp
import pytest
from pydantic import ValidationError

from ppdm.config import PrivacyBudgetConfig
from ppdm.exceptions import AuditLogError
from ppdm.privacy.differential import PrivacyCost
from ppdm.release import budget
from ppdm.release.artifacts import sha256_file
from ppdm.release.audit import AUDIT_LOG_NAME, read_entries
from ppdm.release.budget import (
    Budget,
    BudgetCheck,
    BudgetExceededError,
    compose,
    compose_advanced,
    compose_basic,
    read_ledger,
)
from ppdm.release.keys import MissingKeyError
from ppdm.release.publish import publish_directory

HELPER = Path(__file__).with_name("publish_fault_points.py")
KEY = "env:PPDM_AUDIT_KEY"  # set for the whole suite (tests/conftest.py)


def _args(
    out: Path, name: str, cost: PrivacyCost | None, dataset: str = "ds"
) -> tuple[Any, ...]:
    """``publish_directory``'s arguments for a small release (one data file).

    With ``cost``, the manifest and the entry carry it as the pipeline's
    publish step writes it for a differentially private algorithm.
    """
    source = out.parent / f"src-{dataset}-{name}.csv"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(f"age,class\n{name},yes\n")
    digest = sha256_file(source)
    fields = {} if cost is None else {budget.COST_FIELD: cost.as_dict()}
    manifest = {
        "dataset": dataset,
        "release_id": name,
        "files": [{"path": "data/release.csv", "sha256": digest, "rows": 1}],
        "artifacts": {},
        **fields,
    }
    entry = {
        "dataset": dataset,
        "release_id": name,
        "algorithm": "mondrian" if cost is None else "safepub",
        "verified": True,
        "created_at": "2026-11-28T12:00:00+00:00",
        **fields,
    }
    return (
        out,
        out / dataset / name,
        {"data/release.csv": source},
        {"data/release.csv": digest},
        manifest,
        entry,
    )


def _publish(
    out: Path,
    name: str,
    cost: PrivacyCost | None,
    dataset: str = "ds",
    check: BudgetCheck | None = None,
) -> Path:
    return publish_directory(*_args(out, name, cost, dataset), check=check)


def _one_line(err: BaseException) -> str:
    text = str(err)
    assert "\n" not in text, text
    return text


# -- composition: known answers -----------------------------------------------
@pytest.mark.parametrize(("k", "epsilon", "delta"), [(1, 0.5, 0.0), (7, 0.1, 1e-7)])
def test_basic_composition_sums_epsilons_and_deltas(
    k: int, epsilon: float, delta: float
) -> None:
    spent = compose_basic([PrivacyCost(epsilon, delta)] * k)
    assert spent == pytest.approx((k * epsilon, k * delta), rel=1e-12)


def test_advanced_composition_matches_the_hand_computed_bound() -> None:
    # k = 1000 releases at epsilon = 0.01, delta' = 1e-6, by hand:
    # ln(1/delta') = 13.815510557964274; sqrt(2 * 1000 * 13.8155...) =
    # 166.225813626911, times 0.01 = 1.66225813626911; plus
    # k * eps * (e^eps - 1) = 10 * 0.010050167084167949 = 0.10050167084167949;
    # epsilon' = 1.7627598071107895 (basic: 10), delta = 1000 * 1e-8 + 1e-6.
    costs = [PrivacyCost(0.01, 1e-8)] * 1000
    epsilon, delta = compose_advanced(costs, 1e-6)
    assert epsilon == pytest.approx(1.7627598071107895, rel=1e-12)
    assert delta == pytest.approx(1e-5 + 1e-6, rel=1e-12)
    assert compose(costs, "advanced", 1e-6) == (epsilon, delta)


def test_advanced_composition_keeps_the_basic_bound_when_it_is_smaller() -> None:
    # k = 10 at epsilon = 0.1: the advanced bound is 1.767429054344758 > 1.
    costs = [PrivacyCost(0.1, 0.0)] * 10
    assert compose_advanced(costs, 1e-6)[0] == pytest.approx(1.767429054344758)
    assert compose(costs, "advanced", 1e-6) == compose_basic(costs)


def test_advanced_heterogeneous_form_is_the_theorem_for_equal_epsilons() -> None:
    # Different epsilons: the sum of squares under the root, each its own drift.
    costs = [PrivacyCost(0.2, 0.0), PrivacyCost(0.05, 0.0), PrivacyCost(0.05, 0.0)]
    expected = math.sqrt(2 * math.log(1e5) * (0.04 + 0.0025 + 0.0025)) + (
        0.2 * math.expm1(0.2) + 2 * 0.05 * math.expm1(0.05)
    )
    assert compose_advanced(costs, 1e-5)[0] == pytest.approx(expected, rel=1e-12)


# -- the configuration ------------------------------------------------------------
def test_budget_configuration_is_checked_at_load() -> None:
    assert PrivacyBudgetConfig(epsilon=1.0).composition == "basic"
    refused = {
        "epsilon 0": {"epsilon": 0.0},
        "delta 1": {"epsilon": 1.0, "delta": 1.0},
        "infinite epsilon": {"epsilon": float("inf")},
        "advanced without delta'": {
            "epsilon": 1.0,
            "delta": 1e-5,
            "composition": "advanced",
        },
        "delta' above delta": {
            "epsilon": 1.0,
            "delta": 1e-7,
            "composition": "advanced",
            "delta_prime": 1e-6,
        },
        "delta' with basic": {"epsilon": 1.0, "delta_prime": 1e-6},
        "unknown composition": {"epsilon": 1.0, "composition": "renyi"},
    }
    for case, section in refused.items():
        with pytest.raises(ValidationError):
            PrivacyBudgetConfig(**section)
            pytest.fail(case)


# -- the ledger from a real keyed log ------------------------------------------
def test_ledger_sums_each_release_once_and_shows_non_dp_apart(tmp_path: Path) -> None:
    out = tmp_path / "out"
    for i in range(3):
        _publish(out, f"dp{i}", PrivacyCost(0.25, 1e-6))
    _publish(out, "plain", None)
    _publish(out, "other", PrivacyCost(2.0, 0.0), dataset="census")
    _publish(out, "dp0", PrivacyCost(0.25, 1e-6))  # a republication: same release
    events = [e["event"] for e in read_entries(out / AUDIT_LOG_NAME)]
    assert events.count("republish") == 1

    ledgers = read_ledger(out, key=KEY)
    ds = ledgers["ds"]
    assert [s.release_id for s in ds.dp] == ["dp0", "dp1", "dp2"]
    assert ds.spent() == pytest.approx((0.75, 3e-6))
    assert [s.release_dir for s in ds.non_dp] == ["ds/plain"]
    assert ledgers["census"].spent() == (2.0, 0.0)


def test_a_non_dp_algorithm_records_no_spend(tmp_path: Path) -> None:
    evidence = tmp_path / "evidence.json"
    evidence.write_text(json.dumps({"records_in": 100}))
    done = budget.publication("mondrian", {}, evidence, "ds", {"epsilon": 1.0})
    assert done.fields == {} and done.check is None


# -- refusal -------------------------------------------------------------------------
def test_preflight_refuses_in_one_line_naming_spent_asked_and_remaining(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    for i in range(3):
        _publish(out, f"dp{i}", PrivacyCost(0.3, 0.0))
    limit = Budget(1.0, 1e-6)
    budget.check_before_run(out, "ds", limit, PrivacyCost(0.1, 0.0), key=KEY)  # fits
    with pytest.raises(BudgetExceededError) as refused:
        budget.check_before_run(out, "ds", limit, PrivacyCost(0.2, 0.0), key=KEY)
    line = _one_line(refused.value)
    for part in (
        "dataset 'ds'",
        "spent epsilon=0.9, delta=0 by 3 differentially private release(s)",
        "asked epsilon=0.2, delta=0",
        "remaining epsilon=0.1, delta=1e-06",
        "privacy_budget epsilon=1, delta=1e-06 (basic composition)",
        "nothing was run",
    ):
        assert part in line, line
    # Another dataset in the same log has its own budget.
    budget.check_before_run(out, "census", limit, PrivacyCost(1.0, 0.0), key=KEY)


def test_publication_is_refused_under_the_lock_and_nothing_is_published(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    limit = Budget(1.0, 0.0)
    _publish(
        out,
        "dp0",
        PrivacyCost(0.6, 0.0),
        check=BudgetCheck("ds", limit, PrivacyCost(0.6, 0.0)),
    )
    before = (out / AUDIT_LOG_NAME).read_bytes()
    with pytest.raises(BudgetExceededError, match="nothing was published"):
        _publish(
            out,
            "dp1",
            PrivacyCost(0.6, 0.0),
            check=BudgetCheck("ds", limit, PrivacyCost(0.6, 0.0)),
        )
    assert not (out / "ds" / "dp1").exists()
    assert list((out / "ds").iterdir()) == [out / "ds" / "dp0"]
    assert (out / AUDIT_LOG_NAME).read_bytes() == before
    # The release already published, again: nothing more is spent.
    _publish(
        out,
        "dp0",
        PrivacyCost(0.6, 0.0),
        check=BudgetCheck("ds", limit, PrivacyCost(0.6, 0.0)),
    )
    assert read_ledger(out, key=KEY)["ds"].spent() == (0.6, 0.0)


def test_advanced_composition_admits_what_basic_refuses(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cost = PrivacyCost(0.01, 0.0)
    for i in range(40):
        _publish(out, f"dp{i:02d}", cost)
    # 41 * 0.01 = 0.41 > 0.4; advanced: sqrt(2 ln(1e6) * 41e-4) + 41 * 0.01 *
    # (e^0.01 - 1) = 0.3366 + 0.0041 = 0.3407 <= 0.4.
    with pytest.raises(BudgetExceededError):
        budget.check_before_run(out, "ds", Budget(0.4, 1e-5), cost, key=KEY)
    advanced = Budget(0.4, 1e-5, "advanced", 1e-6)
    budget.check_before_run(out, "ds", advanced, cost, key=KEY)


# -- crashes: a killed publisher counts once, a failed one not at all ---------
def test_a_killed_publication_counts_once_after_the_rerun(tmp_path: Path) -> None:
    cost = PrivacyCost(0.5, 1e-7)
    limit = Budget(0.5, 1e-7)  # room for exactly one release
    args = _args(tmp_path / "scratch" / "out", "dp", cost)
    args_file = tmp_path / "args.pickle"
    args_file.write_bytes(pickle.dumps(args))
    counter = fp.WritePoints()
    with counter.installed():
        publish_directory(*args)
    points = len(counter.calls)
    assert points > 5, counter.calls

    done = subprocess.run(
        [sys.executable, str(HELPER), str(args_file), str(tmp_path / "killed")]
        + [str(i) for i in range(points)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    killed = [json.loads(line) for line in done.stdout.splitlines()]
    assert [k["signal"] for k in killed] == [signal.SIGKILL] * points

    outcomes = {"visible after the kill": 0, "not visible": 0}
    for index in range(points):
        out = tmp_path / "killed" / str(index) / "out"
        visible = (out / "ds" / "dp" / "manifest.json").is_file()
        outcomes["visible after the kill" if visible else "not visible"] += 1
        # Reading the ledger opens the log: a visible release without entry is
        # recorded as recovered, with the spend its sealed manifest names.
        spent = read_ledger(out, key=KEY).get("ds")
        expected = (0.5, 1e-7) if visible else (0.0, 0.0)
        assert (spent.spent() if spent else (0.0, 0.0)) == expected, index
        rerun = fp.rebased(args, out)
        publish_directory(*rerun, check=BudgetCheck("ds", limit, cost))
        ledger = read_ledger(out, key=KEY)["ds"]
        assert [s.release_dir for s in ledger.dp] == ["ds/dp"], index
        assert ledger.spent() == (0.5, 1e-7), index
    print(f"\nSIGKILL at {points} write points: {outcomes}")
    assert all(outcomes.values()), outcomes  # both kinds of kill were exercised


def test_a_publication_that_fails_spends_nothing(tmp_path: Path) -> None:
    cost = PrivacyCost(0.5, 0.0)
    out = tmp_path / "out"
    _publish(out, "first", cost)
    # Count the write points of the second publication on a copy, then fail
    # the real one at the write of its audit entry (a full disk).
    copy = tmp_path / "copy" / "out"
    shutil.copytree(out, copy)
    counter = fp.WritePoints()
    with counter.installed():
        publish_directory(*_args(copy, "second", cost))
    append = next(
        i
        for i, (name, path) in enumerate(counter.calls)
        if name == "os.write" and path.endswith(AUDIT_LOG_NAME)
    )
    with pytest.raises(OSError), fp.WritePoints(append, "raise").installed():
        publish_directory(*_args(out, "second", cost))
    assert not (out / "ds" / "second").exists()
    assert read_ledger(out, key=KEY)["ds"].spent() == (0.5, 0.0)


# -- tampering ---------------------------------------------------------------------
def _edit_epsilon(out: Path, release_id: str, epsilon: float) -> None:
    log = out / AUDIT_LOG_NAME
    lines = log.read_text().splitlines(keepends=True)
    for i, line in enumerate(lines):
        entry = json.loads(line)
        if entry.get("release_id") == release_id:
            entry[budget.COST_FIELD]["epsilon"] = epsilon
            lines[i] = json.dumps(entry, sort_keys=True) + "\n"
    log.write_text("".join(lines))


def test_an_edited_spend_is_tampering(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _publish(out, "dp0", PrivacyCost(0.9, 0.0))
    _publish(out, "dp1", PrivacyCost(0.1, 0.0))
    _edit_epsilon(out, "dp0", 0.01)  # lower the spend to make room
    with pytest.raises(AuditLogError) as tampered:
        read_ledger(out, key=KEY)
    line = _one_line(tampered.value)
    assert "tampered" in line and "seq=0" in line, line
    with pytest.raises(AuditLogError, match="tampered"):
        budget.check_before_run(out, "ds", Budget(1.0), PrivacyCost(0.5, 0.0), key=KEY)


def test_publication_reads_no_budget_from_a_tampered_log(tmp_path: Path) -> None:
    # The edit is in the first entry, not the last: opening the log (head and
    # last MAC) lets it through, the check of the whole chain under the lock
    # does not.
    out = tmp_path / "out"
    _publish(out, "dp0", PrivacyCost(0.9, 0.0))
    _publish(out, "dp1", PrivacyCost(0.05, 0.0))
    _edit_epsilon(out, "dp0", 0.01)
    check = BudgetCheck("ds", Budget(1.0), PrivacyCost(0.5, 0.0))
    with pytest.raises(AuditLogError, match="tampered") as tampered:
        _publish(out, "dp2", PrivacyCost(0.5, 0.0), check=check)
    assert "seq=0" in _one_line(tampered.value)
    assert not (out / "ds" / "dp2").exists()


def test_an_unkeyed_log_is_no_ledger(tmp_path: Path) -> None:
    out = tmp_path / "out"
    publish_directory(*_args(out, "dp0", PrivacyCost(0.1, 0.0)), audit_key=None)
    with pytest.raises(AuditLogError, match="UNKEYED") as unkeyed:
        read_ledger(out, key=KEY)
    _one_line(unkeyed.value)
    # Without a key at hand the spend could not be recorded in a keyed entry.
    assert "PPDM_BUDGET_TEST_NO_KEY" not in os.environ
    with pytest.raises(MissingKeyError, match="needs a keyed audit log") as no_key:
        budget.check_before_run(
            tmp_path / "empty",
            "ds",
            Budget(1.0),
            PrivacyCost(0.1, 0.0),
            key="env:PPDM_BUDGET_TEST_NO_KEY",
        )
    assert "PPDM_BUDGET_TEST_NO_KEY" in _one_line(no_key.value)


# -- `ppdm budget` -----------------------------------------------------------------
PPDM = Path(sys.executable).with_name("ppdm")


def test_ppdm_budget_lists_spent_and_remaining_per_dataset(tmp_path: Path) -> None:
    out = tmp_path / "out"
    limit = {"epsilon": 1.0, "delta": 1e-5, "composition": "basic"}
    for i in range(2):
        args = _args(out, f"dp{i}", PrivacyCost(0.25, 1e-6))
        for fields in args[4:6]:  # as the publish step records a budget
            fields[budget.BUDGET_FIELD] = limit
        publish_directory(*args)
    _publish(out, "plain", None)
    _publish(out, "other", PrivacyCost(0.5, 0.0), dataset="census")
    done = subprocess.run(
        [str(PPDM), "budget", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    print(done.stdout)
    census = lines.index(
        "census: spent epsilon=0.5 delta=0 by 1 differentially private "
        "release(s) (basic composition)"
    )
    assert lines[census + 1] == (
        "  budget: none recorded (no release was published under one)"
    )
    ds = lines.index(
        "ds: spent epsilon=0.5 delta=2e-06 by 2 differentially private "
        "release(s) (basic composition)"
    )
    assert lines[ds + 1] == (
        "  budget epsilon=1 delta=1e-05; remaining epsilon=0.5 delta=8e-06"
    )
    dp_lines = [line for line in lines[ds + 2 :] if "safepub" in line]
    assert [line.split()[1] for line in dp_lines] == ["ds/dp0", "ds/dp1"]
    apart = lines.index(
        "  not differentially private (1; no epsilon spent, no differential "
        "privacy guarantee):"
    )
    assert apart > ds and lines[apart + 1].split()[1:] == ["ds/plain", "mondrian"]


def test_ppdm_budget_user_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ppdm.flows.cli import EXIT_FAILED, main

    def run(out: Path) -> tuple[int, str]:
        code = main(["budget", "--out", str(out)])
        captured = capsys.readouterr()
        assert captured.out == ""
        return code, captured.err

    code, err = run(tmp_path / "nowhere")
    assert code == EXIT_FAILED
    assert (
        err == f"ppdm budget: output directory {tmp_path / 'nowhere'} does not exist\n"
    )

    unkeyed = tmp_path / "unkeyed"
    publish_directory(*_args(unkeyed, "dp0", PrivacyCost(0.1, 0.0)), audit_key=None)
    code, err = run(unkeyed)
    assert code == EXIT_FAILED and err.count("\n") == 1 and "UNKEYED" in err, err

    tampered = tmp_path / "tampered"
    _publish(tampered, "dp0", PrivacyCost(0.9, 0.0))
    _edit_epsilon(tampered, "dp0", 0.1)
    code, err = run(tampered)
    assert code == EXIT_FAILED and err.count("\n") == 1, err
    assert "was tampered with" in err and "seq=0" in err, err
