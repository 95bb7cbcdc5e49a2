"""Columns released as is are judged before publishing: a proxy of a quasi-identifier
or a near-unique column stops the run naming it, unless the owner accepts it by name."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ppdm import pipeline
from ppdm.config import parse_config
from ppdm.exceptions import VerificationError

EDUCATION = ["primary", "secondary", "bachelor", "master", "doctorate"]


@pytest.fixture(scope="module")
def survey(tmp_path_factory):
    """A seeded survey: a 1:1 code of education, a 1:1 code of age, a near-unique column."""
    folder = tmp_path_factory.mktemp("survey")
    rng = np.random.default_rng(11)
    n = 600
    education = rng.choice(EDUCATION, n, p=[0.2, 0.35, 0.25, 0.15, 0.05])
    table = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "sex": rng.choice(["F", "M"], n),
            "education": education,
            "education_code": pd.Series(education).map(
                {e: i + 1 for i, e in enumerate(EDUCATION)}
            ),
            "income": np.round(rng.lognormal(10, 0.6, n), 2),
            "age_code": None,
            "region": rng.choice(["north", "south"], n),
            "diagnosis": rng.choice(["flu", "asthma", "diabetes", "none"], n),
            "outcome": rng.choice(["yes", "no"], n),
        }
    )
    table["age_code"] = table["age"] + 1000  # a recoding: knowing it is knowing age
    return _dataset_folder(folder, table)


def _dataset_folder(folder, table):
    """The survey's CSV source, schema and suite in ``folder``, as init writes them."""
    from ppdm.prepare.contract import build_schema, build_suite
    from ppdm.prepare.profile import profile_table

    source = folder / "survey.csv"
    table.to_csv(source, index=False)
    schema = build_schema(table, profile_table(table, dataset="survey"))
    (folder / "schema.yaml").write_text(schema.to_yaml(), encoding="utf-8")
    profile = profile_table(table, dataset="survey", target="outcome")
    suite = build_suite(table, profile)
    (folder / "suite.json").write_text(json.dumps(suite), encoding="utf-8")
    return folder, source


def _config(folder, source, tmp_path, **changes):
    columns = {
        "age": "quasi_identifier",
        "sex": "quasi_identifier",
        "education": "quasi_identifier",
        "education_code": "insensitive",
        "income": "drop",
        "age_code": "drop",
        "region": "drop",
        "diagnosis": "sensitive",
        "outcome": "target",
    }
    columns.update(changes.pop("columns", {}))
    data = {
        "dataset": "survey",
        "schema": str(folder),
        "source": {"kind": "csv", "path": str(source)},
        "columns": columns,
        "k": 5,
        "algorithm": "mondrian",
        "output_dir": str(tmp_path / "out"),
        "work_dir": str(tmp_path / "work"),
        **changes,
    }
    return parse_config(data)


def test_a_proxy_of_a_quasi_identifier_stops_the_run(survey, tmp_path):
    config = _config(
        *survey, tmp_path, columns={"education_code": "drop", "age_code": "insensitive"}
    )
    with pytest.raises(VerificationError, match="'age_code'") as err:
        pipeline.run_release(config)
    (result,) = err.value.certificate["passthrough"]
    # Ages are released as ranges; the code gives every one of them back.
    assert result["column"] == "age_code" and result["passed"] is False
    assert result["proxy_shares"]["age"] > 0.5
    assert not (tmp_path / "out" / "survey").exists()


def test_a_near_unique_column_stops_the_run(survey, tmp_path):
    config = _config(
        *survey,
        tmp_path,
        columns={"education_code": "drop", "income": "insensitive"},
    )
    with pytest.raises(VerificationError, match="'income'"):
        pipeline.run_release(config)
    assert not (tmp_path / "out" / "survey").exists()


def test_accepting_a_column_by_name_publishes_and_says_so(survey, tmp_path):
    config = _config(
        *survey,
        tmp_path,
        columns={"education_code": "drop", "age_code": "insensitive"},
        accept_passthrough=["age_code"],
    )
    outcome = pipeline.run_release(config)
    (result,) = outcome.certificate["passthrough"]
    assert result["column"] == "age_code" and result["accepted"] is True
    assert result["exceeds"]  # above the limits, published because accepted
    html = (outcome.release_dir / "report.html").read_text(encoding="utf-8")
    assert "age_code" in html and "accepted by the data owner" in html.lower()
    manifest = json.loads((outcome.release_dir / "manifest.json").read_text())
    assert manifest["passthrough"]["accepted"] == ["age_code"]


@pytest.fixture(scope="module")
def with_names(tmp_path_factory, survey):
    """The survey plus the name of each person's nurse: a person's name per row."""
    folder = tmp_path_factory.mktemp("names")
    table = pd.read_csv(survey[1])
    first, last = ["Ana", "Ben", "Jo", "Eva"], ["Smith", "Khan", "Rossi"]
    names = [f"{a} {b}" for a in first for b in last]
    table["nurse"] = [names[i % len(names)] for i in range(len(table))]
    return _dataset_folder(folder, table)


def test_accepting_a_column_of_names_is_refused_unless_acknowledged(
    with_names, tmp_path, capsys
):
    from ppdm.flows.cli import main, release_warnings

    columns = {"education_code": "drop", "nurse": "insensitive"}
    config = _config(
        *with_names, tmp_path, columns=columns, accept_passthrough=["nurse"]
    )
    with pytest.raises(VerificationError, match="'nurse'") as err:
        pipeline.run_release(config)
    message = str(err.value)
    assert "its values look like a person's name" in message
    assert "declare it identifying, or drop it (role drop)" in message
    assert "accept it by name" not in message  # the advice never leads to a leak
    assert not (tmp_path / "out" / "survey").exists()

    config = _config(
        *with_names,
        tmp_path,
        columns=columns,
        accept_passthrough=["nurse"],
        acknowledge_identifier_passthrough={
            "nurse": "the nurse on duty is not the patient"
        },
    )
    outcome = pipeline.run_release(config)
    (result,) = outcome.certificate["passthrough"]
    assert result["acknowledged"] is True and result["passed"] is True
    html = (outcome.release_dir / "report.html").read_text(encoding="utf-8")
    assert "Warning: released as is although it looks like a direct identifier" in html
    (line,) = release_warnings(outcome.release_dir)
    assert line.startswith("column 'nurse' is released as is although its values")
    assert main(["show", str(outcome.release_dir)]) == 0
    shown = capsys.readouterr().out
    assert "  warning      column 'nurse' is released as is although" in shown
