"""Independent evaluations as Prefect tasks on the flow's task runner (threads or Dask)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from ppdm import parallel


@task(name="evaluate-batch", cache_policy=NO_CACHE)
def evaluate_batch(fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
    """One batch of independent evaluations (DMPD fitness, cross-validation folds)."""
    # The work is spread already: nested maps run in place.
    with parallel.mapped_by(None):
        return [fn(item) for item in items]


def prefect_mapper(batches: int) -> parallel.Mapper:
    """A :mod:`ppdm.parallel` mapper: ``batches`` tasks submitted to the flow's runner."""

    def mapper(fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        futures = [
            evaluate_batch.submit(fn, batch)
            for batch in parallel.batches(items, batches)
        ]
        return [result for future in futures for result in future.result()]

    return mapper
