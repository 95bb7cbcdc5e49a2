"""Shared fixtures: offline Prefect settings, the session's Prefect backend, small tables."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

# Before anything imports Prefect: no telemetry, a private home, room to start.
_ROOT = Path(__file__).resolve().parent.parent
for _key, _value in {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_UI_SHOW_PROMOTIONAL_CONTENT": "false",
    "PREFECT_CLOUD_ENABLE_ORCHESTRATION_TELEMETRY": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_HOME": str(_ROOT / ".prefect"),
    # Core logs reach Prefect through PREFECT_LOGGING_EXTRA_LOGGERS; outside a
    # flow run (unit tests) there is no run to attach them to.
    "PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW": "ignore",
    # Intermediate artifacts (raw data) of test runs: never in a user's cache.
    "PPDM_WORK_DIR": str(_ROOT / ".prefect" / "work"),
    "MPLBACKEND": "Agg",
    "MPLCONFIGDIR": str(_ROOT / ".prefect" / "matplotlib"),
    "PPDM_AUDIT_KEY": "ppdm-test-suite-audit-key-not-a-secret",  # keyed audit logs
}.items():
    os.environ.setdefault(_key, _value)

# Bytecode. Where writing .pyc files next to the sources is switched off
# (PYTHONDONTWRITEBYTECODE, set in this project's development sessions) and
# the environment holds none (`uv sync` compiles nothing), every Python process
# of the suite (this one, each `ppdm` command, Prefect server and worker it
# starts) compiles the whole stack (Prefect, pandas, scikit-learn, Great
# Expectations) again: about 7 s of CPU a process. The suite writes its
# bytecode under its private home instead, never next to the sources.
if os.environ.get("PYTHONDONTWRITEBYTECODE"):
    os.environ.pop("PYTHONDONTWRITEBYTECODE")
    os.environ.setdefault("PYTHONPYCACHEPREFIX", str(_ROOT / ".prefect" / "pycache"))
    sys.pycache_prefix = os.environ["PYTHONPYCACHEPREFIX"]
    sys.dont_write_bytecode = False

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

DATA = Path(__file__).parent / "data"


#: How long the session's Prefect API may take to answer: generous, because a
#: loaded machine (another CPU-bound process beside the suite) slows a server's
#: start (imports, database migrations) several times over.
API_START_DEADLINE_S = float(os.environ.get("PPDM_TEST_API_START_DEADLINE_S", "600"))


@pytest.fixture(scope="session")
def prefect_backend(tmp_path_factory):
    """One throwaway Prefect API (its own SQLite database) for the test process.

    Shared by every test that runs a flow in this process (``tests/flows``,
    ``tests/e2e``) and, through :func:`prefect_api_url`, by ``ppdm`` commands
    the tests run as processes: each start of an API costs seconds. Under
    pytest-xdist each worker process starts its own, when its first test asks
    for one (two in all with the suite's ``-n 2``). It is the
    server ``ppdm run`` starts for itself (``ppdm.flows.api_server``), so it
    dies with the test session however the session ends (the kernel's
    parent-death signal), where Prefect's own test harness would leave it
    running after a SIGKILL. It is started once, awaited with a deadline long
    enough for a loaded machine, and a failure to start names what was awaited
    and shows the server's output.
    """
    import httpx
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from ppdm.flows.api_server import _flush_to_api

    place = tmp_path_factory.mktemp("prefect-api")
    database = place / "prefect.db"
    log_path = place / "server.log"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **os.environ,
        "PREFECT_SERVER_DATABASE_CONNECTION_URL": f"sqlite+aiosqlite:///{database}",
        # As Prefect's own test harness starts its server: no UI, and the
        # ephemeral mode (no background services such as the scheduler).
        "PREFECT_UI_ENABLED": "0",
        "PREFECT__SERVER_EPHEMERAL": "1",
        "PREFECT__SERVER_FINAL": "1",
    }
    env.pop("PREFECT_API_URL", None)
    command = [sys.executable, "-m", "ppdm.flows.api_server"]
    command += ["--port", str(port), "--parent", str(os.getpid())]
    with open(log_path, "wb") as log:
        server = subprocess.Popen(command, env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}/api"
    started = time.monotonic()
    try:
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            waited = time.monotonic() - started
            if server.poll() is not None or waited > API_START_DEADLINE_S:
                state = (
                    f"exited with code {server.returncode}"
                    if server.poll() is not None
                    else f"did not answer {url}/health within {waited:.0f} s "
                    "(PPDM_TEST_API_START_DEADLINE_S)"
                )
                output = log_path.read_text(errors="replace")[-4000:]
                raise RuntimeError(
                    f"the test session's Prefect API (pid {server.pid}) {state}; "
                    f"its output ({log_path}):\n{output}"
                )
            time.sleep(0.2)
        with temporary_settings(updates={PREFECT_API_URL: url}):
            try:
                yield url
            finally:
                # Logs and events still queued reach the API before it stops
                # (else their workers report failed connections at exit).
                _flush_to_api()
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture(autouse=True)
def prefect_console_on_process_stderr():
    """After each test, Prefect's console log handlers write to the process's stderr.

    Prefect configures its logging once a process, when it is first imported
    (``stream: ext://sys.stderr`` in its ``logging.yml``), and its console
    handlers keep the standard error of that moment. Imported during a test
    that captures its output (``capsys``, ``capfd``), that is the test's
    capture, which pytest closes when the test ends: every later flow run of
    the session would print Prefect's log lines to a closed file, and as the
    release flow logs its prints, Prefect's report of that error is printed,
    logged and fails again until a RecursionError ends the run.
    """
    yield
    handlers = sys.modules.get("prefect.logging.handlers")
    if handlers is None:  # Prefect's logging is not configured in this process
        return
    stderr = sys.__stderr__
    for logger in [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]:
        for handler in getattr(logger, "handlers", ()):
            if isinstance(handler, handlers.PrefectConsoleHandler):
                # Not setStream: it would flush the closed capture first.
                with handler.lock:
                    handler.stream = stderr
                handler.console.file = stderr


@pytest.fixture(scope="session")
def prefect_api_url(prefect_backend) -> str:
    """The session backend's API, for ``ppdm`` commands run as processes of their own.

    A command given ``PREFECT_API_URL`` runs its flow there instead of
    starting a temporary API of its own (seconds of CPU each). Tests of the
    temporary API itself (a killed run, a resumed run, the wheel's one run
    without a server) do not use it.
    """
    return prefect_backend


@pytest.fixture
def tiny_people() -> pd.DataFrame:
    """Eight people: two numeric QIs, one nominal QI, a sensitive value and a class."""
    return pd.DataFrame(
        {
            "age": [23, 25, 31, 35, 42, 47, 52, 58],
            "zip": [13053, 13068, 13053, 13068, 14850, 14853, 14850, 14853],
            "sex": pd.array(["F", "M", "F", "M", "F", "M", "F", "M"], dtype="string"),
            "disease": pd.array(
                ["flu", "cancer", "flu", "ulcer", "flu", "cancer", "ulcer", "flu"],
                dtype="string",
            ),
            "class": pd.array(["y", "n", "y", "n", "y", "n", "n", "y"], dtype="string"),
        }
    )


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture
def toy_algorithms(monkeypatch: pytest.MonkeyPatch) -> dict:
    """Register the test-only algorithms of ``tests/toy_algorithms.py`` for one test."""
    from toy_algorithms import TOY_ALGORITHMS, register_toy_algorithms

    register_toy_algorithms(monkeypatch)
    return dict(TOY_ALGORITHMS)


@pytest.fixture(scope="session")
def postgres_server():
    """A real PostgreSQL server for the session (one per xdist worker, on first use).

    ``tests/postgres.py`` starts it (``initdb`` into a temporary directory, a
    free loopback port, an unprivileged user when the tests run as root) and
    it dies with the session however the session ends. Without PostgreSQL
    installed the test fails naming what is missing (CI installs it, so CI
    never skips); ``PPDM_TEST_NO_POSTGRES=1`` makes it a skip instead.
    """
    from postgres import find_bin_dir, start_server

    bin_dir = find_bin_dir()
    if bin_dir is None:
        reason = (
            "PostgreSQL is not installed: no initdb on the PATH nor under "
            "/usr/lib/postgresql/*/bin (apt-get install postgresql)"
        )
        if os.environ.get("PPDM_TEST_NO_POSTGRES"):
            pytest.skip(f"{reason}; skipped as PPDM_TEST_NO_POSTGRES asks")
        pytest.fail(f"{reason}; set PPDM_TEST_NO_POSTGRES=1 to skip these tests")
    server = start_server(bin_dir)
    try:
        yield server
    finally:
        server.stop()


class _SchedulerLog(logging.Handler):
    """The addresses of the Dask schedulers started in this process while attached.

    A local cluster's scheduler runs in the process that starts it and logs
    ``Scheduler at: <address>`` once it listens.
    """

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.addresses: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "Scheduler at:" in message:
            self.addresses.append(message.split("Scheduler at:", 1)[1].strip())


@pytest.fixture
def schedulers_started():
    """The addresses of the Dask schedulers the test starts, in order."""
    logger = logging.getLogger("distributed.scheduler")
    handler, level = _SchedulerLog(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler.addresses
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
