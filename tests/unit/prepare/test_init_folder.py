"""ppdm.prepare.init_folder and `ppdm init`: the dataset folder of an owner's table."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from test_profile import EXPECTED_ROLES, clinic_table

from ppdm.config import load_config
from ppdm.exceptions import InvalidParameterError, SourceError
from ppdm.flows import init_command
from ppdm.generalization.hierarchies import load_hierarchies
from ppdm.prepare.dataset_folder import load_contract
from ppdm.prepare.ingest import load_source, write_sqlite
from ppdm.prepare.init_folder import (
    OwnerRoles,
    config_text,
    init_dataset,
    plan_dataset,
    source_entry,
    write_dataset,
)
from ppdm.prepare.validation import validate_table

# The profile's guesses, then the trial release of `ppdm init`: released as
# is, bmi (149 values) and visits (10) would each leave classes below k, so
# visits is generalized and bmi dropped before the owner's first run.
INIT_ROLES = {**EXPECTED_ROLES, "bmi": "drop", "visits": "quasi_identifier"}
QIS = ["age", "sex", "zip", "visits"]


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return clinic_table()


@pytest.fixture
def clinic_csv(tmp_path, table) -> Path:
    path = tmp_path / "data" / "clinic.csv"
    path.parent.mkdir()
    table.to_csv(path, index=False)
    return path


@pytest.fixture
def folder(tmp_path, clinic_csv) -> Path:
    """The folder `ppdm init data/clinic.csv --dataset clinic` writes."""
    config = init_dataset(clinic_csv, dataset="clinic", directory=tmp_path / "owner")
    assert config == (tmp_path / "owner" / "clinic" / "clinic.yaml").resolve()
    return config.parent


def _files(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# -- what is written ----------------------------------------------------------
def test_the_folder_holds_schema_suite_hierarchies_and_config(folder):
    assert sorted(_files(folder)) == [
        "clinic.yaml",
        "hierarchies/age.json",
        "hierarchies/sex.csv",
        "hierarchies/visits.json",
        "hierarchies/zip.csv",  # 01200 is a code kept as text: masked, 0120*, ...
        "schema.yaml",
        "suite.json",
    ]


def test_the_config_parses_and_holds_every_column_with_its_reason(folder, clinic_csv):
    text = (folder / "clinic.yaml").read_text(encoding="utf-8")
    config = yaml.safe_load(text)
    assert config["columns"] == INIT_ROLES  # in source order, every column
    assert list(config["columns"]) == list(pd.read_csv(clinic_csv, nrows=0).columns)
    assert config["dataset"] == "clinic"
    assert config["schema"] == "." and config["hierarchies"] == "hierarchies"
    assert config["source"] == {"kind": "csv", "path": str(clinic_csv.resolve())}
    assert Path(config["source"]["path"]).is_absolute()
    assert config["k"] == 5 and config["l"] == 2
    assert config["sensitive_attribute"] == "diagnosis"
    assert config["algorithm"] == "mondrian" and config["seed"] == 0
    assert config["output_dir"] == "releases"
    assert "target" not in config and "quasi_identifiers" not in config  # derived
    # one line per column, each with the reason of its guess as a comment
    plan_reasons = plan_dataset(
        clinic_csv, dataset="clinic", directory=folder.parent
    ).profile.reasons
    lines = {
        line.split(":")[0].strip(): line
        for line in text.splitlines()
        if line.startswith("  ") and "#" in line
    }
    for column, reason in plan_reasons.items():
        role_part, comment = lines[column].split("#", 1)
        assert role_part.split(":", 1)[1].strip() == INIT_ROLES[column]
        assert comment.strip().startswith(reason)


def test_the_lead_config_loader_accepts_the_written_config(folder):
    config = load_config(folder / "clinic.yaml")
    assert config.quasi_identifiers == QIS
    assert config.sensitive_attribute == "diagnosis" and config.target == "outcome"
    assert config.roles == INIT_ROLES
    assert Path(config.schema) == folder
    assert config.hierarchy_dir == folder / "hierarchies"
    assert config.k == 5 and config.l == 2 and config.algorithm == "mondrian"
    assert "name" not in config.released_columns
    assert "sample_weight" not in config.released_columns


def test_the_source_table_passes_the_written_schema_and_suite(folder, clinic_csv):
    contract = load_contract(folder)
    source = load_source("csv", clinic_csv)
    outcome = validate_table(source, contract.schema, contract.suite, source="clinic")
    assert outcome.report["rows_clean"] == len(source) and outcome.report["passed"]
    assert contract.suite["name"] == "clinic" and contract.schema.name == "clinic"


def test_hierarchies_load_and_cover_every_observed_value(folder, clinic_csv):
    hierarchies = load_hierarchies(folder / "hierarchies")
    assert sorted(hierarchies) == sorted(QIS)
    source = load_source("csv", clinic_csv)
    for name, hierarchy in hierarchies.items():
        hierarchy.check_covers(source)  # raises on an uncovered value
        top = hierarchy.generalize(source[name], hierarchy.height)
        assert set(top) == {"*"}
    assert json.loads((folder / "hierarchies" / "age.json").read_text())["widths"] == [
        5,
        10,
        20,
        40,
        80,
    ]


# -- re-running ---------------------------------------------------------------
def test_running_again_on_the_same_table_changes_nothing(folder, clinic_csv):
    before = {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}
    texts = _files(folder)
    init_dataset(clinic_csv, dataset="clinic", directory=folder.parent)
    assert {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()} == before
    assert _files(folder) == texts


def test_an_edited_file_is_never_overwritten_without_force(folder, clinic_csv):
    config = folder / "clinic.yaml"
    edited = config.read_text().replace("  visits:", "  visits: drop #", 1)
    edited = edited.replace("k: 5", "k: 10")
    config.write_text(edited)
    (folder / "suite.json").write_text('{"name": "clinic", "expectations": []}\n')
    with pytest.raises(InvalidParameterError) as err:
        init_dataset(clinic_csv, dataset="clinic", directory=folder.parent)
    message = str(err.value)
    assert "clinic.yaml" in message and "suite.json" in message
    assert "schema.yaml" not in message and "--force" in message
    assert config.read_text() == edited  # untouched
    init_dataset(clinic_csv, dataset="clinic", directory=folder.parent, force=True)
    assert yaml.safe_load(config.read_text())["k"] == 5
    assert json.loads((folder / "suite.json").read_text())["expectations"]


def test_a_hierarchy_in_the_other_format_is_a_conflict(folder, clinic_csv):
    rival = folder / "hierarchies" / "age.csv"
    rival.write_text("17;*\n")
    with pytest.raises(InvalidParameterError, match="hierarchies/age.csv"):
        init_dataset(clinic_csv, dataset="clinic", directory=folder.parent)
    init_dataset(clinic_csv, dataset="clinic", directory=folder.parent, force=True)
    assert not rival.exists()
    assert sorted(load_hierarchies(folder / "hierarchies")) == sorted(QIS)


# -- the owner's choices and the defaults -------------------------------------
def test_the_owners_roles_reach_the_config(tmp_path, clinic_csv):
    path = init_dataset(
        clinic_csv,
        dataset="visits",
        directory=tmp_path,
        roles=OwnerRoles(
            target="outcome", sensitive=["diagnosis"], quasi_identifiers=["age", "zip"]
        ),
    )
    config = yaml.safe_load(path.read_text())
    assert config["columns"]["sex"] == "drop"  # looks like a QI, not named
    assert [c for c, r in config["columns"].items() if r == "quasi_identifier"] == [
        "age",
        "zip",
    ]
    assert sorted(p.name for p in (path.parent / "hierarchies").iterdir()) == [
        "age.json",
        "zip.csv",
    ]
    loaded = load_config(path)
    assert loaded.quasi_identifiers == ["age", "zip"]


def test_no_l_without_a_sensitive_column_of_two_values(tmp_path, table):
    source = tmp_path / "t.parquet"
    table.assign(diagnosis="flu").to_parquet(source)
    config = yaml.safe_load(
        init_dataset(source, dataset="t", directory=tmp_path).read_text()
    )
    assert config["columns"]["diagnosis"] == "insensitive"  # one value
    assert "l" not in config and "sensitive_attribute" not in config
    assert config["source"] == {"kind": "parquet", "path": str(source.resolve())}


def test_several_sensitive_columns_are_each_protected(tmp_path, table):
    source = tmp_path / "t.csv"
    rng = np.random.default_rng(2)
    table.assign(religion=rng.choice(["a", "b", "c"], len(table))).to_csv(
        source, index=False
    )
    path = init_dataset(source, dataset="t", directory=tmp_path)
    config = yaml.safe_load(path.read_text())
    assert config["sensitive_attribute"] == "diagnosis" and config["l"] == 2
    assert config["models"] == [
        {"model": "distinct-l-diversity", "attribute": "religion", "l": 2}
    ]
    loaded = load_config(path)
    assert set(loaded.requirement.sensitive_attributes) == {"diagnosis", "religion"}


def test_column_names_that_need_quoting_read_back_exactly(tmp_path):
    names = ["yes", "a: b", "#x", "ünï code", "1st", "null", "- dash", 'q"uote']
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({name: rng.integers(0, 3, 60) for name in names})
    frame["outcome"] = rng.choice(["p", "n"], 60)
    source = tmp_path / "odd.csv"
    frame.to_csv(source, index=False)
    # No name is demographic: the owner names the quasi-identifiers.
    written = init_dataset(
        source,
        dataset="odd",
        directory=tmp_path,
        roles=OwnerRoles(quasi_identifiers=names[:2]),
    )
    config = yaml.safe_load(written.read_text())
    assert list(config["columns"]) == [*names, "outcome"]
    roles = config["columns"]
    assert [c for c, r in roles.items() if r == "quasi_identifier"] == names[:2]


def test_a_database_source_keeps_url_and_query(tmp_path, table, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_sqlite(table, tmp_path / "clinic.db", "patients")
    query = "SELECT * FROM patients WHERE age >= 18"
    path = init_dataset(
        "sqlite:///clinic.db", dataset="db", directory=tmp_path, query=query
    )
    config = yaml.safe_load(path.read_text())
    assert config["source"] == {
        "kind": "sql",
        "url": f"sqlite:///{(tmp_path / 'clinic.db').resolve()}",  # made absolute
        "query": query,
    }
    assert config["columns"] == INIT_ROLES
    assert "password" not in path.read_text()


def test_a_database_password_makes_the_config_private(tmp_path, clinic_csv):
    url = "postgresql://owner:s3cret@db.example/clinic"
    entry = source_entry(url, query="SELECT * FROM patients")
    assert entry == {"kind": "sql", "url": url, "query": "SELECT * FROM patients"}
    plan = plan_dataset(clinic_csv, dataset="clinic", directory=tmp_path)
    text = config_text(
        plan.profile, entry, plan.hierarchies, load_source("csv", clinic_csv)
    )
    assert "the URL holds a password" in text
    assert yaml.safe_load(text)["source"] == entry
    private = replace(plan, files={**plan.files, "clinic.yaml": text},
                      private=frozenset({"clinic.yaml"}))  # fmt: skip
    write_dataset(private)
    assert stat.S_IMODE(os.stat(plan.config_path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(plan.folder / "schema.yaml").st_mode) & 0o600 == 0o600


@pytest.mark.parametrize(
    "source, kwargs, message",
    [
        ("clinic.txt", {}, "must end in .csv"),
        ("sqlite:///x.db", {}, "needs a query"),
        ("clinic.csv", {"query": "SELECT 1"}, "--query is for database URLs"),
        ("clinic.csv", {"dataset": "../up"}, "dataset must be a name"),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_read(
    tmp_path, source, kwargs, message
):
    arguments = {"dataset": "clinic", "directory": tmp_path, **kwargs}
    with pytest.raises(InvalidParameterError, match=message):
        init_dataset(tmp_path / source if "://" not in source else source, **arguments)
    assert not (tmp_path / "clinic").exists()


def test_a_missing_source_is_a_source_error(tmp_path):
    with pytest.raises(SourceError, match="file not found"):
        init_dataset(tmp_path / "nope.csv", dataset="clinic", directory=tmp_path)


# -- the command --------------------------------------------------------------
def test_ppdm_init_prints_the_roles_then_the_config_path(tmp_path, clinic_csv, capsys):
    code = init_command.main(
        [str(clinic_csv), "--dataset", "clinic", "--dir", str(tmp_path / "o"),
         "--target", "outcome", "--quasi-identifiers", "age, sex,zip"]
    )  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    config = (tmp_path / "o" / "clinic" / "clinic.yaml").resolve()
    assert out[-1] == str(config)
    # The owner's quasi-identifiers are complete: a column the trial release
    # finds unsafe as is is dropped, never added to them.
    roles = {**INIT_ROLES, "visits": "drop"}
    assert len(out) == len(roles) + 1
    for line, (column, role) in zip(out, roles.items()):
        assert line.split()[:2] == [role, column]
    assert "given as target" in out[list(roles).index("outcome")]
    assert (
        "failed the pass-through check of a trial release"
        in out[list(roles).index("visits")]
    )


def test_ppdm_init_says_when_no_column_is_the_target(tmp_path, table, capsys):
    source = tmp_path / "t.csv"
    table.rename(columns={"outcome": "result"}).to_csv(source, index=False)
    assert (
        init_command.main([str(source), "--dataset", "t", "--dir", str(tmp_path)]) == 0
    )
    captured = capsys.readouterr()
    assert "role `target`" in captured.err
    config = yaml.safe_load((tmp_path / "t" / "t.yaml").read_text())
    assert "target" not in config["columns"].values()
    assert captured.out.splitlines()[-1] == str((tmp_path / "t" / "t.yaml").resolve())


def test_ppdm_init_refuses_to_overwrite_with_exit_2(tmp_path, clinic_csv, capsys):
    arguments = [str(clinic_csv), "--dataset", "clinic", "--dir", str(tmp_path)]
    assert init_command.main(arguments) == 0
    config = tmp_path / "clinic" / "clinic.yaml"
    config.write_text(config.read_text() + "# my note\n")
    capsys.readouterr()
    assert init_command.main(arguments) == 2
    captured = capsys.readouterr()
    assert "clinic.yaml" in captured.err and captured.out == ""
    assert init_command.main([*arguments, "--force"]) == 0
    assert "# my note" not in config.read_text()
    assert init_command.main([*arguments, "--target", "nope"]) == 2
    assert "target names 'nope'" in capsys.readouterr().err
