"""fs-anonymity through the whole flow: ``ppdm run`` publishes, ``ppdm verify`` passes.

German at k = 5 (with l = 1: the release carries no sensitive attribute, so
the shipped configuration's distinct 2-diversity is refused in one line). The
default guarantee is ordinary k-anonymity of the released feature vectors;
the published file is re-checked by an independent count: the classes of
identical released rows, and the containment sizes by the brute-force
definition over the released 0/1 columns (implied by the former).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdm.flows.cli import main
from ppdm.selection import containment_brute_force


@pytest.fixture
def fs_release(prefect_backend, tmp_path):
    out = tmp_path / "releases"
    args = ["run", "--dataset", "german", "--algorithm", "fs-anonymity"]
    code = main([*args, "--k", "5", "--l", "1", "--out", str(out)])
    assert code == 0
    (manifest,) = out.glob("german/*/manifest.json")
    return manifest.parent


def test_release_is_k_anonymous_over_its_features_and_verifies(fs_release, capsys):
    manifest = json.loads((fs_release / "manifest.json").read_text())
    models = manifest["requirement"]["models"]
    assert models == [{"model": "k-anonymity", "k": 5}]
    (entry,) = manifest["files"]
    released = pd.read_csv(fs_release / entry["path"], dtype=str)
    assert entry["columns"] == list(released.columns)
    features = [c for c in released.columns if c != "credit"]
    qis = manifest["quasi_identifiers"]
    assert features and all(c.split("=", 1)[0] in qis for c in features)
    # nothing else leaves: no sensitive, insensitive or raw quasi-identifier column
    assert set(released.columns) == {*features, "credit"}
    bits = released[features].to_numpy() == "1"
    assert set(np.unique(released[features].to_numpy())) <= {"0", "1"}
    assert released.groupby(features).size().min() >= 5
    assert containment_brute_force(bits).min() >= 5
    evidence = json.loads((fs_release / "evidence.json").read_text())["evidence"]
    assert evidence["selected_features"] == features
    assert len(evidence["objective_trace"]) == len(features)
    certificate = json.loads((fs_release / "verification.json").read_text())
    (table,) = certificate["tables"].values()
    smallest = int(released.groupby(features).size().min())
    assert certificate["passed"] and table["measures"]["k"] == smallest
    assert table["quasi_identifiers"] == features
    assert table["risk"]["prosecutor_max"] == 1 / smallest
    assert table["feature_classes"]["below_k_classes"] == 0
    capsys.readouterr()
    assert main(["verify", str(fs_release)]) == 0
    shown = capsys.readouterr().out
    assert f"k={smallest}" in shown and "5-anonymity" in shown and "PASS" in shown


def test_l_diversity_is_refused_in_one_line(prefect_backend, tmp_path, capsys):
    out = tmp_path / "releases"
    args = ["run", "--dataset", "german", "--algorithm", "fs-anonymity", "--k", "5"]
    code = main([*args, "--out", str(out)])
    assert code != 0
    err = capsys.readouterr().err
    assert "distinct-l-diversity" in err and "l = 1" in err
    assert "Traceback" not in err
    assert not list(Path(out).glob("german/*/manifest.json"))
