"""Wall clock of `ppdm run` end to end on German credit and Adult, Prefect start included.

    uv run python benchmarks/bench_release.py [--repeats 3] [--bytecode as-is|compiled]

Each repeat is a fresh `ppdm` process (`ppdm run --dataset german` and `ppdm run`, the embedded
Adult with its defaults) on its own temporary Prefect API, writing to a fresh output and work
directory (no cached step). The first repeat of each dataset uses a fresh PREFECT_HOME (database
migrations included); the others reuse it, as a data owner's machine would. Each run is split
by the timestamps of Prefect's log: start-up (interpreter, pre-flight, the API's start and the
steps' imports, which overlap) until the flow run begins, the flow run itself, and the exit
(the temporary API's stop, the process's end). `cpu` is the user + system seconds of the `ppdm`
process and of the API server it waits for (the figure a busy machine disturbs least).
Targets: German <= 12 s, Adult <= 20 s. Results go to benchmarks/results/release.md, one
section per kind of run (the other sections are kept).

Most of the start-up is importing Python modules, and an import costs about twice as much when
Python compiles the module's source than when it reads its compiled bytecode (`.pyc`):

- ``--bytecode as-is`` (default) runs with the environment as it is. ``uv sync
  --compile-bytecode`` (the README's set-up) writes the dependencies' bytecode at install;
  where ``PYTHONDONTWRITEBYTECODE`` is set, as in this project's development sessions, `ppdm`'s
  own modules are still compiled by every run. An environment synced without it compiles every
  module at every run.
- ``--bytecode compiled`` runs the `ppdm` processes as an installed package runs: its modules'
  bytecode written once (here by one untimed run, into a cache directory of the benchmark's own,
  ``PYTHONPYCACHEPREFIX``) and read by every timed run; what ``pipx install``/``pip install``
  (which compile at install) or a first run leaves on a data owner's machine.

    uv run python benchmarks/bench_release.py --server [--repeats 3]

runs the same against a Prefect server started once beforehand (`prefect server start`, as a
scheduled deployment's runs meet it).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "release.md"
TITLE = "# `ppdm run` end to end: German credit and Adult"
TARGETS = {"german": 12.0, "adult": 20.0}
STAMP = re.compile(r"^(\d\d):(\d\d):(\d\d\.\d+) \| INFO +\| Flow run '[^']+' - (.*)$")


def _seconds_of_day(match: re.Match) -> float:
    hours, minutes, seconds = match.group(1), match.group(2), match.group(3)
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(
    dataset: str,
    home: Path,
    out: Path,
    work: Path,
    api_url: str | None = None,
    pycache: Path | None = None,
) -> dict[str, float]:
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "MPLBACKEND": "Agg",
        "NO_COLOR": "1",
        "TZ": "UTC",
    }
    env.pop("PREFECT_API_URL", None)
    if api_url:
        env["PREFECT_API_URL"] = api_url
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    ppdm = Path(sys.executable).with_name("ppdm")
    now = datetime.now(UTC)
    began = now.hour * 3600 + now.minute * 60 + now.second + now.microsecond / 1e6
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(
        [
            str(ppdm),
            "run",
            "--dataset",
            dataset,
            "--out",
            str(out),
            "--work-dir",
            str(work),
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    cpu = _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"ppdm run failed ({done.returncode}):\n{done.stderr[-4000:]}")
    last = done.stdout.strip().splitlines()[-1]
    assert Path(last).is_dir(), f"last line is not the release directory: {last!r}"
    stamps = [m for line in done.stderr.splitlines() if (m := STAMP.match(line))]
    flow_start = next(
        _seconds_of_day(m) for m in stamps if m.group(4).startswith("Beginning")
    )
    flow_end = next(
        _seconds_of_day(m) for m in stamps if m.group(4).startswith("Finished")
    )
    return {
        "total": elapsed,
        "start-up": flow_start - began,
        "flow": flow_end - flow_start,
        "exit": elapsed - (flow_end - began),
        "cpu": cpu,
    }


def _bytecode_state(compiled: bool) -> str:
    if compiled:
        return (
            "bytecode compiled once (an untimed run first, into the benchmark's own "
            "`PYTHONPYCACHEPREFIX`), as an installed package runs"
        )
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return (
            "bytecode as the environment leaves it: `PYTHONDONTWRITEBYTECODE` is set, so "
            "every module without installed bytecode (here `ppdm`'s own; `uv sync` compiles "
            "the dependencies) is compiled by every run"
        )
    return "bytecode as the environment leaves it (Python writes its caches)"


def _table(runs: dict[str, list[dict[str, float]]], fresh_first: bool) -> list[str]:
    lines = [
        "| dataset | run | total | start-up | flow run | exit | cpu |",
        "|---|---|---|---|---|---|---|",
    ]
    for dataset, timings in runs.items():
        for i, t in enumerate(timings):
            fresh = " (fresh PREFECT_HOME)" if fresh_first and i == 0 else ""
            lines.append(
                f"| {dataset} | {i + 1}{fresh} | {t['total']:.1f} | {t['start-up']:.1f} "
                f"| {t['flow']:.1f} | {t['exit']:.1f} | {t['cpu']:.1f} |"
            )
    lines.append("")
    for dataset, timings in runs.items():
        warm = (timings[1:] if fresh_first else timings) or timings
        median = statistics.median(t["total"] for t in warm)
        cpu = statistics.median(t["cpu"] for t in warm)
        met = "met" if median <= TARGETS[dataset] else "not met"
        which = "with an existing Prefect home " if fresh_first else ""
        lines.append(
            f"- {dataset}: median {which}**{median:.1f} s** (cpu {cpu:.1f} s; "
            f"target <= {TARGETS[dataset]:.0f} s: {met})"
        )
    lines.append("")
    return lines


def _write_section(heading: str, lines: list[str]) -> None:
    """Replace the results file's section ``heading`` (or add it), keeping the others."""
    text = RESULTS.read_text() if RESULTS.exists() else f"{TITLE}\n"
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.M | re.S)
    section = "\n".join([heading, *lines]) + "\n"
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--server",
        action="store_true",
        help="run against a Prefect server started once",
    )
    parser.add_argument(
        "--bytecode",
        choices=("as-is", "compiled"),
        default="as-is",
        help="modules' bytecode as the environment leaves it, or compiled once "
        "as an installed package has it",
    )
    args = parser.parse_args()
    if args.server:
        _against_a_server(args.repeats)
        return
    compiled = args.bytecode == "compiled"
    scratch = Path(tempfile.mkdtemp(prefix="bench-release-"))
    pycache = scratch / "pycache" if compiled else None
    runs: dict[str, list[dict[str, float]]] = {}
    try:
        if compiled:  # untimed: writes the bytecode of every module a run imports
            run_once(
                "german",
                scratch / "prefect-home-warm-up",
                scratch / "out-warm-up",
                scratch / "work-warm-up",
                pycache=pycache,
            )
        load_before = os.getloadavg()[0]
        for dataset in TARGETS:
            home = scratch / f"prefect-home-{dataset}"
            runs[dataset] = [
                run_once(
                    dataset,
                    home,
                    scratch / f"out-{dataset}{i}",
                    scratch / f"work{i}",
                    pycache=pycache,
                )
                for i in range(args.repeats)
            ]
            for i in range(args.repeats):
                shutil.rmtree(scratch / f"work{i}", ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    option = " --bytecode compiled" if compiled else ""
    heading = (
        "## Temporary API, compiled bytecode"
        if compiled
        else "## Temporary API, bytecode as the environment leaves it"
    )
    lines = [
        "",
        f"Command: `uv run python benchmarks/bench_release.py --repeats "
        f"{args.repeats}{option}`  ",
        f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; machine: {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; load average "
        f"{load_before:.2f} at the start, {os.getloadavg()[0]:.2f} at the end; "
        f"{_bytecode_state(compiled)}.",
        "",
        "Seconds; start-up is the `ppdm` process until the flow run begins (pre-flight, the",
        "temporary Prefect API's start, and meanwhile the steps' imports); cpu is the user +",
        "system time of the `ppdm` process and its API server.",
        "",
        *_table(runs, fresh_first=True),
    ]
    _write_section(heading, lines)
    print("\n".join([heading, *lines]))


def _against_a_server(repeats: int) -> None:
    import socket
    import urllib.request

    scratch = Path(tempfile.mkdtemp(prefix="bench-release-server-"))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PREFECT_HOME": str(scratch / "prefect-home")}
    env.pop("PREFECT_API_URL", None)
    prefect = Path(sys.executable).with_name("prefect")
    server = subprocess.Popen(
        [str(prefect), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/api"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("the Prefect server did not answer") from None
                time.sleep(0.5)
        runs = {
            dataset: [
                run_once(
                    dataset,
                    scratch / "prefect-home",
                    scratch / f"out-{dataset}{i}",
                    scratch / f"work-{dataset}{i}",
                    api_url=url,
                )
                for i in range(repeats)
            ]
            for dataset in TARGETS
        }
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)
    heading = "## Against a running Prefect server"
    lines = [
        "",
        f"Command: `uv run python benchmarks/bench_release.py --server --repeats {repeats}`  ",
        f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; load average at the end "
        f"{os.getloadavg()[0]:.2f}; {_bytecode_state(False)}. `PREFECT_API_URL` names a "
        "`prefect server` started once before the runs (as the runs of a served or "
        "deployed schedule meet it), so no temporary API starts; cpu is the `ppdm` "
        "process's only.",
        "",
        *_table(runs, fresh_first=False),
    ]
    _write_section(heading, lines)
    print("\n".join([heading, *lines]))


if __name__ == "__main__":
    main()
