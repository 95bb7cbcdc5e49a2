"""Tables the project has never seen: `ppdm init`, then `ppdm run`, publishes on the first try.

Three seeded tables shaped like the ones owners bring (a messy hospital
export with names, dates, zip codes and broken cells; a passenger list; an
employee table of continuous numbers), each through `ppdm init --target ...`
and `ppdm run` with every registered algorithm, as a user runs them (an
algorithm without l-diversity is asked for ``--l 1``, what its refusal tells
the owner). Every released cell is read: no identifier value, no exact date
of a quasi-identifier, ordered columns as ranges, never as sets of their
members' values; the verifier passes the release again.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ppdm.algorithms import ALGORITHMS
from ppdm.flows import init_command
from ppdm.flows.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from messy_hospital import messy_hospital  # noqa: E402
from own_tables import hr_like, titanic_like  # noqa: E402

TABLES = {
    "hospital": (lambda: messy_hospital(1500, seed=7), "readmitted"),
    "titanic": (titanic_like, "survived"),
    "hr": (hr_like, "Attrition"),
}
DATES = {"birth_date": "%Y-%m-%d", "admission_date": "%d.%m.%Y"}
# The default algorithm on the hospital export runs in the README's command;
# the rest of the grid in the slow stage.
FAST = {("hospital", "mondrian")}


@pytest.fixture(scope="module")
def initialised(tmp_path_factory):
    """name -> (source table, configuration `ppdm init` wrote, its roles)."""
    made = {}
    for name, (make, target) in TABLES.items():
        folder = tmp_path_factory.mktemp(name)
        table = make()
        source = folder / f"{name}.csv"
        table.to_csv(source, index=False)
        args = [
            str(source),
            "--dataset",
            name,
            "--dir",
            str(folder),
            "--target",
            target,
        ]
        assert init_command.main(args) == 0
        config = folder / name / f"{name}.yaml"
        roles = yaml.safe_load(config.read_text())["columns"]
        made[name] = (
            pd.read_csv(source, dtype=str, keep_default_na=False),
            config,
            roles,
        )
    return made


def _members(cell: str) -> list[str]:
    return cell[1:-1].split("|") if cell.startswith("{") else [cell]


def _grid():
    for table in TABLES:
        for algorithm in sorted(ALGORITHMS):
            marks = [] if (table, algorithm) in FAST else [pytest.mark.slow]
            yield pytest.param(table, algorithm, marks=marks, id=f"{table}-{algorithm}")


@pytest.mark.flow
@pytest.mark.parametrize(("table_name", "algorithm"), list(_grid()))
def test_init_then_run_publishes_on_the_first_try(
    prefect_backend, initialised, table_name, algorithm, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("PPDM_AUDIT_KEY", "an owner's audit key of some length")
    table, config, roles = initialised[table_name]
    out = tmp_path / "releases"
    args = ["run", "--config", str(config), "--algorithm", algorithm, "--out", str(out),
            "--work-dir", str(tmp_path / "work"), "--quiet"]  # fmt: skip
    if "distinct-l-diversity" not in ALGORITHMS[algorithm].supported_models:
        args += ["--l", "1"]
    code = main(args)
    if code != 0 and ALGORITHMS[algorithm]().privacy_cost(len(table)) is not None:
        # A differentially private release is a whole-row one: init's roles
        # release columns as they are (a sensitive code, an income) that split
        # the rows below the k epsilon implies, or the private draw may leave
        # no class. The owner gets one line naming the cause; nothing is
        # published. (Its own configuration, e.g. configs/german-safepub.yaml,
        # releases.)
        (line,) = capsys.readouterr().err.strip().splitlines()[-1:]
        assert line.startswith(f"ppdm run: {algorithm}: no ") and "k = " in line
        assert not out.exists() or not any(out.rglob("manifest.json"))
        return
    assert code == 0, capsys.readouterr().err  # published on the first try
    (release_dir,) = (out / table_name).iterdir()
    assert main(["verify", str(release_dir)]) == 0

    identifying = [c for c, r in roles.items() if r == "identifying"]
    withheld = [c for c, r in roles.items() if r in ("identifying", "drop", "weight")]
    quasi = [c for c, r in roles.items() if r == "quasi_identifier"]
    secrets = {v for c in identifying for v in table[c] if len(v) > 3}
    for path in sorted((release_dir / "data").glob("*.csv")):
        released = pd.read_csv(path, dtype=str, keep_default_na=False)
        assert not {c.split("=")[0] for c in released.columns} & set(withheld), path
        cells = {m for cell in released.to_numpy().ravel() for m in _members(cell)}
        assert not cells & secrets, path.name  # no identifier value, in any cell
        for column in set(quasi) & set(released.columns):
            _assert_generalized_as_ordered(table, column, released[column])


def _assert_generalized_as_ordered(table, column, released) -> None:
    """No exact date; an ordered column's cell is never a set of its values."""
    if column in DATES:
        parsed = pd.to_datetime(table[column], format=DATES[column], errors="coerce")
        exact = set(table[column][parsed.notna()]) | set(
            parsed.dropna().dt.strftime("%Y-%m-%d")
        )
        members = {m for cell in released for m in _members(cell)}
        assert not members & exact, column
    numeric = pd.to_numeric(table[column].replace("", None), errors="coerce")
    if column in DATES or numeric.notna().mean() > 0.95:
        for cell in set(released):
            # a set may add the missing value to one range, never list values
            members = [m for m in _members(cell) if m not in ("", "*")]
            assert len(members) <= 1, (column, cell)


