"""Discretization and utility-report benchmark (ppdm.prepare.discretize, ppdm.utility).

Times, as medians of ``--repeats`` runs on Adult (48,842 rows) and on Adult
replicated 10 times (488,420 rows):

- MDL (Fayyad-Irani) and equal-frequency cut points of the 6 numeric columns;
- the information-loss bundle (NCP, DM, CM, suppressed cells) of a release
  whose numeric quasi-identifiers are written as ranges;
- the featurizer on that release;
- one hold-out evaluation (3 models trained twice) on Adult;
- the release report of ``ppdm run``'s default (Adult, Mondrian, k = 10,
  distinct l = 2, age binned by MDL) by :func:`ppdm.utility.report.utility_report`,
  which fits the cut points on the training split only, next to the protocol
  before it (cut points fitted on all 48,842 rows, the test rows included),
  with each accuracy and its 95 % Wilson interval;
- the hold-out of a release of two projections (the quasi-identifiers split
  in two, each projection with the target), scored by the naive Bayes
  combination of one model per projection.

Run from the repository root::

    uv run python benchmarks/bench_utility.py  # -> benchmarks/results/utility.md
    uv run python benchmarks/bench_utility.py --quick  # Adult only, 3 repeats
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from ppdm.algorithms import get_algorithm
from ppdm.model import AnonymizationSpec
from ppdm.prepare import datasets
from ppdm.prepare.datasets import ADULT_NUMERIC
from ppdm.prepare.discretize import apply_cut_points, discretize
from ppdm.utility.features import CellFeaturizer
from ppdm.utility.holdout import holdout_utility
from ppdm.utility.loss import information_loss
from ppdm.utility.report import build_utility, render_report_html, utility_report

RESULTS = Path(__file__).parent / "results" / "utility.md"
QI = ("age", "education-num", "hours-per-week", "workclass", "marital-status", "sex")


def _median_seconds(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _as_ranges(table: pd.DataFrame) -> pd.DataFrame:
    """A release-like table: numeric QIs as 10-wide ranges, sex suppressed."""
    out = table.copy()
    for name in ("age", "education-num", "hours-per-week"):
        low = out[name] // 10 * 10
        out[name] = "[" + low.astype(str) + ", " + (low + 9).astype(str) + "]"
    out["sex"] = "*"
    return out


ADULT_QI = (
    "age",
    "workclass",
    "education",
    "marital-status",
    "race",
    "sex",
    "native-country",
)


def _timed(fn: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def _accuracies(holdout: dict) -> str:
    """``model: anonymized [low, high] (original)`` in percent."""
    parts = []
    for model, s in holdout["accuracy"].items():
        low, high = s["anonymized_ci95"] or (float("nan"), float("nan"))
        parts.append(
            f"{model.replace('_', ' ')} {100 * s['anonymized']:.2f} "
            f"[{100 * low:.2f}, {100 * high:.2f}] "
            f"(original {100 * s['original']:.2f})"
        )
    return "; ".join(parts)


def _default_release_report(adult: pd.DataFrame, repeats: int) -> list[tuple]:
    """``ppdm run``'s report: utility_report against the protocol before it.

    The two are run alternately ``repeats`` times (the machine is shared, so
    alternating spreads its load over both); medians are reported.
    """
    spec = AnonymizationSpec.of(
        ADULT_QI, "occupation", "income", k=10, l=2, suppression_limit=0.01
    )
    algorithm = get_algorithm("mondrian")
    binned = discretize(adult, ["age"], "income")
    release = algorithm.anonymize(binned.table, spec, np.random.default_rng(0))
    tables = {name: frame.astype(str) for name, frame in release.tables.items()}

    def now() -> dict:
        utility, _ = utility_report(
            adult,
            tables,
            algorithm=algorithm,
            spec=spec,
            discretize_settings={"method": "mdl", "n_bins": 5, "columns": None},
            test_size=0.3,
            seed=0,
            evidence=release.evidence,
        )
        return utility

    def before() -> dict:
        def anonymize(train: pd.DataFrame) -> pd.DataFrame:
            cut = apply_cut_points(train, binned.cut_points)  # fitted on all rows
            return algorithm.anonymize(cut, spec, np.random.default_rng(0)).table

        holdout = holdout_utility(adult, anonymize, target="income", seed=0)
        render_report_html(
            build_utility(adult, tables, spec, holdout, release.evidence), title="x"
        )
        return holdout

    times_new, times_old = [], []
    for _ in range(repeats):
        seconds, utility = _timed(now)
        times_new.append(seconds)
        seconds, old = _timed(before)
        times_old.append(seconds)
    seconds_new = statistics.median(times_new)
    seconds_old = statistics.median(times_old)
    cuts = utility["holdout"]["preprocessing"]["cut_points"]["age"]
    return [
        (
            "adult",
            len(adult),
            "release report (utility_report): hold-out + loss + page",
            seconds_new,
        ),
        (
            "adult",
            len(adult),
            "  accuracy on release [95% CI]",
            _accuracies(utility["holdout"]),
        ),
        (
            "adult",
            len(adult),
            "  age cut points fitted on the training split",
            len(cuts),
        ),
        (
            "adult",
            len(adult),
            "release report, protocol before (cuts fitted on all rows)",
            seconds_old,
        ),
        ("adult", len(adult), "  accuracy on release [95% CI]", _accuracies(old)),
        (
            "adult",
            len(adult),
            "  age cut points fitted on all rows",
            len(binned.cut_points["age"]),
        ),
    ]


def _two_projections(adult: pd.DataFrame) -> list[tuple]:
    """The hold-out of a two-projection release (harness timing, no anonymization)."""
    first, second = list(ADULT_QI[:3]), list(ADULT_QI[3:])

    def project(train: pd.DataFrame) -> list[pd.DataFrame]:
        return [train[[*first, "income"]], train[[*second, "income"]]]

    seconds, holdout = _timed(
        lambda: holdout_utility(adult, project, target="income", seed=0)
    )
    per_view = "; ".join(
        f"{m.replace('_', ' ')}: "
        + ", ".join(f"{100 * a:.2f}" for a in s["per_view"].values())
        for m, s in holdout["accuracy"].items()
    )
    return [
        (
            "adult",
            len(adult),
            "hold-out, two projections (3 + 4 QIs), 3 models, one run",
            seconds,
        ),
        ("adult", len(adult), "  combined accuracy [95% CI]", _accuracies(holdout)),
        ("adult", len(adult), "  each projection alone", per_view),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()

    adult = datasets.load("adult")
    sizes = {"adult": adult}
    if not args.quick:
        sizes["adult x10"] = pd.concat([adult] * 10, ignore_index=True)
    spec = AnonymizationSpec.of(
        quasi_identifiers=QI, sensitive_attribute=None, target="income", k=1
    )
    rows = []
    for label, table in sizes.items():
        release = _as_ranges(table)
        featurizer = CellFeaturizer(exclude=["income"]).fit(table)
        mdl = discretize(table, ADULT_NUMERIC, "income")
        cases = {
            "MDL cut points, 6 numeric columns": lambda t=table: discretize(
                t, ADULT_NUMERIC, "income"
            ),
            "equal-frequency (10 bins), 6 numeric columns": lambda t=table: discretize(
                t, ADULT_NUMERIC, None, method="equal-frequency", n_bins=10
            ),
            "apply saved MDL cut points": lambda t=table, m=mdl: apply_cut_points(
                t, m.cut_points
            ),
            "information loss (NCP, DM, CM, suppressed)": lambda t=table, r=release: (
                information_loss(t, r, spec)
            ),
            "featurize the release": lambda r=release, f=featurizer: f.transform(r),
        }
        for name, fn in cases.items():
            rows.append((label, len(table), name, _median_seconds(fn, args.repeats)))
        rows.append(
            (
                label,
                len(table),
                "MDL cuts per column",
                str({c: len(v) for c, v in mdl.cut_points.items()}),
            )
        )
    holdout = _median_seconds(
        lambda: holdout_utility(adult, _as_ranges, target="income", seed=0),
        args.repeats,
    )
    rows.append(
        ("adult", len(adult), "hold-out utility, 3 models x 2 trainings", holdout)
    )
    rows.extend(_default_release_report(adult, args.repeats))
    rows.extend(_two_projections(adult))

    load = Path("/proc/loadavg").read_text().split()[:3]
    lines = [
        "# Discretization and utility metrics",
        "",
        "Command: `uv run python benchmarks/bench_utility.py"
        + (" --quick" if args.quick else "")
        + "`",
        (
            f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}; load average at the end: "
            f"{' '.join(load)} (the machine is shared: timings are noisy)."
        ),
        (
            f"Date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}; "
            f"medians of {args.repeats} runs."
        ),
        "",
        "| data | rows | operation | median |",
        "|---|---:|---|---:|",
    ]
    for label, n, name, value in rows:
        shown = f"{value * 1000:.1f} ms" if isinstance(value, float) else value
        n = f"{n:,}" if not name.startswith("  ") else ""
        lines.append(f"| {label} | {n} | {name.strip()} | {shown} |")
    text = "\n".join(lines) + "\n"
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
