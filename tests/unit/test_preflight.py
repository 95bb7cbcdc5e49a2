"""Pre-flight: a release that cannot succeed is refused before any step runs."""

from __future__ import annotations

import sqlite3

import pandas as pd
import pytest

from ppdm.config import ConfigError, default_config, parse_config
from ppdm.exceptions import InfeasibleConstraintError, UnknownDatasetError
from ppdm.flows.cli import EXIT_FAILED, EXIT_USAGE, main
from ppdm.preflight import preflight
from ppdm.prepare import datasets


def _german_from(tmp_path, table: pd.DataFrame, kind: str = "csv", **changes):
    if kind == "csv":
        path = tmp_path / "german.csv"
        table.to_csv(path, index=False)
        source = {"kind": "csv", "path": str(path)}
    else:
        path = tmp_path / "german.sqlite"
        with sqlite3.connect(path) as connection:
            table.to_sql("applicants", connection, index=False)
        source = {
            "kind": "sql",
            "url": f"sqlite:///{path}",
            "query": "SELECT * FROM applicants",
        }
    data = default_config("german").model_dump(by_alias=True)
    data.update(source=source, output_dir=str(tmp_path / "out"), **changes)
    return parse_config(data)


@pytest.mark.parametrize("kind", ["csv", "sql"])
def test_k_above_the_rows_is_refused(tmp_path, kind):
    table = datasets.load("german").head(40)
    config = _german_from(tmp_path, table, kind, k=41)
    with pytest.raises(InfeasibleConstraintError, match="k = 41 is above the 40 rows"):
        preflight(config)
    preflight(config.with_overrides(k=20))  # feasible: no complaint


@pytest.mark.parametrize("kind", ["csv", "sql"])
def test_l_above_the_sensitive_domain_is_refused(tmp_path, kind):
    table = datasets.load("german")
    table = table[table["purpose"].isin(["radio/television", "car (new)"])]
    config = _german_from(tmp_path, table, kind, l=3, k=2)
    with pytest.raises(
        InfeasibleConstraintError, match="2 distinct values of the sens"
    ):
        preflight(config)


def test_a_schema_that_does_not_fit_the_source_is_named(tmp_path):
    table = datasets.load("german").assign(branch="north")
    columns = {**default_config("german").columns, "branch": "drop"}
    config = _german_from(tmp_path, table, columns=columns)
    with pytest.raises(ConfigError, match="not declared .*: branch"):
        preflight(config)


def test_an_unknown_dataset_folder_is_named(tmp_path):
    config = _german_from(tmp_path, datasets.load("german"), schema="no-such-folder")
    with pytest.raises(UnknownDatasetError, match="ppdm init"):
        preflight(config)


def test_the_command_line_prints_one_line_and_starts_no_flow(tmp_path, capsys):
    code = main(["run", "--dataset", "german", "--k", "5000", "--out", str(tmp_path)])
    assert code == EXIT_FAILED
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "k = 5000 is above the 1000 rows" in err
    assert "Traceback" not in err and not (tmp_path / "german").exists()


def test_debug_shows_the_traceback(tmp_path):
    with pytest.raises(InfeasibleConstraintError):
        main(["--debug", "run", "--dataset", "german", "--k", "5000"])


def test_a_column_without_a_role_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "german.csv"
    datasets.load("german").assign(ssn="000-00-0000").to_csv(path, index=False)
    config = tmp_path / "c.yaml"
    config.write_text(
        "dataset: german\n"
        f"source: {{kind: csv, path: {path}}}\n"
        "columns: {age: quasi_identifier, credit: target}\n"
    )
    assert main(["run", "--config", str(config)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "'ssn'" in err and "no role" in err and "Traceback" not in err


def test_a_run_checks_once_and_a_later_run_checks_again(tmp_path):
    """The run that follows the command line's pre-flight does not repeat it;
    the next run of the same configuration (a schedule firing) checks anew."""
    from ppdm.preflight import preflight_for_run

    table = datasets.load("german").head(40)
    config = _german_from(tmp_path, table)
    preflight(config)  # the command line's check
    (tmp_path / "german.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    preflight_for_run(config)  # taken from the check just made
    with pytest.raises(ConfigError, match="not a column of the source"):
        preflight_for_run(config)  # a later run reads the source again
