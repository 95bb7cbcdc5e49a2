"""Prefect task runners: which one runs a flow's tasks (the sweep's folds, a release's batches).

:class:`RunnerSettings` names a runner; :func:`task_runner` makes it;
:func:`release_runner` reads a release configuration's ``compute:`` section.
A local Dask cluster is started by :func:`ppdm.scale.engine.local_cluster`,
the one place every local cluster of a run is made.
Prefect is imported only when a runner is made: the command line imports
this module to list the runners.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ppdm.compute_config import ComputeConfig

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
    memory_limit : str or None, default=None
        Memory of each local Dask worker process (default: Dask's share of
        the machine's memory).
    """

    kind: str = "sequential"
    workers: int | None = None
    threads_per_worker: int = 1
    processes: bool = False
    address: str | None = None
    memory_limit: str | None = None

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

        from ppdm.scale.engine import local_cluster

        if settings.address:
            return DaskTaskRunner(address=settings.address)
        return DaskTaskRunner(
            cluster_class=local_cluster,
            cluster_kwargs={
                "n_workers": settings.workers or 2,
                "threads_per_worker": settings.threads_per_worker,
                "processes": settings.processes,
                **(
                    {"memory_limit": settings.memory_limit}
                    if settings.memory_limit is not None
                    else {}
                ),
            },
        )
    raise ValueError(f"runner {settings.kind!r}; allowed: {', '.join(RUNNERS)}")


def release_runner(
    compute: ComputeConfig, *, out_of_core: bool = False
) -> RunnerSettings | None:
    """The runner a release configuration asks for; None for ``runner: none``.

    With ``runner: dask`` the runner's cluster is the run's one cluster:
    ``out_of_core`` (the release or its verification runs on Dask) makes its
    local workers processes under ``memory_limit``, as out-of-core work
    needs.
    """
    if compute.runner == "none":
        return None
    processes = compute.processes or (compute.runner == "dask" and out_of_core)
    return RunnerSettings(
        kind=compute.runner,
        workers=compute.workers,
        threads_per_worker=compute.threads_per_worker,
        processes=processes,
        address=compute.address if compute.runner == "dask" else None,
        memory_limit=compute.memory_limit if processes else None,
    )
