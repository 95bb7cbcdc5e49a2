"""A worker's memory limit holds: the Dask engine releases a table the pandas engine cannot.

Adult, 4 seeded copies (195,368 rows), is released twice with Mondrian:
with the pandas engine by ``ppdm run`` in a process of its own, whose peak
resident memory is measured, and with the Dask engine by the release flow on
one worker whose memory limit is below that peak. The Dask run completes on
that worker (the nanny kills a worker past 95% of its limit, and pausing is
off, so a run that needed more would fail, not wait), the worker's sampled
memory stays under the limit, and both engines publish the same rows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ppdm.config import default_config
from ppdm.prepare.datasets import load
from ppdm.release.data_files import released_text
from ppdm.verify import read_released_table

# Long end-to-end checks (releases Adult x4 in a process of its own and on a memory-
# limited Dask worker): .ci/run runs them after the README's command.
pytestmark = pytest.mark.slow

COPIES = 4
LIMIT = 700_000_000  # bytes: one worker's memory limit (the pandas engine peaks near 830 MB)


@pytest.fixture(scope="module")
def adult_copies(tmp_path_factory) -> Path:
    """Adult 4 times, each copy's ages moved by a seeded -2..2 (kept in 17..90)."""
    adult = load("adult")
    rng = np.random.default_rng(16)
    path = tmp_path_factory.mktemp("source") / f"adult-x{COPIES}.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        for copy in range(COPIES):
            frame = adult.copy()
            moved = frame["age"].to_numpy() + rng.integers(-2, 3, size=len(frame))
            frame["age"] = np.clip(moved, 17, 90)
            frame.to_csv(handle, index=False, header=copy == 0, lineterminator="\n")
    return path


@pytest.fixture(scope="module")
def one_small_worker():
    """A scheduler with one worker under LIMIT that is killed, not paused, past it."""
    import dask
    from distributed import Client, LocalCluster

    with (
        dask.config.set({"distributed.worker.memory.pause": False}),
        LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=True,
            memory_limit=LIMIT,
            dashboard_address=None,
            host="127.0.0.1",
        ) as cluster,
        Client(cluster) as client,
    ):
        yield cluster.scheduler_address, client


def _config(source: Path, out: Path, engine: str, address: str | None = None):
    return default_config("adult").with_overrides(
        source={"kind": "csv", "path": str(source)},
        algorithm="mondrian",
        compute={
            "engine": engine,
            "partition_rows": 50_000,
            "sample_rows": 20_000,
            **({"address": address} if address else {}),
        },
        output_dir=str(out / "releases"),
        work_dir=str(out / "work"),
    )


def _in_memory_peak(config_path: Path, api_url: str) -> tuple[int, dict]:
    """``ppdm run`` with the pandas engine: its peak resident bytes and its summary."""
    measure = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "sys.stderr.write(done.stderr)\n"
        "print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else '')\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "sys.exit(done.returncode)\n"
    )
    ppdm = Path(sys.executable).with_name("ppdm")
    env = {**os.environ, "PREFECT_API_URL": api_url}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            measure,
            str(ppdm),
            "run",
            "--config",
            str(config_path),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summary, peak_kib = done.stdout.strip().splitlines()[-2:]
    return int(peak_kib) * 1024, json.loads(summary)


def _released(release_dir: Path) -> pd.DataFrame:
    data = release_dir / "data"
    if (data / "release.csv").is_file():
        table = read_released_table(data / "release.csv")
    else:
        parts = sorted((data / "release").glob("part-*.parquet"))
        table = released_text(pd.concat([pd.read_parquet(p) for p in parts]))
    return table.sort_values(list(table.columns), ignore_index=True)


def _worker_memory(client) -> dict[str, tuple[int, float]]:
    """Per worker: its process id and the highest resident memory it sampled."""
    return client.run(
        lambda dask_worker: (os.getpid(), max(dask_worker.monitor.quantities["memory"]))
    )


def test_a_worker_under_the_in_memory_peak_releases_the_table(
    prefect_api_url, adult_copies, one_small_worker, tmp_path
):
    from ppdm.flows.release import release_for

    address, client = one_small_worker
    in_memory = _config(adult_copies, tmp_path / "pandas", "pandas")
    config_path = tmp_path / "pandas.yaml"
    dumped = in_memory.model_dump(mode="json", by_alias=True)
    config_path.write_text(yaml.safe_dump(dumped, sort_keys=False))  # roles in order
    peak, summary = _in_memory_peak(config_path, prefect_api_url)
    assert summary["passed"] is True
    # The pandas engine holds the table: one process needs more than the limit.
    assert peak > LIMIT, f"in-memory peak {peak / 1e6:.0f} MB"

    before = _worker_memory(client)
    out_of_core = _config(adult_copies, tmp_path / "dask", "dask", address)
    release_dir = Path(release_for(out_of_core)(config=out_of_core))
    after = _worker_memory(client)

    # The same worker process did all the work (it was never killed and
    # restarted), and never sampled more than its limit.
    assert [pid for pid, _ in after.values()] == [pid for pid, _ in before.values()]
    assert all(most < LIMIT for _, most in after.values()), after
    certificate = json.loads((release_dir / "verification.json").read_text())
    assert certificate["passed"] is True
    parts = sorted((release_dir / "data" / "release").glob("part-*.parquet"))
    assert len(parts) == 4  # 195,368 rows in parts of 50,000
    pd.testing.assert_frame_equal(
        _released(release_dir), _released(Path(summary["release_dir"]))
    )
