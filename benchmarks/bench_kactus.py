"""kACTUS scalability benchmark: the paper's enlarged-Adult test (Section 5.8).

Adult (the 45,222 complete rows, as in the paper) is enlarged by a factor
sigma: every record t is kept and joined by sigma - 1 variations that keep
rho = 3 of t's quasi-identifier values (a random choice of 3, per variation)
and draw the others uniformly from each attribute's domain (its distinct
values in Adult); the target is t's. 7 quasi-identifiers, k = 150. The tree
time (C4.5-style inducer, MinObj = k, J48's pruning) and the Anonymize time
are reported separately, as medians of ``--repeats`` runs after one untimed
warm-up run. Then Anonymize on one fixed tree (grown at sigma = 10) at n, 2n
and 4n instances (every instance set replicated), for the paper's linearity
corollary. Then random vs greedy lending and value sets (time, suppressed and
value-set cells, lent instances) on Adult itself, 14 QIs, k = 10, 30, 150.

Run from the repository root::

    uv run python benchmarks/bench_kactus.py --repeats 5  # benchmarks/results/kactus.md
    uv run python benchmarks/bench_kactus.py --quick      # sigma 1, 5 only

Results are written between markers in ``benchmarks/results/kactus.md`` so the
accuracy section of that file (written by hand from the experiment runs) stays.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from ppdm.algorithms.kactus import anonymize_tree
from ppdm.prepare import datasets
from ppdm.privacy.measures import k_anonymity
from ppdm.trees import C45, PredicateTree, TreeNode

QI = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex"]
TARGET = "income"
RHO = 3
K = 150
RESULTS = Path(__file__).parent / "results" / "kactus.md"
BEGIN, END = "<!-- bench_kactus:begin -->", "<!-- bench_kactus:end -->"


def enlarged_adult(sigma: int, seed: int = 0) -> pd.DataFrame:
    """Adult's complete rows plus sigma - 1 seeded variations of each."""
    base = datasets.load("adult").dropna().reset_index(drop=True)[QI + [TARGET]]
    if sigma == 1:
        return base
    rng = np.random.default_rng(seed)
    n, q = len(base), len(QI)
    m = n * (sigma - 1)
    source = np.repeat(np.arange(n), sigma - 1)
    # which RHO attributes each variation keeps: the first RHO of a random order
    keep = np.argsort(rng.random((m, q)), axis=1)[:, :RHO]
    kept = np.zeros((m, q), dtype=bool)
    np.put_along_axis(kept, keep, True, axis=1)
    columns = {}
    for j, name in enumerate(QI):
        codes, domain = pd.factorize(base[name])
        drawn = rng.integers(0, len(domain), size=m)
        chosen = np.where(kept[:, j], codes[source], drawn)
        values = np.asarray(domain)[chosen]
        columns[name] = np.concatenate([base[name].to_numpy(), values])
    frame = pd.DataFrame(columns)
    frame["age"] = frame["age"].astype("int64")
    for name in QI[1:]:
        frame[name] = frame[name].astype("string")
    frame[TARGET] = np.concatenate(
        [base[TARGET].to_numpy(), base[TARGET].to_numpy()[source]]
    )
    frame[TARGET] = frame[TARGET].astype("string")
    return frame


def replicated(tree: PredicateTree, factor: int) -> PredicateTree:
    """The same tree with every instance set copied ``factor`` times."""
    n = tree.n_rows

    def copy(node: TreeNode) -> TreeNode:
        rows = np.concatenate([node.rows + i * n for i in range(factor)])
        return TreeNode(
            node.predicate,
            children=[copy(child) for child in node.children],
            rows=rows,
            missing_child=node.missing_child,
        )

    return PredicateTree(copy(tree.root), n * factor, check=False)


def _anonymize(table: pd.DataFrame, tree: PredicateTree):
    return anonymize_tree(table, tree, QI, K, np.random.default_rng(0))


