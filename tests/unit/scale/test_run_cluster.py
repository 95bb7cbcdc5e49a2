"""One run, one Dask cluster: started when first needed, found by every later user.

The clusters are counted by the schedulers that start in this process (a
local cluster's scheduler runs in the process that starts it), read from
the scheduler's own log line (the ``schedulers_started`` fixture).
"""

from __future__ import annotations

import pandas as pd
import pytest

from ppdm import pipeline
from ppdm.config import default_config
from ppdm.prepare.datasets import load
from ppdm.privacy import Requirement
from ppdm.scale.engine import (
    ClusterSettings,
    cluster,
    current_client,
    run_cluster,
)
from ppdm.verify.out_of_core import verify_tables_out_of_core

#: A cluster of threads: it starts in a fraction of a second.
SMALL = ClusterSettings(workers=1, threads_per_worker=2, processes=False)


def test_a_run_that_needs_no_cluster_starts_none(schedulers_started):
    started = schedulers_started
    with run_cluster(SMALL) as run:
        pass
    assert not run.started and started == []
    assert current_client() is None  # outside a run: no cluster to find


def test_every_user_in_a_run_gets_the_same_cluster(schedulers_started):
    started = schedulers_started
    with run_cluster(SMALL) as run:
        assert not run.started
        client = current_client()  # the first user starts it
        with cluster(ClusterSettings(workers=3)) as inner:  # found, not started
            assert inner.client is client
            assert inner(abs, [-1, -2, 3]) == [1, 2, 3]  # it runs the work
        with run_cluster(ClusterSettings(workers=4)) as nested:
            assert nested is run
        assert current_client() is client
        assert client.scheduler.address == started[0]
    assert len(started) == 1
    assert current_client() is None


def test_an_existing_scheduler_is_connected_to_not_started(schedulers_started):
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as existing:
        address = existing.scheduler_address
        settings = ClusterSettings(address=address)
        with run_cluster(settings) as run:
            assert current_client().scheduler.address == address
            assert run.started
        # The flow's Dask task runner hands its cluster over the same way,
        # asked for only when a step needs a cluster.
        asked: list[str] = []

        def runner_address() -> str:
            asked.append(address)
            return address

        with run_cluster(SMALL, address_of=runner_address):
            assert asked == []
            assert current_client().scheduler.address == address
            current_client()
        assert asked == [address]
    assert schedulers_started == [address]  # the existing one, no other


def test_the_verifiers_read_uses_the_run_cluster(tmp_path, schedulers_started):
    released = pd.DataFrame({"age": ["20-29"] * 4 + ["30-39"] * 4, "sex": ["*"] * 8})
    path = tmp_path / "release.csv"
    released.to_csv(path, index=False)
    requirement = Requirement.of(("age", "sex"), None, k=4)
    with run_cluster(SMALL):
        client = current_client()
        certificate = verify_tables_out_of_core({"release": path}, requirement)
        assert current_client() is client
    assert certificate.passed and len(schedulers_started) == 1


@pytest.fixture(scope="module")
def german_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("source") / "german.csv"
    load("german").to_csv(path, index=False)
    return path


@pytest.mark.slow
@pytest.mark.parametrize(
    ("engine", "verify_engine", "clusters"),
    [("dask", "dask", 1), ("pandas", "dask", 1), ("pandas", "pandas", 0)],
)
def test_a_release_starts_at_most_one_cluster(
    german_csv, tmp_path, engine, verify_engine, clusters, schedulers_started
):
    config = default_config("german").with_overrides(
        source={"kind": "csv", "path": str(german_csv)},
        compute={
            "engine": engine,
            "verify_engine": verify_engine,
            "workers": 1,
            "threads_per_worker": 2,
            "memory_limit": "1GB",
            "partition_rows": 400,
            "sample_rows": 1_000,
        },
        output_dir=str(tmp_path / "releases"),
        work_dir=str(tmp_path / "work"),
    )
    outcome = pipeline.run_release(config)
    assert outcome.certificate["passed"]
    assert len(schedulers_started) == clusters
