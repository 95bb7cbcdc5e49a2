"""Wall clock of `ppdm run` from start to its one-line pre-flight error (target: under 2 s).

    uv run python benchmarks/bench_preflight.py [--repeats 5]

Each case is a fresh `ppdm` process, as a user meets it: the interpreter starts, the
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
TARGET_SECONDS = 2.0


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
        [str(ppdm), *args, "--out", str(out)],
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
        for name, args in _cases(folder).items():
            times, message, code = [], "", 0
            for _ in range(options.repeats):
                seconds, message, code = run_once(args, folder / "out")
                times.append(seconds)
            assert code != 0 and "Traceback" not in message and "\n" not in message
            assert not (folder / "out").exists(), "a pre-flight error published"
            rows.append((name, statistics.median(times), max(times), code, message))
    load = os.getloadavg()[0]
    lines = [
        "# Pre-flight: `ppdm run` to its one-line error",
        "",
        f"Command: `uv run python benchmarks/bench_preflight.py --repeats {options.repeats}`"
        f" ({datetime.now(UTC):%Y-%m-%d}, {platform.python_version()}, "
        f"{os.cpu_count()} cores, load {load:.1f} at the end). Wall clock of a fresh "
        f"process each time; target {TARGET_SECONDS:.0f} s.",
        "",
        "| case | median s | max s | exit | message (shortened) |",
        "|---|---|---|---|---|",
    ]
    for name, median, worst, code, message in rows:
        short = message if len(message) <= 140 else message[:137] + "..."
        short = short.replace("|", "\\|")
        lines.append(f"| {name} | {median:.2f} | {worst:.2f} | {code} | {short} |")
    options.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
