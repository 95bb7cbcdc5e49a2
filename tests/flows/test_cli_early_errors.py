"""A data owner's own table: mistakes refused by `ppdm init` and `ppdm run`'s pre-flight.

Each case runs the installed `ppdm` command on a real file and expects one
line on standard error, the documented exit code, no traceback and, on the
50,000-row table, the answer within 2 s of CPU (the run's Prefect steps never
start). CPU time rather than wall time is bounded: the test machine's cores
are shared, and the work done is what the check costs.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ppdm.config import load_config
from ppdm.preflight import preflight
from ppdm.prepare.dataset_folder import load_contract
from ppdm.prepare.ingest import load_source
from ppdm.prepare.validation import validate_table

PPDM = Path(sys.executable).with_name("ppdm")
ROWS = 50_000
BUDGET = 2.0  # seconds of CPU for a refusal on the 50,000-row table
INIT_USAGE, RUN_FAILED, RUN_USAGE = 2, 1, 2


def _table(rows: int, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 91, rows),
            "sex": rng.choice(["F", "M"], rows),
            "zip": rng.integers(13_000, 13_040, rows),
            "diagnosis": rng.choice(["flu", "asthma", "diabetes", "ulcer"], rows),
            "outcome": rng.choice(["good", "poor"], rows),
            "price": rng.integers(100, 900, rows) * 1.5,
        }
    )


def _ppdm(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run the command; return it with its wall-clock and CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [str(PPDM), *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    print(f"ppdm {args[0]}: exit {done.returncode}, {wall:.2f} s wall, {cpu:.2f} s CPU")
    return done, wall, cpu


def _refused(done: subprocess.CompletedProcess, code: int, command: str) -> str:
    """The one line on standard error of a refusal with ``code``."""
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"ppdm {command}: ")
    return line


@pytest.fixture(scope="module")
def owner(tmp_path_factory) -> Path:
    """A folder with the owner's 50,000-row clinic.csv."""
    folder = tmp_path_factory.mktemp("owner")
    _table(ROWS).to_csv(folder / "clinic.csv", index=False)
    return folder


@pytest.fixture(scope="module")
def configured(owner) -> Path:
    """The configuration `ppdm init` writes for clinic.csv (price dropped)."""
    done, _, _ = _ppdm("init", "clinic.csv", "--dataset", "clinic", cwd=owner)
    assert done.returncode == 0, done.stderr
    path = owner / "clinic" / "clinic.yaml"
    data = yaml.safe_load(path.read_text())
    assert data["columns"]["outcome"] == "target"
    return path


def _config_for(
    configured: Path,
    source: Path,
    name: str,
    roles: dict[str, str] | None = None,
    **changes,
) -> Path:
    """A copy of the written configuration on another source file."""
    data = yaml.safe_load(configured.read_text())
    data["source"]["path"] = str(source)
    data["columns"]["price"] = "drop"
    data["columns"].update(roles or {})
    data.update(changes)
    path = configured.with_name(f"{name}.yaml")
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


# -- ppdm init ------------------------------------------------------------------
def test_init_refuses_a_continuous_target(owner):
    done, _, cpu = _ppdm(
        "init", "clinic.csv", "--dataset", "p", "--target", "price", cwd=owner
    )
    line = _refused(done, INIT_USAGE, "init")
    assert line == (
        f"ppdm init: target 'price' of {owner / 'clinic.csv'} looks continuous: 800 "
        "distinct values, numbers with fractions; an analyst's class label has few "
        "values: bin it in the source or pick another column (--target COL)"
    )
    assert cpu < BUDGET
    assert not (owner / "p").exists()


def test_init_refuses_a_class_too_small_for_the_utility_split(owner):
    table = _table(ROWS)
    table.loc[7, "outcome"] = "relapse"
    table.to_csv(owner / "rare.csv", index=False)
    done, _, cpu = _ppdm("init", "rare.csv", "--dataset", "rare", cwd=owner)
    line = _refused(done, INIT_USAGE, "init")
    assert "target 'outcome' of" in line
    assert "1 class has fewer than 2 rows ('relapse': 1)" in line
    assert cpu < BUDGET


GONE = [4, 9, 1_500]


