"""Progress reports from long-running core work, without a dependency on Prefect.

Core code calls :func:`report` (the fraction done of the current step's work);
whoever runs a release announces each step with :func:`step`. Whoever shows
progress (a Prefect task that updates a progress artifact, the command line's
bar, a notebook) installs listeners for the duration of a call with
:func:`listening`. Listeners nest: a block inside another block's listening
reaches both listeners (the task's artifact and the terminal's bar see the
same search). With no listener, reports are dropped. Context variables keep
concurrent runs apart.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

__all__ = ["listening", "report", "step", "within"]

Listener = Callable[[float, str], None]
StepListener = Callable[[str, int, int], None]
_listeners: ContextVar[tuple[Listener, ...]] = ContextVar("ppdm_progress", default=())
_step_listeners: ContextVar[tuple[StepListener, ...]] = ContextVar(
    "ppdm_progress_steps", default=()
)
_span: ContextVar[tuple[float, float]] = ContextVar(
    "ppdm_progress_span", default=(0, 1)
)


def report(fraction: float, description: str = "") -> None:
    """Tell the listeners that ``fraction`` (0..1) of the current work is done."""
    start, end = _span.get()
    clamped = min(max(float(fraction), 0.0), 1.0)
    for listener in _listeners.get():
        listener(start + clamped * (end - start), description)


def step(name: str, number: int, total: int) -> None:
    """Tell the listeners that step ``number`` (from 1) of ``total``, ``name``, starts."""
    for listener in _step_listeners.get():
        listener(name, number, total)


@contextlib.contextmanager
def within(start: float, end: float) -> Iterator[None]:
    """Map the reports made inside the block onto ``[start, end]`` of the current work.

    A step made of parts (the utility report anonymizes the training split,
    then trains the models) gives each part its share, and the part's own
    reports (a search's 0..1) fill only that share.
    """
    outer_start, outer_end = _span.get()
    width = outer_end - outer_start
    token = _span.set((outer_start + start * width, outer_start + end * width))
    try:
        yield
    finally:
        _span.reset(token)


@contextlib.contextmanager
def listening(
    listener: Listener | None = None, *, on_step: StepListener | None = None
) -> Iterator[None]:
    """Send :func:`report` (and :func:`step`) calls made inside the block to the listeners.

    Parameters
    ----------
    listener : callable, optional
        Called as ``listener(fraction, description)`` for each :func:`report`.
    on_step : callable, optional
        Called as ``on_step(name, number, total)`` for each :func:`step`.
    """
    token = _listeners.set(_listeners.get() + ((listener,) if listener else ()))
    step_token = _step_listeners.set(
        _step_listeners.get() + ((on_step,) if on_step else ())
    )
    try:
        yield
    finally:
        _step_listeners.reset(step_token)
        _listeners.reset(token)
