"""The terminal's progress bar of `ppdm run`, drawn on a terminal console."""

from __future__ import annotations

import io
import logging

from rich.console import Console

from ppdm import progress
from ppdm.flows import progress_bar
from ppdm.flows.cli import EXIT_OK, main
from ppdm.pipeline import STEPS


def _terminal(buffer: io.StringIO) -> Console:
    return Console(file=buffer, force_terminal=True, width=120, color_system=None)


def test_the_bar_follows_steps_and_reports():
    buffer = io.StringIO()
    with progress_bar.ReleaseProgress(console=_terminal(buffer)) as bar:
        progress.step("anonymize", 4, 8)
        progress.report(0.5, "search: 10 nodes")
        task = bar._bar.tasks[0]
        assert task.completed == 3.5 and task.total == 8
        assert task.fields["step"] == "4/8 anonymize"
        assert task.description == "search: 10 nodes"
    progress.report(0.9, "after the bar")  # no listener left behind
    assert bar._bar.tasks[0].completed == 3.5


def test_no_bar_off_a_terminal(monkeypatch):
    monkeypatch.setattr(progress_bar.sys.stderr, "isatty", lambda: False, raising=False)
    assert progress_bar.terminal_console() is None


def test_run_on_a_terminal_draws_the_bar_under_prefect_log_lines(
    prefect_backend, tmp_path, monkeypatch
):
    # Prefect's console handlers keep the standard error of the moment it
    # configured its logging, perhaps an earlier test's closed capture:
    # tests/conftest.py points them back at the process's own after each test.
    buffer = io.StringIO()
    bars: list[progress_bar.ReleaseProgress] = []
    real = progress_bar.ReleaseProgress

    def recorded(**kwargs):
        bars.append(real(**kwargs))
        return bars[-1]

    monkeypatch.setattr(progress_bar, "terminal_console", lambda: _terminal(buffer))
    monkeypatch.setattr(progress_bar, "ReleaseProgress", recorded)
    args = ["run", "--dataset", "german", "--k", "5", "--out", str(tmp_path / "out")]
    assert main([*args, "--work-dir", str(tmp_path / "work")]) == EXIT_OK
    (bar,) = bars
    assert bar.steps == list(STEPS)
    assert "training the models on both tables" in bar.descriptions  # the report's part
    drawn = buffer.getvalue()
    assert "/8 " in drawn and "starting Prefect" in drawn
    # Prefect's log lines went through the bar's console, above the bar
    assert "Finished in state" in drawn
    handlers = [
        handler
        for logger in [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
        for handler in getattr(logger, "handlers", ())
        if hasattr(handler, "console")
    ]
    # and go back to their own console once the run is over
    assert handlers and all(handler.console.file is not buffer for handler in handlers)
