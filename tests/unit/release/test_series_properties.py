"""Three releases of a changing table, every registered algorithm, the default policy.

Random tables (a seeded numpy generator, several seeds) lose and gain random
people between three monthly releases. Each month goes through the pipeline's
own step functions (:func:`ppdm.steps.discretize.discretize_step`,
:func:`~ppdm.steps.anonymize.anonymize_step`, :func:`~ppdm.steps.republication.republication_step`
under ``hold-back``), each release being an earlier release of the next. Then
the independent differencing check (:func:`ppdm.verify.differencing.check_against`)
reads every pair of the released tables and must find no leak, and the
rows add up: every row of the month is released or held back, and every
released row is a row of the candidate (none that left, none twice). A month
whose every class hold-back must withhold is refused (one line, nothing
published) and the next month is compared with the months published.

With a record key (``pid``, given to the republication step as the raw
snapshot, never to the algorithm), the composition check recomputed here
from the released files and the months (:func:`ppdm.verify.composition.person_values`,
:func:`~ppdm.verify.composition.check_composition`) finds no person brought below l
either, for every algorithm with l-diversity.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdm.algorithms import ALGORITHMS
from ppdm.exceptions import VerificationError
from ppdm.generalization.hierarchies import load_hierarchies
from ppdm.privacy import Requirement
from ppdm.release.artifacts import ArtifactStore
from ppdm.release.series import EarlierRelease
from ppdm.steps.anonymize import AnonymizeSettings, anonymize_step
from ppdm.steps.base import HierarchySource, candidate_files
from ppdm.steps.discretize import DiscretizeSettings, discretize_step
from ppdm.steps.republication import RepublicationSettings, republication_step
from ppdm.utility.loss import covers_from_hierarchies
from ppdm.verify.certificate import read_released_table
from ppdm.verify.composition import check_composition, person_values
from ppdm.verify.differencing import check_against, counterpart

QIS = ("age", "zip", "sex")
SEEDS = (11, 23, 37, 41, 53, 67)
#: Small searches, so that each release takes a fraction of a second.
PARAMS = {
    "dmpd": {"generations": 3, "population": 6, "n_folds": 2},
    "pbg-ea": {"generations": 3, "population": 6},
}
ZIPS = ("130", "148", "149", "150", "151")


#: The syntactic algorithms. A differentially private release is kept safe
#: across the series by its privacy budget (tests/flows/test_privacy_budget.py);
#: on these months of 60 people its derived k (32 and more) leaves no class to
#: release, so the hold-back properties have nothing to judge.
SERIES_ALGORITHMS = sorted(
    n for n in ALGORITHMS if ALGORITHMS[n]().privacy_cost(60) is None
)


def population(rng: np.random.Generator, n: int = 110) -> pd.DataFrame:
    """People with two categorical and one numeric quasi-identifier, a diagnosis, a class."""
    return pd.DataFrame(
        {
            "age": pd.array(rng.integers(20, 60, n), dtype="int64"),
            "zip": pd.array(rng.choice(ZIPS, n), dtype="string"),
            "sex": pd.array(rng.choice(["F", "M"], n), dtype="string"),
            "dx": pd.array(rng.choice(["flu", "cold", "hiv", "ulcer"], n)).astype(
                "string"
            ),
            "y": pd.array(rng.choice(["p", "n"], n), dtype="string"),
        }
    )


def months(seed: int) -> list[pd.DataFrame]:
    """Three months: a random start, then random departures and arrivals twice.

    Arrivals and departures are drawn between 0 and 12 people, so that some
    months bring fewer newcomers than k to a class (the growth leak) and some
    more.
    """
    rng = np.random.default_rng(seed)
    people = population(rng)
    present = np.sort(rng.choice(len(people), size=60, replace=False))
    out = [people.iloc[present]]
    for _ in range(2):
        absent = np.setdiff1d(np.arange(len(people)), present)
        leave = rng.choice(present, size=rng.integers(0, 13), replace=False)
        arrive = rng.choice(absent, size=rng.integers(0, 13), replace=False)
        present = np.sort(np.union1d(np.setdiff1d(present, leave), arrive))
        out.append(people.iloc[present])
    # ``pid`` follows each person (the record key); not given to the algorithm.
    return [
        m.assign(pid=[f"p{i}" for i in m.index]).reset_index(drop=True) for m in out
    ]


def write_hierarchies(directory: Path) -> Path:
    """The dataset's hierarchy files (the same for every month)."""
    directory.mkdir()
    (directory / "age.json").write_text(
        json.dumps(
            {"type": "intervals", "min": 20, "max": 59, "widths": [5, 10, 20]}
            | {"origin": 20}
        )
    )
    (directory / "zip.csv").write_text(
        "130;13*;*\n148;14*;*\n149;14*;*\n150;15*;*\n151;15*;*\n"
    )
    (directory / "sex.csv").write_text("F;*\nM;*\n")
    return directory


