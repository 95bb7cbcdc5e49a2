"""A hospital's table in a real PostgreSQL server, released through ``ppdm`` as a user runs it.

The session's throwaway server (``postgres_server`` in ``tests/conftest.py``)
holds the seeded messy hospital table of ``tests/messy_hospital.py`` with
database types (birth dates as ``date``, stays as ``integer``, zips as
``text`` with their leading zeros). ``ppdm init`` writes the dataset folder
from the URL and a query, with the password kept in an environment variable;
``ppdm run`` releases, ``ppdm verify`` re-checks; then rows are inserted (next
month's newcomers) and the same configuration runs again: the series check
compares the new release with the first, as with files. Each way the source
can fail is one line naming the source, with the password masked.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ppdm.config import load_config
from ppdm.flows import init_command
from ppdm.flows.cli import main
from ppdm.verify.certificate import read_released_table
from ppdm.verify.differencing import check_against

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from messy_hospital import messy_hospital  # noqa: E402

PASSWORD_VARIABLE = "PPDM_TEST_HOSPITAL_DB_PASSWORD"
COLUMNS = "patient_id, name, email, zip, birth_date, admission_date, sex, ethnicity, diagnosis_code, readmitted"  # noqa: E501
QUERY = f"SELECT {COLUMNS} FROM visits ORDER BY patient_id"


def _insert(server, database: str, table: pd.DataFrame) -> None:
    """Insert the messy table's rows with database types (bad cells become NULL)."""
    birth = pd.to_datetime(table["birth_date"], format="%Y-%m-%d", errors="coerce")
    stay = pd.to_numeric(table["length_of_stay"], errors="coerce")
    rows = [
        (
            r.patient_id, r.name, r.email, r.zip,
            None if pd.isna(b) else b.date(), r.admission_date, r.sex, r.ethnicity,
            r.insurance, None if pd.isna(s) else int(s), int(r.num_prior_visits),
            r.diagnosis_code, r.readmitted,
        )
        for r, b, s in zip(table.itertuples(), birth, stay, strict=True)
    ]  # fmt: skip
    with server.connect(database) as connection, connection.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO visits VALUES "
            "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            rows,
        )


@pytest.fixture(scope="module")
def hospital(postgres_server) -> str:
    """A database with this month's visits (3,000 rows); its name."""
    database = postgres_server.create_database("hospital")
    with postgres_server.connect(database) as connection:
        connection.execute(
            "CREATE TABLE visits (patient_id text PRIMARY KEY, name text, "
            "email text, zip text, birth_date date, admission_date text, sex text, "
            "ethnicity text, insurance text, length_of_stay integer, "
            "num_prior_visits integer, diagnosis_code text, readmitted text)"
        )
    _insert(postgres_server, database, messy_hospital(3000, seed=7))
    return database


@pytest.fixture
def password_in_environment(postgres_server, monkeypatch) -> str:
    monkeypatch.setenv(PASSWORD_VARIABLE, postgres_server.password)
    return f"env:{PASSWORD_VARIABLE}"


