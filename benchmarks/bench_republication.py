"""Three monthly releases of a changing Adult table: differencing leaks with and without hold-back.

Month 1 releases a seeded 96 % of Adult (46,888 rows), month 2 all 48,842
rows (the 1,954 others arrive), month 3 month 2 without a seeded 2 % (people
leave) plus 3 % newcomers (rows of month 2 copied with a fresh seeded
identity: their quasi-identifiers and sensitive value are those of real rows,
which is what newcomers look like to the release). Each month is released
with the shipped Adult configuration (k = 10, distinct l = 2 of occupation)
into one output directory, once with ``republication: {policy: off}`` and
once with the default ``hold-back``.

The attacker reads the released files only: for every class present in two
consecutive releases, the rows only added (only removed) are the newcomers
(leavers) of that class; a newcomer whose added group holds one sensitive
value is disclosed with certainty, one whose value makes up more than 1/l of
the group is disclosed above 1/l. Also measured: rows held back, the hold-out
accuracy of the release (utility report, C4.5-like tree) with and without the
policy, and the time of the differencing check next to the anonymization on
Adult x10.

The accuracy cost of hold-back: a C4.5-like tree trained on each month's
*published* file (what an analyst receives; the utility report re-makes the
release on a training split and does not see the hold-back), evaluated on the
month's own original rows, the same rows for every policy and seed.

The composition attack: every row carries a record id (a person of Adult
keeps one id in every month; month 3's newcomers get fresh ids). An attacker
who knows a person's quasi-identifiers, and that the person is in several
releases, intersects the occupations of the classes that contain the person
in each release (:func:`ppdm.verify.composition.person_values`). Counted per month
against the earlier months: persons left with fewer than l common values,
with one, and those the month brought below l. A third policy releases with
``republication: {record_key: record-id}`` (role ``identifying``, never
released; a copy of the Adult contract with that column is written to the
temporary directory), which holds back by composition too. A fourth
releases with ``republication: {policy: consistent}`` (rows recoded into the
previous month's classes, then hold-back).

Run from the repository root::

    uv run python benchmarks/bench_republication.py \\
        --algorithms mondrian,lattice-optimal --out benchmarks/results/republication.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ppdm import pipeline
from ppdm.config import default_config, parse_config
from ppdm.generalization.hierarchies import load_hierarchies
from ppdm.prepare import datasets
from ppdm.utility.loss import covers_from_hierarchies
from ppdm.verify.certificate import read_released_table
from ppdm.verify.differencing import class_changes

KEY = "record-id"
#: Policies run: (label, republication settings).
POLICIES = (
    ("off", {"policy": "off"}),
    ("hold-back", {"policy": "hold-back"}),
    ("hold-back + record key", {"policy": "hold-back", "record_key": KEY}),
    ("consistent", {"policy": "consistent"}),
)


def months(seed: int) -> list[pd.DataFrame]:
    """The three monthly tables (see the module docstring), with a record id."""
    rng = np.random.default_rng(seed)
    whole = datasets.load("adult").reset_index(drop=True)
    n = len(whole)
    whole.insert(0, KEY, [f"R{i:05d}" for i in range(n)])
    first = whole.iloc[np.sort(rng.choice(n, size=round(0.96 * n), replace=False))]
    leaving = rng.choice(n, size=round(0.02 * n), replace=False)
    stay = whole.drop(index=leaving)
    arrive = whole.iloc[rng.choice(n, size=round(0.03 * n), replace=False)].copy()
    arrive[KEY] = [f"N{i:05d}" for i in range(len(arrive))]  # fresh identities
    third = pd.concat([stay, arrive], ignore_index=True)
    return [first.reset_index(drop=True), whole, third]


def keyed_contract(root: Path) -> Path:
    """The shipped Adult contract plus the record id column, in ``root``."""
    from ppdm import resources

    shipped = resources.schema_dir("adult")
    folder = root / "adult-keyed"
    folder.mkdir(exist_ok=True)
    text = (shipped / "schema.yaml").read_text()
    head, columns = text.split("columns:\n", 1)
    (folder / "schema.yaml").write_text(
        head + f"columns:\n  {KEY}:\n    dtype: string[pyarrow]\n" + columns
    )
    suite = json.loads((shipped / "suite.json").read_text())
    for expectation in suite["expectations"]:
        kind = expectation.get("type") or expectation.get("expectation_type")
        if kind == "expect_table_columns_to_match_set":
            kwargs = expectation.get("kwargs", expectation)
            kwargs["column_set"] = [KEY, *kwargs["column_set"]]
    (folder / "suite.json").write_text(json.dumps(suite, indent=2))
    return folder


def published_accuracy(
    release: pd.DataFrame, original: pd.DataFrame, target: str, covers, seed: int
) -> float:
    """A tree trained on the published file, on the month's original rows."""
    from ppdm.utility.scoring import train_and_score

    scores = train_and_score(
        original,
        release,
        original,
        target=target,
        seed=seed,
        models=("decision_tree",),
        with_original=False,
        covers=covers,
    )
    return float(scores["decision_tree"]["anonymized"])


