"""Every registered privacy check, of every kind, states its own figures and is shown.

German credit with its synthetic record key (``tests/data/german-keyed``) is
released three times into one output directory through the core API
(:func:`ppdm.pipeline.run_release`): month 1 a seeded 90 % of the applicants,
month 2 all of them (differencing and composition against month 1), and
month 2's table again at k=6 (the same source: read together with month 2).
The release's certificate, read back, holds the class models it was made
under and the three series checks; the models no Mondrian release is made
under (the other class models, the release models, differential privacy)
are checked on the same released files by the verifier. Each result must
carry the registered name and kind, JSON-safe figures, one line of summary,
and appear in ``ppdm verify``'s output or the certificate's summary.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from ppdm import pipeline
from ppdm.config import default_config, parse_config
from ppdm.flows.cli import EXIT_OK, EXIT_UNSEALED, main
from ppdm.prepare import datasets
from ppdm.privacy import (
    PRIVACY_CHECKS,
    PRIVACY_MODELS,
    CheckResult,
    DifferentialPrivacy,
    Requirement,
    model_from_description,
)
from ppdm.release.data_files import read_released_table
from ppdm.verify.certificate import checks_of, verify_files
from ppdm.verify.figures import figures_of

# Three German releases and a verifier run: about a minute beside a busy core.
pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parent.parent / "data" / "german-keyed"
KEY = "applicant-id"
SENSITIVE = "other-debtors"
#: Parameters for the models a Mondrian release of German is not made under.
PARAMETERS = {
    "k-anonymity": {"k": 5},
    "distinct-l-diversity": {"attribute": SENSITIVE, "l": 2},
    "entropy-l-diversity": {"attribute": SENSITIVE, "l": 1.5},
    "recursive-cl-diversity": {"attribute": SENSITIVE, "c": 3.0, "l": 2},
    "t-closeness": {"attribute": SENSITIVE, "t": 0.5},
    "k-anonymity-by-containment": {"k": 5},
    "set-anonymity": {"k": 5},
    "partition-anonymity": {"k": 5},
}


def _config(where: Path, name: str, frame: pd.DataFrame, k: int):
    source = where / f"{name}.csv"
    frame.to_csv(source, index=False)
    data = default_config("german").model_dump(by_alias=True)
    data["columns"] = {KEY: "identifying", **data["columns"]}
    data.update(
        source={"kind": "csv", "path": str(source)},
        schema=str(DATA),
        output_dir=str(where / "out"),
        work_dir=str(where / "work"),
        k=k,
        l=2,
        sensitive_attribute=SENSITIVE,
        # Off: every release is published and its leaks recorded, so each
        # series check has a result to show whatever it finds.
        republication={"record_key": KEY, "policy": "off"},
    )
    return parse_config(data)


@pytest.fixture(scope="module")
def series(tmp_path_factory) -> list[Path]:
    where = tmp_path_factory.mktemp("check-registry")
    whole = datasets.load("german")
    whole.insert(0, KEY, [f"A{i:04d}" for i in range(len(whole))])
    first = whole.sample(frac=0.9, random_state=3).sort_index()
    months = [("month-1", first, 5), ("month-2", whole, 5), ("month-2", whole, 6)]
    return [
        pipeline.run_release(_config(where, name, frame, k)).release_dir
        for name, frame, k in months
    ]


@pytest.fixture(scope="module")
def shown(series) -> tuple[list[tuple[str, CheckResult]], set[str], str]:
    """Every check's ``(where, result)``; what ``ppdm verify`` printed for the
    release's own checks; the verifier's certificate (JSON) for the others."""
    last = series[-1]
    content = json.loads((last / "verification.json").read_text())
    own = list(checks_of(content))
    # The models this release was not made under, on the same released files.
    files = {p.stem: p for p in sorted((last / "data").glob("*.csv"))}
    others = tuple(
        model_from_description({"model": name, **PARAMETERS[name]})
        for name in sorted(PRIVACY_MODELS)
    )
    requirement = Requirement(
        tuple(content["requirement"]["quasi_identifiers"]), others
    )
    manifest = json.loads((last / "manifest.json").read_text())
    declared = [c for c, role in manifest["roles"].items() if role != "identifying"]
    tables = {name: read_released_table(path) for name, path in files.items()}
    dp = DifferentialPrivacy(
        "safepub", {"epsilon": 1.0}, tuple(declared), n_rows=1000
    ).check(tables)
    certificate = verify_files(files, requirement).with_differential_privacy(dp)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["verify", str(last), "--against", str(series[0])])
    assert code in (EXIT_OK, EXIT_UNSEALED), out.getvalue()
    return (
        [("cli", where, r) for where, r in own]
        + [("certificate", where, r) for where, r in certificate.checks()],
        out.getvalue(),
        certificate.to_json(),
    )


def _facts(checks) -> list[tuple]:
    # The certificate file writes its keys sorted: an example read back lists
    # its cells in that order, so its summary is compared up to the example.
    return [
        (where, r.name, r.kind, r.figures, r.passed, r.summary().split(", e.g.")[0])
        + tuple(r.examples)
        for where, r in checks
    ]


@pytest.mark.parametrize("name", sorted(PRIVACY_CHECKS))
def test_every_registered_check_states_its_figures_and_is_shown(name, shown):
    found, cli, certificate = shown
    results = [(by, where, r) for by, where, r in found if r.name == name]
    assert results, f"no result of {name}"
    for by, where, result in results:
        assert isinstance(result, CheckResult)
        assert result.kind == PRIVACY_CHECKS[name].kind
        assert where
        figures = result.figures
        assert figures, name
        for value in figures.values():
            assert value is None or isinstance(value, bool | int | float | str)
            assert not isinstance(value, float) or math.isfinite(value)
        line = result.summary()
        assert line and "\n" not in line
        assert isinstance(result.passed, bool)
        assert all(isinstance(e, dict) for e in result.examples)
        if by == "cli":
            # The release's own checks, as ppdm verify shows them: in words,
            # and as a row of what it requires and what it achieved.
            assert line in cli, (name, line)
            assert f"check {figures_of(where, result).line()}" in cli, name
        else:
            # The certificate file holds the result: read back, it states the
            # same figures, verdict and summary.
            (again,) = [
                r
                for w, r in checks_of(json.loads(certificate))
                if w == where and r.name == name
            ]
            assert _facts([(where, again)]) == _facts([(where, result)])


def test_a_certificate_read_back_yields_the_same_checks(series):
    content = json.loads((series[-1] / "verification.json").read_text())
    once = _facts(checks_of(content))
    assert {kind for _, _, kind, *_ in once} == {"class", "series"}
    assert once == _facts(checks_of(json.loads(json.dumps(content))))


def test_the_series_results_name_the_release_they_were_checked_against(series, shown):
    found, cli, _ = shown
    ids = {d.name for d in series[:2]}
    for _, where, r in found:
        if r.kind == "series":
            assert where.startswith("against release ")
            assert set(where.removeprefix("against release ").split(", ")) <= ids
    # Differencing is re-checked from the files; the others are shown as recorded.
    assert "series: " in cli and "series, as recorded at release (same-rows)" in cli
    assert "series, as recorded at release (composition)" in cli
