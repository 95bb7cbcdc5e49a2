"""Where the partitions of an out-of-core release are processed: a Dask cluster.

A step hands a top-level function and one plain argument per partition (file
paths, settings as dicts) to :func:`map_parts`; on a cluster each call runs on
a worker, which reads its partition, does the work and writes its output
partition, so no process ever holds the table. Results come back in the
order of the arguments, so a release does not depend on which worker
finished first. Each result is fetched as soon as its partition is done and
then let go on the worker: a worker holds the results of the partitions it is
working on, not of every partition it did (which, for a census-sized table's
frequency tables, is more than its memory limit). :func:`fold_parts` also
folds the results as they arrive, so the caller holds a running total and a
few results instead of one per partition.

The cluster is a local one of worker processes, each under a memory limit,
or an existing scheduler given by address. It is started (or found) in one
place, :func:`run_cluster` (which :func:`cluster` opens), once per run: inside
its block every further user (the out-of-core steps, the
verifier's out-of-core read, the flow's Dask task runner, which starts its
cluster with :func:`local_cluster`) gets the same one. Dask and distributed
are imported only here, when a run uses Dask.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ppdm.exceptions import InvalidParameterError

__all__ = [
    "ClusterSettings",
    "PartCluster",
    "PartMapper",
    "cluster",
    "current_client",
    "fold_parts",
    "local_cluster",
    "map_large",
    "map_parts",
    "run_cluster",
    "using",
]

#: ``mapper(fn, items) -> list``: ``[fn(item) for item in items]``, farmed out.
PartMapper = Callable[[Callable[[Any], Any], Sequence[Any]], list]

_mapper: ContextVar[PartMapper | None] = ContextVar("ppdm_part_mapper", default=None)


@dataclass(frozen=True)
class ClusterSettings:
    """A local cluster (``workers`` processes, ``memory_limit`` each) or ``address``.

    ``processes=False`` runs the local workers as threads of this process
    (a Dask task runner's choice); out-of-core work needs processes, each
    under its memory limit.
    """

    workers: int = 2
    threads_per_worker: int = 1
    memory_limit: str = "2GB"
    address: str | None = None
    processes: bool = True

    @classmethod
    def of(cls, compute: Any) -> ClusterSettings:
        """The cluster of a configuration's ``compute`` section."""
        return cls(
            workers=compute.workers,
            threads_per_worker=compute.threads_per_worker,
            memory_limit=compute.memory_limit,
            address=compute.address,
        )


def _in_this_process(fn: Callable[[Any], Any], items: Sequence[Any]) -> list:
    return [fn(item) for item in items]


def map_parts(fn: Callable[[Any], Any], items: Sequence[Any]) -> list:
    """``[fn(item) for item in items]`` on the cluster of :func:`using`, else here."""
    mapper = _mapper.get()
    return (mapper or _in_this_process)(fn, list(items))


def map_large(fn: Callable[[Any], Any], items: Sequence[Any]) -> list:
    """:func:`map_parts` for items of many megabytes (a model's training matrix).

    On a cluster the items are sent to the workers first, each once, rather
    than inside the task graph (which Dask warns is slow).
    """
    mapper = _mapper.get()
    if not isinstance(mapper, PartCluster):
        return map_parts(fn, items)
    return mapper(fn, mapper.client.scatter(list(items), hash=False))


def fold_parts(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    combine: Callable[[list], Any],
    *,
    every: int = 16,
) -> Any:
    """``combine([fn(item) for item in items])``, folded as the results arrive.

    ``combine`` takes a list of results (and of earlier totals) and returns
    one of the same kind; it must not depend on the order of the list (the
    results arrive in the order the partitions finish), as a sum of counts
    does. At most ``every`` results are held before they are folded into the
    running total.
    """
    items = list(items)
    if not items:
        raise InvalidParameterError("fold_parts: no partitions to fold")
    mapper = _mapper.get()
    arriving = (
        mapper.unordered(fn, items)
        if isinstance(mapper, PartCluster)
        else (fn(item) for item in items)
    )
    held: list = []
    for result in arriving:
        held.append(result)
        if len(held) > every:
            held = [combine(held)]
    return combine(held)


@contextlib.contextmanager
def using(mapper: PartMapper | None) -> Iterator[None]:
    """Make :func:`map_parts` farm out with ``mapper`` inside the block."""
    token = _mapper.set(mapper)
    try:
        yield
    finally:
        _mapper.reset(token)


@dataclass(frozen=True)
class _GivingBack:
    """``fn``, then the memory its partition used given back to the system.

    Arrow's allocator and the C allocator keep the pages a partition used for
    the next one; across a hundred partitions of validation a worker's
    resident memory then reaches Dask's pause line (80% of its limit), and
    the worker waits instead of working. Giving them back costs a few
    milliseconds; a full garbage collection (0.35 s with Great Expectations
    loaded) is left to Python, the young generations are collected.
    """

    fn: Callable[[Any], Any]

    def __call__(self, item: Any) -> Any:
        try:
            return self.fn(item)
        finally:
            _give_back()


def _give_back() -> None:
    import gc

    import pyarrow

    gc.collect(1)
    pyarrow.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, looked up once per worker (None elsewhere)."""
    import ctypes
    import ctypes.util

    libc = ctypes.util.find_library("c")
    return None if libc is None else getattr(ctypes.CDLL(libc), "malloc_trim", None)


class PartCluster:
    """A running cluster: ``cluster(fn, items)`` maps; ``client`` is the Dask client."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def __call__(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> list:
        results: list = [None] * len(items)
        for index, result in self._as_done(fn, items):
            results[index] = result
        return results

    def unordered(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator:
        """The results of ``fn`` on ``items``, in the order they finish."""
        for _, result in self._as_done(fn, items):
            yield result

    def _as_done(
        self, fn: Callable[[Any], Any], items: Sequence[Any]
    ) -> Iterator[tuple[int, Any]]:
        from distributed import as_completed

        if not items:
            return
        futures = self.client.map(
            _GivingBack(fn), list(items), key=_keys(fn, len(items)), retries=0
        )
        index = {future.key: i for i, future in enumerate(futures)}
        # Only `done` holds the futures from here: each result is fetched when
        # its partition is done and its future dropped, so the worker frees it.
        done = as_completed(
            futures, loop=self.client.loop, with_results=True, raise_errors=True
        )
        del futures
        try:
            for future, result in done:
                i = index.pop(future.key)
                del future  # not kept alive by this frame (a traceback holds it)
                yield i, result
        finally:
            if index:  # a partition failed, or the caller stopped early
                self.client.cancel(list(done.futures))
                done.clear()  # and let go of the results not fetched yet


def _keys(fn: Callable[[Any], Any], n: int) -> list[str]:
    """Task names in Dask's logs and errors: the step's function, a fresh token."""
    import uuid

    name = getattr(fn, "__name__", type(fn).__name__).strip("_")
    token = uuid.uuid4().hex
    return [f"{name}-{token}-{i}" for i in range(n)]


def current_client() -> Any:
    """The Dask client of the run's cluster (started now if need be), or None.

    The cluster :func:`using` installed, else the one of the enclosing
    :func:`run_cluster` block; None outside both.
    """
    mapper = _mapper.get()
    if isinstance(mapper, PartCluster):
        return mapper.client
    running = _run.get()
    return None if running is None else running.client()


#: The cluster of the run under way (see :func:`run_cluster`).
_run: ContextVar[_RunCluster | None] = ContextVar("ppdm_run_cluster", default=None)


def local_cluster(
    *,
    n_workers: int,
    threads_per_worker: int,
    processes: bool,
    memory_limit: str | None = None,
) -> Any:
    """A new local Dask cluster, without a dashboard.

    Worker processes listen on the loopback address; thread workers run in
    this process.

    Every local cluster of a run is made here: by :func:`cluster`, and by the
    flow's Dask task runner (which takes this function as its cluster class).
    """
    from distributed import LocalCluster

    # The scheduler and the nannies live in this process: their INFO lines
    # (workers started, clients closed, ...) would fill a run's output with
    # some 30 lines a user has nothing to do with. Warnings and errors stay.
    logging.getLogger("distributed").setLevel(logging.WARNING)
    return LocalCluster(
        n_workers=n_workers,
        threads_per_worker=threads_per_worker,
        processes=processes,
        dashboard_address=None,
        # Worker processes listen on the loopback address only; thread
        # workers talk to the scheduler in memory (inproc), with no address.
        **({"host": "127.0.0.1"} if processes else {}),
        **({"memory_limit": memory_limit} if memory_limit is not None else {}),
    )


@contextlib.contextmanager
def cluster(settings: ClusterSettings) -> Iterator[PartCluster]:
    """Start (or connect to) the cluster; yield it as a mapper; stop what was started.

    Inside a block of :func:`cluster` or :func:`run_cluster`, the cluster
    already there is yielded instead (and left running): one run, one
    cluster.

    A failed partition raises its own exception here, once; tasks are not
    retried by Dask (a partition that fails once fails the same way again,
    and the release step is what Prefect retries).
    """
    running = _run.get()
    if running is not None:
        yield running.part_cluster()
        return
    with run_cluster(settings) as running:
        yield running.part_cluster()


@contextlib.contextmanager
def run_cluster(
    settings: ClusterSettings, *, address_of: Callable[[], str] | None = None
) -> Iterator[_RunCluster]:
    """The cluster of a run: started (or connected to) when first needed.

    A run that never needs Dask (an in-memory release verified in memory)
    starts nothing. Inside an enclosing block the enclosing run's cluster
    is the one used. ``address_of`` gives, when first needed, the address
    of a cluster the run's orchestration already has (the flow's Dask task
    runner's), connected to instead of starting one.
    """
    running = _run.get()
    if running is not None:
        yield running
        return
    running = _RunCluster(settings, address_of)
    token = _run.set(running)
    try:
        yield running
    finally:
        _run.reset(token)
        running.close()


class _RunCluster:
    """One run's cluster: its settings, and the client once it is started."""

    def __init__(
        self, settings: ClusterSettings, address_of: Callable[[], str] | None = None
    ) -> None:
        self.settings = settings
        self._address_of = address_of
        self._client: Any = None
        self._local: Any = None

    @property
    def started(self) -> bool:
        """Whether a client exists (the cluster was started or connected to)."""
        return self._client is not None

    def client(self) -> Any:
        """The Dask client, connecting or starting the cluster on first call."""
        if self._client is None:
            from distributed import Client

            settings = self.settings
            address = settings.address
            if address is None and self._address_of is not None:
                address = self._address_of()
            if address is not None:
                self._client = Client(address, set_as_default=False)
            else:
                self._local = local_cluster(
                    n_workers=settings.workers,
                    threads_per_worker=settings.threads_per_worker,
                    processes=settings.processes,
                    memory_limit=settings.memory_limit,
                )
                try:
                    self._client = Client(self._local, set_as_default=False)
                except BaseException:
                    self._local.close()
                    raise
        return self._client

    def part_cluster(self) -> PartCluster:
        """The cluster as a mapper of partitions."""
        return PartCluster(self.client())

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
        if self._local is not None:
            self._local.close()
        self._client = self._local = None