def requirement_for(name: str) -> Requirement:
    """k = 3, with distinct 2-diversity of ``dx`` where the algorithm supports it."""
    cls = ALGORITHMS[name]
    if "distinct-l-diversity" in cls.supported_models:
        return Requirement.of(QIS, "dx", k=3, l=2)
    return Requirement.of(QIS, "dx", k=3)


def released(files: dict[str, Path]) -> dict[str, pd.DataFrame]:
    return {name: read_released_table(path) for name, path in files.items()}


def rows(table: pd.DataFrame) -> Counter:
    return Counter(map(tuple, table.astype(str).to_numpy().tolist()))


def run_series(
    tmp_path: Path,
    name: str,
    seed: int,
    record_key: bool = False,
    policy: str = "hold-back",
):
    """The three releases of ``seed``'s months with ``name``, as the pipeline makes them.

    With ``record_key``, the republication step also gets the month with its
    ``pid`` column (the raw snapshot) and checks composition.
    """
    cls = ALGORITHMS[name]
    store = ArtifactStore(tmp_path / f"work-{name}-{seed}")
    source = HierarchySource.of(write_hierarchies(tmp_path / f"h-{name}-{seed}"))
    requirement = requirement_for(name)
    binned = cls.numeric_input == "binned"
    discretize = (
        DiscretizeSettings(
            dataset="d", method="equal-frequency", n_bins=3, quasi_identifiers=QIS
        )
        if binned
        else DiscretizeSettings(dataset="d", method="none")
    )
    anonymize = AnonymizeSettings(
        dataset="d",
        algorithm=name,
        params=PARAMS.get(name, {}),
        requirement=requirement,
        target="y",
        suppression_limit=0.0,
        seed=seed,
        hierarchies=source if cls.uses_hierarchies else None,
    )
    series: list[EarlierRelease] = []
    out = []
    for month, keyed in enumerate(months(seed), start=1):
        frame = keyed.drop(columns="pid")
        clean = store.put_table(frame, kind="t")
        table = discretize_step(discretize, store, clean)
        candidate = anonymize_step(anonymize, store, table.discretized).tables
        settings = RepublicationSettings(
            dataset="d",
            requirement=requirement,
            policy=policy,
            series=[r.to_dict() for r in series],
            seed=seed,
            hierarchies=source,
            record_key="pid" if record_key else None,
            anonymize=anonymize if policy == "consistent" else None,
        )
        raw = store.put_table(keyed, kind="raw") if record_key else None
        try:
            result = republication_step(
                settings,
                store,
                candidate,
                raw,
                None,
                clean,
                table.discretized,
            )
        except VerificationError as refused:
            # Every class of a table leaks and none can be released as it
            # was: the month is refused, and not an earlier release of the next.
            text = str(refused)
            assert "\n" not in text, text
            assert text.startswith("republication refused, nothing was published")
            out.append((keyed, released(candidate_files(candidate)), None, None))
            continue
        files = candidate_files(result.tables)
        series.append(
            EarlierRelease(
                f"m{month}",
                {n: (str(p), result.tables[n].sha256) for n, p in files.items()},
            )
        )
        out.append(
            (keyed, released(candidate_files(candidate)), released(files), result)
        )
    covers = covers_from_hierarchies(load_hierarchies(Path(source.directory)))
    return requirement, covers, out


_RUNS: dict[tuple[str, int, bool, str], tuple] = {}


