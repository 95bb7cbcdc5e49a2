"""The composition check across a release series, with a record key.

German credit with a synthetic record key column ``applicant-id`` (role
``identifying``; the dataset folder ``tests/data/german-keyed`` is the shipped
contract plus that column). Month 1 releases a seeded 90 % of the applicants,
month 2 all of them, month 3 without a seeded 5 %. The sensitive attribute is
``other-debtors`` (three values, most applicants have none), where two
2-diverse classes of one applicant often have one value in common: without
the policy, month 2 discloses some applicants' value by composition.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from ppdm import pipeline
from ppdm.config import default_config, parse_config
from ppdm.exceptions import VerificationError
from ppdm.prepare import datasets
from ppdm.release.artifacts import ArtifactStore, sha256_file
from ppdm.release.audit import read_entries
from ppdm.release.series_state import load_state
from ppdm.steps import publish as steps_publish
from ppdm.verify.certificate import read_released_table
from ppdm.verify.composition import check_composition, person_values

# Long end-to-end checks (keyed series of three monthly releases, a crashed and resumed
# series): .ci/run runs them after the README's command.
pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parent.parent / "data" / "german-keyed"
KEY = "applicant-id"
SENSITIVE = "other-debtors"


def _months() -> list[pd.DataFrame]:
    whole = datasets.load("german")
    whole.insert(0, KEY, [f"A{i:04d}" for i in range(len(whole))])
    first = whole.sample(frac=0.9, random_state=3).sort_index()
    third = whole.drop(whole.sample(frac=0.05, random_state=4).index)
    return [first, whole, third]


def _config(tmp_path: Path, month: int, frame: pd.DataFrame, republication: dict):
    source = tmp_path / f"month-{month}.csv"
    frame.to_csv(source, index=False)
    data = default_config("german").model_dump(by_alias=True)
    data["columns"] = {KEY: "identifying", **data["columns"]}
    data.update(
        source={"kind": "csv", "path": str(source)},
        schema=str(DATA),
        output_dir=str(tmp_path / "out"),
        work_dir=str(tmp_path / "work"),
        k=5,
        l=2,
        sensitive_attribute=SENSITIVE,
        republication=republication,
    )
    return parse_config(data)


def _release(tmp_path, month, frame, **republication):
    return pipeline.run_release(_config(tmp_path, month, frame, republication))


def _certificate(release_dir: Path) -> dict:
    return json.loads((release_dir / "verification.json").read_text())


def _values(release_dir: Path, frame: pd.DataFrame, qis):
    """Person values recomputed here from the released file and the month's table."""
    (path,) = (release_dir / "data").glob("*.csv")
    people = frame[list(qis)].astype(str).reset_index(drop=True)
    return person_values(
        people,
        frame[KEY].tolist(),
        {"release": read_released_table(path)},
        qis,
        SENSITIVE,
    )


@pytest.fixture(scope="module")
def keyed_series(tmp_path_factory) -> tuple[Path, list[Path]]:
    """Months 1-3 released with the record key (hold-back), in a folder of their own.

    Read, never changed, by the tests that use it.
    """
    where = tmp_path_factory.mktemp("keyed-series")
    dirs = [
        _release(where, m, frame, record_key=KEY).release_dir
        for m, frame in enumerate(_months(), start=1)
    ]
    return where, dirs


def test_hold_back_leaves_no_composition_leak_and_keeps_keys_private(
    keyed_series, tmp_path
):
    months = _months()
    where, dirs = keyed_series
    config = _config(tmp_path, 1, months[0], {"record_key": KEY})
    qis = config.requirement.quasi_identifiers
    for later in (1, 2):
        composition = _certificate(dirs[later])["series"]["composition"]
        assert composition["run"] and composition["record_key"] == KEY
        assert composition["consistent"] and composition["passed"]
        (result,) = composition["results"]
        # Month 3 (5 % left) withholds the classes that cannot hide who left,
        # rather than publish the leavers' rows again.
        assert result["n_exposed"] == 0 and result["n_persons"] > (800, 500)[later - 1]
        # An independent recomputation from the files and the tables agrees.
        earlier = [
            (d.name, {SENSITIVE: _values(d, months[i], qis)})
            for i, d in enumerate(dirs[:later])
        ]
        (mine,) = check_composition(
            {SENSITIVE: _values(dirs[later], months[later], qis)},
            earlier,
            config.requirement,
        )
        assert mine.n_exposed == 0
    # The record keys stay in the work directory: no published byte holds one.
    published = b"".join(
        p.read_bytes() for p in (where / "out").rglob("*") if p.is_file()
    )
    assert b"A0001" not in published and b"A0999" not in published
    # ... beside each published release's state (found by its files' sha256).
    store = ArtifactStore(where / "work")
    for d in dirs:
        files = {"release": sha256_file(d / "data" / "release.csv")}
        assert not isinstance(load_state(store, "german", files), str)


