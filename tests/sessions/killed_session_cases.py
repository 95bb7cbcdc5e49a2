"""A test session that ``tests/test_killed_session.py`` kills with SIGKILL.

Not collected by the suite (the file is not named ``test_*.py``); that test
runs it as a pytest session of its own. It starts what the suite starts: the
session's Prefect API and a process group whose leader has a child of its own
(as a serve process has its flow runs), writes the ids of every process of the
session but pytest itself, and waits to be killed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from process_groups import start_group

CHILD = "import time; time.sleep(900)"
LEADER = (
    "import subprocess, sys, time;"
    f"child = subprocess.Popen([sys.executable, '-c', {CHILD!r}]);"
    "print(child.pid, flush=True); time.sleep(900)"
)


def _descendants(root: int) -> set[int]:
    """Every live process below ``root``, from /proc's parent links."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # ended meanwhile
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier}
        found |= frontier
    return found


def test_start_the_api_and_a_group_then_wait_to_be_killed(prefect_backend):
    leader = start_group(
        [sys.executable, "-c", LEADER], stdout=subprocess.PIPE, text=True
    )
    assert leader.stdout is not None
    child = int(leader.stdout.readline())
    started = _descendants(os.getpid()) | {leader.pid, child}
    if os.environ.get("PYTEST_XDIST_WORKER"):  # this process is a worker: it too
        started.add(os.getpid())
    written = Path(os.environ["PPDM_KILLED_SESSION_PIDS"])
    partial = written.with_suffix(".partial")
    partial.write_text("\n".join(str(pid) for pid in sorted(started)))
    partial.replace(written)  # whole, or not there
    threading.Event().wait(900)  # until the SIGKILL
