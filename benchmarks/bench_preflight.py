"""Wall clock of `ppdm` start-up: listing algorithms, a configuration error, a pre-flight error.

    uv run python benchmarks/bench_preflight.py [--repeats 5]

Targets: `ppdm --version`, `ppdm algorithms` and a configuration error (a value out of range, an
unknown key) under 1 s; a pre-flight error that reads the source under 2 s. Each case is a
fresh `ppdm` process, as a user meets it: the interpreter starts, the
configuration loads and is checked against the source (header, roles, dataset folder, cheap
feasibility), and the command prints one line and exits, before Prefect is imported. Cases: a
quasi-identifier misspelled in a CSV config, a CSV column without a role, k above the row count
of the embedded German data, l above the distinct values of Adult's sensitive attribute (the
column is read), and a schema that does not fit the source. Results go to
benchmarks/results/preflight.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
#: Answers that need no data: the command line, the registry, the configuration.
START_UP_SECONDS = 1.0
#: Pre-flight errors that read the source (its header, its row count).
PREFLIGHT_SECONDS = 2.0


def _start_up_cases(folder: Path) -> dict[str, list[str]]:
    from ppdm.config import default_config

    unknown = default_config("german").model_dump(mode="json", by_alias=True)
    unknown["supression_limit"] = 0.01
    path = folder / "unknown-key.yaml"
    path.write_text(yaml.safe_dump(unknown, sort_keys=False), encoding="utf-8")
    return {
        "`ppdm --version`": ["--version"],
        "`ppdm algorithms`": ["algorithms"],
        "value out of range (`--k 0`)": ["run", "--dataset", "german", "--k", "0"],
        "unknown configuration key": ["run", "--config", str(path)],
    }


def _cases(folder: Path) -> dict[str, list[str]]:
    from ppdm.config import default_config
    from ppdm.prepare import datasets

    german = datasets.load("german")
    source = folder / "german.csv"
    german.to_csv(source, index=False)
    base = default_config("german").model_dump(mode="json", by_alias=True)
    base["source"] = {"kind": "csv", "path": str(source)}

    def config(name: str, **changes) -> str:
        data = {**base, **changes}
        path = folder / f"{name}.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        return str(path)

    typo = dict(base["columns"])
    typo["persnal-status-sex"] = typo.pop("personal-status-sex")
    unroled = dict(base["columns"])
    del unroled["telephone"]
    extra = folder / "wider.csv"
    german.assign(branch="north").to_csv(extra, index=False)
    return {
        "misspelled quasi-identifier (CSV)": [
            "run",
            "--config",
            config(
                "typo",
                columns=typo,
                quasi_identifiers=[
                    "age",
                    "persnal-status-sex",
                    "job",
                    "housing",
                    "foreign-worker",
                    "employment-since",
                ],
            ),
        ],
        "column without a role (CSV)": [
            "run",
            "--config",
            config("unroled", columns=unroled),
        ],
        "k above the rows (embedded German)": [
            "run",
            "--dataset",
            "german",
            "--k",
            "5000",
        ],
        "l above the sensitive values (embedded Adult)": [
            "run",
            "--dataset",
            "adult",
            "--l",
            "40",
        ],
        "schema does not fit the source (CSV)": [
            "run",
            "--config",
            config(
                "wider",
                source={"kind": "csv", "path": str(extra)},
                columns={**base["columns"], "branch": "drop"},
            ),
        ],
    }


def run_once(args: list[str], out: Path) -> tuple[float, str, int]:
    env = {**os.environ, "DO_NOT_TRACK": "1"}
    env.pop("PREFECT_API_URL", None)
    ppdm = Path(sys.executable).with_name("ppdm")
    start = time.perf_counter()
    done = subprocess.run(
        [str(ppdm), *args, *(["--out", str(out)] if args[0] == "run" else [])],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return time.perf_counter() - start, done.stderr.strip(), done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "preflight.md"
    )
    options = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cases = {
            **{
                name: (args, START_UP_SECONDS)
                for name, args in _start_up_cases(folder).items()
            },
            **{
                name: (args, PREFLIGHT_SECONDS) for name, args in _cases(folder).items()
            },
        }
        for name, (args, target) in cases.items():
            times, message, code = [], "", 0
            for _ in range(options.repeats):
                seconds, message, code = run_once(args, folder / "out")
                times.append(seconds)
            assert "Traceback" not in message and "\n" not in message, message
            assert (code == 0) == (args[0] != "run"), (name, code, message)
            assert not (folder / "out").exists(), "a pre-flight error published"
            median = statistics.median(times)
            rows.append((name, target, median, max(times), code, message))
    load = os.getloadavg()[0]
    lines = [
        "# Start-up: `ppdm` to its answer or its one-line error",
        "",
        f"Command: `uv run python benchmarks/bench_preflight.py --repeats {options.repeats}`"
        f" ({datetime.now(UTC):%Y-%m-%d}, {platform.python_version()}, "
        f"{os.cpu_count()} cores, load {load:.1f} at the end). Wall clock of a fresh "
        "process each time, as a user meets it (the `ppdm` script of the environment).",
        "",
        "| case | target s | median s | max s | met | exit | message (shortened) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, target, median, worst, code, message in rows:
        short = message if len(message) <= 140 else message[:137] + "..."
        short = short.replace("|", "\\|") or "(none)"
        met = "yes" if median <= target else "no"
        lines.append(
            f"| {name} | {target:.0f} | {median:.2f} | {worst:.2f} | {met} | {code} "
            f"| {short} |"
        )
    options.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
