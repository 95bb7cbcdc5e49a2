"""Independent evaluations, run where the caller says, without a dependency on Prefect.

Core code with many independent evaluations (DMPD's fitness of a generation,
the harness's cross-validation folds) calls :func:`map_in_order`. By default
it runs them one after the other in this thread. Whoever runs the core (the
release flow with a Dask or thread-pool task runner) installs a mapper for a
block with :func:`mapped_by`; the results must come back in the order of the
items, so that nothing released depends on where the work ran.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar

__all__ = ["Mapper", "batches", "installed", "map_in_order", "mapped_by"]

Item = TypeVar("Item")
Result = TypeVar("Result")
Mapper = Callable[[Callable[[Any], Any], Sequence[Any]], Sequence[Any]]
_mapper: ContextVar[Mapper | None] = ContextVar("ppdm_mapper", default=None)


def map_in_order(fn: Callable[[Item], Result], items: Sequence[Item]) -> list[Result]:
    """``[fn(item) for item in items]``, run by the installed mapper if any.

    ``fn`` must be picklable (a module-level function or a plain object with
    ``__call__``) when the mapper sends work to other processes.
    """
    mapper = _mapper.get()
    if mapper is None or len(items) <= 1:
        return [fn(item) for item in items]
    results = list(mapper(fn, list(items)))
    if len(results) != len(items):
        raise RuntimeError(
            f"the parallel mapper returned {len(results)} results for "
            f"{len(items)} items"
        )
    return results


def installed() -> Mapper | None:
    """The mapper :func:`map_in_order` uses here, or None (it runs in place)."""
    return _mapper.get()


@contextlib.contextmanager
def mapped_by(mapper: Mapper | None) -> Iterator[None]:
    """Run :func:`map_in_order` calls made inside the block through ``mapper``.

    Inside a mapped evaluation no mapper is installed (the work is already
    spread), so nested calls run in place.
    """
    token = _mapper.set(mapper)
    try:
        yield
    finally:
        _mapper.reset(token)


def batches(items: Sequence[Item], count: int) -> list[list[Item]]:
    """``items`` cut into at most ``count`` contiguous batches of near-equal size."""
    count = max(1, min(count, len(items)))
    size, extra = divmod(len(items), count)
    out, start = [], 0
    for index in range(count):
        end = start + size + (index < extra)
        out.append(list(items[start:end]))
        start = end
    return out