def timed(fn, repeats: int) -> tuple[float, object]:
    out = fn()  # warm-up (imports, first-touch page faults), not timed
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sigmas", default="1,5,10,20,30")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    sigmas = [1, 5] if args.quick else [int(s) for s in args.sigmas.split(",")]
    lines: list[str] = []
    say = lines.append
    loads = [loadavg()]

    say(
        "| sigma | rows | tree nodes / leaves | tree s | anonymize s | total s | "
        "released | lost | k achieved |"
    )
    say("|---|---|---|---|---|---|---|---|---|")
    trees: dict[int, tuple[pd.DataFrame, PredicateTree]] = {}
    for sigma in sigmas:
        table = enlarged_adult(sigma)
        grow = partial(C45(min_obj=K).fit, table[QI], table[TARGET])
        tree_s, inducer = timed(grow, args.repeats)
        tree = inducer.tree_
        anon_s, result = timed(
            partial(_anonymize, table, tree),
            args.repeats,
        )
        achieved = k_anonymity(result.table, QI)
        say(
            f"| {sigma} | {len(table):,} | "
            f"{len(tree.nodes):,} / {len(tree.leaves):,} | "
            f"{tree_s:.2f} | {anon_s:.2f} | {tree_s + anon_s:.2f} | "
            f"{len(result.table):,} | {len(result.lost)} | {achieved} |"
        )
        print(lines[-1], flush=True)
        loads.append(loadavg())
        if sigma in (1, 10):
            trees[sigma] = (table, tree)
        del result

    base_sigma = 10 if 10 in trees else sigmas[0]
    table, tree = trees.get(base_sigma) or (None, None)
    if tree is not None:
        say("")
        say(
            f"Anonymize on one fixed tree (grown at sigma = {base_sigma}), every "
            "instance set replicated:"
        )
        say("")
        say("| instances | anonymize s | ratio to n |")
        say("|---|---|---|")
        first = None
        for factor in (1, 2, 4):
            big = pd.concat([table] * factor, ignore_index=True)
            big_tree = replicated(tree, factor)
            seconds, _ = timed(
                partial(_anonymize, big, big_tree),
                args.repeats,
            )
            first = first or seconds
            say(f"| {factor}n = {len(big):,} | {seconds:.2f} | {seconds / first:.2f} |")
            print(lines[-1], flush=True)
        loads.append(loadavg())

    say("")
    say(
        "Lending and value sets on Adult (sigma = 1, 14 attributes as QI, the "
        "C4.5 tree grown once per k), same seed:"
    )
    say("")
    say(
        "| k | lending | generalize_small_siblings | anonymize s | suppressed QI "
        "cells | value-set cells | lent instances | lost |"
    )
    say("|---|---|---|---|---|---|---|---|")
    adult = datasets.load("adult")
    all_qi = [c for c in adult.columns if c != TARGET]
    for k in (10, 30, 150):
        tree = C45(min_obj=k).fit(adult[all_qi], adult[TARGET]).tree_
        for lending, generalize in (
            ("random", False),
            ("greedy", False),
            ("random", True),
        ):
            run = partial(
                anonymize_tree,
                adult,
                tree,
                all_qi,
                k,
                lending=lending,
                generalize_small_siblings=generalize,
            )
            seconds, result = timed(
                lambda run=run: run(np.random.default_rng(0)), args.repeats
            )
            cells = result.table[all_qi].astype(str).to_numpy()
            suppressed = float((cells == "*").mean())
            sets = float(np.char.startswith(cells.astype(str), "{").mean())
            lent = sum(s["lent"] for s in result.node_stats)
            say(
                f"| {k} | {lending} | {generalize} | {seconds:.2f} | "
                f"{suppressed:.4f} | {sets:.4f} | {lent:,} | {len(result.lost)} |"
            )
            print(lines[-1], flush=True)
    loads.append(loadavg())

    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).parent,
    ).stdout.strip()
    command = " ".join(
        ["uv run python benchmarks/bench_kactus.py", *(argv or sys.argv[1:])]
    )
    machine = (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores "
        f"(shared), Python {platform.python_version()}, numpy {np.__version__}, "
        f"pandas {pd.__version__}"
    )
    header = [
        BEGIN,
        "## Scalability (benchmarks/bench_kactus.py)",
        "",
        f"Command: `{command}`",
        f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; commit {commit}; {machine}.",
        f"Load (/proc/loadavg) before and during: {' ; '.join(loads)}.",
        (
            f"7 QI ({', '.join(QI)}), target {TARGET}, k = {K}, rho = {RHO}; "
            f"medians of {args.repeats} runs."
        ),
        "",
    ]
    block = "\n".join(header + lines + ["", END])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    old = args.out.read_text() if args.out.exists() else "# kACTUS results\n\n"
    if BEGIN in old and END in old:
        new = old[: old.index(BEGIN)] + block + old[old.index(END) + len(END) :]
    else:
        new = old.rstrip() + "\n\n" + block + "\n"
    args.out.write_text(new)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
