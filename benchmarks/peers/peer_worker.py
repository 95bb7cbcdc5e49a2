"""Run inside the peers' own environment (old numpy/pandas): anonypy, anjana, pycanon.

Never imported by the project: ``bench_peers.py`` writes a job file (the folds'
training halves as CSV, the hierarchies as distinct-value tables, k, l, the
suppression limit) and runs ``<peer venv>/bin/python peer_worker.py JOB``.
For each peer, k and fold it anonymizes the training half, times the call
(``time.perf_counter`` around the library call only), traces the peak memory
of the first fold's call again with tracemalloc (as the project's comparison
does), checks the output with pycanon (k-anonymity and distinct l-diversity,
timed) and writes the released training half in the project's cell grammar
(``[lo, hi]`` numeric range, ``{a|b}`` value set, hierarchy labels as they
are, dropped rows left out), so the project scores it with its own learners.
"""

from __future__ import annotations

import json
import sys
import time
import tracemalloc
from pathlib import Path

import pandas as pd


def _cell_range(values: pd.Series) -> str:
    lo, hi = values.min(), values.max()
    lo_text = f"{lo:g}" if isinstance(lo, float) else str(lo)
    hi_text = f"{hi:g}" if isinstance(hi, float) else str(hi)
    return lo_text if lo == hi else f"[{lo_text}, {hi_text}]"


def _cell_set(values: pd.Series) -> str:
    members = sorted({str(v) for v in values})
    return members[0] if len(members) == 1 else "{" + "|".join(members) + "}"


def anonypy_mondrian(train: pd.DataFrame, job: dict, k: int) -> pd.DataFrame:
    """anonypy's Mondrian partition, each class released as its range / value set.

    anonypy itself returns one aggregated row per (class, sensitive value); its
    ``Mondrian.partition`` gives the classes' row labels, and each class is
    written as anonypy summarizes it (numeric span, set of categories).
    """
    from anonypy import Mondrian

    qi, numeric = job["quasi_identifiers"], set(job["numeric"])
    frame = train.copy()
    for column in qi:
        if column not in numeric:
            frame[column] = frame[column].astype(str).astype("category")
    sensitive = job["sensitive_attribute"] or job["target"]
    l_value = job["l"] if job["sensitive_attribute"] and job["l"] > 1 else 0
    partitions = Mondrian(frame, qi, sensitive).partition(k, l_value)
    released = train.astype({c: object for c in qi}).copy()
    for partition in partitions:
        for column in qi:
            part = train.loc[partition, column]
            cell = _cell_range(part) if column in numeric else _cell_set(part)
            released.loc[partition, column] = cell
    return released


def anjana_generalization(train: pd.DataFrame, job: dict, k: int) -> pd.DataFrame:
    """anjana's greedy full-domain generalization (+ suppression by dropping)."""
    import contextlib
    import io

    from anjana.anonymity import k_anonymity, l_diversity

    qi = job["quasi_identifiers"]
    frame = train.copy()
    for column in qi:
        frame[column] = frame[column].astype(str)
    hierarchies = {
        column: {int(level): list(values) for level, values in levels.items()}
        for column, levels in job["hierarchies"].items()
    }
    percent = 100.0 * job["suppression_limit"]
    with contextlib.redirect_stdout(io.StringIO()):  # anjana prints progress
        if job["sensitive_attribute"] and job["l"] > 1:
            out = l_diversity(
                frame,
                [],
                qi,
                job["sensitive_attribute"],
                k,
                job["l"],
                percent,
                hierarchies,
            )
        else:
            out = k_anonymity(frame, [], qi, k, percent, hierarchies)
    if out is None or len(out) == 0:
        raise RuntimeError("anjana returned no table (the requirement was not met)")
    return out.drop(columns=["index"], errors="ignore")


PEERS = {"anonypy-mondrian": anonypy_mondrian, "anjana": anjana_generalization}


def pycanon_check(released: pd.DataFrame, job: dict) -> dict:
    from pycanon import anonymity

    qi = job["quasi_identifiers"]
    frame = released.astype({c: str for c in qi}).reset_index(drop=True)
    started = time.perf_counter()
    k_value = anonymity.k_anonymity(frame, qi)
    k_seconds = time.perf_counter() - started
    out = {"k": int(k_value), "k_seconds": k_seconds}
    if job["sensitive_attribute"]:
        started = time.perf_counter()
        out["l"] = int(anonymity.l_diversity(frame, qi, [job["sensitive_attribute"]]))
        out["l_seconds"] = time.perf_counter() - started
    return out


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    out_dir = Path(job["out_dir"])
    results = []
    for name, function in PEERS.items():
        for k in job["k"]:
            for fold in job["folds"]:
                train = pd.read_csv(fold["train"], keep_default_na=False)
                record = {
                    "algorithm": name,
                    "k": k,
                    "repeat": fold["repeat"],
                    "fold": fold["fold"],
                }
                try:
                    started = time.perf_counter()
                    released = function(train, job, k)
                    record["seconds"] = time.perf_counter() - started
                    if fold["repeat"] == 0 and fold["fold"] == 0:
                        tracemalloc.start()
                        base, _ = tracemalloc.get_traced_memory()
                        function(train, job, k)
                        _, peak = tracemalloc.get_traced_memory()
                        tracemalloc.stop()
                        record["peak_mib"] = (peak - base) / 2**20
                    path = (
                        out_dir / f"{name}-k{k}-r{fold['repeat']}-f{fold['fold']}.csv"
                    )
                    released.to_csv(path, index=False)
                    record["released"] = str(path)
                    record["pycanon"] = pycanon_check(released, job)
                    record["status"] = "ok"
                except Exception as err:  # noqa: BLE001 - reported per fold
                    record["status"] = "failed"
                    record["reason"] = f"{type(err).__name__}: {err}"
                results.append(record)
                print(
                    name,
                    k,
                    fold["repeat"],
                    fold["fold"],
                    record["status"],
                    round(record.get("seconds", float("nan")), 3),
                    flush=True,
                )
    versions = {}
    for package in ("anonypy", "anjana", "pycanon", "pandas", "numpy"):
        from importlib.metadata import version

        versions[package] = version(package)
    Path(job["result"]).write_text(
        json.dumps({"versions": versions, "runs": results}, indent=2)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
