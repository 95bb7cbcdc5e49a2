"""The `ppdm` command as users run it: a subprocess of the installed console script."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from ppdm.algorithms import ALGORITHMS

PPDM = Path(sys.executable).with_name("ppdm")
PARAMETER = re.compile(r"^(\w+) = ")


def _run(args: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess, str]:
    """Run a command; also return its wall-clock and CPU time, for the test output."""
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime
    return done, f"{wall:.2f} s wall, {used:.2f} s CPU, load {os.getloadavg()[0]:.1f}"


def _blocks(text: str) -> dict[str, list[str]]:
    return {
        block.splitlines()[0]: block.splitlines()[1:]
        for block in text.strip().split("\n\n")
    }


def _values(lines: list[str], label: str) -> list[str]:
    """The value lines of ``label``: its own line and the continuation lines."""
    start = next(i for i, line in enumerate(lines) if line.startswith(f"  {label}  "))
    head = lines[start]
    indent = len(head) - len(head[2 + len(label) :].lstrip())
    values = [head[indent:]]
    for line in lines[start + 1 :]:
        if line[:indent].strip():
            break
        values.append(line[indent:])
    return values


def _field(lines: list[str], label: str) -> str:
    return " ".join(_values(lines, label))


def test_algorithms_prints_every_capability(tmp_path):
    done, took = _run([str(PPDM), "algorithms"], tmp_path)
    print(f"ppdm algorithms: {took}")
    assert done.returncode == 0, done.stderr
    blocks = _blocks(done.stdout)
    assert sorted(blocks) == sorted(ALGORITHMS)
    for name, cls in ALGORITHMS.items():
        lines, caps = blocks[name], cls.capabilities()
        assert _field(lines, "privacy models").split(", ") == caps["models"]
        needs = _field(lines, "needs a target")
        assert needs == ("yes" if caps["needs_target"] else "no"), name
        assert _field(lines, "hierarchies").startswith(
            "yes" if caps["uses_hierarchies"] else "no"
        )
        assert _field(lines, "numeric input").startswith(
            {"binned": "binned", "raw": "raw", "either": "binned or raw"}[
                caps["numeric_input"]
            ]
        )
        assert (
            _field(lines, "releases")
            == {
                "table": "one table",
                "projections": "several projections, each with the target",
                "columns": "one table on a subset of the columns",
            }[caps["releases"]]
        )
        assert _field(lines, "out of core").startswith(
            "yes" if caps["frequency_table"] else "no"
        )
        values = _values(lines, "parameters")
        listed = [m.group(1) for m in map(PARAMETER.match, values) if m]
        assert listed == (caps["parameters"] or ["(none)"]), name


def test_a_bad_config_fails_before_prefect_in_one_line(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text(
        textwrap.dedent(
            """\
            dataset: adult
            source: {kind: embedded, name: adult}
            quasi_identifiers: [age, relationship, sex, occupation]
            sensitive_attribute: income
            target: education
            k: 5
            algorithm: pbg-ea
            output_dir: out
            """
        )
    )
    done, took = _run([str(PPDM), "run", "--config", str(config)], tmp_path)
    print(f"ppdm run --config bad.yaml: exit {done.returncode}, {took}")
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"ppdm run: config {config}: algorithm 'pbg-ea'")
    assert "['relationship', 'occupation'] have none" in line
    assert not (tmp_path / "out").exists()


def test_an_unsupported_model_fails_without_importing_prefect(tmp_path):
    """An algorithm that honours k-anonymity only, asked for l-diversity."""
    config = tmp_path / "bad.yaml"
    config.write_text(
        "dataset: german\nsource: {kind: embedded, name: german}\n"
        "quasi_identifiers: [age, job]\nsensitive_attribute: purpose\n"
        "target: credit\nk: 5\nl: 2\nalgorithm: k-only\n"
    )
    script = textwrap.dedent(
        f"""\
        import sys
        from ppdm.algorithms import ALGORITHMS
        from ppdm.algorithms.mondrian import Mondrian

        class KOnly(Mondrian):
            name = "k-only"
            supported_models = frozenset({{"k-anonymity"}})

        ALGORITHMS["k-only"] = KOnly
        from ppdm.flows.cli import main

        code = main(["run", "--config", {str(config)!r}])
        heavy = sorted({{"prefect", "great_expectations"}} & set(sys.modules))
        print(code, heavy)
        """
    )
    done, took = _run([sys.executable, "-c", script], tmp_path)
    print(f"k-only asked for l-diversity: {took}")
    assert done.stdout.strip() == "2 []", done.stderr
    (line,) = done.stderr.splitlines()
    assert line == (
        f"ppdm run: config {config}: algorithm 'k-only' does not support privacy "
        "model(s) distinct-l-diversity; it supports: k-anonymity; to release "
        "without l-diversity ask for l = 1 (`l: 1` in the configuration, or --l 1)"
    )


def test_version_and_bare_command(capsys):
    from importlib.metadata import version

    import pytest

    from ppdm.flows.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"ppdm {version('ppdm')}"
    assert main([]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("usage: ppdm") and "serve" in printed


def test_the_products_warnings_are_one_line_without_the_source(monkeypatch):
    """A PPDMWarning reads as its message, never the file and code line that raised it."""
    import logging
    import warnings

    from ppdm.exceptions import PPDMWarning
    from ppdm.flows.cli import _one_line_warnings

    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)
    monkeypatch.setattr(logging, "_warnings_showwarning", None)
    _one_line_warnings()
    text = warnings.formatwarning(
        "audit entry written without a MAC", PPDMWarning, "/src/publish.py", 225,
        "log.append(entry)",
    )  # fmt: skip
    assert text == "PPDMWarning: audit entry written without a MAC\n"
    # captured into a log (Prefect's), the record ends the line itself
    logging.captureWarnings(True)
    try:
        captured = warnings.formatwarning("m", PPDMWarning, "f.py", 1, "x")
    finally:
        logging.captureWarnings(False)
    assert captured == "PPDMWarning: m"
    # other libraries' warnings keep Python's form, which names their code
    other = warnings.formatwarning("deprecated", DeprecationWarning, "lib.py", 7, "x()")
    assert other.startswith("lib.py:7: DeprecationWarning: deprecated")
