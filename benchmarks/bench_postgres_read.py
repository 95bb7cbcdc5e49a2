"""Read time and peak memory of a PostgreSQL source: 50,000 and 1,000,000 rows.

    uv run python benchmarks/bench_postgres_read.py [--rows 50000 1000000] [--repeats 3]

Starts a throwaway PostgreSQL server (tests/postgres.py: initdb into a temporary
directory, a loopback port, an unprivileged user when run as root), loads the
seeded hospital table of tests/messy_hospital.py with database types (text ids,
names, e-mails and zip codes, a date, integers, a numeric cost), and reads
``SELECT * FROM visits`` in a fresh process per measurement, as ``ppdm`` does:

- ``ppdm (in memory)``: :func:`ppdm.prepare.ingest.load_source`, a server-side
  cursor fetched SQL_CHUNK_ROWS at a time, each chunk converted as it arrives;
- ``ppdm (Dask engine)``: :func:`ppdm.scale.ingest_parts.ingest_partitions`
  into Parquet partitions of 250,000 rows;
- ``pandas.read_sql``: the whole result fetched by the driver at once
  (``fetchall`` on a client-side cursor), then converted: the read this
  project used before, for comparison.

Peak memory is the process's peak resident set size (``ru_maxrss``) less its
resident size just before the read (after a read of ten rows, so the modules
the read imports are loaded); the table's own size
is ``DataFrame.memory_usage(deep=True)`` of the result. Results, with the
machine's load, go to benchmarks/results/postgres-read.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

QUERY = "SELECT * FROM visits"

#: The child process: read once, print seconds and memory as JSON.
_CHILD = r"""
import json, resource, sys, time, tempfile
mode, url, query = sys.argv[1:4]
import pandas as pd, sqlalchemy as sa, psycopg
from ppdm.prepare import ingest
from ppdm.scale import ingest_parts

def rss_kib():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])

def read(query):
    if mode == "ppdm":
        return ingest.load_source("sql", url, query=query)
    if mode == "dask":
        with tempfile.TemporaryDirectory() as out:
            return ingest_parts.ingest_partitions(
                "sql", url, query=query, out_dir=out, partition_rows=250_000
            )
    engine = sa.create_engine(url)
    with engine.connect() as connection:
        frame = pd.read_sql(sa.text(query), connection)
    engine.dispose()
    return frame

# A read of ten rows first: what the read imports is in memory before the
# measurement, which is of the read alone.
read(query + " LIMIT 10")
before = rss_kib()
started = time.perf_counter()
result = read(query)
seconds = time.perf_counter() - started
frame = result if isinstance(result, pd.DataFrame) else None
rows = len(frame) if frame is not None else result.rows
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({
    "seconds": seconds,
    "rows": rows,
    "peak_mib": (peak - before) / 1024,
    "table_mib": (
        float(frame.memory_usage(deep=True).sum()) / 2**20 if frame is not None else None
    ),
}))
"""

MODES = {
    "ppdm": "ppdm (in memory)",
    "dask": "ppdm (Dask engine, 250k-row partitions)",
    "pandas": "pandas.read_sql, whole result",
}


def _load(server, database: str, rows: int) -> None:
    """The hospital table, ``rows`` rows, written with COPY."""
    import numpy as np
    import pandas as pd
    from messy_hospital import messy_hospital

    server.create_database(database)
    base = messy_hospital(min(rows, 200_000), seed=7)
    birth = pd.to_datetime(base["birth_date"], format="%Y-%m-%d", errors="coerce")
    stay = pd.to_numeric(base["length_of_stay"], errors="coerce")
    rng = np.random.default_rng(11)
    with server.connect(database) as connection:
        connection.execute(
            "CREATE TABLE visits (patient_id text, name text, email text, zip text, "
            "birth_date date, sex text, ethnicity text, insurance text, "
            "length_of_stay integer, num_prior_visits integer, cost numeric(10, 2), "
            "diagnosis_code text, readmitted text)"
        )
        with connection.cursor() as cursor:
            written = 0
            with cursor.copy("COPY visits FROM STDIN") as copy:
                while written < rows:
                    take = min(len(base), rows - written)
                    costs = rng.integers(10_000, 5_000_000, take) / 100
                    for i in range(take):
                        b, s = birth.iloc[i], stay.iloc[i]
                        copy.write_row(
                            (
                                f"P{written + i:08d}",
                                base["name"].iat[i],
                                base["email"].iat[i],
                                base["zip"].iat[i],
                                None if pd.isna(b) else b.date(),
                                base["sex"].iat[i],
                                base["ethnicity"].iat[i],
                                base["insurance"].iat[i],
                                None if pd.isna(s) else int(s),
                                int(base["num_prior_visits"].iat[i]),
                                f"{costs[i]:.2f}",
                                base["diagnosis_code"].iat[i],
                                base["readmitted"].iat[i],
                            )
                        )
                    written += take
        connection.execute("ANALYZE visits")


def _measure(mode: str, url: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, mode, url, QUERY],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[50_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "postgres-read.md"
    )
    args = parser.parse_args(argv)

    from postgres import find_bin_dir, start_server

    bin_dir = find_bin_dir()
    if bin_dir is None:
        parser.error("no initdb: install PostgreSQL (apt-get install postgresql)")
    server = start_server(bin_dir)
    lines = []
    try:
        for rows in args.rows:
            database = f"bench_{rows}"
            _load(server, database, rows)
            url = server.url(database)
            for mode, label in MODES.items():
                runs = [_measure(mode, url) for _ in range(args.repeats)]
                assert all(r["rows"] == rows for r in runs), runs
                seconds = [r["seconds"] for r in runs]
                peaks = [r["peak_mib"] for r in runs]
                table = runs[0]["table_mib"]
                line = (
                    f"| {rows:,} | {label} | {statistics.median(seconds):.2f} "
                    f"({min(seconds):.2f}-{max(seconds):.2f}) | "
                    f"{statistics.median(peaks):.0f} | "
                    + (f"{table:.0f}" if table is not None else "-")
                    + " |"
                )
                print(line, flush=True)
                lines.append(line)
    finally:
        server.stop()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    text = "\n".join(
        [
            "# Reading a PostgreSQL source: time and peak memory",
            "",
            f"`uv run python benchmarks/bench_postgres_read.py --repeats {args.repeats}`"
            f" on {datetime.now(UTC):%Y-%m-%d} ({platform.machine()}, "
            f"{os.cpu_count()} cores, load average at the end {load}; PostgreSQL "
            f"{bin_dir.parent.name} on the same machine, loopback TCP).",
            "",
            "The seeded hospital table (13 columns: 8 text, a date, 2 integers, a "
            "numeric), `SELECT * FROM visits`, each read in a fresh process. Time: "
            f"median (min-max) of {args.repeats} reads. Peak: the process's peak "
            "resident memory above its size before the read, MiB (median). Table: "
            "the resulting DataFrame's `memory_usage(deep=True)`, MiB.",
            "",
            "| rows | reader | seconds | peak MiB | table MiB |",
            "|---|---|---|---|---|",
            *lines,
            "",
        ]
    )
    args.out.write_text(text, encoding="utf-8")
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
