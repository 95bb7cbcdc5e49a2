"""A data owner's own table end to end: `ppdm init`, then `ppdm run`, at three sizes.

    uv run python benchmarks/bench_own_tables.py [--rows 5000,50000,500000] [--timeout 1200]

For each size the seeded messy hospital export (tests/messy_hospital.py, seed 7: names,
e-mails, zip codes with leading zeros, ISO birth dates, DD.MM.YYYY admission dates, a few
malformed cells) is written as CSV to a temporary directory, and the installed `ppdm` command
runs as a user would run it, as subprocesses:

    ppdm init hospital.csv --dataset hospital --target readmitted
    ppdm run --config hospital/hospital.yaml --out OUT --work-dir WORK

Every role is init's own (its trial release makes insurance, length_of_stay and
num_prior_visits quasi-identifiers, which released as is would fail the pass-through check;
patient_id, name, email identifying; diagnosis_code sensitive); readmitted is the target.
Each command gets a fresh PREFECT_HOME.

Measured per command: wall time, and memory of the whole process tree (the `ppdm` process, the
temporary Prefect API server it starts, anything else below it), found by polling /proc every
0.1 s: the peak of the tree's summed resident set size and the peak of its largest single
process. A poll can miss a spike shorter than 0.1 s; the kernel's own high-water mark of each
process (VmHWM) is read at every poll too and is never lower than what the poll saw, so the
largest-process figure is the larger of the two. Targets of the owner: 50,000 rows end to end
in under 60 s, no process above 2 GB.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "own-tables.md"
SEED = 7
#: The heading of the hand-written analysis kept when the figures are rewritten.
NOTES = "## Where the time and memory go"
STEPS = ("ingest", "validate", "discretize", "anonymize", "republication", "verify")
STEPS += ("utility-report", "publish")
TARGET_SECONDS, TARGET_BYTES = 60.0, 2 * 1024**3


def _status_kib(pid: int, field: str) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):  # the process ended between the listing and the read
        pass
    return 0


def _children() -> dict[int, int]:
    """``{pid: parent pid}`` of every process visible in /proc."""
    parents = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii") as stat:
                text = stat.read()
        except OSError:
            continue
        # the command name may hold spaces; the fields after its ')' do not
        parents[int(entry)] = int(text[text.rindex(")") + 2 :].split()[1])
    return parents


def _tree(root: int) -> list[int]:
    parents = _children()
    tree, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, parent in parents.items() if parent in frontier]
        tree.extend(frontier)
    return tree


def measure(command: list[str], env: dict[str, str], cwd: Path, timeout: float) -> dict:
    """Run ``command``; wall seconds, exit code, peak tree and process RSS (bytes)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    tree_peak = process_peak = 0
    processes = 0
    samples: list[tuple[float, int]] = []  # (second of the day, largest RSS)
    deadline = started + timeout
    while process.poll() is None:
        if time.perf_counter() > deadline:
            process.kill()
            break
        pids = _tree(process.pid)
        rss = [_status_kib(pid, "VmRSS") * 1024 for pid in pids]
        hwm = [_status_kib(pid, "VmHWM") * 1024 for pid in pids]
        tree_peak = max(tree_peak, sum(rss))
        process_peak = max(process_peak, *rss, *hwm)
        processes = max(processes, len(pids))
        now = datetime.now()  # Prefect's log stamps are local times of day
        of_day = now.hour * 3600 + now.minute * 60 + now.second + now.microsecond / 1e6
        samples.append((of_day, max(rss, default=0)))
        time.sleep(0.1)
    stdout, stderr = process.communicate()
    windows = step_windows(stderr.decode(errors="replace"))
    return {
        "steps": {name: end - start for name, (start, end) in windows.items()},
        "step_rss": {
            name: max((rss for at, rss in samples if start <= at <= end), default=None)
            for name, (start, end) in windows.items()
        },
        "seconds": time.perf_counter() - started,
        "code": process.returncode,
        "tree_peak": tree_peak,
        "process_peak": process_peak,
        "processes": processes,
        "stdout": stdout.decode(errors="replace"),
        "stderr": stderr.decode(errors="replace"),
        "timed_out": process.returncode is not None and time.perf_counter() > deadline,
    }


_LOG = re.compile(
    r"^(\d\d):(\d\d):(\d\d\.\d+) \| \w+ +\| "
    r"(?:Flow run '[^']+' - (Beginning)|Task run '(.+)-\w+' - Finished)"
)


def step_windows(log: str) -> dict[str, tuple[float, float]]:
    """(start, end) second of the day of each step that finished, from
    Prefect's log lines: from the flow's start (or the previous step's end) to
    the step's end."""
    out, previous = {}, None
    for line in log.splitlines():
        match = _LOG.match(line)
        if not match:
            continue
        hours, minutes, seconds = match.group(1, 2, 3)
        at = int(hours) * 3600 + int(minutes) * 60 + float(seconds)
        if match.group(4) is None and previous is not None:
            out[match.group(5)] = (previous, at)
        previous = at
    return out


def _ppdm() -> str:
    """The `ppdm` command installed beside this interpreter (its environment's)."""
    beside = Path(sys.executable).parent / "ppdm"
    return str(beside) if beside.exists() else (shutil.which("ppdm") or "ppdm")