@pytest.fixture
def series_of(tmp_path_factory):
    """``series_of(name, seed)``: the three releases, made once per test session."""

    def make(name: str, seed: int, record_key: bool = False, policy="hold-back"):
        if (name, seed, record_key, policy) not in _RUNS:
            _RUNS[name, seed, record_key, policy] = run_series(
                tmp_path_factory.mktemp("s"), name, seed, record_key, policy
            )
        return _RUNS[name, seed, record_key, policy]

    return make


def compared(later: dict, earlier: dict) -> set[str]:
    """Tables of ``later`` that have a counterpart (same columns) in ``earlier``."""
    return {n for n, t in later.items() if counterpart(n, t, earlier) is not None}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", SERIES_ALGORITHMS)
def test_hold_back_leaves_no_leak_and_loses_no_row(series_of, name, seed):
    requirement, covers, out = series_of(name, seed)
    releases = [tables for _, _, tables, _ in out if tables is not None]
    for later in range(1, len(releases)):
        for earlier in range(later):
            results = check_against(
                releases[later],
                releases[earlier],
                requirement,
                against=f"m{earlier + 1}",
                covers=covers,
            )
            assert not any(r.leaks for r in results), [r.describe() for r in results]
            # Every table with the same columns as an earlier one is compared;
            # the others (a projection or feature set chosen anew) are not.
            assert {r.table.split(" (as ")[0] for r in results} == compared(
                releases[later], releases[earlier]
            )
    for month, (frame, candidate, tables, result) in enumerate(out):
        if tables is None:  # refused (see run_series): the first month never is
            assert month > 0
            continue
        summary = result.summary
        assert sorted(tables) == sorted(candidate)
        before: Counter = Counter()
        for _, _, earlier, _ in out[:month]:
            for table in (earlier or {}).values():
                before |= rows(table)
        held = summary.get("by_table", {})
        for table_name, table in tables.items():
            # Every row of the month is in the candidate (no row suppressed away).
            assert len(candidate[table_name]) == len(frame)
            # What the release holds beyond the candidate was released before.
            assert not (rows(table) - rows(candidate[table_name])) - before
            counts = held.get(table_name, {})
            withheld = counts.get("rows_held_back", 0)
            restored = counts.get("rows_kept_from_earlier_releases", 0)
            # The counts add up: released = the month - held back + kept.
            assert len(table) == len(frame) - withheld + restored
            # Held back and kept, as persons (the columns that are not
            # quasi-identifiers): at least what the two multisets differ by.
            values = [c for c in table.columns if c not in QIS]
            mine, theirs = rows(table[values]), rows(candidate[table_name][values])
            assert sum((theirs - mine).values()) <= withheld
            assert sum((mine - theirs).values()) <= restored
            # No person beyond the candidate's: none that left, none twice (a
            # roll-up released as before shows the candidate's rows in the
            # earlier class's coarser cells).
            assert not mine - theirs and restored == 0
        assert summary["rows_held_back"] == sum(
            t["rows_held_back"] for t in held.values()
        )
        if month == 0:
            assert summary["against"] == [] and summary["rows_held_back"] == 0


@pytest.mark.parametrize("name", SERIES_ALGORITHMS)
def test_without_the_policy_the_same_months_leak(series_of, name):
    """The property has teeth: the candidates (before hold-back) leak for some seed.

    Feature columns (``releases == "columns"``) and projections are compared
    only when a month repeats an earlier month's columns; the seeds hold such
    months for every algorithm.
    """
    leaks = comparisons = 0
    for seed in SEEDS:
        requirement, covers, out = series_of(name, seed)
        for month in (1, 2):
            candidate = out[month][1]
            earlier = out[month - 1][2]
            if earlier is None:  # the month before was refused
                continue
            results = check_against(
                candidate, earlier, requirement, against="m", covers=covers
            )
            comparisons += len(results)
            leaks += sum(r.leaks for r in results)
    assert comparisons > 0 and leaks > 0


