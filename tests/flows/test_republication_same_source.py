"""One unchanged table released again and again into one output directory.

A data owner comparing algorithms and k releases the same source file (the
same bytes: nobody arrived or left) several times into one output directory,
with `ppdm run` as a user runs it (in this process, on the session's Prefect
backend). The table is generated here (seeded): a clinic's extract described
by `ppdm init`. Every release that is published holds only rows of the source
and meets its own requirement by an independent count; every refusal is one
line that names the earlier release and the remedy, publishes nothing and is
in the audit log; `policy: off` publishes and records the risk.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ppdm.flows import init_command
from ppdm.flows.cli import main
from ppdm.release.audit import read_entries, verify_audit_log

ROWS = 1_000
QIS = ["age", "sex", "zip", "marital_status"]
#: What a person is in a released row: the columns that are not generalized.
PERSON = ["diagnosis", "outcome"]


@pytest.fixture(scope="module")
def owner(tmp_path_factory) -> tuple[pd.DataFrame, Path]:
    """The owner's table (seeded) and the configuration `ppdm init` wrote for it."""
    folder = tmp_path_factory.mktemp("clinic")
    rng = np.random.default_rng(31)
    table = pd.DataFrame(
        {
            "record_id": 50_000 + rng.permutation(ROWS),
            "age": rng.integers(18, 91, ROWS),
            "sex": rng.choice(["F", "M"], ROWS),
            "zip": rng.integers(13_000, 13_040, ROWS),
            "marital_status": rng.choice(
                ["married", "single", "divorced", "widowed", "separated"],
                ROWS,
                p=[0.45, 0.3, 0.12, 0.08, 0.05],
            ),
            "diagnosis": rng.choice(["flu", "asthma", "diabetes", "ulcer"], ROWS),
            "outcome": rng.choice(["good", "poor"], ROWS, p=[0.7, 0.3]),
        }
    )
    source = folder / "clinic.csv"
    table.to_csv(source, index=False)
    assert (
        init_command.main([str(source), "--dataset", "clinic", "--dir", str(folder)])
        == 0
    )
    config = folder / "clinic" / "clinic.yaml"
    roles = yaml.safe_load(config.read_text())["columns"]
    assert [c for c, r in roles.items() if r == "quasi_identifier"] == QIS
    return table, config


def _run(config: Path, out: Path, algorithm: str, k: int, l: int, capsys):
    """``ppdm run`` once; returns (exit code, the lines it printed to stderr)."""
    capsys.readouterr()
    code = main(["run", "--config", str(config), "--algorithm", algorithm,
                 "--k", str(k), "--l", str(l), "--out", str(out),
                 "--work-dir", str(out.parent / "work")])  # fmt: skip
    return code, capsys.readouterr().err


def _refusal(err: str) -> str:
    """The one line `ppdm run` printed for a refusal."""
    lines = [line for line in err.splitlines() if line.startswith("ppdm run: ")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0].removeprefix("ppdm run: ")


def _check_published(release_dir: Path, source: pd.DataFrame, k: int, l: int):
    """The release holds rows of the source only and meets k and l by a count."""
    (path,) = (release_dir / "data").glob("*.csv")
    released = pd.read_csv(path, dtype=str, keep_default_na=False)
    assert len(released) <= len(source)
    # As persons (the columns released as they are): a sub-multiset of the source.
    mine = Counter(map(tuple, released[PERSON].to_numpy().tolist()))
    theirs = Counter(map(tuple, source[PERSON].astype(str).to_numpy().tolist()))
    assert not mine - theirs
    sizes = released.groupby(QIS, sort=False).size()
    assert sizes.min() >= k
    distinct = released.groupby(QIS, sort=False)["diagnosis"].nunique()
    assert distinct.min() >= l
    assert main(["verify", str(release_dir)]) == 0


@pytest.mark.slow
@pytest.mark.flow
def test_an_unchanged_table_released_five_times_with_other_algorithms_and_k(
    prefect_backend, owner, tmp_path, capsys
):
    source, config = owner
    out = tmp_path / "out"
    runs = [
        ("mondrian", 5, 2),
        ("mondrian", 10, 2),  # the same rows, coarser classes
        ("lattice-optimal", 5, 2),
        ("kactus", 10, 2),
        ("approx-ac", 5, 1),
    ]
    published: list[tuple[str, Path]] = []
    refused: list[str] = []
    for algorithm, k, l in runs:
        before = set((out / "clinic").glob("*")) if out.exists() else set()
        code, err = _run(config, out, algorithm, k, l, capsys)
        after = set((out / "clinic").glob("*"))
        if code == 0:
            (release_dir,) = after - before
            _check_published(release_dir, source, k, l)
            published.append((f"{algorithm} k={k}", release_dir))
            continue
        # A refusal publishes nothing, is one line, and names an earlier
        # release of the same source and the two ways on.
        assert after == before
        message = _refusal(err)
        assert message.startswith("republication refused, nothing was published")
        assert any(f"release {d.name} " in message for _, d in published), message
        assert "same source" in message
        assert "another output directory" in message
        assert "policy: off" in message
        assert "\n" not in message
        refused.append(message)
    # The first release is published; the second (the same rows at k=10)
    # would intersect with it into groups below 10 and is refused.
    assert [name for name, _ in published][0] == "mondrian k=5"
    assert "mondrian k=10" not in [name for name, _ in published]
    assert refused
    entries = list(read_entries(out / "audit.jsonl"))
    rejected = [e for e in entries if e["event"] == "release-rejected"]
    assert [e["reason"] for e in rejected] == refused
    assert all(e["step"] == "republication" for e in rejected)
    assert [e["release_dir"] for e in entries if e["event"] == "publish"] == [
        f"clinic/{d.name}" for _, d in published
    ]
    assert verify_audit_log(out).ok


@pytest.mark.flow
@pytest.mark.slow  # a long end-to-end run: CI's slow stage
def test_policy_off_publishes_the_same_rows_again_as_a_recorded_risk(
    prefect_backend, owner, tmp_path, capsys
):
    source, config = owner
    data = yaml.safe_load(config.read_text())
    data["republication"] = {"policy": "off"}
    off = config.with_name("clinic-off.yaml")
    off.write_text(yaml.safe_dump(data, sort_keys=False))
    out = tmp_path / "out"
    assert _run(config, out, "mondrian", 5, 2, capsys)[0] == 0
    (first,) = (out / "clinic").iterdir()
    code, err = _run(off, out, "mondrian", 10, 2, capsys)
    assert code == 0, err
    (second,) = set((out / "clinic").iterdir()) - {first}
    _check_published(second, source, 10, 2)
    certificate = json.loads((second / "verification.json").read_text())
    (result,) = certificate["series"]["results"]
    assert result["check"] == "same-source" and result["against"] == first.name
    assert result["accepted_risk"] and result["n_leaking_groups"] > 0
    entry = [e for e in read_entries(out / "audit.jsonl") if e["event"] == "publish"]
    assert entry[-1]["republication"]["accepted_risk"] is True
    report = (second / "report.html").read_text()
    assert "of the same source" in report and "accepted risk (policy off)" in report