@pytest.fixture
def gaps(tmp_path) -> tuple[Path, subprocess.CompletedProcess]:
    """`ppdm init` on a table whose target is missing in rows ``GONE``."""
    table = _table(2_000)
    table["outcome"] = table["outcome"].astype(object)
    table.loc[GONE, "outcome"] = None
    table.to_csv(tmp_path / "gaps.csv", index=False)
    done, _, _ = _ppdm("init", "gaps.csv", "--dataset", "gaps", cwd=tmp_path)
    return tmp_path, done


def test_init_quarantines_rows_without_a_target(gaps):
    folder, done = gaps
    assert done.returncode == 0
    (line,) = done.stderr.splitlines()
    assert line == (
        f"ppdm init: target 'outcome' of {folder / 'gaps.csv'} has no value in 3 "
        "of 2,000 rows (lines 6, 11, 1502); schema.yaml requires a value, so `ppdm "
        "run` sets those rows aside in quarantine"
    )
    schema = yaml.safe_load((folder / "gaps" / "schema.yaml").read_text())
    assert schema["columns"]["outcome"].get("nullable", False) is False  # required
    preflight(load_config(folder / "gaps" / "gaps.yaml"))  # no refusal


@pytest.mark.slow
def test_validation_quarantines_exactly_the_rows_without_a_target(gaps):
    folder, done = gaps
    assert done.returncode == 0
    contract = load_contract(folder / "gaps")
    outcome = validate_table(
        load_source("csv", folder / "gaps.csv"), contract.schema, contract.suite
    )
    assert sorted(outcome.quarantine["_source_row"]) == GONE
    assert len(outcome.clean) == 2_000 - len(GONE)


def test_init_refuses_a_target_missing_in_too_many_rows(owner):
    table = _table(ROWS)
    table["outcome"] = table["outcome"].where(np.arange(ROWS) % 10 != 3)
    table.to_csv(owner / "holes.csv", index=False)
    done, _, cpu = _ppdm("init", "holes.csv", "--dataset", "holes", cwd=owner)
    line = _refused(done, INIT_USAGE, "init")
    assert "has no value in 5,000 of 50,000 rows (lines 5, 15, 25, 35, 45, ...)" in line
    assert "10.0%, more than the 5% validation may set aside" in line
    assert cpu < BUDGET


def test_init_refuses_fewer_rows_than_k(tmp_path):
    _table(3).to_csv(tmp_path / "tiny.csv", index=False)
    done, _, _ = _ppdm("init", "tiny.csv", "--dataset", "tiny", cwd=tmp_path)
    line = _refused(done, INIT_USAGE, "init")
    assert line == (
        f"ppdm init: source {tmp_path / 'tiny.csv'} holds 3 rows, fewer than k = 5: "
        "k-anonymity hides every person among at least k rows, so this table "
        "cannot be released; extract more rows"
    )
    assert not (tmp_path / "tiny").exists()


