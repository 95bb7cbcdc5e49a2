"""A killed test session leaves no process behind.

A CI time-out or a closed terminal kills pytest without running a fixture's
teardown. The processes the suite starts (the session's Prefect API, process
groups started with ``process_groups.start_group``: servers, serve processes,
``ppdm run`` commands and their children) must end with it, not keep their
ports, databases and CPU.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
CASES = HERE / "sessions" / "killed_session_cases.py"
#: Deadlines for a loaded machine (a quiet one: the API in 5-15 s, the end in <1 s).
START_DEADLINE_S = 600
END_DEADLINE_S = 60


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.slow
def test_processes_the_suite_starts_end_with_a_killed_session(tmp_path):
    pids_file = tmp_path / "pids"
    log = tmp_path / "session.log"
    env = {**os.environ, "PPDM_KILLED_SESSION_PIDS": str(pids_file)}
    with log.open("wb") as out:
        session = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
            + ["--rootdir", str(HERE.parent), str(CASES)],
            cwd=HERE.parent,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + START_DEADLINE_S
        while not pids_file.exists():
            assert session.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, (
                f"the session started nothing within {START_DEADLINE_S} s\n"
                + log.read_text(errors="replace")
            )
            time.sleep(0.1)
        started = {int(pid) for pid in pids_file.read_text().split()}
        # The session's API, the group's leader and the leader's child at least.
        assert len(started) >= 3, started
        assert all(_alive(pid) for pid in started)
        session.send_signal(signal.SIGKILL)
        session.wait(timeout=30)
        deadline = time.monotonic() + END_DEADLINE_S
        while (alive := {pid for pid in started if _alive(pid)}) and (
            time.monotonic() < deadline
        ):
            time.sleep(0.1)
        assert not alive, (
            f"alive {END_DEADLINE_S} s after the session was killed: "
            + ", ".join(
                f"{pid} {Path(f'/proc/{pid}/cmdline').read_bytes()[:120]!r}"
                for pid in sorted(alive)
                if _alive(pid)
            )
        )
    finally:
        if session.poll() is None:
            session.kill()
            session.wait()
