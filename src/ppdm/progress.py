"""Progress reports from long-running core work, without a dependency on Prefect.

Core code calls :func:`report`; whoever runs it (a Prefect task that updates a
progress artifact, a CLI that prints a bar, a notebook) installs a listener for
the duration of the call with :func:`listening`. With no listener, reports are
dropped. A context variable keeps concurrent runs apart.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

__all__ = ["report", "listening"]

Listener = Callable[[float, str], None]
_listener: ContextVar[Listener | None] = ContextVar("ppdm_progress", default=None)


def report(fraction: float, description: str = "") -> None:
    """Tell the current listener that ``fraction`` (0..1) of the work is done."""
    listener = _listener.get()
    if listener is not None:
        listener(min(max(float(fraction), 0.0), 1.0), description)


@contextlib.contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Send :func:`report` calls made inside the block to ``listener``."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)
