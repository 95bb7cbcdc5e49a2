"""What a script and an operator read from `ppdm`: --json, releases, show."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from ppdm.flows.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, main


def test_json_run_then_releases_and_show(prefect_backend, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["run", "--dataset", "german", "--k", "5", "--json", "--out", str(out)]
    assert main([*args, "--work-dir", str(tmp_path / "work")]) == EXIT_OK
    printed = capsys.readouterr().out.strip().splitlines()
    summary = json.loads(printed[-1])
    assert summary["passed"] is True and summary["dataset"] == "german"
    manifest = json.loads(
        (tmp_path / summary["release_dir"] / "manifest.json").read_text()
    )
    assert summary["release_id"] == manifest["release_id"]
    # Each check the release was verified for, with its own figures: the
    # configured k and l, and no other measure.
    checks = {(row["check"], row["on"]): row for row in summary["checks"]}
    assert set(checks) == {
        ("k-anonymity", "release"),
        ("distinct-l-diversity", "release"),
    }
    k = checks["k-anonymity", "release"]
    assert k["required"] == "k = 5" and k["verdict"] == "passed"
    assert int(k["achieved"].removeprefix("k = ")) >= 5
    assert set(summary["accuracy"]) == {
        "decision_tree",
        "naive_bayes",
        "logistic_regression",
    }

    assert main(["releases", "--out", str(out)]) == EXIT_OK
    listed = capsys.readouterr().out
    assert f"german/{summary['release_id']}" in listed and "5-anonymity" in listed

    assert main(["show", summary["release_dir"]]) == EXIT_OK
    shown = capsys.readouterr().out
    assert "verdict      PASSED" in shown
    assert (
        "check        k-anonymity on release: required k = 5; "
        f"achieved {k['achieved']}; passed"
    ) in shown
    assert "not released" in shown and "telephone" in shown


def test_prefect_console_outlives_the_captured_run(prefect_backend):
    # The run above captured its output (capsys). Prefect's console handlers
    # keep the standard error of the moment Prefect configured its logging,
    # that run's capture when it was the session's first flow run; pytest has
    # closed it since, and a later run (the progress bar's) must not print there.
    from prefect import flow  # configures Prefect's logging, if nothing did yet
    from prefect.logging.handlers import PrefectConsoleHandler

    assert flow is not None
    handlers = [
        handler
        for logger in [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
        for handler in getattr(logger, "handlers", ())
        if isinstance(handler, PrefectConsoleHandler)
    ]
    assert handlers
    for handler in handlers:
        assert not handler.stream.closed and not handler.console.file.closed


def test_releases_and_show_name_what_is_missing(tmp_path, capsys):
    assert main(["releases", "--out", str(tmp_path)]) == EXIT_FAILED
    assert "no audit log" in capsys.readouterr().err
    assert main(["show", str(tmp_path)]) == EXIT_FAILED
    assert "not a release directory" in capsys.readouterr().err


_IMPORTED_AFTER = """
import sys
from ppdm.flows.cli import main
code = main(sys.argv[1:])
heavy = ("pandas", "sklearn", "scipy", "prefect", "great_expectations", "dask")
heavy += ("ppdm.algorithms",)  # the algorithms' bodies (they import pandas)
print(code, *sorted(name for name in heavy if name in sys.modules))
"""


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["algorithms"], EXIT_OK),
        (["run", "--dataset", "german", "--k", "0"], EXIT_USAGE),
        (["run", "--config", "no-such-file.yaml"], EXIT_USAGE),
    ],
)
def test_answers_without_data_import_no_data_library(args, code, tmp_path):
    # Listing the algorithms and rejecting a configuration stay well under a
    # second only while pandas, scikit-learn and Prefect stay unimported
    # (benchmarks/results/preflight.md has the timings).
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTED_AFTER, *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert done.stdout.split()[-1:] == [str(code)], (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["--algorithm", "mondrain"],
            "algorithm 'mondrain' is not registered (did you mean 'mondrian'?)",
        ),
        (
            ["--algorithm", "fs-anonymity", "--l", "2"],
            "algorithm 'fs-anonymity' does not support privacy model(s) "
            "distinct-l-diversity: it releases 0/1 features",
        ),
        (
            ["--algorithm", "dmpd"],
            "dmpd: parameter 'inducer' must be one of 'decision_tree', "
            "'naive_bayes'; got 'c45'",
        ),
        (
            ["--algorithm", "pbg-ea"],
            "pbg-ea: parameter 'eps' must be a positive number or a list of 2 "
            "positive numbers (one per objective); got [1.0, 2.0, 3.0]",
        ),
    ],
)
def test_a_configuration_the_algorithm_registry_refuses_imports_no_data_library(
    args, says, tmp_path
):
    # The registry answers from its entries: the algorithms' modules (and
    # pandas) stay unimported, and the message is the one building the
    # algorithm gives.
    params = {"dmpd": "{inducer: c45}", "pbg-ea": "{eps: [1.0, 2.0, 3.0]}"}
    name = args[1]
    shipped = Path(__file__).resolve().parents[2] / "configs" / "german.yaml"
    text = shipped.read_text(encoding="utf-8")
    assert "\nalgorithm: mondrian\n" in text and "\nparams:" not in text
    (tmp_path / "release.yaml").write_text(
        text.replace(
            "\nalgorithm: mondrian\n",
            f"\nalgorithm: {name}\nparams: {params.get(name, '{}')}\n",
        ),
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTED_AFTER, "run", "--config", "release.yaml"]
        + args,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert done.stdout.split() == [str(EXIT_USAGE)], (done.stdout, done.stderr)
    assert says in done.stderr and "Traceback" not in done.stderr
