"""Prefect task runners: which one runs a flow's tasks (the sweep's folds, a release's batches).

:class:`RunnerSettings` names a runner; :func:`task_runner` makes it;
:func:`release_runner` reads a release configuration's ``parallel:`` section.
Prefect is imported only when a runner is made: the command line imports
this module to list the runners.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ppdm.config import ParallelConfig

__all__ = ["RUNNERS", "RunnerSettings", "release_runner", "task_runner"]

#: Task runners of a sweep or a release.
RUNNERS = ("sequential", "threads", "dask")


@dataclass(frozen=True)
class RunnerSettings:
    """Which task runner runs the sweep's fold tasks.

    Parameters
    ----------
    kind : {"sequential", "threads", "dask"}, default="sequential"
    workers : int or None, default=None
        Threads of the thread pool; Dask workers of a local cluster. Default:
        the CPU count (threads), 2 (Dask).
    threads_per_worker : int, default=1
        Threads of each local Dask worker.
    processes : bool, default=False
        Local Dask workers as processes (needs a Prefect API that all of them
        reach, ``PREFECT_API_URL``) rather than threads.
    address : str or None, default=None
        An existing Dask scheduler (``tcp://host:8786``); no local cluster.
    """

    kind: str = "sequential"
    workers: int | None = None
    threads_per_worker: int = 1
    processes: bool = False
    address: str | None = None

    def describe(self) -> str:
        """The runner in words, for the outputs."""
        if self.kind == "sequential":
            return "sequential (one thread)"
        if self.kind == "threads":
            return f"thread pool ({self.workers or os.cpu_count()} threads)"
        if self.address:
            return f"Dask scheduler at {self.address}"
        kind = "processes" if self.processes else "threads"
        return (
            f"Dask local cluster ({self.workers or 2} workers as {kind}, "
            f"{self.threads_per_worker} thread(s) each)"
        )


def task_runner(settings: RunnerSettings) -> Any:
    """The Prefect task runner of ``settings``."""
    from prefect.task_runners import ThreadPoolTaskRunner

    if settings.kind == "sequential":
        return ThreadPoolTaskRunner(max_workers=1)
    if settings.kind == "threads":
        return ThreadPoolTaskRunner(max_workers=settings.workers or os.cpu_count())
    if settings.kind == "dask":
        from prefect_dask import DaskTaskRunner

        if settings.address:
            return DaskTaskRunner(address=settings.address)
        return DaskTaskRunner(
            cluster_kwargs={
                "n_workers": settings.workers or 2,
                "threads_per_worker": settings.threads_per_worker,
                "processes": settings.processes,
                "dashboard_address": None,
            }
        )
    raise ValueError(f"runner {settings.kind!r}; allowed: {', '.join(RUNNERS)}")


def release_runner(parallel: ParallelConfig) -> RunnerSettings | None:
    """The runner a release configuration asks for; None for ``runner: none``."""
    if parallel.runner == "none":
        return None
    return RunnerSettings(
        kind=parallel.runner,
        workers=parallel.workers,
        threads_per_worker=parallel.threads_per_worker,
        processes=parallel.processes,
        address=parallel.address,
    )
