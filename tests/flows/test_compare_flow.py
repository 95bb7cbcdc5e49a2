"""The comparison sweep as a Prefect flow, and the ``ppdm compare`` command."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest

from ppdm.algorithms import ALGORITHMS
from ppdm.algorithms.mondrian import Mondrian
from ppdm.config import load_config
from ppdm.experiments import compare as C
from ppdm.flows import cli
from ppdm.flows.compare import compare
from ppdm.flows.runners import RunnerSettings, task_runner
from ppdm.scale.engine import local_cluster

ROOT = Path(__file__).resolve().parents[2]
GERMAN = ROOT / "configs" / "german.yaml"

THREADS: list[str] = []


class ThreadRecorder(Mondrian):
    """Test-only: Mondrian that records the thread it runs on."""

    name: ClassVar[str] = "thread-recorder"

    def _anonymize(self, table, spec, rng):
        THREADS.append(threading.current_thread().name)
        return super()._anonymize(table, spec, rng)


@pytest.mark.slow  # the whole German sweep twice, once on a Dask cluster: .ci/run's 2nd stage
def test_dask_local_cluster_with_two_threads(
    prefect_backend, toy_algorithms, monkeypatch, tmp_path
):
    """The sweep on Prefect's DaskTaskRunner (local cluster, 2 threads) gives the
    same numbers as the plain sequential run, lists the toy algorithm and
    publishes the comparison table and plot."""
    monkeypatch.setitem(ALGORITHMS, "thread-recorder", ThreadRecorder)
    THREADS.clear()
    config = load_config(GERMAN)
    names = ["thread-recorder", "two-projections"]
    settings = RunnerSettings(kind="dask", workers=1, threads_per_worker=2)
    flow = compare.with_options(task_runner=task_runner(settings))
    out = tmp_path / "cmp"
    result = flow(
        config,
        ks=[5, 10],
        out=str(out),
        algorithms=names,
        sample=200,
        runner=settings.describe(),
    )
    summary = result.summary
    assert list(summary["algorithm"].unique()) == ["original", *names]
    assert (summary["status"] == "ok").all()
    assert (summary["folds"] == 10).all()
    # every fold ran on the Dask worker's two threads, none in the flow's
    fold_threads = THREADS[: 2 * 10]
    assert all("Dask-Default-Threads" in name for name in fold_threads), THREADS
    assert len(set(fold_threads)) <= 2
    # the runner does not change a number: the sequential core run agrees
    plan = C.plan_comparison(config, [5, 10], algorithms=names, sample=200)
    plain = C.run_comparison(plan, measure_memory=False)
    columns = ["algorithm", "k", "repeat", "fold", "model", "accuracy", "glm"]
    pd.testing.assert_frame_equal(
        result.rows[columns].reset_index(drop=True),
        plain.rows[columns].reset_index(drop=True),
    )
    for name in ("comparison.csv", "comparison.json", "accuracy_vs_k.png"):
        assert (out / name).exists()
    document = json.loads((out / "comparison.json").read_text())
    assert "Dask local cluster" in document["config"]["runner"]
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    wanted = ["comparison-german", "comparison-german-report"]
    with get_client(sync_client=True) as client:
        # asked by key: the session's API holds many other tests' artifacts,
        # more than one page of an unfiltered read
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=wanted))
        )
    assert set(wanted) <= {a.key for a in found}


@pytest.mark.slow  # the whole German sweep through `ppdm compare`: .ci/run's 2nd stage
def test_ppdm_compare_command(prefect_backend, tmp_path, capsys):
    out = tmp_path / "german"
    code = cli.main(
        [
            "compare",
            "--config",
            str(GERMAN),
            "--k",
            "5,10",
            "--algorithms",
            "mondrian",
            "--sample",
            "200",
            "--runner",
            "threads",
            "--workers",
            "2",
            "--out",
            str(out),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert printed.strip().splitlines()[-1] == str(out)
    assert "mondrian" in printed and "original" in printed
    summary = pd.read_csv(out / "comparison.csv")
    assert list(summary["k"]) == [1, 5, 10]
    assert np.isfinite(summary["peak_mib"].iloc[1:]).all()
    markdown = (out / "comparison.md").read_text()
    assert "Command: `ppdm compare --config" in markdown and "Machine: " in markdown


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--k", "1"], "k = 1 is out of range"),
        (["--k", "5", "--algorithms", "nope"], "'nope' is not registered"),
        (["--k", "5", "--param", "mondrian.bogus=1"], "no parameter(s) ['bogus']"),
        (["--k", "5", "--dask-address", "tcp://x:1"], "need --runner dask"),
        (["--k", "5", "--sample", "3"], "--sample: 3 rows is out of range"),
        (["--k", "5", "--models", "svm"], "'svm' is not a learner"),
        (["--k", "5", "--l", "0"], "l = 0 is not allowed"),
    ],
)
def test_user_errors_are_one_line_exit_2(argv, needle, capsys):
    code = cli.main(["compare", "--config", str(GERMAN), *argv])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("ppdm compare: ")
    assert needle in err and "Traceback" not in err


def test_missing_config_is_exit_2(tmp_path, capsys):
    code = cli.main(["compare", "--config", str(tmp_path / "no.yaml"), "--k", "5"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("ppdm compare: ") and err.count("\n") == 1


def test_runner_settings_choose_the_task_runner():
    from prefect.task_runners import ThreadPoolTaskRunner
    from prefect_dask import DaskTaskRunner

    one = task_runner(RunnerSettings())
    assert isinstance(one, ThreadPoolTaskRunner) and one._max_workers == 1
    pool = task_runner(RunnerSettings(kind="threads", workers=3))
    assert isinstance(pool, ThreadPoolTaskRunner) and pool._max_workers == 3
    local = task_runner(RunnerSettings(kind="dask", workers=2, threads_per_worker=2))
    assert isinstance(local, DaskTaskRunner) and local.address is None
    assert local.cluster_class is local_cluster  # the one place clusters start
    assert local.cluster_kwargs == {
        "n_workers": 2,
        "threads_per_worker": 2,
        "processes": False,
    }
    remote = task_runner(RunnerSettings(kind="dask", address="tcp://10.0.0.5:8786"))
    assert remote.address == "tcp://10.0.0.5:8786" and not remote.cluster_kwargs
    assert (
        "10.0.0.5"
        in RunnerSettings(kind="dask", address="tcp://10.0.0.5:8786").describe()
    )
    with pytest.raises(ValueError, match="allowed: sequential, threads, dask"):
        task_runner(RunnerSettings(kind="spark"))
