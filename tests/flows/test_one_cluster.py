"""A release with Prefect's Dask task runner, the Dask engine and the verifier on
Dask starts one cluster: the task runner's, which the steps connect to.

The clusters are counted by the schedulers that start in this process (the
``schedulers_started`` fixture).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ppdm.config import default_config
from ppdm.flows.release import release_for
from ppdm.prepare.datasets import load

pytestmark = pytest.mark.slow


def test_runner_engine_and_verifier_share_one_cluster(
    prefect_backend, tmp_path, schedulers_started
):
    source = tmp_path / "german.csv"
    load("german").to_csv(source, index=False)
    config = default_config("german").with_overrides(
        source={"kind": "csv", "path": str(source)},
        compute={
            "runner": "dask",
            "engine": "dask",
            "verify_engine": "dask",
            "workers": 1,
            "threads_per_worker": 2,
            "memory_limit": "1GB",
            "partition_rows": 400,
            "sample_rows": 1_000,
        },
        output_dir=str(tmp_path / "releases"),
        work_dir=str(tmp_path / "work"),
    )
    release_dir = Path(release_for(config)(config=config))
    assert json.loads((release_dir / "verification.json").read_text())["passed"]
    assert sorted(p.name for p in (release_dir / "data" / "release").iterdir())
    assert len(schedulers_started) == 1, schedulers_started
