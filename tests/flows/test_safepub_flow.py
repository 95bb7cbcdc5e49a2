"""SafePub through the whole flow: ``ppdm run`` on German publishes, ``ppdm verify`` passes.

The shipped ``configs/german-safepub.yaml`` releases the quasi-identifiers and
the target (the account records are dropped: a differentially private release
protects every column it holds, and classes are whole rows). Keyed randomness:
the audit key set here makes the run reproducible for its holder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from ppdm.algorithms.safepub import default_delta, derive_parameters
from ppdm.flows.cli import main, release_warnings

pytestmark = pytest.mark.slow  # a Prefect run and a verify: about a minute

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "german-safepub.yaml"


@pytest.fixture
def safepub_release(prefect_backend, tmp_path, monkeypatch):
    monkeypatch.setenv("PPDM_AUDIT_KEY", "german-safepub-audit-key-0123456789")
    out = tmp_path / "releases"
    code = main(["run", "--config", str(CONFIG), "--out", str(out)])
    assert code == 0
    (manifest,) = out.glob("german/*/manifest.json")
    return manifest.parent


def test_release_has_the_derived_k_and_verifies(safepub_release, capsys):
    manifest = json.loads((safepub_release / "manifest.json").read_text())
    assert manifest["algorithm"] == "safepub"
    (entry,) = manifest["files"]
    released = pd.read_csv(
        safepub_release / entry["path"], dtype=str, keep_default_na=False
    )
    beta, k = derive_parameters(0.9, default_delta(1000))  # epsilon 1, 10 % search
    assert 0 < len(released) <= 1000
    assert released.groupby(list(released.columns)).size().min() >= k
    certificate = json.loads((safepub_release / "verification.json").read_text())
    entry_dp = certificate["differential_privacy"]
    assert certificate["passed"] and entry_dp["passed"]
    assert (entry_dp["epsilon"], entry_dp["delta"]) == (1.0, default_delta(1000))
    assert entry_dp["checked"]["k"] == k
    assert entry_dp["holds"].startswith("by construction")
    # The guarantee is the released tables'; what else the directory holds is
    # computed on the original rows, and the data owner is told so.
    assert entry_dp["covers"] == "the released tables (data/)"
    assert "utility.json" in entry_dp["not_covered"]
    (warning,) = [w for w in release_warnings(safepub_release) if "differential" in w]
    assert "share data/ alone" in warning
    evidence = json.loads((safepub_release / "evidence.json").read_text())["evidence"]
    assert evidence["k_derived"] == k and evidence["beta"] == pytest.approx(beta)
    assert evidence["randomness"].startswith("keyed:")
    capsys.readouterr()
    assert main(["verify", str(safepub_release)]) == 0
    shown = capsys.readouterr().out
    assert "differential privacy by construction" in shown
    assert f">= k={k} rows (yes" in shown and "PASS" in shown
