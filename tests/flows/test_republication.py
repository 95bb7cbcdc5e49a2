"""A changing table released month after month into one output directory.

German credit, month 1 a seeded 90 % of the rows, month 2 all of them (the
newcomers arrive), month 3 without a seeded 5 % (people leave). Each release is
checked alone and against the earlier ones by the independent differencing
check (:mod:`ppdm.verify.differencing`) on the released files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from ppdm import pipeline
from ppdm.config import default_config
from ppdm.exceptions import VerificationError
from ppdm.flows.cli import main
from ppdm.prepare import datasets
from ppdm.release.audit import read_entries
from ppdm.verify.certificate import read_released_table
from ppdm.verify.differencing import check_against
from ppdm.verify.release_check import check_release

ALGORITHMS = ("mondrian", "lattice-optimal", "kactus")


def _months() -> list[pd.DataFrame]:
    whole = datasets.load("german")
    first = whole.sample(frac=0.9, random_state=3).sort_index()
    third = whole.drop(whole.sample(frac=0.05, random_state=4).index)
    return [first, whole, third]


def _release(tmp_path: Path, month: int, frame: pd.DataFrame, **changes):
    source = tmp_path / f"month-{month}.csv"
    frame.to_csv(source, index=False)
    config = default_config("german").with_overrides(
        source={"kind": "csv", "path": str(source)},
        output_dir=str(tmp_path / "out"),
        work_dir=str(tmp_path / "work"),
        k=5,
        l=2,
        **changes,
    )
    return pipeline.run_release(config)


@pytest.fixture(scope="module")
def series(tmp_path_factory):
    """``series(name, months, **changes)``: releases of the first ``months`` months.

    Each series is released once per module, into a folder of its own, and
    only read by the tests that ask for it; a test that publishes into a
    series or fails one releases its own.
    """
    made: dict[str, tuple[Path, list]] = {}

    def released(name: str, months: int, **changes) -> tuple[Path, list]:
        if name not in made:
            where = tmp_path_factory.mktemp(name)
            outcomes = [
                _release(where, m, frame, **changes)
                for m, frame in enumerate(_months()[:months], start=1)
            ]
            made[name] = (where, outcomes)
        where, outcomes = made[name]
        assert len(outcomes) == months
        return where, outcomes

    return released


def _tables(release_dir: Path) -> dict[str, pd.DataFrame]:
    return {
        p.stem: read_released_table(p) for p in (release_dir / "data").glob("*.csv")
    }


@pytest.mark.parametrize(
    "algorithm",
    # Mondrian here, the others in CI's slow stage
    [
        a if a == "mondrian" else pytest.param(a, marks=pytest.mark.slow)
        for a in ALGORITHMS
    ],
)
def test_hold_back_leaves_no_differencing_leak_across_three_releases(series, algorithm):
    _, outcomes = series(f"hold-back-{algorithm}", 3, algorithm=algorithm)
    dirs = [o.release_dir for o in outcomes]
    assert len(set(dirs)) == 3
    config = default_config("german").with_overrides(algorithm=algorithm, k=5, l=2)
    for later in range(1, 3):
        for earlier in range(later):
            results = check_against(
                _tables(dirs[later]),
                _tables(dirs[earlier]),
                config.requirement,
                against=dirs[earlier].name,
            )
            assert not any(r.leaks for r in results), [r.describe() for r in results]
    certificate = json.loads((dirs[2] / "verification.json").read_text())
    # An earlier release whose data files month 3 repeats byte for byte is not
    # compared (nothing new leaves); the others are, and named.
    named = set(certificate["series"]["checked_against"])
    assert named and named <= {d.name for d in dirs[:2]}
    assert check_release(dirs[2]).passed


def test_without_the_policy_the_same_series_leaks_and_says_so(series):
    where, (_, second) = series("off", 2, republication={"policy": "off"})
    certificate = json.loads((second.release_dir / "verification.json").read_text())
    (result,) = certificate["series"]["results"]
    assert result["n_leaking_classes"] > 0 and result["accepted_risk"] is True
    assert certificate["passed"] is True  # the owner accepted the risk in writing
    check = check_release(second.release_dir)
    assert any("accepted by the data owner" in line for line in check.lines)
    entry = read_entries(where / "out" / "audit.jsonl")[-1]
    assert entry["republication"]["accepted_risk"] is True
    assert entry["republication"]["policy"] == "off"


def test_refuse_publishes_nothing_and_names_the_leaking_classes(tmp_path):
    months = _months()
    _release(tmp_path, 1, months[0])
    with pytest.raises(
        VerificationError, match="republication refused.*leak by differencing"
    ) as refused:
        _release(tmp_path, 2, months[1], republication={"policy": "refuse"})
    entries = read_entries(tmp_path / "out" / "audit.jsonl")
    # Nothing published; the refusal is recorded as a failed verification is.
    assert [e["event"] for e in entries] == ["publish", "release-rejected"]
    assert entries[-1]["reason"] == str(refused.value)


def test_hold_back_counts_but_never_names_the_rows_held_back(series):
    months = _months()
    # hold-back (the default) with Mondrian: the series of the three-month test
    _, (_, second, _) = series("hold-back-mondrian", 3, algorithm="mondrian")
    report = second.release_dir / "report.html"
    assert report.is_file()
    rows = sum(len(t) for t in _tables(second.release_dir).values())
    evidence = json.loads((second.release_dir / "verification.json").read_text())
    assert evidence["series"]["results"][0]["n_leaking_classes"] == 0
    # The release holds fewer rows than month 2's table when newcomers wait.
    assert rows <= len(months[1]) + len(months[0])


def test_a_republish_of_the_same_input_adds_nothing(tmp_path):
    months = _months()
    _release(tmp_path, 1, months[0])
    first = _release(tmp_path, 2, months[1])
    again = _release(tmp_path, 2, months[1])
    assert again.release_dir == first.release_dir
    events = [e["event"] for e in read_entries(tmp_path / "out" / "audit.jsonl")]
    assert events == ["publish", "publish", "republish"]


def test_ppdm_verify_against_an_earlier_release(series, capsys):
    _, (one, two) = series("off", 2, republication={"policy": "off"})
    assert (
        main(["verify", str(two.release_dir), "--against", str(one.release_dir)]) == 0
    )
    out = capsys.readouterr().out
    assert f"against release {one.release_dir.name}" in out
    assert "leak by differencing" in out
