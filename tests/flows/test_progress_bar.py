"""The terminal's progress bar of `ppdm run`, drawn on a terminal console."""

from __future__ import annotations

import io
import logging

from rich.console import Console

from ppdm import progress
from ppdm.flows import progress_bar
from ppdm.flows.cli import EXIT_OK, main


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
    prefect_backend, tmp_path, monkeypatch, capsys
):
    buffer = io.StringIO()
    monkeypatch.setattr(progress_bar, "terminal_console", lambda: _terminal(buffer))
    args = ["run", "--dataset", "german", "--k", "5", "--out", str(tmp_path / "out")]
    assert main([*args, "--work-dir", str(tmp_path / "work")]) == EXIT_OK
    drawn = buffer.getvalue()
    for step in ("1/8 ingest", "4/8 anonymize", "7/8 utility-report", "8/8 publish"):
        assert step in drawn, step
    assert "training the models" in drawn  # the utility report's own progress
    # Prefect's log lines went through the bar's console, above the bar
    assert "Finished in state" in drawn
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-1].startswith(
        str(tmp_path / "out" / "german")
    )  # stdout: the release
    handlers = [
        handler
        for logger in [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
        for handler in getattr(logger, "handlers", ())
        if hasattr(handler, "console")
    ]
    # and go back to their own console once the run is over
    assert handlers and all(handler.console.file is not buffer for handler in handlers)