@pytest.fixture(scope="module")
def admissions(tmp_path_factory):
    """Admissions on 20 days, each shared by ~30 patients: a day alone is k-anonymous."""
    import numpy as np

    folder = tmp_path_factory.mktemp("admissions")
    rng = np.random.default_rng(4)
    n = 600
    days = pd.Timestamp("2024-03-01") + pd.to_timedelta(
        rng.integers(0, 20, n), unit="D"
    )
    table = pd.DataFrame(
        {
            "admission_date": days.strftime("%d.%m.%Y"),
            "sex": rng.choice(["F", "M"], n),
            "outcome": rng.choice(["home", "ward"], n),
        }
    )
    source = folder / "admissions.csv"
    table.to_csv(source, index=False)
    args = [str(source), "--dataset", "admissions", "--dir", str(folder),
            "--target", "outcome"]  # fmt: skip
    assert init_command.main(args) == 0
    return table, folder / "admissions" / "admissions.yaml"


# Algorithms that may keep a value as it is (a hierarchy's bottom level, a
# projection, a 0/1 feature): their exact dates leave as whole months.
@pytest.mark.flow
@pytest.mark.parametrize(
    "algorithm",
    [
        "lattice-optimal",
        *(
            pytest.param(a, marks=pytest.mark.slow)
            for a in ("pbg-ea", "dmpd", "fs-anonymity", "approx-ac")
        ),
    ],
)
def test_an_exact_date_kept_by_the_algorithm_leaves_as_its_month(
    prefect_backend, admissions, algorithm, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("PPDM_AUDIT_KEY", "an owner's audit key of some length")
    table, config = admissions
    out = tmp_path / "releases"
    args = ["run", "--config", str(config), "--algorithm", algorithm, "--out", str(out),
            "--work-dir", str(tmp_path / "work"), "--quiet"]  # fmt: skip
    assert main(args) == 0, capsys.readouterr().err
    (release_dir,) = (out / "admissions").iterdir()
    assert main(["verify", str(release_dir)]) == 0
    days = set(table["admission_date"]) | set(
        pd.to_datetime(table["admission_date"], format="%d.%m.%Y").dt.strftime(
            "%Y-%m-%d"
        )
    )
    for path in sorted((release_dir / "data").glob("*.csv")):
        released = pd.read_csv(path, dtype=str, keep_default_na=False)
        names = {c.split("=", 1)[-1] for c in released.columns}
        cells = {m for cell in released.to_numpy().ravel() for m in _members(cell)}
        assert not (cells | names) & days, path.name  # no day, as a cell or feature
        dated = [c for c in released.columns if c.startswith("admission_date")]
        assert dated, path.name  # the date was kept: as a month
        shown = (
            set(released["admission_date"])
            if "admission_date" in dated
            else {c.split("=", 1)[1] for c in dated}
        )
        assert shown <= {"[2024-03-01, 2024-03-31]", "*", "2024-03", "2024-Q1", "2024"}


@pytest.mark.flow
@pytest.mark.slow
def test_an_exact_date_kept_out_of_core_leaves_as_its_month(
    prefect_backend, admissions, tmp_path, monkeypatch, capsys
):
    """The Dask engine's recoding of the frequency table releases months too."""
    monkeypatch.setenv("PPDM_AUDIT_KEY", "an owner's audit key of some length")
    table, config = admissions
    dask_config = config.with_name("admissions-dask.yaml")
    dask_config.write_text(config.read_text() + "compute: {engine: dask}\n")
    out = tmp_path / "releases"
    args = ["run", "--config", str(dask_config), "--algorithm", "lattice-optimal",
            "--out", str(out), "--work-dir", str(tmp_path / "work"), "--quiet"]  # fmt: skip
    assert main(args) == 0, capsys.readouterr().err
    (release_dir,) = (out / "admissions").iterdir()
    assert main(["verify", str(release_dir)]) == 0
    from ppdm.release.data_files import read_released_table

    (table_dir,) = (release_dir / "data").iterdir()  # Parquet parts of one table
    released = read_released_table(table_dir)
    assert set(released["admission_date"]) <= {"[2024-03-01, 2024-03-31]", "*"}
    assert not set(released["admission_date"]) & set(table["admission_date"])