def composition(
    released: list[pd.DataFrame],
    frames: list[pd.DataFrame],
    qis: list[str],
    sensitive: str,
    requirement,
    covers,
) -> dict[str, int]:
    """The composition attack on the last release against the earlier ones."""
    from ppdm.verify.composition import check_composition, person_values

    values = []
    for release, frame in zip(released, frames, strict=False):
        people = frame[qis].astype("string").fillna("").astype(str)
        values.append(
            person_values(
                people, frame[KEY].tolist(), {"r": release}, qis, sensitive, covers
            )
        )
    (result,) = check_composition(
        {sensitive: values[-1]},
        [(f"m{i}", {sensitive: v}) for i, v in enumerate(values[:-1])],
        requirement,
    )
    return {
        "persons in several": result.n_persons,
        "persons < l common": result.n_below_l,
        "persons 1 common": result.n_certain,
        "persons brought < l": result.n_exposed,
    }


def disclosed(
    new: pd.DataFrame, old: pd.DataFrame, qis: list[str], sensitive: str, l_: int
) -> dict[str, int]:
    """Newcomers and leavers the two released tables disclose (attacker's view)."""
    change = class_changes(new, old, qis)
    figures = {}
    for label, rows in (("newcomers", change.added), ("leavers", change.removed)):
        if rows.empty:
            figures.update({f"{label} certain": 0, f"{label} > 1/l": 0, label: 0})
            continue
        group = rows.groupby(["_class", sensitive]).size()
        share = group / group.groupby(level="_class").transform("sum")
        figures[label] = int(len(rows))
        figures[f"{label} certain"] = int(group[share >= 1.0].sum())
        figures[f"{label} > 1/l"] = int(group[share > 1.0 / l_].sum())
    return figures


def tables(release_dir: Path) -> pd.DataFrame:
    (path,) = sorted((release_dir / "data").glob("*.csv"))
    return read_released_table(path)