def _init(postgres_server, hospital, where: Path, capsys) -> Path:
    url = postgres_server.url(hospital, password="")
    args = ["init", url, "--query", QUERY, "--password", f"env:{PASSWORD_VARIABLE}"]
    args += ["--dataset", "hospital", "--dir", str(where), "--target", "readmitted"]
    assert main(args) == 0, capsys.readouterr().err
    return Path(capsys.readouterr().out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def initialised(postgres_server, hospital, tmp_path_factory) -> Path:
    """The dataset folder ``ppdm init`` writes, once per module (copied by tests)."""
    where = tmp_path_factory.mktemp("init")
    url = postgres_server.url(hospital, password="")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(PASSWORD_VARIABLE, postgres_server.password)
        code = init_command.main(
            [url, "--query", QUERY, "--password", f"env:{PASSWORD_VARIABLE}"]
            + ["--dataset", "hospital", "--dir", str(where), "--target", "readmitted"]
        )
    assert code == 0
    return where / "hospital"


def test_init_writes_the_folder_from_the_database_without_the_password(
    postgres_server, hospital, password_in_environment, tmp_path, capsys
):
    config_path = _init(postgres_server, hospital, tmp_path, capsys)
    text = config_path.read_text()
    assert postgres_server.password not in text
    config = yaml.safe_load(text)
    assert config["source"] == {
        "kind": "sql",
        "url": postgres_server.url(hospital, password=""),
        "query": QUERY,
        "password": password_in_environment,
    }
    roles = config["columns"]
    assert [c for c, r in roles.items() if r == "identifying"] == [
        "patient_id", "name", "email",
    ]  # fmt: skip
    # a DATE column arrives as ISO days: a quasi-identifier with the calendar
    # hierarchy (day, month, quarter, year, decade, *); zips keep their zeros
    for column in ("zip", "birth_date"):
        assert roles[column] == "quasi_identifier", column
    hierarchy = (config_path.parent / "hierarchies" / "birth_date.csv").read_text()
    assert hierarchy.splitlines()[1].count(";") == 5
    assert "01001" in (config_path.parent / "schema.yaml").read_text()


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("unreachable", "cannot connect: .*Connection refused"),
        ("wrong password", "cannot connect: .*password authentication failed"),
        ("password unset", f"environment variable {PASSWORD_VARIABLE} holds nothing"),
        ("unknown table", 'query failed: relation "nowhere" does not exist'),
        ("no rows", "holds no rows"),
    ],
)
def test_a_source_that_cannot_be_read_is_one_line_before_any_step(
    postgres_server,
    initialised,
    password_in_environment,
    prefect_api_url,
    tmp_path,
    capsys,
    monkeypatch,
    case,
    expected,
):
    folder = shutil.copytree(initialised, tmp_path / "hospital")
    config_path = folder / "hospital.yaml"
    config = yaml.safe_load(config_path.read_text())
    secret = "Wr0ng-Pa55word"
    source = config["source"]
    if case == "unreachable":
        source["url"] = source["url"].replace(f":{postgres_server.port}/", ":1/")
    elif case == "wrong password":
        monkeypatch.setenv(PASSWORD_VARIABLE, secret)
    elif case == "password unset":
        monkeypatch.delenv(PASSWORD_VARIABLE)
    elif case == "unknown table":
        source["query"] = "SELECT * FROM nowhere"
    else:
        source["query"] = QUERY.replace(
            "ORDER BY", "WHERE patient_id = 'none' ORDER BY"
        )
    config_path.write_text(yaml.safe_dump(config))
    # the Prefect API of the session: an error before any step starts nothing
    monkeypatch.setenv("PREFECT_API_URL", prefect_api_url)
    code = main(["run", "--config", str(config_path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1
    (line,) = err.strip().splitlines()
    assert line.startswith("ppdm run: ")
    assert re.search(expected, line), line
    assert secret not in err and postgres_server.password not in err
    assert re.search(r"postgresql\+psycopg://ppdm@127\.0\.0\.1:\d+/hospital", line)
    assert not (tmp_path / "out" / "hospital").exists()


def _released(release_dir: Path) -> dict[str, pd.DataFrame]:
    return {
        p.stem: read_released_table(p) for p in (release_dir / "data").glob("*.csv")
    }


@pytest.mark.flow
@pytest.mark.slow
def test_init_run_verify_then_next_month_with_newcomers(
    postgres_server,
    hospital,
    password_in_environment,
    prefect_backend,
    tmp_path,
    capsys,
):
    config_path = _init(postgres_server, hospital, tmp_path, capsys)
    out, work = tmp_path / "releases", tmp_path / "work"
    run = ["run", "--config", str(config_path), "--out", str(out)]
    run += ["--work-dir", str(work), "--quiet"]
    assert main(run) == 0, capsys.readouterr().err
    (first,) = (out / "hospital").iterdir()
    assert main(["verify", str(first)]) == 0, capsys.readouterr()
    manifest = json.loads((first / "manifest.json").read_text())
    assert manifest["source"] == "sql:" + postgres_server.url(hospital, password="")
    assert manifest["config"]["source"]["password"] == password_in_environment
    released = _released(first)["release"]
    assert len(released) >= 3000 * 0.95
    assert not set(released.columns) & {"patient_id", "name", "email"}
    capsys.readouterr()

    # Next month: 400 newcomers in the same table, the same configuration.
    newcomers = messy_hospital(400, seed=8)
    newcomers["patient_id"] = newcomers["patient_id"].str.replace("P", "N")
    _insert(postgres_server, hospital, newcomers)
    assert main(run) == 0, capsys.readouterr().err
    second = next(d for d in (out / "hospital").iterdir() if d != first)
    assert main(["verify", str(second), "--against", str(first)]) == 0
    # the second run read the grown table, and was checked against the first
    validation = json.loads((second / "validation.json").read_text())
    assert validation["rows_in"] == 3400
    certificate = json.loads((second / "verification.json").read_text())
    assert certificate["series"]["checked_against"] == [first.name]
    (result,) = certificate["series"]["results"]
    assert result["n_common_classes"] > 0 and result["n_leaking_classes"] == 0
    requirement = load_config(config_path).requirement
    results = check_against(
        _released(second), _released(first), requirement, against=first.name
    )
    assert not any(r.leaks for r in results), [r.describe() for r in results]
    for path in (
        out / "audit.jsonl",
        first / "manifest.json",
        second / "manifest.json",
    ):
        assert postgres_server.password not in path.read_text()

    # A query that fails on a row (pre-flight's header read computes none)
    # fails the ingest step: one line, the password nowhere.
    config = yaml.safe_load(config_path.read_text())
    config["source"]["query"] = QUERY.replace(
        "ORDER BY", "WHERE 1 / (num_prior_visits - num_prior_visits) = 0 ORDER BY"
    )
    config_path.write_text(yaml.safe_dump(config))
    code = main(run)
    err = capsys.readouterr().err
    assert code == 1
    assert err.strip().splitlines()[-1].startswith("ppdm run: source postgresql")
    assert "query failed: division by zero" in err.strip().splitlines()[-1]
    assert postgres_server.password not in err
