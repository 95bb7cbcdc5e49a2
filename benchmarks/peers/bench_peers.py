"""Peer libraries on the comparison's folds: anonypy's Mondrian, anjana, pycanon.

The peers pin old numpy/pandas (pycanon 1.3.5 and anjana 1.2.3 want numpy
2.0.2 and pandas 2.3.3 exactly), so they never enter the project's
environment. This script, run in the project's environment, creates one of
their own with ``uv venv`` + ``uv pip install`` (pinned, cached under
``--cache-dir``), writes the same seeded 5 x 2 folds that ``ppdm compare``
uses (``ppdm.experiments.compare.fold_splits``: raw training halves as CSV,
the dataset's hierarchies as distinct-value tables in anjana's format), runs
``peer_worker.py`` there (anonymization timed around the library call, peak
memory of the first fold by tracemalloc, pycanon's k and l check timed), and
scores every released training half here with the project's learners and
loss metrics against the untouched test half, exactly as the comparison scores
the registered algorithms. pycanon's check is timed next to the project's own
measures on the same released tables.

Usage (the recorded runs are in benchmarks/results/compare-*-peers.md)::

    uv run python benchmarks/peers/bench_peers.py --config configs/german.yaml \\
        --k 5,10,50,100 --out benchmarks/results/compare-german-peers
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ppdm.algorithms import ALGORITHMS
from ppdm.config import load_config
from ppdm.experiments import compare as C
from ppdm.experiments.compare import cell as compare_cell
from ppdm.experiments.compare import pages as compare_pages
from ppdm.model import AnonymizationSpec, AttributeKind, Release, attribute_kind
from ppdm.privacy.measures import distinct_l_diversity, k_anonymity
from ppdm.utility.scoring import train_and_score

PINS = ("pycanon==1.3.5", "anjana==1.2.3", "anonypy==0.2.1")
HERE = Path(__file__).resolve().parent


def peer_python(cache: Path) -> Path:
    """The peers' interpreter: a venv made once with uv, pinned versions."""
    venv = cache / "venv"
    python = venv / "bin" / "python"
    marker = venv / ".ppdm-pins"
    if marker.exists() and marker.read_text() == " ".join(PINS):
        return python
    env = dict(os.environ, UV_PYTHON_DOWNLOADS="never")
    subprocess.run(
        ["uv", "venv", "--clear", "--python", "python3.11", str(venv)],
        check=True,
        env=env,
    )
    subprocess.run(
        ["uv", "pip", "install", "--python", str(python), *PINS], check=True, env=env
    )
    marker.write_text(" ".join(PINS))
    return python


def _hierarchies(plan: C.ComparisonPlan, qi: list[str]) -> dict:
    """anjana's format: {qi: {level: values}}, one entry per distinct value."""
    out = {}
    for column in qi:
        hierarchy = (plan.hierarchies or {}).get(column)
        if hierarchy is None:
            raise SystemExit(f"{column}: anjana needs a hierarchy; none ships")
        values = pd.Series(plan.table[column].drop_duplicates().to_numpy())
        raw = [("" if pd.isna(v) else str(v)) for v in values]
        levels = {0: raw}
        for level in range(1, hierarchy.height + 1):
            labels = hierarchy.generalize(values, level)
            levels[level] = [str(v) for v in labels]
        out[column] = levels
    return out


def _score(plan, job, run, folds) -> C.FoldOutcome:
    config = plan.config
    split = folds[(run["repeat"], run["fold"])]
    head = {k: run[k] for k in ("algorithm", "k", "repeat", "fold")}
    if run["status"] != "ok":
        return C.FoldOutcome(**head, status="failed", reason=run["reason"])
    raw = plan.table.iloc[split.train]
    test = plan.table.iloc[split.test]
    released = pd.read_csv(run["released"], dtype=str, keep_default_na=False)
    spec = AnonymizationSpec(
        requirement=config.with_overrides(k=run["k"]).requirement,
        target=config.target,
        suppression_limit=config.suppression_limit,
        hierarchies=plan.hierarchies,
    )
    covers = compare_cell._covers(plan)
    scores = train_and_score(
        raw,
        released,
        test,
        target=config.target,
        seed=config.seed,
        models=plan.models,
        with_original=False,
        covers=covers,
    )
    release = Release(
        tables={"release": released},
        algorithm=run["algorithm"],
        params={},
        evidence={},
        suppression_marker="*",
        records_in=len(raw),
    )
    figures = compare_cell._release_figures(raw, release, spec, covers)
    return C.FoldOutcome(
        **head,
        status="ok",
        accuracy={m: float(scores[m]["anonymized"]) for m in plan.models},
        seconds=run["seconds"],
        n_train=len(raw),
        **figures,
    )