def composition_of(out, requirement, covers, releases=None):
    """Persons each month brings below l, recomputed from the files and the months."""
    values = []
    exposed = []
    for month, (keyed, _candidate, tables, _) in enumerate(out):
        if tables is None:  # refused: nothing published, nothing to compare
            continue
        shown = releases[month] if releases is not None else tables
        people = keyed[list(QIS)].astype(str)
        current = {"dx": person_values(people, keyed["pid"], shown, QIS, "dx", covers)}
        if values:
            (result,) = check_composition(current, values, requirement)
            exposed.append(result.n_exposed)
        # What the next month is compared with: what was released.
        values.append(
            (
                f"m{month}",
                {"dx": person_values(people, keyed["pid"], tables, QIS, "dx", covers)},
            )
        )
    return exposed


@pytest.mark.parametrize("seed", SEEDS[:4])
@pytest.mark.parametrize(
    "name",
    [
        n
        for n in SERIES_ALGORITHMS
        if "distinct-l-diversity" in ALGORITHMS[n].supported_models
    ],
)
def test_hold_back_with_a_record_key_leaves_no_composition_leak(series_of, name, seed):
    requirement, covers, out = series_of(name, seed, True)
    releases = [tables for _, _, tables, _ in out if tables is not None]
    assert composition_of(out, requirement, covers) == [0] * (len(releases) - 1)
    for later in range(1, len(releases)):
        for earlier in range(later):
            results = check_against(
                releases[later],
                releases[earlier],
                requirement,
                against=f"m{earlier + 1}",
                covers=covers,
            )
            assert not any(r.leaks for r in results), [r.describe() for r in results]
    for keyed, _candidate, tables, result in out:
        if tables is None:  # refused (see run_series)
            continue
        counts = result.summary.get("by_table", {})
        for table_name, table in tables.items():
            c = counts.get(table_name, {})
            assert len(table) == len(keyed) - c.get("rows_held_back", 0) + c.get(
                "rows_kept_from_earlier_releases", 0
            )


def test_without_the_composition_hold_back_the_candidates_expose_persons(series_of):
    """The composition property has teeth: some candidates bring persons below l."""
    exposed = 0
    for name in ALGORITHMS:
        if "distinct-l-diversity" not in ALGORITHMS[name].supported_models:
            continue
        for seed in SEEDS[:4]:
            requirement, covers, out = series_of(name, seed, True)
            candidates = [candidate for _, candidate, _, _ in out]
            exposed += sum(composition_of(out, requirement, covers, candidates))
    assert exposed > 0


TABLE_ALGORITHMS = [n for n in SERIES_ALGORITHMS if ALGORITHMS[n].releases == "table"]


@pytest.mark.parametrize("record_key", [False, True], ids=["no-key", "record-key"])
@pytest.mark.parametrize("seed", SEEDS[:3])
@pytest.mark.parametrize("name", TABLE_ALGORITHMS)
def test_consistent_releases_pass_and_leave_no_leak(series_of, name, seed, record_key):
    """The policy consistent: recoded into the last classes, then held back.

    With a record key, composition is held back too (for the algorithms with
    l-diversity, whose releases show the sensitive attribute's diversity).
    """
    requirement, covers, out = series_of(name, seed, record_key, "consistent")
    releases = [tables for _, _, tables, _ in out if tables is not None]
    if record_key:
        assert composition_of(out, requirement, covers) == [0] * (len(releases) - 1)
    seen: set[str] = set()
    for month, (keyed, _candidate, tables, result) in enumerate(out):
        seen |= set(keyed["pid"])
        if tables is None:  # refused (see run_series)
            continue
        for table_name, table in tables.items():
            # No person twice: never more rows than persons seen so far.
            assert len(table) <= len(seen)
            # Each release passes on its own (the verifier's own check) ...
            assert all(r.passed for r in requirement.check(table))
            counts = result.summary.get("by_table", {}).get(table_name, {})
            assert len(table) == len(keyed) - counts.get(
                "rows_held_back", 0
            ) + counts.get("rows_kept_from_earlier_releases", 0)
        if month:
            summary = result.summary
            assert summary["rows_recoded_into_earlier_classes"] + summary[
                "rows_anonymized_anew"
            ] == len(keyed)
    # ... and no two releases leak by differencing.
    for later in range(1, len(releases)):
        for earlier in range(later):
            results = check_against(
                releases[later],
                releases[earlier],
                requirement,
                against=f"m{earlier + 1}",
                covers=covers,
            )
            assert not any(r.leaks for r in results), [r.describe() for r in results]