def run_size(rows: int, timeout: float) -> dict:
    sys.path.insert(0, str(ROOT / "tests"))
    from messy_hospital import messy_hospital

    with tempfile.TemporaryDirectory(prefix=f"own-{rows}-") as tmp:
        folder = Path(tmp)
        generated = time.perf_counter()
        messy_hospital(rows, SEED).to_csv(folder / "hospital.csv", index=False)
        generate_seconds = time.perf_counter() - generated
        env = {
            **os.environ,
            "PREFECT_HOME": str(folder / "prefect"),
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "DO_NOT_TRACK": "1",
            "MPLBACKEND": "Agg",
            "MPLCONFIGDIR": str(folder / "mpl"),
        }
        env.pop("PREFECT_API_URL", None)
        ppdm = _ppdm()
        init = measure(
            [ppdm, "init", "hospital.csv", "--dataset", "hospital"]
            + ["--target", "readmitted"],
            env,
            folder,
            timeout,
        )
        run = measure(
            [ppdm, "run", "--config", "hospital/hospital.yaml"]
            + ["--out", str(folder / "out"), "--work-dir", str(folder / "work")],
            env,
            folder,
            timeout,
        )
        return {"rows": rows, "generate": generate_seconds, "init": init, "run": run}


def _gib(value: int) -> str:
    return f"{value / 1024**3:.2f} GiB"


def _outcome(result: dict, success: str = "ok") -> str:
    if result["timed_out"]:
        done = ", ".join(result["steps"]) or "no step"
        return f"stopped at the time limit; steps finished: {done}"
    if result["code"] == 0:
        return success
    lines = [line for line in result["stderr"].splitlines() if line.startswith("ppdm ")]
    last = (lines or ["(no message)"])[-1]
    return f"exit {result['code']}: {last[:200]}"


def _step_cell(seconds: float | None, rss: int | None) -> str:
    """``seconds, peak`` of one step; no peak when no poll fell inside it."""
    if seconds is None:
        return "-"
    return f"{seconds:.1f} s" + (f", {_gib(rss)}" if rss else "")


def report(results: list[dict], command: str) -> str:
    lines = [
        "# A data owner's own table: the messy hospital export, `ppdm init` + `ppdm run`",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC with `{command}` on "
        f"{platform.machine()} / {platform.system()} {platform.release()}, Python "
        f"{platform.python_version()}, {os.cpu_count()} cores "
        "(shared with other work while measured).",
        "",
        "Roles: every one is `ppdm init --target readmitted`'s own: patient_id, name, "
        "email identifying; zip, birth_date, admission_date, sex, ethnicity "
        "quasi-identifiers, and insurance, length_of_stay, num_prior_visits too (init's "
        "trial release found them unsafe as is); diagnosis_code sensitive. The rest of "
        "the configuration is init's: mondrian, k = 5, l = 2, seed 0.",
        "",
        "Memory is of the whole process tree (`ppdm` and the temporary Prefect API it "
        "starts), polled from /proc every 0.1 s: *tree* is the peak of the summed resident "
        "sets, *largest process* the peak resident set of one process (the kernel's VmHWM "
        "included). Targets: 50,000 rows in under 60 s, no process above 2 GB.",
        "",
        "| rows | command | wall (s) | tree peak RSS | largest process | processes | outcome |",
        "|---:|---|---:|---:|---:|---:|---|",
    ]
    for result in results:
        for name in ("init", "run"):
            r = result[name]
            lines.append(
                f"| {result['rows']:,} | `ppdm {name}` | {r['seconds']:.1f} | "
                f"{_gib(r['tree_peak'])} | {_gib(r['process_peak'])} | {r['processes']} | "
                f"{_outcome(r, 'published' if name == 'run' else 'ok')} |"
            )
    lines += [
        "",
        "Seconds of each step of `ppdm run` (Prefect's log: from the flow's start or the "
        "previous step's end to the step's end), and the largest resident set of one "
        "process polled during the step (a step's figure includes what earlier steps "
        "left allocated; none when the step was shorter than the poll):",
        "",
        "| rows | " + " | ".join(STEPS) + " |",
        "|---:|" + "---:|" * len(STEPS),
    ]
    for result in results:
        steps = result["run"]["steps"]
        rss = result["run"]["step_rss"]
        lines.append(
            f"| {result['rows']:,} | "
            + " | ".join(_step_cell(steps.get(s), rss.get(s)) for s in STEPS)
            + " |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="5000,50000,500000")
    parser.add_argument("--timeout", type=float, default=1200.0)
    parser.add_argument(
        "--results", type=Path, default=RESULTS, help="Markdown file written"
    )
    args = parser.parse_args(argv)
    results = []
    for rows in (int(r) for r in args.rows.split(",")):
        result = run_size(rows, args.timeout)
        results.append(result)
        for name in ("init", "run"):
            r = result[name]
            print(
                f"{rows:>8,} {name:4} {r['seconds']:7.1f} s  tree {_gib(r['tree_peak'])}"
                f"  process {_gib(r['process_peak'])}  {_outcome(r)}",
                flush=True,
            )
            if r["code"] != 0:
                print(r["stderr"][-3000:], file=sys.stderr)
    command = "uv run python benchmarks/bench_own_tables.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    text = report(results, command.strip())
    args.results.parent.mkdir(parents=True, exist_ok=True)
    if args.results.exists():  # the notes written by hand below the figures stay
        old = args.results.read_text(encoding="utf-8")
        if NOTES in old:
            text += "\n" + old[old.index(NOTES) :]
    args.results.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
