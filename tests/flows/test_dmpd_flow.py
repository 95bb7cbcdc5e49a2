"""DMPD through the whole flow: ``ppdm run`` publishes projections ``ppdm verify`` passes.

A small search (a configuration file with few generations) keeps the run
short; the release is German at k=10 with distinct 2-diversity of purpose.
The published files are re-checked by independent counts (each projection
over the quasi-identifiers it holds, every pair joined on the target by an
actual merge), and a table on which no feature alone is k-anonymous fails the
run with one line and no traceback.
"""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ppdm.flows.cli import main
from ppdm.privacy.measures import distinct_l_diversity, k_anonymity

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def _config(tmp_path: Path, **changes) -> Path:
    config = yaml.safe_load((CONFIGS / "german-dmpd.yaml").read_text())
    config["params"] = {"generations": 3, "population": 12, "n_folds": 2}
    config.update(changes)
    path = tmp_path / "german-dmpd.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _join_level(a: pd.DataFrame, b: pd.DataFrame, qis: list[str], target: str) -> int:
    joined = a.merge(b, on=target)
    keys = [q for q in qis if q in joined.columns] + [target]
    return int(joined.groupby(keys).size().min())


@pytest.fixture
def dmpd_release(prefect_backend, tmp_path):
    out = tmp_path / "releases"
    code = main(
        [
            "run",
            "--config",
            str(_config(tmp_path)),
            "--dataset",
            "german",
            "--algorithm",
            "dmpd",
            "--k",
            "10",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    (release_dir,) = (out / "german").iterdir()
    return out, release_dir


def test_dmpd_projections_are_published_verified_and_reported(dmpd_release, capsys):
    out, release_dir = dmpd_release
    manifest = json.loads((release_dir / "manifest.json").read_text())
    assert manifest["algorithm"] == "dmpd"
    models = [m["model"] for m in manifest["requirement"]["models"]]
    assert "set-anonymity" in models
    qis, target = manifest["quasi_identifiers"], "credit"
    tables = {
        f["path"]: pd.read_csv(
            release_dir / f["path"], dtype=str, keep_default_na=False
        )
        for f in manifest["files"]
    }
    assert len(tables) >= 2
    seen: set[str] = set()
    for table in tables.values():
        assert len(table) == 1000 and target in table.columns
        features = set(table.columns) - {target}
        assert not seen & features  # disjoint groups
        seen |= features
        own = [q for q in qis if q in table.columns]
        if own:
            assert k_anonymity(table, own) >= 10
            if "purpose" in table.columns:
                assert distinct_l_diversity(table, own, "purpose") >= 2
        if "purpose" in table.columns:
            # joined with another projection on the target, a class is
            # (its quasi-identifiers, target): 2-diverse there too
            assert distinct_l_diversity(table, [*own, target], "purpose") >= 2
    for a, b in combinations(tables.values(), 2):
        assert _join_level(a, b, qis, target) >= 10

    certificate = json.loads((release_dir / "verification.json").read_text())
    assert certificate["passed"] is True
    assert certificate["release"][0]["model"].startswith("set 10-anonymity")
    utility = json.loads((release_dir / "utility.json").read_text())
    tree = utility["holdout"]["accuracy"]["decision_tree"]
    assert 0.5 < tree["anonymized"] <= 1.0

    capsys.readouterr()
    assert main(["verify", str(release_dir)]) == 0
    printed = capsys.readouterr().out
    assert printed.strip().endswith("PASS")
    assert "set 10-anonymity" in printed


def test_no_feature_k_anonymous_alone_fails_with_one_line(
    prefect_backend, tmp_path, capsys
):
    """Every column a quasi-identifier and k above every value count: nothing."""
    config = yaml.safe_load((CONFIGS / "german-dmpd.yaml").read_text())
    columns = {
        c: ("target" if role == "target" else "quasi_identifier")
        for c, role in config["columns"].items()
    }
    path = _config(
        tmp_path,
        columns=columns,
        quasi_identifiers=[c for c, r in columns.items() if r != "target"],
        sensitive_attribute=None,
        l=1,
        discretize={"method": "none"},  # MDL leaves some numbers one interval
    )
    out = tmp_path / "releases"
    capsys.readouterr()
    code = main(["run", "--config", str(path), "--k", "690", "--out", str(out)])
    captured = capsys.readouterr()
    assert code != 0
    assert "Traceback" not in captured.err + captured.out
    # Prefect's own log lines aside, the command prints one line.
    printed = [line for line in captured.err.splitlines() if line.startswith("ppdm")]
    assert len(printed) == 1, captured.err
    assert printed[0].startswith("ppdm run: dmpd: k=690 cannot be met")
    assert "nothing is released" in printed[0]
    assert not (out / "german").exists() or not any((out / "german").iterdir())
