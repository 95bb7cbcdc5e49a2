"""The default Adult release as a data owner shares it: only declared columns, shuffled
rows, and nothing raw in the output directory."""

from __future__ import annotations

import re
import stat

import pandas as pd
import pytest

from ppdm import pipeline
from ppdm.config import default_config
from ppdm.prepare import datasets

#: What a release directory holds besides its data files.
RELEASE_FILES = {
    "manifest.json",
    "verification.json",
    "utility.json",
    "report.html",
    "evidence.json",
    "cut_points.json",
    "validation.json",
}


@pytest.fixture(scope="module")
def adult_release(tmp_path_factory):
    out = tmp_path_factory.mktemp("shared")
    work = tmp_path_factory.mktemp("private") / "work"
    config = default_config("adult").with_overrides(
        output_dir=str(out), work_dir=str(work)
    )
    outcome = pipeline.run_release(config)
    return config, out, work, outcome


def test_only_columns_with_a_releasing_role_leave(adult_release):
    config, _, _, outcome = adult_release
    table = pd.read_csv(outcome.release_dir / "data" / "release.csv", dtype=str)
    assert set(table.columns) == set(config.released_columns)
    for column in ("fnlwgt", "education-num", "relationship", "hours-per-week"):
        assert column not in table.columns
    for column in set(table.columns) - set(config.quasi_identifiers):
        assert config.columns[column] in {"sensitive", "target", "insensitive"}


def test_rows_do_not_keep_the_input_order(adult_release):
    _, _, _, outcome = adult_release
    released = pd.read_csv(outcome.release_dir / "data" / "release.csv", dtype=str)
    source = datasets.load("adult")
    assert len(released) == len(source)
    # Income is released as is: in input order the two sequences would match.
    assert (released["income"].to_numpy() == source["income"].to_numpy()).mean() < 0.8
    assert sorted(released["income"]) == sorted(source["income"])


def test_nothing_raw_under_the_output_directory(adult_release):
    _, out, work, outcome = adult_release
    fnlwgt = datasets.load("adult")["fnlwgt"].astype(str)
    weights = {w.encode() for w in fnlwgt[fnlwgt.str.len() >= 6]}
    for path in out.rglob("*"):
        if path.is_dir():
            continue
        relative = path.relative_to(out)
        if relative.parts[0] == "adult":
            assert len(relative.parts) in (3, 4), relative
            assert relative.name in RELEASE_FILES or relative.parts[2] == "data"
        else:
            assert relative.name.startswith("audit.jsonl"), relative  # log, lock, head
        assert path.suffix != ".parquet"
        # No survey weight (six or more digits, 18,314 of them unique) anywhere.
        numbers = set(re.findall(rb"\b\d{6,}\b", path.read_bytes()))
        assert not numbers & weights, relative
    # The intermediate artifacts (raw snapshot, clean table) are private.
    assert any(work.rglob("*.parquet"))
    assert stat.S_IMODE(work.stat().st_mode) == 0o700
    assert not work.is_relative_to(out)
