"""The wheel as a data owner installs it: a fresh venv, an empty directory, no checkout.

Once per session the wheel is built (``uv build --wheel``) and installed into a
new virtual environment of the Python running the suite (``uv venv`` +
``uv pip install``; dependencies come from the uv cache or PyPI, held to the
versions of ``uv.lock`` so that the test checks the wheel, not whatever PyPI
published today). Everything then runs through the venv's ``ppdm`` command from
an empty directory outside the repository, with its own Prefect home, work
directory and audit key: the version, ``ppdm run --dataset german`` with every
registered algorithm, and ``ppdm init`` on a generated CSV followed by ``ppdm run
--config``. The German runs share one Prefect server started from the venv
(``prefect server start``, named by ``PREFECT_API_URL`` as an operator names
theirs); the ``init`` run has none and starts its own temporary API, as a data
owner's first run does. Each flow run must be recorded where it ran: on the
shared server, or (the ``init`` run) not there. Each release must pass ``ppdm
verify``, its audit log ``ppdm audit verify``, and an independent count of its
equivalence classes. The repository's folder names (``flows``, ``tasks``,
``schemas``) must not be importable in that venv.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from process_groups import start_group, stop_group

from ppdm.algorithms import ALGORITHMS
from ppdm.resources import hierarchy_fingerprint

# Long end-to-end checks (builds the wheel, installs it into a fresh venv and releases
# every algorithm from it): .ci/run runs them after the README's command.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
VERSION = PROJECT["project"]["version"]
AUDIT_KEY = "ppdm-wheel-test-audit-key-not-a-secret"
#: Generous: the runs share two cores.
RUN_TIMEOUT_S = 600
#: Release runs under way at once (a new one starts as soon as one ends).
PARALLEL_RUNS = 4
OWNER_ROWS = 600
SERVER_START_S = 600
#: The one run without a server: it starts its own temporary Prefect API.
OWN_API_RUN = "init"


def _uv() -> str:
    uv = os.environ.get("UV") or shutil.which("uv")  # `uv run` sets UV
    assert uv, "uv is needed to build and install the wheel (pip install uv)"
    return uv


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: nothing of this checkout or its venv."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key
        not in (
            "PYTHONPATH",
            "VIRTUAL_ENV",
            "PREFECT_API_URL",
            "PYTHONHOME",
            "PYTHONPYCACHEPREFIX",  # the venv reads the bytecode it was installed with
        )
        and not key.startswith("PPDM_")
    }
    env.update(extra)
    return env


def _check(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(args, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, (args, result.stdout[-3000:], result.stderr[-3000:])
    return result


@dataclass(frozen=True)
class Installed:
    wheel: Path
    python: Path
    ppdm: Path
    home: Path  # an empty directory outside the repository
    seconds: float


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel, built and installed into a fresh venv (once per session)."""
    start = time.monotonic()
    uv = _uv()
    base = tmp_path_factory.mktemp("wheel")
    assert not base.resolve().is_relative_to(ROOT)
    env = _clean_env(UV_PYTHON_DOWNLOADS="never")
    _check(
        [uv, "build", "--wheel", "--out-dir", str(base / "dist"), str(ROOT)], env=env
    )
    (wheel,) = (base / "dist").glob("ppdm-*.whl")
    constraints = base / "constraints.txt"
    _check(
        [uv, "export", "--frozen", "--no-hashes", "--no-emit-project",
         "--no-header", "--output-file", str(constraints)],
        cwd=ROOT, env=env,
    )  # fmt: skip
    venv = base / "venv"
    # the suite's own interpreter (uv uses its base installation, not this venv)
    _check([uv, "venv", "--python", sys.executable, str(venv)], env=env)
    python = venv / "bin" / "python"
    version = _check([str(python), "-c", "import sys; print(sys.version_info[:2])"])
    assert version.stdout.strip() == str(sys.version_info[:2])
    _check(
        [uv, "pip", "install", "--python", str(python), "--compile-bytecode",
         "--constraint", str(constraints), str(wheel)],
        env=env,
    )  # fmt: skip
    home = base / "empty"
    home.mkdir()
    return Installed(
        wheel, python, venv / "bin" / "ppdm", home, time.monotonic() - start
    )


