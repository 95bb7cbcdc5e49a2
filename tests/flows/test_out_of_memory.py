"""Out of memory in a step of ``ppdm run``: one line naming the step, no traceback.

A data owner's export once needed 5.13 GiB per feature matrix in the utility
step; under a memory limit the run ended in three tracebacks (the task's log,
the flow's log, the uncaught error). Now a ``MemoryError`` in a step fails the
run with one line naming the step (and the column the utility step was
encoding), exit code 1, nothing published.

The flow test makes the utility step's encoding of German credit's ``age``
column ask numpy for a dense block of 2**37 columns, an allocation no machine
grants: numpy raises its own MemoryError ("Unable to allocate ... TiB"), as it
did for the hospital export's date column. (An address-space limit on the
whole process, ``RLIMIT_AS``, was tried and is not repeatable: depending on
which allocation fails first, OpenBLAS ends the process itself or the
solver spins; see ``tests/unit/utility/test_utility_sparse.py`` for the
featurizer under a real limit, in a process of its own.)
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

from ppdm.config import default_config
from ppdm.exceptions import OutOfMemoryError
from ppdm.flows.cli import EXIT_FAILED, _report, main
from ppdm.prepare import datasets
from ppdm.utility.features import CellFeaturizer


def _prefect_console_to(stream: Any) -> None:
    """Point every Prefect console log handler that exists at ``stream``."""
    from prefect.logging.handlers import PrefectConsoleHandler

    for logger in [logging.getLogger(), *logging.root.manager.loggerDict.values()]:
        for handler in getattr(logger, "handlers", ()):
            if isinstance(handler, PrefectConsoleHandler):
                handler.setStream(stream)
                handler.console.file = stream


@pytest.fixture
def ppdm_run(
    prefect_backend: None, capfd: pytest.CaptureFixture[str]
) -> Iterator[Callable[[Path], tuple[int, str, str]]]:
    """``ppdm run --config`` through ``ppdm.flows.cli.main``: code, stdout, stderr
    (Prefect's console log included, where a traceback would be printed)."""

    def run(config: Path) -> tuple[int, str, str]:
        _prefect_console_to(sys.stderr)
        try:
            code = main(["run", "--config", str(config)])
        finally:
            _prefect_console_to(sys.__stderr__)
        out, err = capfd.readouterr()
        return code, out, err

    yield run
    _prefect_console_to(sys.__stderr__)


def _german(where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    frame = datasets.load("german").sample(200, random_state=3).reset_index(drop=True)
    frame.to_csv(where / "german.csv", index=False)
    data = default_config("german").model_dump(mode="json", by_alias=True)
    data.update(
        source={"kind": "csv", "path": str(where / "german.csv")},
        output_dir=str(where / "out"),
        work_dir=str(where / "work"),
    )
    path = where / "release.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.slow
def test_out_of_memory_in_the_utility_step_is_one_line(ppdm_run, tmp_path, monkeypatch):
    block = CellFeaturizer._block

    def too_wide(self: CellFeaturizer, column: pd.Series, spec: Any) -> Any:
        if spec.name == "age":
            np.ones((len(column), 2**37))  # 2**37 values a row: numpy refuses
        return block(self, column, spec)

    monkeypatch.setattr(CellFeaturizer, "_block", too_wide)
    config = _german(tmp_path)
    code, out, err = ppdm_run(config)
    assert code == EXIT_FAILED, err
    assert "Traceback" not in err, err
    (line,) = [ln for ln in err.splitlines() if ln.startswith("ppdm run:")]
    assert line.startswith(
        "ppdm run: step 'utility-report' ran out of memory: column 'age' (1 feature, "
    ), line
    assert "rows) does not fit in memory as model features: Unable to allocate" in line
    assert line.endswith(
        "nothing was published (give the process more memory, or "
        "release fewer rows or columns)"
    )
    assert out == ""
    published = tmp_path / "out" / "german"
    assert not published.exists() or list(published.iterdir()) == []


def test_a_bare_memory_error_is_one_line_exit_1(capsys):
    code = _report("run", MemoryError("Unable to allocate 5.13 GiB"))
    assert code == EXIT_FAILED
    assert (
        capsys.readouterr().err
        == "ppdm run: out of memory: Unable to allocate 5.13 GiB\n"
    )
    code = _report("run", OutOfMemoryError("step 'verify' ran out of memory: x"))
    assert code == EXIT_FAILED
    assert capsys.readouterr().err == "ppdm run: step 'verify' ran out of memory: x\n"


def test_prefect_logs_a_memory_error_without_its_traceback():
    import ppdm.tasks._ui  # noqa: F401 - installs the filter on Prefect's loggers

    try:
        raise MemoryError("Unable to allocate 5.13 GiB")
    except MemoryError:
        record = logging.LogRecord(
            "prefect.task_runs",
            logging.ERROR,
            __file__,
            1,
            "failed",
            (),
            sys.exc_info(),
        )
    assert logging.getLogger("prefect.task_runs").filter(record)
    assert record.exc_info is None
    try:
        raise KeyError("a defect")
    except KeyError:
        defect = logging.LogRecord(
            "prefect.task_runs",
            logging.ERROR,
            __file__,
            1,
            "failed",
            (),
            sys.exc_info(),
        )
    logging.getLogger("prefect.task_runs").filter(defect)
    assert defect.exc_info is not None  # a defect keeps its traceback
