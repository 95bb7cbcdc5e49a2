"""The terminal's progress bar for `ppdm run`: the step under way and its share done.

Shown on an interactive standard error only (not with ``--quiet`` or
``--json``, not in a pipe or a CI log). One bar covers the whole release: each
step of :data:`ppdm.pipeline.STEPS` is one unit, and a step that reports its
progress (the anonymization's search, the utility report's cross-validation)
fills its unit as it goes. Prefect's log lines keep appearing above the bar:
while it is shown, Prefect's console handlers print through the bar's console.
"""

from __future__ import annotations

import logging
import os
import sys
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)

from ppdm import progress

__all__ = ["ReleaseProgress", "terminal_console"]


def terminal_console() -> Console | None:
    """A console on standard error if it is an interactive terminal, else None."""
    if os.environ.get("TERM") == "dumb" or not sys.stderr.isatty():
        return None
    return Console(stderr=True)


class ReleaseProgress:
    """Listens to :mod:`ppdm.progress` and draws one bar for the release's steps.

    Parameters
    ----------
    console : rich.console.Console
        Where the bar is drawn (and Prefect's log lines printed meanwhile).
    """

    def __init__(self, *, console: Console) -> None:
        self.console = console
        self._bar = Progress(
            TextColumn("[bold]{task.fields[step]}[/bold]"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=console,
            transient=True,
        )
        self._task = self._bar.add_task(
            "", total=1, step="starting Prefect", start=True
        )
        self._unit = 0
        #: The steps announced, in order (the bar redraws ten times a second, so
        #: a step shorter than that may never be drawn).
        self.steps: list[str] = []
        self.descriptions: list[str] = []
        self._rerouted: list[tuple[Any, Console]] = []
        self._listening = progress.listening(self.on_report, on_step=self.on_step)

    def __enter__(self) -> ReleaseProgress:
        self._bar.start()
        self._listening.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._listening.__exit__(kind, error, traceback)
        self._bar.stop()
        for handler, console in self._rerouted:
            handler.console = console

    def on_step(self, name: str, number: int, total: int) -> None:
        self._reroute_prefect_logs()
        self.steps.append(name)
        self._unit = number - 1
        self._bar.update(
            self._task,
            total=total,
            completed=self._unit,
            step=f"{number}/{total} {name}",
            description="",
        )

    def on_report(self, fraction: float, description: str) -> None:
        if description and self.descriptions[-1:] != [description]:
            self.descriptions.append(description)
        self._bar.update(
            self._task, completed=self._unit + fraction, description=description
        )

    def _reroute_prefect_logs(self) -> None:
        # Prefect configures its logging when the first flow run starts and
        # binds each console handler to the standard error of that moment; a
        # line printed past the bar's console would tear the bar apart.
        from prefect.logging.handlers import PrefectConsoleHandler

        loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
        done = {id(handler) for handler, _ in self._rerouted}
        for logger in loggers:
            for handler in getattr(logger, "handlers", ()):
                if (
                    isinstance(handler, PrefectConsoleHandler)
                    and id(handler) not in done
                ):
                    self._rerouted.append((handler, handler.console))
                    handler.console = self.console
                    done.add(id(handler))