def test_init_asks_for_the_quasi_identifiers_it_cannot_guess(tmp_path):
    rng = np.random.default_rng(3)
    german = pd.DataFrame(
        {
            "wohnort": rng.choice(["Nord", "Sued", "Ost", "West"], 400),
            "familienstand": rng.choice(["ledig", "verheiratet"], 400),
            "ergebnis": rng.choice(["gut", "schlecht"], 400),
        }
    )
    german.to_csv(tmp_path / "de.csv", index=False)
    done, _, _ = _ppdm("init", "de.csv", "--dataset", "de", cwd=tmp_path)
    line = _refused(done, INIT_USAGE, "init")
    assert "looks like a quasi-identifier" in line
    assert line.endswith(
        "name them with --quasi-identifiers A,B,C; columns: wohnort, familienstand, "
        "ergebnis"
    )
    done, _, _ = _ppdm(
        "init", "de.csv", "--dataset", "de", "--target", "ergebnis",
        "--quasi-identifiers", "wohnort,familienstand", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    config = load_config(tmp_path / "de" / "de.yaml")
    assert config.quasi_identifiers == ["wohnort", "familienstand"]


def test_init_names_the_closest_column(owner):
    done, _, _ = _ppdm(
        "init", "clinic.csv", "--dataset", "x", "--target", "outcom", cwd=owner
    )
    line = _refused(done, INIT_USAGE, "init")
    assert line == (
        "ppdm init: --target names 'outcom', not a column of the table (did you "
        "mean 'outcome'?); columns: age, sex, zip, diagnosis, outcome, price"
    )


@pytest.mark.parametrize(
    ("name", "sep", "written"),
    [("semi.csv", ";", '";"'), ("tabs.tsv", "\t", '"\\t"'), ("bars.csv", "|", '"|"')],
)
def test_init_writes_the_delimiter_and_run_reads_with_it(tmp_path, name, sep, written):
    _table(300).to_csv(tmp_path / name, index=False, sep=sep)
    done, _, _ = _ppdm("init", name, "--dataset", "semi", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    path = tmp_path / "semi" / "semi.yaml"
    assert f"  delimiter: {written}\n" in path.read_text()
    assert load_config(path).source.delimiter == sep
    # The pre-flight reads the file with it: it gets to count the rows.
    done, _, _ = _ppdm("run", "--config", str(path), "--k", "400", cwd=tmp_path)
    line = _refused(done, RUN_FAILED, "run")
    assert "k = 400 is above the 300 rows the source" in line


def test_a_comma_file_gets_no_delimiter_key(configured):
    assert "delimiter" not in yaml.safe_load(configured.read_text())["source"]


def test_spreadsheets_and_other_formats_are_refused_in_one_line(tmp_path, configured):
    with zipfile.ZipFile(tmp_path / "book.xlsx", "w") as book:
        book.writestr("xl/workbook.xml", "<workbook/>")
    done, _, _ = _ppdm("init", "book.xlsx", "--dataset", "book", cwd=tmp_path)
    line = _refused(done, INIT_USAGE, "init")
    assert line.startswith(
        "ppdm init: source 'book.xlsx': an Excel workbook: export it as CSV (UTF-8); "
        "a file must end in .csv, .tsv, .parquet, .pq"
    )
    (tmp_path / "rows.json").write_text("[]")
    done, _, _ = _ppdm("init", "rows.json", "--dataset", "rows", cwd=tmp_path)
    assert "a JSON file: export it as CSV" in _refused(done, INIT_USAGE, "init")
    # A workbook saved under a .csv name: its bytes give it away.
    disguised = tmp_path / "book.csv"
    disguised.write_bytes((tmp_path / "book.xlsx").read_bytes())
    config = _config_for(configured, disguised, "disguised")
    done, _, cpu = _ppdm("run", "--config", str(config), cwd=tmp_path)
    line = _refused(done, RUN_FAILED, "run")
    assert line == (
        f"ppdm run: source {disguised}: a spreadsheet (a zip or an OLE file), not "
        "text; ppdm reads CSV text (.csv), Parquet files (.parquet, .pq) and "
        "database queries: export the table as CSV (UTF-8) and name that file"
    )


# -- ppdm run: the pre-flight -----------------------------------------------------
def test_run_refuses_a_continuous_target_before_any_step(owner, configured):
    config = _config_for(
        configured,
        owner / "clinic.csv",
        "price",
        roles={"price": "target", "outcome": "drop"},
    )
    done, _, cpu = _ppdm("run", "--config", str(config), "--out", "out", cwd=owner)
    line = _refused(done, RUN_FAILED, "run")
    assert line == (
        f"ppdm run: target 'price' of {owner / 'clinic.csv'} looks continuous: 800 "
        "distinct values, numbers with fractions; an analyst's class label has few "
        "values: bin it in the source or pick another column"
    )
    assert cpu < BUDGET and not (owner / "out").exists()


def test_run_refuses_rows_without_a_class_that_the_schema_lets_through(
    owner, configured, tmp_path
):
    table = _table(ROWS)
    table["outcome"] = table["outcome"].where(~np.isin(np.arange(ROWS), [3, 70]))
    table.to_csv(owner / "two_gaps.csv", index=False)
    config = _config_for(configured, owner / "two_gaps.csv", "two_gaps")
    # A schema written before ppdm init required the target: it is nullable.
    schema = configured.with_name("schema.yaml")
    written = schema.read_text()
    data = yaml.safe_load(written)
    data["columns"]["outcome"]["nullable"] = True
    try:
        schema.write_text(yaml.safe_dump(data, sort_keys=False))
        done, _, cpu = _ppdm("run", "--config", str(config), cwd=owner)
    finally:
        schema.write_text(written)
    line = _refused(done, RUN_FAILED, "run")
    assert line.startswith(
        f"ppdm run: target 'outcome' of {owner / 'two_gaps.csv'} has no value in 2 of "
        f"50,000 rows (lines 5, 72), and {schema} lets such rows through validation"
    )
    assert "declare 'outcome' `nullable: false` there" in line
    assert cpu < BUDGET
    # With the schema as ppdm init writes it, those rows go to quarantine: no refusal.
    preflight(load_config(config))


def test_run_refuses_more_rows_without_a_class_than_validation_may_reject(
    owner, configured
):
    table = _table(ROWS)
    table["outcome"] = table["outcome"].where(np.arange(ROWS) % 10 != 0)
    table.to_csv(owner / "tenth.csv", index=False)
    config = _config_for(configured, owner / "tenth.csv", "tenth")
    done, _, cpu = _ppdm("run", "--config", str(config), cwd=owner)
    line = _refused(done, RUN_FAILED, "run")
    assert "has no value in 5,000 of 50,000 rows (lines 2, 12, 22, 32, 42, ...)" in line
    assert line.endswith(
        "validation would quarantine 10.0% of the rows, above "
        "validation.max_rejected_fraction = 0.05; fill in or drop those rows in the "
        "source, or pick another column"
    )
    assert cpu < BUDGET


def test_run_refuses_a_class_too_small_for_the_utility_split(owner, configured):
    table = _table(ROWS)
    table.loc[[10, 20], "outcome"] = ["relapse", "remission"]
    table.to_csv(owner / "two_rare.csv", index=False)
    config = _config_for(configured, owner / "two_rare.csv", "two_rare")
    done, _, cpu = _ppdm("run", "--config", str(config), cwd=owner)
    line = _refused(done, RUN_FAILED, "run")
    assert (
        "2 classes have fewer than 2 rows ('relapse': 1, 'remission': 1), and the "
        "utility report's stratified hold-out split needs at least 2 rows of every "
        "class" in line
    )
    assert cpu < BUDGET


def test_run_says_did_you_mean(owner, configured):
    config = _config_for(configured, owner / "clinic.csv", "typos", sed=3)
    done, _, _ = _ppdm("run", "--config", str(config), cwd=owner)
    line = _refused(done, RUN_USAGE, "run")
    assert "unknown key 'sed' (did you mean 'seed'?); allowed keys: " in line
    done, _, _ = _ppdm(
        "run", "--config", str(configured), "--algorithm", "mondrain", cwd=owner
    )
    line = _refused(done, RUN_USAGE, "run")
    assert "algorithm 'mondrain' is not registered (did you mean 'mondrian'?)" in line
    data = yaml.safe_load(configured.read_text())
    columns = {("agee" if c == "age" else c): r for c, r in data["columns"].items()}
    columns["price"] = "drop"
    config = _config_for(configured, owner / "clinic.csv", "column", columns=columns)
    done, _, _ = _ppdm("run", "--config", str(config), cwd=owner)
    line = _refused(done, RUN_USAGE, "run")
    assert (
        "quasi_identifiers names 'agee', not a column of the source; did you " in line
    )
    assert "mean 'age'?" in line


def test_run_refuses_a_dask_release_into_a_series_before_any_step(owner, configured):
    """Next month's release of a table out of core, into the output directory that
    holds this month's: checking it against the earlier release runs in memory,
    which the Dask engine does not do; the refusal comes before any flow starts."""
    _table(5_000, seed=4).to_csv(owner / "month.csv", index=False)
    first = _config_for(configured, owner / "month.csv", "month")
    done, _, _ = _ppdm("run", "--config", str(first), "--out", "series", cwd=owner)
    assert done.returncode == 0, done.stderr
    second = _config_for(
        configured, owner / "month.csv", "month_dask", compute={"engine": "dask"}
    )
    done, _, cpu = _ppdm("run", "--config", str(second), "--out", "series", cwd=owner)
    line = _refused(done, RUN_USAGE, "run")
    assert line == (
        "ppdm run: the output directory already holds releases of 'clinic'; checking "
        "a new release against them (republication) runs in memory, which the Dask "
        "engine does not do yet: use compute: {engine: pandas}, or another output_dir"
    )
    assert "Flow run" not in done.stdout + done.stderr
    assert cpu < BUDGET
