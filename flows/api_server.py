"""A temporary Prefect API for one `ppdm` command that dies with the command.

Without ``PREFECT_API_URL``, Prefect starts an *ephemeral* API server as a plain
subprocess (``prefect.server.api.server.SubprocessASGIServer``) and stops it
from an ``atexit`` hook. A SIGKILL of the ``ppdm`` process skips that hook, so
the server (a uvicorn process) outlives every killed run. Prefect has no option
to run the ephemeral API in-process in 3.8, so ppdm starts the same server
itself, through this module, with two parent-death guards:

- on Linux the kernel sends the server SIGKILL when its parent dies
  (``prctl(PR_SET_PDEATHSIG)``, set first thing in the child);
- everywhere, a watchdog thread in the server exits when its parent process
  id changes (the orphan was re-parented), within half a second.

:func:`temporary_api` starts it, points Prefect at it for the duration of a
``with`` block, and stops it by PID at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator

__all__ = ["TemporaryAPI", "temporary_api"]

_PR_SET_PDEATHSIG = 1
_STARTUP_TIMEOUT_S = float(
    os.environ.get("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
)


def _die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except OSError:  # not glibc Linux: the watchdog thread still guards
        pass


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _healthy(url: str) -> bool:
    import httpx

    try:
        return httpx.get(f"{url}/health", timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False


class TemporaryAPI:
    """A Prefect API server process on 127.0.0.1, started early and awaited late.

    ``start`` only spawns the process (milliseconds); ``serving`` waits for its
    first answer and points Prefect at it; ``stop`` ends it by PID. A command
    starts it as soon as it knows it will run a flow, so that the server's
    seconds of start-up overlap the command's own work (pre-flight, imports).
    """

    def __init__(self) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/api"
        self.process: subprocess.Popen | None = None

    def start(self) -> TemporaryAPI:
        env = {
            **os.environ,
            "PREFECT_UI_ENABLED": "0",
            "PREFECT__SERVER_EPHEMERAL": "1",
        }
        if _block_types_registered():
            # Prefect's server checks at every start whether the block types
            # it knows are registered in the database, and to know them it
            # imports every installed Prefect collection (prefect-dask, hence
            # Dask's distributed: about 2 s). An earlier start did it (its memo
            # store is there); a run needs no block type that it registers.
            env["PREFECT_SERVER_REGISTER_BLOCKS_ON_START"] = "false"
            env["PREFECT_SERVER_MEMOIZE_BLOCK_AUTO_REGISTRATION"] = "false"
        env.pop("PREFECT_API_URL", None)
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                __name__,
                "--port",
                str(self.port),
                "--parent",
                str(os.getpid()),
            ],
            env=env,
        )
        return self

    @contextlib.contextmanager
    def serving(self) -> Iterator[str]:
        """Wait until the server answers; point Prefect at it in the block."""
        from prefect.settings import (
            PREFECT_API_URL,
            PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
            temporary_settings,
        )

        assert self.process is not None, "start() first"
        deadline = time.monotonic() + _STARTUP_TIMEOUT_S
        while not _healthy(self.url):
            if self.process.poll() is not None:
                raise RuntimeError(
                    "the temporary Prefect API exited with code "
                    f"{self.process.returncode} before it answered"
                )
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the temporary Prefect API did not answer within "
                    f"{_STARTUP_TIMEOUT_S:.0f} s (PREFECT_SERVER_EPHEMERAL_STARTUP_"
                    "TIMEOUT_SECONDS)"
                )
            time.sleep(0.1)
        # In the environment too: Dask worker processes started during the run
        # (compute: {runner: dask, processes: true}) must reach this API
        # rather than each start a server of its own.
        previous = os.environ.get("PREFECT_API_URL")
        os.environ["PREFECT_API_URL"] = self.url
        try:
            # No flow-run heartbeats: they let a server tell a crashed run from
            # a running one, and this server dies with the run. Their thread
            # sleeps in 1 s steps, and the flow's end waits for it (0.5 s on
            # average).
            updates = {
                PREFECT_API_URL: self.url,
                PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None,
            }
            with temporary_settings(updates=updates):
                try:
                    yield self.url
                finally:
                    _flush_to_api()
        finally:
            if previous is None:
                os.environ.pop("PREFECT_API_URL", None)
            else:
                os.environ["PREFECT_API_URL"] = previous

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@contextlib.contextmanager
def temporary_api(while_starting: Callable[[], object] | None = None) -> Iterator[str]:
    """Start a Prefect API on 127.0.0.1 for this process; yield its URL.

    ``while_starting`` runs after the server process is started and before its
    first answer is awaited: the server takes seconds to start, and a command
    imports its flow's modules (Great Expectations, scikit-learn) meanwhile.
    """
    api = TemporaryAPI().start()
    try:
        if while_starting is not None:
            while_starting()
        with api.serving() as url:
            yield url
    finally:
        api.stop()


def _flush_to_api() -> None:
    """Send the logs and events still queued before the API goes away."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    APILogWorker.drain_all(timeout=5, at_exit=False)
    EventsWorker.drain_all(timeout=5, at_exit=False)


def _block_types_registered() -> bool:
    """Whether a Prefect server registered its block types in this database before.

    Prefect's server records that registration in its memo store
    (``$PREFECT_HOME/memo_store.toml``), which the temporary API's own first
    start writes too. A database named elsewhere (another connection URL, or
    memo store) is left to Prefect's own check.
    """
    named = (
        "PREFECT_API_DATABASE_CONNECTION_URL",
        "PREFECT_SERVER_DATABASE_CONNECTION_URL",
    )
    if any(os.environ.get(name) for name in named):
        return False
    memo = os.environ.get("PREFECT_SERVER_MEMO_STORE_PATH") or os.environ.get(
        "PREFECT_MEMO_STORE_PATH"
    )
    if memo is None:
        home = os.environ.get("PREFECT_HOME") or os.path.join("~", ".prefect")
        memo = os.path.join(home, "memo_store.toml")
    return os.path.isfile(os.path.expanduser(memo))


def _watch_parent(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(0.5)


def _serve(port: int, parent: int) -> None:
    _die_with_parent()
    if os.getppid() != parent:  # the parent died before the guard was set
        os._exit(0)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    # The server's start is imports and the app's construction: long-lived
    # objects the cyclic garbage collector would otherwise walk again and
    # again (a tenth of the start's CPU). Frozen, later collections skip them.
    gc.disable()
    import uvicorn
    from prefect.server.api.server import create_app

    app = create_app()
    gc.freeze()
    gc.enable()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", lifespan="on")


if __name__ == "__main__":
    arguments = argparse.ArgumentParser(description=__doc__)
    arguments.add_argument("--port", type=int, required=True)
    arguments.add_argument("--parent", type=int, required=True)
    parsed = arguments.parse_args()
    _serve(parsed.port, parsed.parent)
