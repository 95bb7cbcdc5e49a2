"""Prefect glue shared by the tasks: cache policies, artifact keys and summaries."""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator
from typing import Any

from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import INPUTS, TASK_SOURCE, CacheKeyFnPolicy

from ppdm.exceptions import AnonymizationError
from ppdm.release import provenance

__all__ = [
    "STEP_CACHE",
    "artifact_key",
    "log_fact",
    "progress_artifact",
    "markdown_artifact",
    "table_artifact",
]


def _store_generation(context: Any, parameters: dict[str, Any]) -> str:
    return parameters["store"].generation()


def _core_source(context: Any, parameters: dict[str, Any]) -> str:
    return provenance.source_fingerprint()


#: Deterministic steps are cached on their settings (the slice of the config
#: they read), the content-addressed references of their inputs, their source,
#: the core library's source (a new version of the code never reuses an old
#: result) and the artifact store's generation. The store itself is not hashed, only its
#: generation: a store that was deleted and made anew invalidates every
#: reference into the old one.
STEP_CACHE = (
    (INPUTS - "store")
    + TASK_SOURCE
    + CacheKeyFnPolicy(cache_key_fn=_store_generation)
    + CacheKeyFnPolicy(cache_key_fn=_core_source)
)


@contextlib.contextmanager
def progress_artifact(description: str) -> Iterator[None]:
    """A Prefect progress artifact that follows the core's progress reports in the block."""
    from prefect.artifacts import create_progress_artifact, update_progress_artifact

    from ppdm import progress

    artifact_id = create_progress_artifact(progress=0.0, description=description)
    shown = [0.0]

    def update(fraction: float, text: str) -> None:
        if fraction - shown[0] >= 0.05 or fraction >= 1.0:  # each update is an API call
            shown[0] = fraction
            update_progress_artifact(
                artifact_id=artifact_id, progress=100 * fraction, description=text
            )

    with progress.listening(update):
        yield
    update_progress_artifact(artifact_id=artifact_id, progress=100.0)


def log_fact(message: str, *args: Any) -> None:
    """One INFO line of the run's log with a domain fact (rows, k, accuracy, release)."""
    from prefect import get_run_logger

    get_run_logger().info(message, *args)


def artifact_key(dataset: str, step: str) -> str:
    """Prefect artifact keys allow lowercase letters, digits and dashes only."""
    return re.sub(r"[^a-z0-9-]+", "-", f"{dataset}-{step}".lower()).strip("-")


def table_artifact(
    dataset: str, step: str, rows: list[dict[str, Any]], description: str
) -> None:
    create_table_artifact(
        key=artifact_key(dataset, step), table=rows, description=description
    )


def markdown_artifact(dataset: str, step: str, markdown: str, description: str) -> None:
    create_markdown_artifact(
        key=artifact_key(dataset, step), markdown=markdown, description=description
    )


def transient_only(task: Any, task_run: Any, state: Any) -> bool:
    """Retry an I/O step only on transient failures (``ppdm.exceptions.is_retryable``).

    A full disk, a read-only directory or bad input fails the same way on
    every attempt: it is reported once instead of three times.
    """
    from ppdm.exceptions import is_retryable

    exc = state.result(raise_on_failure=False)
    return isinstance(exc, BaseException) and is_retryable(exc)


class _ExpectedErrorsWithoutTraceback(logging.Filter):
    """Log the project's own errors as their message alone.

    An :class:`~ppdm.exceptions.AnonymizationError` (a full disk, a requirement
    the table cannot meet, a failed verification, bad input) names what is
    wrong and the fix; the traceback Prefect's engine adds to a failed run
    (``logger.exception``) says nothing more to the data owner. Any other
    exception is a defect and keeps its traceback, except a ``MemoryError``:
    the machine's limit, not the code, which the run reports as one line
    naming the step.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(
            record.exc_info[1], AnonymizationError | MemoryError
        ):
            record.exc_info = None
            record.exc_text = None
        return True


for _name in ("prefect.flow_runs", "prefect.task_runs"):
    _logger = logging.getLogger(_name)
    if not any(
        type(f).__name__ == "_ExpectedErrorsWithoutTraceback" for f in _logger.filters
    ):
        _logger.addFilter(_ExpectedErrorsWithoutTraceback())
