"""One ``ppdm run`` reads its configuration file once and validates it once.

The command line's flags are applied before that one validation; pre-flight,
the flow (whose parameter Prefect validates) and the steps get the object.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from parse_counter import ParseCounter

from ppdm.flows.cli import EXIT_OK, main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # a whole German release (about 30 s on a shared core)
def test_ppdm_run_parses_its_configuration_once(prefect_backend, tmp_path, capsys):
    config = tmp_path / "german.yaml"
    shutil.copy(ROOT / "configs" / "german.yaml", config)
    args = ["run", "--config", str(config), "--k", "7", "--seed", "3", "--json"]
    args += ["--out", str(tmp_path / "out"), "--work-dir", str(tmp_path / "work")]
    with ParseCounter() as counter:
        assert main(args) == EXIT_OK
    assert counter.counts == {"yaml": 1, "validated": 1}
    # The run is the one the flags asked for: they reached the release.
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    manifest = json.loads(
        (tmp_path / summary["release_dir"] / "manifest.json").read_text()
    )
    assert manifest["config"]["k"] == 7 and manifest["config"]["seed"] == 3
    # The run's name is read from the object too, not from a second parse.
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        run = client.read_flow_run(manifest["flow_run_id"])
    assert re.fullmatch(r"german-mondrian-k7-\d{8}T\d{6}Z", run.name), run.name
