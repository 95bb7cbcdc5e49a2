"""A throwaway PostgreSQL server for the tests: a real one, in a temporary directory.

:func:`start_server` runs ``initdb`` into a fresh directory and starts
``postgres`` on a free loopback port, with its unix socket in the same
directory, and waits until it accepts connections (polling, with a deadline).
PostgreSQL refuses to run as root: as root (CI) the data directory belongs to
an unprivileged system user (``nobody``) and the server runs as that user
through ``runuser``; as anyone else it runs as the caller.

The server leads a process group handed to the session's reaper
(:mod:`process_groups`), so it dies with the test session however the session
ends; :meth:`PostgresServer.stop` stops it at once (``pg_ctl stop -m
immediate``: the data is thrown away anyway) and removes the directory.

The superuser ``ppdm`` has a password (:data:`PASSWORD`): TCP connections on
127.0.0.1 must give it (``scram-sha-256``), so a wrong password is refused as
by a data owner's server; the tests' own set-up connects through the socket
(``trust``).

Where no ``initdb`` is installed the fixture fails, naming what is missing:
CI installs PostgreSQL (``.ci/run``), so a CI run never skips these tests. On a
development machine without PostgreSQL, ``PPDM_TEST_NO_POSTGRES=1`` turns the
failure into a skip that says so.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from process_groups import start_group, stop_group

__all__ = ["PASSWORD", "USER", "PostgresServer", "find_bin_dir", "start_server"]

USER = "ppdm"
#: The superuser's password; a test fixture's, not a secret.
PASSWORD = "ppdm-test-password"
#: How long a start may take on a loaded machine.
START_DEADLINE_S = float(os.environ.get("PPDM_TEST_POSTGRES_START_DEADLINE_S", "120"))
#: The unprivileged account the server runs as when the tests run as root.
_ROOT_RUNS_AS = "nobody"


def find_bin_dir() -> Path | None:
    """The folder of ``initdb``, ``postgres`` and ``pg_ctl``, or None.

    ``initdb`` on the PATH first; then Debian's layout, where the binaries
    are not on the PATH: ``/usr/lib/postgresql/<major>/bin`` (the newest).
    """
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    candidates = glob.glob("/usr/lib/postgresql/*/bin/initdb")
    if not candidates:
        return None
    newest = max(candidates, key=lambda p: int(Path(p).parts[-3]))
    return Path(newest).parent


@dataclass
class PostgresServer:
    """A running server: where it listens and how to reach it."""

    bin_dir: Path
    directory: Path
    port: int
    process: subprocess.Popen
    run_as: str | None
    host: str = "127.0.0.1"
    user: str = USER
    password: str = PASSWORD

    def url(self, database: str = "postgres", *, password: str | None = None) -> str:
        """A SQLAlchemy URL over TCP; ``password=""`` leaves the password out."""
        secret = self.password if password is None else password
        credentials = f"{self.user}:{secret}" if secret else self.user
        return f"postgresql+psycopg://{credentials}@{self.host}:{self.port}/{database}"

    def connect(self, database: str = "postgres", **options):
        """A psycopg connection through the unix socket (autocommit)."""
        import psycopg

        return psycopg.connect(
            host=str(self.directory),
            port=self.port,
            user=self.user,
            dbname=database,
            autocommit=True,
            **options,
        )

    def create_database(self, name: str) -> str:
        """A fresh, empty database ``name`` (dropped first if it exists)."""
        with self.connect() as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
            connection.execute(f'CREATE DATABASE "{name}"')
        return name

    def stop(self) -> None:
        """Stop the server at once and remove its directory."""
        try:
            if self.process.poll() is None:
                subprocess.run(
                    _as(self.run_as)
                    + [str(self.bin_dir / "pg_ctl"), "stop", "-m", "immediate"]
                    + ["-D", str(self.directory / "data"), "-w", "-t", "30"],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    timeout=60,
                    check=False,
                )
        finally:
            stop_group(self.process)
            shutil.rmtree(self.directory, ignore_errors=True)


def _as(user: str | None) -> list[str]:
    return ["runuser", "-u", user, "--"] if user else []


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(bin_dir: Path) -> PostgresServer:
    """``initdb`` a temporary cluster, start it, and wait until it answers.

    Raises
    ------
    RuntimeError
        ``initdb`` failed, or the server exited or did not answer within
        :data:`START_DEADLINE_S`; the message holds its output.
    """
    run_as = _ROOT_RUNS_AS if os.geteuid() == 0 else None
    # Under /tmp, not pytest's 0700 tmp_path: the server's user must reach it,
    # and a unix socket path must stay short (about 100 bytes).
    directory = Path(tempfile.mkdtemp(prefix="ppdm-pg-", dir="/tmp"))
    password_file = directory / "password"
    password_file.write_text(PASSWORD + "\n")
    if run_as is not None:
        account = pwd.getpwnam(run_as)
        for path in (directory, password_file):
            os.chown(path, account.pw_uid, account.pw_gid)
    initdb = subprocess.run(
        _as(run_as)
        + [str(bin_dir / "initdb"), "-D", str(directory / "data")]
        + ["--no-locale", "--encoding=UTF8", f"--username={USER}"]
        + [f"--pwfile={password_file}", "--auth-local=trust"]
        + ["--auth-host=scram-sha-256"],
        capture_output=True,
        text=True,
        check=False,
    )
    password_file.unlink()
    if initdb.returncode != 0:
        shutil.rmtree(directory, ignore_errors=True)
        raise RuntimeError(
            f"initdb ({bin_dir}) failed with code {initdb.returncode}:\n"
            + (initdb.stdout + initdb.stderr)[-4000:]
        )
    port = _free_port()
    log_path = directory / "server.log"
    with open(log_path, "wb") as log:
        if run_as is not None:
            os.chown(log_path, pwd.getpwnam(run_as).pw_uid, -1)
        process = start_group(
            _as(run_as)
            + [str(bin_dir / "postgres"), "-D", str(directory / "data")]
            + ["-k", str(directory), "-p", str(port), "-h", "127.0.0.1"]
            # A test server: durability off, little memory, no stray workers.
            + ["-c", "fsync=off", "-c", "synchronous_commit=off"]
            + ["-c", "full_page_writes=off", "-c", "shared_buffers=32MB"]
            + ["-c", "max_connections=40", "-c", "max_worker_processes=2"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    server = PostgresServer(bin_dir, directory, port, process, run_as)
    started = time.monotonic()
    while True:
        try:
            with server.connect(connect_timeout=5) as connection:
                connection.execute("SELECT 1")
            return server
        except Exception:  # noqa: BLE001 - not up yet: poll until the deadline
            waited = time.monotonic() - started
            if process.poll() is not None or waited > START_DEADLINE_S:
                output = log_path.read_text(errors="replace")[-4000:]
                server.stop()
                state = (
                    f"exited with code {process.returncode}"
                    if process.poll() is not None
                    else f"did not accept connections within {waited:.0f} s "
                    "(PPDM_TEST_POSTGRES_START_DEADLINE_S)"
                )
                raise RuntimeError(
                    f"the test PostgreSQL server on port {port} {state}; its log:\n"
                    + output
                ) from None
            time.sleep(0.1)
