"""Benchmark PBG-EA on Adult: search quality (CE, RR) against the exhaustive
front, evaluator speed, and the optimal single-objective mode.

Run from the repository root::

    uv run python benchmarks/bench_pbg_ea.py [--seeds 20] [--repeats 3]
        [--sections all|optimal] [--out PATH]

It prints the results and writes them to ``benchmarks/results/pbg_ea.md``
(``--sections optimal``: only the optimal single-objective mode, printed and
written to ``--out`` when given).

The optimal mode (lattice-optimal) runs on all 48,842 rows with k = 5 and 2 %
suppression, alone and with distinct, entropy or recursive l-diversity or
t-closeness of occupation, each given as privacy models of a requirement that
the search asks (``optimal_node`` on a lattice built with ``requirement=``);
every optimum's release is checked with the independent verifier.

Setting (the paper's, Dewri et al. 2010, section 7): UCI ``adult.data`` with
the rows holding a missing value removed (30,162 rows), quasi-identifiers
age, workclass, education, marital-status, race, sex, native-country and
salary class (``income``) with the DGH lengths 6, 3, 3, 3, 1, 1, 4, 1 (17,920
nodes), suppression limit 1 % (eta = 301 rows), occupation as the sensitive
attribute, discretisation vector all ones.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from ppdm.algorithms.lattice_optimal import optimal_node
from ppdm.algorithms.pbg_ea import pbg_search
from ppdm.generalization.hierarchies import load_hierarchies
from ppdm.generalization.lattice import (
    OBJECTIVES,
    GeneralizationLattice,
    generalized_release,
)
from ppdm.generalization.pareto import (
    convergence_error,
    pareto_mask,
    representation_ratio,
)
from ppdm.model import AnonymizationSpec
from ppdm.prepare import datasets
from ppdm.verify import verify_tables

ROOT = Path(__file__).resolve().parents[1]
QIS = ["age", "workclass", "education", "marital-status", "race", "sex",
       "native-country", "income"]  # fmt: skip
PAPER = {  # Table 1(b) and 2(b): mean CE, mean RR, unique evaluations
    ("k", "glm"): (3.7e-4, 0.94, 916),
    ("k", "l", "glm"): (3.3e-4, 0.93, 946),
    ("sk", "glm"): (5.7e-4, 0.84, 1136),
}
#: Search settings compared: the paper's algorithm (``refine="none"``), longer
#: runs of it, and the archive-driven local search (``refine="local"``, the
#: default of ``PbgEa``) from the initial population or after 15 generations,
#: also under a tight budget.
SETTINGS = {
    "paper (25 x 100, p_mut 1/8)": {"refine": "none"},
    "paper, 25 x 150": {"refine": "none", "generations": 150},
    "paper, 25 x 200": {"refine": "none", "generations": 200},
    "local search (default: 25 x 0)": {"refine": "local"},
    "local search after 25 x 15": {"refine": "local", "generations": 15},
    "local search, budget 448 (2.5%)": {"refine": "local", "budget": 448},
}
#: Requirements of the optimal mode: label -> shorthand beyond k = 5 (a
#: sensitive attribute, occupation, when not empty).
OPTIMAL_REQUIREMENTS = {
    "k = 5": {},
    "k = 5, distinct l = 2": {"l": 2},
    "k = 5, entropy l = 2": {"l": 2, "l_variant": "entropy"},
    "k = 5, recursive (3, 3)": {"l": 3, "l_variant": "recursive", "c": 3.0},
    "k = 5, t = 0.2": {"t": 0.2},
}


def median_time(function, repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--sections", choices=("all", "optimal"), default="all")
    args = parser.parse_args()
    if args.out is None and args.sections == "all":
        args.out = ROOT / "benchmarks/results/pbg_ea.md"
    lines: list[str] = []

    def emit(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    hierarchies = load_hierarchies(ROOT / "hierarchies" / "adult")
    paper_rows = datasets.load("adult", "train").dropna().reset_index(drop=True)
    all_rows = datasets.load("adult")
    emit("# PBG-EA benchmark (Adult)")
    emit()
    emit(
        f"- command: `uv run python benchmarks/bench_pbg_ea.py --seeds {args.seeds} "
        f"--repeats {args.repeats} --sections {args.sections}`"
    )
    emit(f"- date: {datetime.now(UTC).isoformat(timespec='seconds')}")
    emit(
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}"
    )
    emit(
        "- load at start (`/proc/loadavg`): "
        + Path("/proc/loadavg").read_text().strip()
    )
    emit(
        "- timings are medians of the repeats; the machine is shared, so they are noisy"
    )
    emit()

    if args.sections == "all":
        # ---------------------------------------------------------- exhaustive
        emit("## Exhaustive evaluation of the lattice (17,920 nodes)")
        emit()
        emit(
            "| data | rows | objectives' inputs | build s | all nodes s | ms per node |"
        )
        emit("|---|---|---|---|---|---|")
        for label, table, sensitive in [
            ("adult.data, missing removed (paper)", paper_rows, "occupation"),
            ("adult.data + adult.test (all)", all_rows, "occupation"),
        ]:
            build, lattice = median_time(
                lambda t=table, s=sensitive: GeneralizationLattice.from_table(
                    t, QIS, hierarchies, sensitive_attribute=s, suppression_limit=0.01
                ),
                args.repeats,
            )
            sweep, everything = median_time(lattice.evaluate_all, args.repeats)
            emit(
                f"| {label} | {len(table)} | k, S_k, l, GLM | {build:.3f} | {sweep:.2f} | "
                f"{1000 * sweep / lattice.size:.3f} |"
            )
            if table is paper_rows:
                paper_lattice, paper_all = lattice, everything
        emit()

        # ---------------------------------------------------------- PBG-EA
        emit(f"## PBG-EA vs the exhaustive front ({args.seeds} seeds, eps = 1)")
        emit()
        emit(
            "CE and RR as in the paper (mean / variance over the seeds); evaluations are "
            "unique nodes evaluated (share of 17,920)."
        )
        emit()
        emit(
            "| objectives | setting | front size | CE mean / var | RR mean / var "
            "| RR min | "
            "evaluations (share) | s per run | paper CE / RR / evaluations |"
        )
        emit("|---|---|---|---|---|---|---|---|---|")
        for objectives, (p_ce, p_rr, p_ev) in PAPER.items():
            senses = [OBJECTIVES[o] for o in objectives]
            values = paper_all.values(objectives)
            front = values[pareto_mask(values, senses)]
            for name, setting in SETTINGS.items():
                ces, rrs, evals, times = [], [], [], []
                for seed in range(args.seeds):
                    start = time.perf_counter()
                    result = pbg_search(
                        paper_lattice,
                        objectives,
                        np.random.default_rng(seed),
                        **setting,
                    )
                    times.append(time.perf_counter() - start)
                    archive = np.array(
                        [[m.value(o) for o in objectives] for m in result.archive]
                    )
                    ces.append(convergence_error(archive, front))
                    rrs.append(
                        representation_ratio(
                            archive, front, senses, [1.0] * len(objectives)
                        )
                    )
                    evals.append(result.unique_evaluations)
                share = np.mean(evals) / paper_lattice.size
                emit(
                    f"| {'-'.join(objectives)} | {name} | {len(front)} | "
                    f"{np.mean(ces):.2e} / {np.var(ces):.1e} | {np.mean(rrs):.3f} / "
                    f"{np.var(rrs):.1e} | {np.min(rrs):.3f} | {np.mean(evals):.0f} "
                    f"({100 * share:.1f}%) | {statistics.median(times):.2f} | "
                    f"{p_ce:.1e} / {p_rr} / {p_ev} ({100 * p_ev / 17920:.1f}%) |"
                )
        emit()

    # ---------------------------------------------------------- optimal
    emit("## Optimal mode (lattice-optimal), all 48,842 rows, k = 5, suppression 2%")
    emit()
    emit(
        "Each requirement is asked through its privacy models (`optimal_node` on a "
        "lattice built with `requirement=`); s = lattice build + search; the "
        "optimum's release (`generalized_release`) is checked by "
        "`ppdm.verify.verify_tables`."
    )
    emit()
    emit(
        "| quasi-identifiers | requirement | nodes | s (build + search) | evaluations "
        "| pruned | optimum | GLM | released suppressed / dropped | verifier |"
    )
    emit("|---|---|---|---|---|---|---|---|---|---|")
    for qis in (QIS[:-1], QIS):
        for label, shorthand in OPTIMAL_REQUIREMENTS.items():
            sensitive = "occupation" if shorthand else None
            spec = AnonymizationSpec.of(
                tuple(qis), sensitive, None, k=5, suppression_limit=0.02,
                hierarchies=hierarchies, **shorthand,
            )  # fmt: skip

            def run(spec=spec):
                lattice = GeneralizationLattice.from_table(
                    all_rows, spec.quasi_identifiers, hierarchies,
                    sensitive_attribute=spec.sensitive_attribute,
                    suppression_limit=0.02, requirement=spec.requirement,
                )  # fmt: skip
                return lattice, optimal_node(lattice)

            seconds, (lattice, result) = median_time(run, args.repeats)
            released, counts = generalized_release(
                all_rows, spec, hierarchies, result.best.levels
            )
            certificate = verify_tables({"release": released}, spec.requirement)
            emit(
                f"| {len(qis)} ({'with' if 'income' in qis else 'without'} income) "
                f"| {label} | {lattice.size} | {seconds:.2f} | {result.evaluations} "
                f"| {result.pruned} | {result.best.levels} | {result.best.glm:.1f} "
                f"| {counts['suppressed']} / {counts['dropped']} "
                f"| {'passed' if certificate.passed else 'FAILED'} |"
            )
    emit()
    emit(f"- load at end: {Path('/proc/loadavg').read_text().strip()}")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"written to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