def _own_check_seconds(path: str, qi: list[str], sensitive: str | None) -> dict:
    released = pd.read_csv(path, dtype=str, keep_default_na=False)
    started = time.perf_counter()
    k_anonymity(released, qi)
    out = {"k_seconds": time.perf_counter() - started}
    if sensitive:
        started = time.perf_counter()
        distinct_l_diversity(released, qi, sensitive)
        out["l_seconds"] = time.perf_counter() - started
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--k", required=True)
    parser.add_argument("--sample", type=int, default=None)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "ppdm-peers",
        help="where the peers' venv is kept between runs",
    )
    args = parser.parse_args(argv)
    config = load_config(args.config)
    ks = C.parse_k(args.k)
    first = next(iter(ALGORITHMS))
    plan = C.plan_comparison(config, ks, algorithms=[first], sample=args.sample)
    qi = list(config.quasi_identifiers)
    numeric = [c for c in qi if attribute_kind(plan.table[c]) is AttributeKind.NUMERIC]
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    python = peer_python(args.cache_dir)
    setup_seconds = time.perf_counter() - started
    with tempfile.TemporaryDirectory(prefix="ppdm-peers-") as work:
        work = Path(work)
        folds = {(s.repeat, s.fold): s for s in plan.splits}
        job = {
            "quasi_identifiers": qi,
            "numeric": numeric,
            "sensitive_attribute": config.sensitive_attribute,
            "target": config.target,
            "l": int(config.l),
            "suppression_limit": float(config.suppression_limit),
            "k": ks,
            "hierarchies": _hierarchies(plan, qi),
            "out_dir": str(work),
            "result": str(work / "result.json"),
            "folds": [],
        }
        for split in plan.splits:
            path = work / f"train-r{split.repeat}-f{split.fold}.csv"
            plan.table.iloc[split.train].to_csv(path, index=False)
            job["folds"].append(
                {"repeat": split.repeat, "fold": split.fold, "train": str(path)}
            )
        (work / "job.json").write_text(json.dumps(job))
        started = time.perf_counter()
        subprocess.run(
            [str(python), str(HERE / "peer_worker.py"), str(work / "job.json")],
            check=True,
        )
        peer_seconds = time.perf_counter() - started
        worker = json.loads((work / "result.json").read_text())
        outcomes, checks = [], []
        for run in worker["runs"]:
            outcomes.append(_score(plan, job, run, folds))
            if run["status"] == "ok":
                own = _own_check_seconds(
                    run["released"], qi, config.sensitive_attribute
                )
                checks.append(
                    {
                        "algorithm": run["algorithm"],
                        "k": run["k"],
                        "pycanon_k": run["pycanon"]["k"],
                        "pycanon_l": run["pycanon"].get("l"),
                        "pycanon_k_seconds": run["pycanon"]["k_seconds"],
                        "pycanon_l_seconds": run["pycanon"].get("l_seconds"),
                        "ppdm_k_seconds": own["k_seconds"],
                        "ppdm_l_seconds": own.get("l_seconds"),
                    }
                )
    rows = pd.DataFrame([r for o in outcomes for r in o.rows()])
    summary = C.summarize(rows, models=plan.models)
    peaks = {
        (r["algorithm"], r["k"]): r["peak_mib"]
        for r in worker["runs"]
        if "peak_mib" in r
    }
    for (name, k), mib in peaks.items():
        where = (summary["algorithm"] == name) & (summary["k"] == k)
        summary.loc[where, "peak_mib"] = mib
    checks_frame = pd.DataFrame(checks)
    check_summary = (
        checks_frame.groupby(["algorithm", "k"])
        .agg(
            pycanon_k=("pycanon_k", "min"),
            pycanon_l=("pycanon_l", "min"),
            pycanon_k_ms=("pycanon_k_seconds", lambda s: 1000 * s.mean()),
            pycanon_l_ms=("pycanon_l_seconds", lambda s: 1000 * s.mean()),
            ppdm_k_ms=("ppdm_k_seconds", lambda s: 1000 * s.mean()),
            ppdm_l_ms=("ppdm_l_seconds", lambda s: 1000 * s.mean()),
        )
        .reset_index()
        if len(checks_frame)
        else pd.DataFrame()
    )
    command = "uv run python benchmarks/peers/bench_peers.py " + " ".join(
        shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv)
    )
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    document = compare_cell._jsonable(
        {
            "command": command,
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}; load average at the end: {load}",
            "versions": worker["versions"],
            "dataset": config.dataset,
            "rows": len(plan.table),
            "sample": plan.sample,
            "k": ks,
            "l": int(config.l),
            "suppression_limit": float(config.suppression_limit),
            "seconds_peer_env_setup": setup_seconds,
            "seconds_peer_worker": peer_seconds,
            "summary": summary.to_dict(orient="records"),
            "checks": check_summary.to_dict(orient="records"),
        }
    )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "peers.json").write_text(
        json.dumps(document, indent=2, sort_keys=True) + "\n"
    )
    rows.to_csv(args.out / "folds.csv", index=False)
    header, body = compare_pages._table_rows(summary, list(plan.models))
    lines = [
        f"# Peer libraries on the {config.dataset} comparison folds",
        "",
        f"Command: `{command}`  ",
        f"Machine: {document['machine']}  ",
        f"Peers: {', '.join(f'{k} {v}' for k, v in worker['versions'].items())} "
        f"(own venv, set up in {setup_seconds:.1f} s; worker {peer_seconds:.1f} s)",
        "",
        "Same seeded 5 x 2 folds, requirement and scoring as `ppdm compare` "
        f"(k varied, distinct l = {config.l}, suppression limit "
        f"{config.suppression_limit}). anonypy: `Mondrian.partition(k, l)`, each "
        "class written as anonypy summarizes it (numeric range, set of "
        "categories). anjana: `l_diversity` (or `k_anonymity` when l = 1) with "
        "the dataset's hierarchies; rows it suppresses are dropped (lost "
        "records). Time: the library call only.",
        "",
        compare_pages._markdown_table(header, body),
        "",
        compare_pages._LEGEND,
        "",
    ]
    if len(check_summary):
        lines += [
            "## Verification: pycanon vs the project's measures, same released "
            "tables (mean per fold)",
            "",
            compare_pages._markdown_table(
                list(check_summary.columns),
                [
                    [
                        compare_pages._fmt(v, ".2f") if isinstance(v, float) else str(v)
                        for v in r
                    ]
                    for r in check_summary.itertuples(index=False)
                ],
            ),
            "",
        ]
    (args.out / "peers.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    raise SystemExit(main())
