"""A release whose configuration asks for Prefect's Dask task runner.

German by DMPD (a small search), once with ``compute: {runner: none}`` and
once with a local Dask cluster of two thread workers: the fitness of each
generation goes out as ``evaluate-batch`` tasks on the Dask runner, and the
release is the same release (same id, same bytes), because where the work
runs is not part of what is released.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

from ppdm.flows.cli import EXIT_OK, main

# Long end-to-end checks (a DMPD release twice, once on a local Dask cluster): .ci/run
# runs them after the README's command.
pytestmark = pytest.mark.slow

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def _run(tmp_path: Path, name: str, compute: dict) -> Path:
    config = yaml.safe_load((CONFIGS / "german-dmpd.yaml").read_text())
    config["params"] = {"generations": 3, "population": 12, "n_folds": 2}
    config["compute"] = compute
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / name
    args = ["run", "--config", str(path), "--k", "10", "--out", str(out), "--quiet"]
    assert main([*args, "--work-dir", str(tmp_path / f"work-{name}")]) == EXIT_OK
    (release,) = (out / "german").iterdir()
    return release


def _task_names(flow_run_id: str) -> list[str]:
    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id]))
        )
    return [run.name.rsplit("-", 1)[0] for run in runs]


def test_dask_runner_spreads_the_fitness_and_releases_the_same_bytes(
    prefect_backend, tmp_path
):
    alone = _run(tmp_path, "alone", {"runner": "none"})
    spread = _run(tmp_path, "spread", {"runner": "dask", "workers": 2})
    assert alone.name == spread.name  # the release id ignores where work ran
    files = sorted(p.relative_to(alone) for p in alone.rglob("*") if p.is_file())
    for relative in files:
        # the manifest names the flow run; the page its time and audit entry
        if relative.name not in ("manifest.json", "report.html"):
            assert (alone / relative).read_bytes() == (spread / relative).read_bytes()

    def manifest(release: Path) -> dict:
        return json.loads((release / "manifest.json").read_text())

    batches = _task_names(manifest(spread)["flow_run_id"]).count("evaluate-batch")
    assert batches >= 2 * 3  # two batches a generation at least
    assert "evaluate-batch" not in _task_names(manifest(alone)["flow_run_id"])