def _in_venv(installed: Installed, code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(installed.python), "-c", code],
        cwd=installed.home,
        env=_clean_env(),
        capture_output=True,
        text=True,
    )


# -- what the wheel holds --------------------------------------------------------
def test_the_wheel_holds_only_the_ppdm_namespace_and_every_data_file(installed):
    names = zipfile.ZipFile(installed.wheel).namelist()
    assert {name.split("/")[0] for name in names} == {
        "ppdm",
        f"ppdm-{VERSION}.dist-info",
    }
    shipped = set(names)
    expected = {
        **{f"ppdm/{folder}": folder for folder in ("flows", "tasks")},
        **{f"ppdm/_data/{folder}": folder for folder in ("hierarchies", "configs")},
        "ppdm/_data/schemas": "schemas",
        "ppdm/prepare/datasets/data": "src/ppdm/prepare/datasets/data",
    }
    tracked = _tracked_files()
    for target, source in expected.items():
        files = [p for p in tracked if p.startswith(source + "/")]
        assert files, source
        missing = [
            p
            for p in files
            if f"{target}/{p.removeprefix(source + '/')}" not in shipped
        ]
        assert missing == [], target
    assert "ppdm/prepare/datasets/data/LICENSE-DATA.md" in shipped
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def _tracked_files() -> list[str]:
    result = _check(["git", "ls-files"], cwd=ROOT)
    return result.stdout.splitlines()


def test_version_equals_the_package_metadata(installed):
    result = _check([str(installed.ppdm), "--version"], cwd=installed.home)
    metadata = _in_venv(
        installed, "import importlib.metadata as m; print(m.version('ppdm'))"
    )
    assert metadata.returncode == 0, metadata.stderr
    assert result.stdout.strip() == f"ppdm {metadata.stdout.strip()}"
    assert metadata.stdout.strip() == VERSION


def test_the_installed_package_is_the_wheels_not_the_checkout(installed):
    result = _in_venv(
        installed,
        "import json, ppdm, ppdm.flows.cli, ppdm.tasks, ppdm.resources as r\n"
        "print(json.dumps([[ppdm.__file__, ppdm.flows.cli.__file__,\n"
        "    ppdm.tasks.__file__, str(r.data_dir('schemas'))],\n"
        "    r.schema_names(), r.config_names()]))",
    )
    assert result.returncode == 0, result.stderr
    paths, schemas, configs = json.loads(result.stdout)
    site = installed.python.parent.parent
    for path in paths:
        assert Path(path).is_relative_to(site), path
        assert not Path(path).is_relative_to(ROOT), path
    assert schemas == sorted(p.parent.name for p in ROOT.glob("schemas/*/schema.yaml"))
    assert configs == sorted(p.stem for p in ROOT.glob("configs/*.yaml"))


@pytest.mark.parametrize("name", ["tasks", "flows", "schemas", "deployments"])
def test_the_repository_folders_are_no_top_level_modules(installed, name):
    result = _in_venv(installed, f"import {name}")
    assert result.returncode != 0
    assert f"No module named '{name}'" in result.stderr


# -- releases from the installed command ----------------------------------------
@dataclass(frozen=True)
class Run:
    code: int
    out: Path
    log: str
    seconds: float