def test_without_the_policy_composition_discloses_and_is_an_accepted_risk(tmp_path):
    months = _months()
    _release(tmp_path, 1, months[0], policy="off", record_key=KEY)
    second = _release(tmp_path, 2, months[1], policy="off", record_key=KEY)
    certificate = _certificate(second.release_dir)
    (result,) = certificate["series"]["composition"]["results"]
    assert result["n_exposed"] > 0 and result["accepted_risk"] is True
    assert result["n_certain"] >= result["n_exposed"]
    assert certificate["passed"] is True
    report = (second.release_dir / "report.html").read_text()
    assert "brought below l by this release" in report
    assert "accepted risk (policy off)" in report
    entry = read_entries(tmp_path / "out" / "audit.jsonl")[-1]
    assert entry["republication"]["accepted_risk"] is True


def test_refuse_names_the_count_of_persons(tmp_path):
    months = _months()
    _release(tmp_path, 1, months[0], record_key=KEY)
    with pytest.raises(
        VerificationError,
        match=r"[1-9]\d* person\(s\) present in earlier releases would have fewer "
        "common sensitive values than l",
    ):
        _release(tmp_path, 2, months[1], policy="refuse", record_key=KEY)
    entries = list(read_entries(tmp_path / "out" / "audit.jsonl"))
    # Nothing published; the refusal is recorded (the count, never who).
    assert [e["event"] for e in entries] == ["publish", "release-rejected"]
    assert "A0" not in entries[-1]["reason"]


def test_without_a_record_key_the_certificate_says_why_not(tmp_path):
    months = _months()
    _release(tmp_path, 1, months[0])
    second = _release(tmp_path, 2, months[1])
    composition = _certificate(second.release_dir)["series"]["composition"]
    assert composition["run"] is False
    assert "no record key is configured" in composition["reason"]
    report = (second.release_dir / "report.html").read_text()
    assert "not checked, no record key is configured" in report


def test_an_earlier_release_without_state_is_named_not_compared(tmp_path):
    months = _months()
    _release(tmp_path, 1, months[0])  # released before the key was configured
    second = _release(tmp_path, 2, months[1], record_key=KEY)
    composition = _certificate(second.release_dir)["series"]["composition"]
    assert composition["run"] and composition["results"][0]["n_persons"] == 0
    ((release, why),) = composition["not_compared"].items()
    assert "no record-key state" in why


def test_a_run_killed_before_publication_changes_nothing(
    keyed_series, tmp_path, monkeypatch
):
    months = _months()
    _, clean = keyed_series  # months 1-3 without a crash
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    _release(crashed, 1, months[0], record_key=KEY)
    # The crashed series: month 2 stops after its republication step (its
    # state is kept), before anything is published; then runs again.
    real = steps_publish.publish_step

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "publish_step", killed)
    with pytest.raises(KeyboardInterrupt):
        _release(crashed, 2, months[1], record_key=KEY)
    monkeypatch.setattr(pipeline, "publish_step", real)
    resumed = [
        _release(crashed, m, months[m - 1], record_key=KEY).release_dir for m in (2, 3)
    ]
    for a, b in zip(clean[1:], resumed, strict=True):
        # Release ids differ (the manifests name the two folders); the data,
        # and what the checks found, do not.
        assert (a / "data" / "release.csv").read_bytes() == (
            b / "data" / "release.csv"
        ).read_bytes()
        assert _findings(a) == _findings(b)


def _findings(release_dir: Path) -> list:
    series = _certificate(release_dir)["series"]
    found = [*series["results"], *series["composition"]["results"]]
    return [
        {k: v for k, v in r.items() if k not in ("against", "table")} for r in found
    ]


def test_record_keys_follow_the_rows_validation_keeps(tmp_path):
    months = _months()
    _release(tmp_path, 1, months[0], record_key=KEY)
    second = months[1].copy()
    bad = second.index[7]
    second.loc[bad, "age"] = 150  # outside the contract's 18..100: quarantined
    outcome = _release(tmp_path, 2, second, record_key=KEY)
    files = {"release": sha256_file(outcome.release_dir / "data" / "release.csv")}
    state = load_state(ArtifactStore(tmp_path / "work"), "german", files)
    kept = json.loads(Path(state.keys.path).read_text())
    assert kept == second.drop(index=bad)[KEY].tolist()
    composition = _certificate(outcome.release_dir)["series"]["composition"]
    assert composition["consistent"] and composition["passed"]
    assert second.loc[bad, KEY] not in set(state.values[SENSITIVE].keys)
