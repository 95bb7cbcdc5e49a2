"""Shared fixtures: offline Prefect settings, the session's Prefect backend, small tables."""

from __future__ import annotations

import logging
import os
import sys
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


@pytest.fixture(scope="session")
def prefect_backend():
    """One throwaway Prefect backend (SQLite database, API server) for the session.

    Shared by every test that runs a flow in this process (``tests/flows``,
    ``tests/e2e``): each start of the harness costs seconds.
    """
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


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
    from prefect.settings import PREFECT_API_URL

    url = PREFECT_API_URL.value()
    assert url, "the Prefect test harness names no API"
    return str(url)


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