def run_series(
    algorithm: str,
    label: str,
    republication: dict,
    frames: list[pd.DataFrame],
    root: Path,
    seed: int,
):
    rows = []
    config = default_config("adult")
    qis = list(config.quasi_identifiers)
    sensitive = config.sensitive_attribute
    keyed = "record_key" in republication
    covers = covers_from_hierarchies(load_hierarchies(config.hierarchy_dir))
    released = []
    slug = label.replace(" ", "").replace("+", "-")
    for month, frame in enumerate(frames, start=1):
        source = root / f"{algorithm}-{slug}-month-{month}.csv"
        (frame if keyed else frame.drop(columns=KEY)).to_csv(source, index=False)
        data = config.model_dump(by_alias=True)
        if keyed:
            data["columns"] = {KEY: "identifying", **data["columns"]}
            data["schema"] = str(keyed_contract(root))
        data.update(
            algorithm=algorithm,
            source={"kind": "csv", "path": str(source)},
            output_dir=str(root / f"out-{algorithm}-{slug}"),
            work_dir=str(root / f"work-{algorithm}-{slug}"),
            republication=republication,
        )
        run = parse_config(data)
        started = time.perf_counter()
        outcome = pipeline.run_release(run)
        seconds = time.perf_counter() - started
        release = tables(outcome.release_dir)
        original = frame.drop(columns=KEY)
        row = {
            "algorithm": algorithm,
            "policy": label,
            "month": month,
            "rows in": len(frame),
            "rows released": len(release),
            "release s": round(seconds, 1),
            "tree accuracy (published file)": round(
                published_accuracy(release, original, config.target, covers, seed), 4
            ),
        }
        if released:
            row.update(disclosed(release, released[-1], qis, sensitive, config.l))
        released.append(release)
        if month > 1:
            row.update(
                composition(released, frames, qis, sensitive, run.requirement, covers)
            )
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def check_timing(frames: list[pd.DataFrame], root: Path) -> dict[str, float]:
    """The differencing check and Mondrian's anonymization on Adult x10."""
    config = default_config("adult")
    qis = list(config.quasi_identifiers)
    where = root / "out-mondrian-hold-back" / "adult"
    released = [
        tables(d)
        for d in sorted(where.iterdir() if where.is_dir() else [])
        if (d / "data").is_dir()
    ]
    if len(released) < 2:
        return {}
    big = [pd.concat([t] * 10, ignore_index=True) for t in released[:2]]
    started = time.perf_counter()
    class_changes(big[1], big[0], qis)
    check = time.perf_counter() - started
    from ppdm.algorithms import get_algorithm
    from ppdm.model import AnonymizationSpec

    table = pd.concat([frames[1]] * 10, ignore_index=True)
    spec = AnonymizationSpec(requirement=config.requirement, target=config.target)
    numeric = [q for q in qis if pd.api.types.is_numeric_dtype(table[q])]
    for q in numeric:  # the release bins numeric QIs; equal-width 10 bins here
        table[q] = pd.cut(table[q], 10).astype(str)
    started = time.perf_counter()
    get_algorithm("mondrian").anonymize(table, spec, np.random.default_rng(0))
    anonymize = time.perf_counter() - started
    return {
        "rows": len(big[1]),
        "differencing check s": round(check, 2),
        "mondrian anonymize s": round(anonymize, 2),
    }


def _markdown(table: pd.DataFrame) -> str:
    cells = table.astype(object).where(table.notna(), "")
    head = "| " + " | ".join(map(str, table.columns)) + " |"
    rule = "|" + "---|" * len(table.columns)
    body = ["| " + " | ".join(map(str, row)) + " |" for row in cells.to_numpy()]
    return "\n".join([head, rule, *body])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithms", default="mondrian,lattice-optimal")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--policies",
        default=",".join(label for label, _ in POLICIES),
        help="comma-separated policy labels to run",
    )
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/republication.md")
    )
    args = parser.parse_args(argv)
    load_start = os.getloadavg()[0]
    frames = months(args.seed)
    results = []
    with tempfile.TemporaryDirectory(prefix="ppdm-series-") as tmp:
        root = Path(tmp)
        for algorithm in args.algorithms.split(","):
            for label, republication in POLICIES:
                if label not in args.policies.split(","):
                    continue
                results.extend(
                    run_series(algorithm, label, republication, frames, root, args.seed)
                )
        timing = check_timing(frames, root)
    table = pd.DataFrame(results).convert_dtypes()  # counts as integers
    lines = [
        "# Three monthly releases of a changing Adult table",
        "",
        "Command: `uv run python benchmarks/bench_republication.py "
        f"--algorithms {args.algorithms} --seed {args.seed} "
        f"--policies '{args.policies}'`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{sys.version.split()[0]}; load average {load_start:.2f} at the start, "
        f"{os.getloadavg()[0]:.2f} at the end (timings are upper bounds).",
        "",
        "Month 1: 96 % of Adult; month 2: all 48,842 rows; month 3: month 2 less 2 %, "
        "plus 3 % newcomers. Shipped Adult configuration (k = 10, distinct l = 2 of "
        "occupation). Disclosure counted from two consecutive released files "
        "(newcomers / leavers of classes present in both; certain: their added "
        "(removed) group has one occupation; > 1/l: their occupation is more than "
        "half of the group). Tree accuracy: a C4.5-like tree trained on the "
        "published file, evaluated on the month's original rows. Composition: "
        "persons present in this month and an earlier one (by record id), by the "
        "occupations common to the classes that contain them in every month; "
        "'brought < l': fewer than l remain and this month removed some.",
        "",
        _markdown(table),
        "",
        "Differencing check vs anonymization on Adult x10:",
        "",
        "```",
        json.dumps(timing, indent=2),
        "```",
        "",
    ]
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
