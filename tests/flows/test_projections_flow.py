"""A release of several projections goes through the whole flow.

The test-only ``two-projections`` algorithm (tests/toy_algorithms.py) releases
two tables; the real Prefect flow publishes both, the verifier checks both,
the utility report trains one model per projection and combines them, and
``ppdm verify`` re-checks the published directory.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from ppdm.flows.cli import main
from ppdm.privacy.measures import distinct_l_diversity, k_anonymity
from ppdm.release.audit import read_entries


@pytest.fixture
def projections_release(prefect_backend, toy_algorithms, tmp_path):
    out = tmp_path / "releases"
    code = main(
        [
            "run",
            "--dataset",
            "german",
            "--algorithm",
            "two-projections",
            "--k",
            "5",
            "--l",
            "2",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    (release_dir,) = (out / "german").iterdir()
    return out, release_dir


def test_a_two_projection_release_is_published_verified_and_reported(
    projections_release, capsys
):
    out, release_dir = projections_release
    manifest = json.loads((release_dir / "manifest.json").read_text())
    assert manifest["algorithm"] == "two-projections"
    paths = sorted(f["path"] for f in manifest["files"])
    assert len(paths) == 2 and all(p.startswith("data/") for p in paths)
    qis = manifest["quasi_identifiers"]
    seen_qis: set[str] = set()
    for record in manifest["files"]:
        table = pd.read_csv(
            release_dir / record["path"], dtype=str, keep_default_na=False
        )
        assert len(table) == record["rows"] == 1000  # nothing dropped
        assert record["columns"] == list(table.columns)
        assert "credit" in table.columns  # every projection carries the target
        own = [q for q in qis if q in table.columns]
        assert own and not seen_qis & set(own)  # the halves are disjoint
        seen_qis |= set(own)
        # independent counts on the published bytes, per projection
        assert k_anonymity(table, own) >= 5
        assert distinct_l_diversity(table, own, "purpose") >= 2
    assert seen_qis == set(qis)

    certificate = json.loads((release_dir / "verification.json").read_text())
    assert certificate["passed"] is True
    assert len(certificate["tables"]) == 2
    assert all(t["passed"] for t in certificate["tables"].values())

    utility = json.loads((release_dir / "utility.json").read_text())
    assert set(utility["tables"]) == {p.split("/")[1][:-4] for p in paths}
    tree = utility["holdout"]["accuracy"]["decision_tree"]
    assert 0.5 < tree["anonymized"] <= 1.0
    low, high = tree["anonymized_ci95"]
    assert low <= tree["anonymized"] <= high
    assert "data:image/png;base64," in (release_dir / "report.html").read_text()

    (entry,) = read_entries(out / "audit.jsonl")
    recorded = {f["path"] for f in entry["files"]}
    assert {f"{release_dir.relative_to(out)}/{p}" for p in paths} <= recorded

    capsys.readouterr()
    assert main(["verify", str(release_dir)]) == 0
    printed = capsys.readouterr().out
    assert printed.strip().endswith("PASS")
    # Each projection's checks, each with its own figures: k in both tables.
    assert printed.count("check k-anonymity on ") == 2
