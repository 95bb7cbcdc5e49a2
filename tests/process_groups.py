"""Processes a test starts die with the test session, however the session ends.

A test that starts a long-lived process (a ``prefect server``, a ``ppdm serve``
process, a ``ppdm run`` it means to kill) stops it in its own ``finally``. That
runs when a test fails or is interrupted with Ctrl-C, but not when the session
itself is killed (a CI time-out's SIGKILL, a closed terminal's SIGHUP, a
SIGTERM): the server and the serve process, with the flow runs they started,
would outlive it and keep their ports, databases and CPU.

:func:`start_group` starts a command as the leader of a process group of its
own (its children, such as the flow-run subprocesses of a serve process, stay
in it) and hands the group to one *reaper* process per session. The reaper
reads group ids from a pipe whose other end only the test session holds; the
kernel closes that end when the session ends, by exit or by any signal, and
the reaper then sends SIGTERM to every group still alive, SIGKILL to whatever
outlives a grace period, and exits. Nothing polls: the end of the pipe is the
signal. The reaper leads a process group of its own, so a Ctrl-C in the
terminal (SIGINT to the foreground group) reaches pytest, which stops its
processes in order, but not the reaper.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import IO, Any

__all__ = ["group_alive", "start_group", "stop_group"]

#: The reaper's whole program: read group ids until the pipe ends, then end them.
_REAPER = r"""
import os, signal, sys, time

def alive(group):
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

def signal_all(groups, number):
    for group in groups:
        try:
            os.killpg(group, number)
        except (ProcessLookupError, PermissionError):
            pass

signal.signal(signal.SIGINT, signal.SIG_IGN)
groups = {int(line) for line in sys.stdin if line.strip()}
left = {group for group in groups if alive(group)}
signal_all(left, signal.SIGTERM)
deadline = time.monotonic() + float(sys.argv[1])
while left and time.monotonic() < deadline:
    time.sleep(0.1)
    left = {group for group in left if alive(group)}
signal_all(left, signal.SIGKILL)
"""

#: Seconds a group has between SIGTERM and SIGKILL once the session has ended.
REAPER_GRACE_S = 10.0

_lock = threading.Lock()
_pipe: IO[str] | None = None


def _reaper_pipe() -> IO[str]:
    """The write end of the session's reaper pipe; the reaper starts on first use."""
    global _pipe
    with _lock:
        if _pipe is None:
            reaper = subprocess.Popen(
                [sys.executable, "-S", "-c", _REAPER, str(REAPER_GRACE_S)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                text=True,
            )
            assert reaper.stdin is not None
            # Not inherited by other children: only this process's end keeps
            # the pipe open (Popen's close_fds closes it in every child).
            _pipe = reaper.stdin
        return _pipe


def start_group(command: list[str], **popen: Any) -> subprocess.Popen:
    """Start ``command`` as the leader of a new process group tied to the session.

    Takes :class:`subprocess.Popen`'s keyword arguments. The group is ended by
    :func:`stop_group`, and by the session's reaper if the session ends first.
    """
    process = subprocess.Popen(command, start_new_session=True, **popen)
    pipe = _reaper_pipe()
    with _lock:
        pipe.write(f"{process.pid}\n")  # start_new_session: its pid is the group id
        pipe.flush()
    return process


def group_alive(group: int) -> bool:
    """Whether any process of process group ``group`` is still alive."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member exists that we may not signal
        return True
    return True


def stop_group(process: subprocess.Popen, grace_s: float = 20.0) -> None:
    """SIGTERM the group ``process`` leads, SIGKILL whatever outlives ``grace_s``."""
    group = process.pid
    if group_alive(group):
        try:
            os.killpg(group, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace_s
    while group_alive(group) and time.monotonic() < deadline:
        if process.poll() is None:
            try:
                process.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                pass
        else:
            time.sleep(0.1)  # the leader is gone; its children are ending
    if group_alive(group):
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait(grace_s)
