"""A killed `ppdm run` leaves no process behind (its temporary Prefect API dies too).

``ppdm run`` starts a temporary Prefect API server as a child process
(``flows/api_server.py``). The test starts the console script in a session of
its own, finds every process it started by walking ``/proc/<pid>/task/*/children``
and SIGKILLs the ``ppdm`` process alone, not its group, at two moments: once
the API answers, and while the flow runs. Every process it started must be
gone within 15 s, by PID (and start time, so a reused PID is not mistaken for
a survivor). A run left to finish must leave none behind either.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from process_groups import start_group

# Long end-to-end checks (each test runs ppdm with a temporary Prefect API of its own
# and kills it): .ci/run runs them after the README's command.
pytestmark = pytest.mark.slow

PPDM = Path(sys.executable).with_name("ppdm")
GRACE_S = 60.0  # a deadline for a loaded machine; a quiet one needs under 1 s

Identity = tuple[int, str]  # pid, start time in clock ticks since boot


def _stat(pid: int) -> tuple[str, str] | None:
    """(state, start time) of a process, None when there is none."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rindex(")") + 2 :].split()  # after "pid (comm) "
    return fields[0], fields[19]


def _identity(pid: int) -> Identity | None:
    stat = _stat(pid)
    return (pid, stat[1]) if stat else None


def _alive(who: Identity) -> bool:
    stat = _stat(who[0])
    return stat is not None and stat[1] == who[1] and stat[0] != "Z"


def _descendants(pid: int) -> dict[Identity, list[str]]:
    """Every living descendant of ``pid``, with its command line."""
    found: dict[Identity, list[str]] = {}
    todo = [pid]
    while todo:
        parent = todo.pop()
        for children in Path(f"/proc/{parent}/task").glob("*/children"):
            try:
                pids = [int(p) for p in children.read_text().split()]
            except (FileNotFoundError, ProcessLookupError):
                continue
            for child in pids:
                who = _identity(child)
                if who is not None and who not in found:
                    found[who] = _cmdline(child)
                    todo.append(child)
    return found


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except (FileNotFoundError, ProcessLookupError):
        return []


def _is_api(args: list[str]) -> bool:
    return "ppdm.flows.api_server" in args and "--port" in args


def _api_answers(seen: dict[Identity, list[str]]) -> bool:
    for args in seen.values():
        if _is_api(args):
            port = args[args.index("--port") + 1]
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/api/health", timeout=2
                ) as answer:
                    return json.loads(answer.read()) is True
            except OSError:
                return False
    return False


def _start(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    log = tmp_path / "ppdm.log"
    process = start_group(
        [str(PPDM), "run", "--dataset", "german", "--out", str(tmp_path / "out")],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
    )
    return process, log


Seen = dict[Identity, list[str]]


def _watch(
    process: subprocess.Popen, until: Callable[[Seen], bool], timeout: float
) -> Seen:
    """Every process ``process`` started, collected until ``until(seen)`` holds."""
    seen: Seen = {}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen = _descendants(process.pid) | seen
        if until(seen):
            return seen
        if process.poll() is not None:
            raise AssertionError(f"ppdm run exited with {process.returncode} first")
        time.sleep(0.1)
    raise AssertionError(f"the moment never came within {timeout:.0f} s")


def _survivors(seen: Seen) -> tuple[set[Identity], float]:
    start = time.monotonic()
    while time.monotonic() - start < GRACE_S:
        alive = {who for who in seen if _alive(who)}
        if not alive:
            return set(), time.monotonic() - start
        time.sleep(0.05)
    return {who for who in seen if _alive(who)}, GRACE_S


def _kill_when(tmp_path: Path, moment: Callable[[Seen, Path], bool]) -> None:
    process, log = _start(tmp_path)
    seen: Seen = {}
    try:
        seen = _watch(process, lambda s: moment(s, log), timeout=240)
        seen = _descendants(process.pid) | seen
        assert any(_is_api(args) for args in seen.values()), seen
        os.kill(process.pid, signal.SIGKILL)  # ppdm alone, not its group
        process.wait(timeout=30)
        left, took = _survivors(seen)
        print(
            f"\nkilled ppdm ({len(seen)} processes started): {len(left)} left, "
            f"all gone after {took:.2f} s"
        )
        assert left == set(), [seen[who] for who in left]
    finally:
        for pid, start in seen:  # only what this test started, by PID
            if _alive((pid, start)):
                os.kill(pid, signal.SIGKILL)
        if process.poll() is None:
            process.kill()
            process.wait()


def test_killed_once_the_api_answers_leaves_no_process(tmp_path: Path) -> None:
    _kill_when(tmp_path, lambda seen, log: _api_answers(seen))


def test_killed_during_the_flow_run_leaves_no_process(tmp_path: Path) -> None:
    ingested = re.compile(r"Task run 'ingest-\w+' - Finished")

    def flow_running(seen: Seen, log: Path) -> bool:
        return bool(ingested.search(log.read_text(errors="replace")))

    _kill_when(tmp_path, flow_running)


def test_a_finished_run_leaves_no_process(tmp_path: Path) -> None:
    process, log = _start(tmp_path)
    seen: Seen = {}
    try:
        seen = _watch(process, lambda s: process.poll() is not None, timeout=240)
        assert process.wait() == 0, log.read_text()
        assert any(_is_api(args) for args in seen.values()), seen
        left, took = _survivors(seen)
        print(f"\nfinished run ({len(seen)} processes started): {len(left)} left")
        assert left == set(), [seen[who] for who in left]
    finally:
        for pid, start in seen:
            if _alive((pid, start)):
                os.kill(pid, signal.SIGKILL)
        if process.poll() is None:
            process.kill()
            process.wait()