def _owner_csv(path: Path) -> None:
    """A data owner's table: identifiers, quasi-identifiers, a diagnosis, an outcome."""
    rng = np.random.default_rng(7)
    n = OWNER_ROWS
    pd.DataFrame(
        {
            "record_id": 50_000 + rng.permutation(n) * 7,
            "email": [f"p{k}@clinic.example" for k in rng.permutation(n)],
            "age": rng.integers(18, 91, n),
            "sex": rng.choice(["F", "M"], n),
            "zip": rng.integers(13_000, 13_040, n),
            "diagnosis": rng.choice(["flu", "asthma", "diabetes", "ulcer"], n),
            "outcome": rng.choice(["good", "poor"], n, p=[0.7, 0.3]),
        }
    ).to_csv(path, index=False)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _api_get(url: str) -> int:
    """The HTTP status of a GET (urllib raises on 4xx/5xx)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


@dataclass(frozen=True)
class Server:
    url: str
    process: subprocess.Popen
    log: Path

    def wait_until_healthy(self) -> None:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            try:
                if _api_get(f"{self.url}/health") == 200:
                    return
            except OSError:
                pass
            assert self.process.poll() is None, self.log.read_text(errors="replace")
            assert time.monotonic() < deadline, "no /health answer from the server"
            time.sleep(0.2)

    def has_flow_run(self, flow_run_id: str) -> bool:
        status = _api_get(f"{self.url}/flow_runs/{flow_run_id}")
        assert status in (200, 404), status
        return status == 200


@pytest.fixture(scope="session")
def server(installed: Installed) -> Iterator[Server]:
    """``prefect server start`` from the venv, once; stopped by process group."""
    place = installed.home / "server"
    place.mkdir()
    port = _free_port()
    log = place / "server.log"
    with log.open("wb") as out:
        process = start_group(
            [str(installed.python.parent / "prefect"), "server", "start",
             "--host", "127.0.0.1", "--port", str(port),
             "--no-services", "--no-ui", "--analytics-off"],
            cwd=place,
            env=_clean_env(PREFECT_HOME=str(place / "prefect")),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        yield Server(f"http://127.0.0.1:{port}/api", process, log)
    finally:
        stop_group(process)  # the server and its uvicorn


@pytest.fixture(scope="session")
def runs(installed: Installed, server: Server) -> dict[str, Run]:
    """``ppdm run`` per algorithm (German) and one on an ``init`` folder, in parallel."""
    home = installed.home
    _owner_csv(home / "clinic.csv")
    init = _check(
        [str(installed.ppdm), "init", "clinic.csv", "--dataset", "clinic",
         "--target", "outcome", "--sensitive", "diagnosis", "--dir", "owner"],
        cwd=home, env=_clean_env(),
    )  # fmt: skip
    config = Path(init.stdout.strip().splitlines()[-1])
    assert (home / config).is_file() or config.is_file(), init.stdout
    commands = {
        algorithm: ["run", "--dataset", "german", "--algorithm", algorithm]
        # Algorithms without l-diversity are asked for l = 1, as their refusal says.
        + ([] if "distinct-l-diversity" in cls.supported_models else ["--l", "1"])
        for algorithm, cls in sorted(ALGORITHMS.items())
    }
    for algorithm, cls in ALGORITHMS.items():
        if cls().privacy_cost(1000) is not None:
            # A differentially private release protects every column it holds
            # (a class is a whole row): German's own configuration for it
            # releases the quasi-identifiers and the target, and drops the rest.
            commands[algorithm] = [
                "run", "--config", str(ROOT / "configs" / f"german-{algorithm}.yaml")
            ]  # fmt: skip
    commands["init"] = ["run", "--config", str(config)]
    server.wait_until_healthy()

    def start(name: str) -> tuple[subprocess.Popen, Path, float]:
        place = home / "runs" / name
        place.mkdir(parents=True)
        env = _clean_env(
            PPDM_AUDIT_KEY=AUDIT_KEY,
            PPDM_WORK_DIR=str(place / "work"),
            PREFECT_HOME=str(place / "prefect"),
            MPLCONFIGDIR=str(place / "matplotlib"),
        )
        if name != OWN_API_RUN:
            env["PREFECT_API_URL"] = server.url
        with (place / "run.log").open("w") as log:
            process = start_group(
                [
                    str(installed.ppdm),
                    *commands[name],
                    "--out",
                    str(place / "releases"),
                ],
                cwd=home,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        return process, place, time.monotonic()

    def finish(process: subprocess.Popen, place: Path, began: float) -> Run:
        try:
            code = process.wait(
                timeout=max(1.0, began + RUN_TIMEOUT_S - time.monotonic())
            )
        except subprocess.TimeoutExpired:
            process.kill()
            code = process.wait()
        return Run(
            code,
            place / "releases",
            (place / "run.log").read_text(errors="replace"),
            time.monotonic() - began,
        )

    # The run with its own API first (its server's start-up has the most time);
    # at most PARALLEL_RUNS under way, the next starting as soon as one ends.
    waiting = [OWN_API_RUN, *(name for name in commands if name != OWN_API_RUN)]
    running: dict[str, tuple[subprocess.Popen, Path, float]] = {}
    done: dict[str, Run] = {}
    try:
        while waiting or running:
            while waiting and len(running) < PARALLEL_RUNS:
                name = waiting.pop(0)
                running[name] = start(name)
            ended = [n for n, (p, _, b) in running.items() if p.poll() is not None]
            late = [
                n
                for n, (_, _, b) in running.items()
                if time.monotonic() - b > RUN_TIMEOUT_S
            ]
            for name in ended or late:
                done[name] = finish(*running.pop(name))
            if not (ended or late):
                time.sleep(0.2)
    finally:
        for process, _, _ in running.values():  # only the runs started here
            process.kill()
            process.wait()
    return done


def _released(run: Run, dataset: str) -> Path:
    assert run.code == 0, run.log[-4000:]
    (release_dir,) = (run.out / dataset).iterdir()
    assert run.log.strip().splitlines()[-1] == str(release_dir)
    return release_dir


def _verifies(installed: Installed, run: Run, release_dir: Path) -> dict:
    """``ppdm verify`` and ``ppdm audit verify`` pass; the manifest, read."""
    # The key the release was sealed with: verify checks the seal with it.
    _check(
        [str(installed.ppdm), "verify", str(release_dir)],
        cwd=installed.home,
        env=_clean_env(PPDM_AUDIT_KEY=AUDIT_KEY),
    )
    _check(
        [str(installed.ppdm), "audit", "verify", "--out", str(run.out)],
        cwd=installed.home,
        env=_clean_env(PPDM_AUDIT_KEY=AUDIT_KEY),
    )
    manifest = json.loads((release_dir / "manifest.json").read_text())
    requirement = manifest["requirement"]
    models = {m["model"]: m for m in requirement["models"]}
    for path in sorted((release_dir / "data").glob("*.csv")):
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
        qis = [q for q in requirement["quasi_identifiers"] if q in table.columns]
        # fs-anonymity's 0/1 features <q>=<value> are its released QI columns
        qis += [
            c
            for c in table.columns
            if "=" in c and c.split("=", 1)[0] in requirement["quasi_identifiers"]
        ]
        if "k-anonymity-by-containment" in models:
            # independent count: rows whose 0/1 features contain each row's
            features = table[[c for c in table.columns if "=" in c]].to_numpy() == "1"
            missing = features[:, None, :] & ~features[None, :, :]
            contained = (~missing.any(axis=2)).sum(axis=1)
            k = models["k-anonymity-by-containment"]["k"]
            assert contained.min() >= k, path.name
        elif qis:
            # independent count: a class is the rows of equal QI cells ("*" included)
            k = models["k-anonymity"]["k"]
            assert table.groupby(qis, sort=False).size().min() >= k, path.name
        else:  # a projection without quasi-identifiers: nothing links it
            assert manifest["algorithm"] == "dmpd", path.name
    return manifest


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_every_algorithm_releases_german_from_the_installed_command(
    installed, server, runs, algorithm
):
    run = runs[algorithm]
    manifest = _verifies(installed, run, _released(run, "german"))
    assert (manifest["algorithm"], manifest["dataset"]) == (algorithm, "german")
    # the flow ran on the server PREFECT_API_URL names
    assert server.has_flow_run(manifest["flow_run_id"]), manifest["flow_run_id"]
    assert manifest["code_version"] == VERSION
    # the packaged hierarchies are the checkout's, byte for byte
    assert manifest["hierarchies"]["sha256"] == hierarchy_fingerprint(
        ROOT / "hierarchies" / "german"
    )
    assert set(manifest["quasi_identifiers"]) <= set(
        manifest["hierarchies"]["attributes"]
    )


def test_init_then_run_releases_an_owners_table(installed, server, runs):
    run = runs["init"]
    manifest = _verifies(installed, run, _released(run, "clinic"))
    assert manifest["dataset"] == "clinic"
    # No server named: the run's flow ran on a temporary API of its own.
    assert manifest["flow_run_id"]
    assert not server.has_flow_run(manifest["flow_run_id"])
    assert manifest["target"] == "outcome"
    assert manifest["sensitive_attribute"] == "diagnosis"
    released = pd.concat(
        pd.read_csv(p, dtype=str) for p in sorted(run.out.glob("clinic/*/data/*.csv"))
    )
    assert not {"record_id", "email"} & set(released.columns)
