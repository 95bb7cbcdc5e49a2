"""Prefect's scheduler itself runs a served release, on a real server.

A ``prefect server start`` subprocess (its own PREFECT_HOME, the offline settings
of ``.ci/env.sh``) and a ``python -m ppdm.flows.serve --interval`` subprocess serving
the default German release; the test waits until the server's scheduler has
created a run of that deployment, the served process has run it to COMPLETED and
its release directory is on disk. Nothing here triggers a run: a run counts only
if the API says the scheduler made it (``auto_scheduled``, ``created_by`` the
deployment's schedule, the scheduler's idempotency key).

With SQLAlchemy 2.1 (Prefect 3.8.8) the scheduler fails with
``InvalidRequestError: Can't evaluate bulk DML statement`` and makes no run, so
this test fails; hence the pin ``sqlalchemy<2.1``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from process_groups import start_group, stop_group

from ppdm.config import default_config

pytestmark = [pytest.mark.scheduler, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
# Deadlines for a loaded machine: a quiet one has the server healthy in 5-15 s
# and the first scheduled run completed within a minute.
DEADLINE_SECONDS = 900  # the whole test, from the server's start
SERVER_START_SECONDS = 600
INTERVAL_SECONDS = 10
DEPLOYMENT = "scheduler-test"
STOP_GRACE_SECONDS = 20


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _offline_env(home: Path) -> dict[str, str]:
    """The environment ``.ci/env.sh`` makes, with PREFECT_HOME at ``home``."""
    env = {**os.environ, "PREFECT_HOME": str(home)}
    env.pop("PREFECT_API_URL", None)
    dumped = subprocess.run(
        ["bash", "-c", "source .ci/env.sh && env -0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        check=True,
    ).stdout.decode()
    made = dict(item.split("=", 1) for item in dumped.split("\0") if "=" in item)
    assert made["PREFECT_HOME"] == str(home)
    assert made["PREFECT_SERVER_ANALYTICS_ENABLED"] == "false"
    return made


def _start(command: list[str], *, env: dict[str, str], cwd: Path, log: Path):
    """Start ``command`` as the leader of a process group tied to the session."""
    with open(log, "wb") as out:
        return start_group(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def _tail(path: Path, lines: int = 40) -> str:
    if not path.exists():
        return f"({path.name}: no output)"
    text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return f"--- last lines of {path.name} ---\n" + "\n".join(text[-lines:])


def _post(api: str, route: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        f"{api}/{route}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def _healthy(api: str) -> bool:
    try:
        with urllib.request.urlopen(f"{api}/health", timeout=2) as response:
            return json.loads(response.read()) is True
    except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError):
        return False


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> Iterator[dict[str, Any]]:
    """A real server and a serve process; both stopped by process group at the end."""
    started = time.monotonic()
    work = tmp_path_factory.mktemp("scheduler")
    env = _offline_env(work / "prefect-home")
    port = _free_port()
    api = f"http://127.0.0.1:{port}/api"
    out = work / "releases"
    config = work / "german.yaml"
    config.write_text(
        yaml.safe_dump(
            default_config("german")
            .with_overrides(output_dir=str(out))
            .model_dump(mode="json", by_alias=True)
        ),
        encoding="utf-8",
    )
    logs = {"server": work / "server.log", "serve": work / "serve.log"}
    processes: list[subprocess.Popen] = []
    try:
        server = _start(
            [sys.executable, "-m", "prefect", "server", "start"]
            + ["--host", "127.0.0.1", "--port", str(port), "--analytics-off"],
            env=env,
            cwd=work,
            log=logs["server"],
        )
        processes.append(server)
        while not _healthy(api):
            assert server.poll() is None, "server exited\n" + _tail(logs["server"])
            assert time.monotonic() - started < SERVER_START_SECONDS, (
                f"no /api/health after {SERVER_START_SECONDS} s\n"
                + _tail(logs["server"])
            )
            time.sleep(0.5)
        healthy_after = time.monotonic() - started
        serve = _start(
            [sys.executable, "-m", "ppdm.flows.serve", "--config", str(config)]
            + ["--interval", str(INTERVAL_SECONDS), "--name", DEPLOYMENT],
            env={**env, "PREFECT_API_URL": api, "PREFECT_RUNNER_POLL_FREQUENCY": "2"},
            cwd=work,
            log=logs["serve"],
        )
        processes.append(serve)
        yield {
            "api": api,
            "out": out,
            "logs": logs,
            "started": started,
            "healthy_after": healthy_after,
            "serve": serve,
        }
    finally:
        for process in reversed(processes):  # serve first: it pauses its schedule
            # Flow-run subprocesses of the serve process share its group.
            stop_group(process, STOP_GRACE_SECONDS)


def _scheduler_made(run: dict[str, Any], deployment: dict[str, Any]) -> bool:
    schedule_ids = {s["id"] for s in deployment["schedules"]}
    created_by = run.get("created_by") or {}
    return (
        run["auto_scheduled"] is True
        and created_by.get("type") == "SCHEDULE"
        and created_by.get("id") in schedule_ids
        and (run.get("idempotency_key") or "").startswith(
            f"scheduled {deployment['id']} "
        )
    )


def test_scheduler_creates_and_completes_a_served_release(stack):
    api, logs = stack["api"], stack["logs"]
    deadline = stack["started"] + DEADLINE_SECONDS

    def diagnosis() -> str:
        return "\n".join(_tail(log) for log in logs.values())

    deployment = None
    completed: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        assert stack["serve"].poll() is None, "serve process exited\n" + diagnosis()
        # The SQLAlchemy 2.1 failure: the scheduler raises and never makes a run.
        assert "InvalidRequestError" not in logs["server"].read_text(
            errors="replace"
        ), "the scheduler failed (SQLAlchemy >= 2.1?)\n" + diagnosis()
        if deployment is None:
            found = _post(
                api,
                "deployments/filter",
                {"deployments": {"name": {"any_": [DEPLOYMENT]}}},
            )
            deployment = found[0] if found else None
        if deployment is not None:
            runs = _post(
                api,
                "flow_runs/filter",
                {"flow_runs": {"deployment_id": {"any_": [deployment["id"]]}}},
            )
            # Nobody but the scheduler makes runs of this deployment.
            assert all(_scheduler_made(r, deployment) for r in runs), runs
            completed = [r for r in runs if r["state_type"] == "COMPLETED"]
            if completed:
                break
        time.sleep(1)
    elapsed = time.monotonic() - stack["started"]
    assert deployment is not None, "deployment never registered\n" + diagnosis()
    assert completed, (
        f"no scheduler-made run COMPLETED within {elapsed:.0f} s\n" + diagnosis()
    )
    print(
        f"server healthy after {stack['healthy_after']:.1f} s; first scheduled "
        f"run completed after {elapsed:.1f} s"
    )

    assert deployment["schedules"][0]["schedule"]["interval"] == INTERVAL_SECONDS
    assert deployment["schedules"][0]["schedule"]["timezone"] == "UTC"
    # The run's release is on disk, and its manifest names that very run.
    manifests = list((stack["out"] / "german").glob("*/manifest.json"))
    run_ids = {r["id"] for r in completed}
    published = [
        m for m in manifests if json.loads(m.read_text())["flow_run_id"] in run_ids
    ]
    assert published, f"no release of runs {sorted(run_ids)} in {manifests}"
    release_dir = published[0].parent
    assert (release_dir / "verification.json").is_file()
    assert json.loads((release_dir / "verification.json").read_text())["passed"]
