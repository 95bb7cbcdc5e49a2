"""The user errors of issue #13 that stop ``ppdm run`` before Prefect starts.

Each ends in exactly one line on stderr (``ppdm run: ...``) with the exit
code of a usage error (2) and no output directory: a quasi-identifier or a
target that is not a column, a configuration key given twice, ``k: true``,
``k: "10"``, a configuration that is not UTF-8 and one that is a directory.
The issue's cases that reach the flow's steps (an age of 10^30, k equal to
the row count, a two-row table) run through ``ppdm run`` in
``tests/flows/test_step_faults.py``, on the flow tests' Prefect backend.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from fuzz_cases import table, write_csv

from ppdm.flows.cli import EXIT_USAGE, main

ROOT = Path(__file__).resolve().parents[2]


def _config(tmp_path: Path, frame=None, text_edit=None, **changes) -> Path:
    data = yaml.safe_load((ROOT / "configs" / "german.yaml").read_text())
    if frame is not None:
        data["source"] = {"kind": "csv", "path": str(tmp_path / "german.csv")}
        write_csv(frame, tmp_path / "german.csv")
    data.update(
        output_dir=str(tmp_path / "out"), work_dir=str(tmp_path / "work"), **changes
    )
    text = yaml.safe_dump(data, sort_keys=False)
    path = tmp_path / "release.yaml"
    path.write_text(text_edit(text) if text_edit else text)
    return path


def _run(config: Path, capfd) -> tuple[int, str, str]:
    """``ppdm run --config`` through ``ppdm.flows.cli.main``: exit code, stdout, stderr.

    These refusals come before Prefect starts: stderr is all the user sees.
    """
    code = main(["run", "--config", str(config)])
    out, err = capfd.readouterr()
    assert "Traceback" not in err, err
    return code, out, err


def _before_prefect(config: Path, capfd) -> str:
    """The refusal: exit 2, stderr one ``ppdm run:`` line, no output directory."""
    code, out, err = _run(config, capfd)
    assert code == EXIT_USAGE, err
    assert out == "" and err.count("\n") == 1 and err.startswith("ppdm run: "), err
    assert not (config.parent / "out").exists()
    return err.rstrip("\n")


def test_a_quasi_identifier_that_is_not_a_column(tmp_path, capfd):
    def edit(text: str) -> str:
        return text.replace("personal-status-sex: quasi_identifier", "zip: qu"
                            "asi_identifier\n  personal-status-sex: drop").replace(
            "- personal-status-sex\n", "- zip\n")  # fmt: skip

    config = _config(tmp_path, table(), text_edit=edit)
    line = _before_prefect(config, capfd)
    assert line.startswith("ppdm run: config for german: quasi_identifiers names 'zip'")
    assert "not a column of the source" in line


def test_a_target_that_is_not_a_column(tmp_path, capfd):
    edit = lambda text: text.replace("credit: target", "outcome: target")  # noqa: E731
    config = _config(tmp_path, table(), text_edit=edit)
    line = _before_prefect(config, capfd)
    assert "target names 'outcome', not a column of the source" in line
    assert "column 'credit' of the source has no role" in line


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda t: t + "k: 3\n",
            "key 'k' is given twice (lines {a} and {b}); YAML would keep the last "
            "one silently: give it once",
        ),
        (
            lambda t: t.replace("k: 5", "k: true"),
            "k = True is not allowed (true/false is a boolean, not an integer); "
            "allowed: an integer >= 1 and <= 1000000",
        ),
        (
            lambda t: t.replace("k: 5", "k: '10'"),
            "k = '10' is not allowed (a quoted string is text, not an integer; "
            "write k: 10); allowed: an integer >= 1 and <= 1000000",
        ),
    ],
    ids=["duplicate key", "k: true", "k: '10'"],
)
def test_configuration_values_that_were_accepted(tmp_path, capfd, edit, expected):
    config = _config(tmp_path, text_edit=edit)
    lines = [
        i + 1 for i, ln in enumerate(config.read_text().splitlines()) if ln[:2] == "k:"
    ]
    if "{a}" in expected:
        expected = expected.format(a=lines[0], b=lines[1])
    assert _before_prefect(config, capfd) == f"ppdm run: config {config}: {expected}"


def test_a_configuration_that_is_not_utf8_or_a_directory(tmp_path, capfd):
    config = _config(tmp_path)
    config.write_bytes(b"# r\xe9sum\xe9\n" + config.read_bytes())
    assert _before_prefect(config, capfd) == (
        f"ppdm run: config {config}: not UTF-8 text (byte 3: invalid continuation "
        "byte); save it as UTF-8"
    )
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    assert _before_prefect(folder, capfd) == (
        f"ppdm run: config {folder}: is a directory, not a YAML file"
    )
