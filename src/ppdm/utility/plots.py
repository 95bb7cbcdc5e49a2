"""The report's plots: deterministic PNG bytes from matplotlib's object API.

Figures are drawn on the Agg canvas (``matplotlib.figure.Figure``, never
``pyplot``) under a private ``rc_context``, so the global rcParams are never
touched, and saved without the "Software" metadata chunk, so the same figures
give the same bytes on every run.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = [
    "accuracy_plot",
    "class_size_plot",
    "figure_png",
    "new_figure",
    "pareto_plot",
    "plot_style",
]

#: rcParams of every plot, applied only inside :func:`plot_style`.
_STYLE = {
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "figure.dpi": 100.0,
    "savefig.dpi": 100.0,
    "path.simplify": True,
}


@contextlib.contextmanager
def plot_style() -> Iterator[None]:
    """Temporary rcParams for the project's plots (the globals stay as they are)."""
    with matplotlib.rc_context(_STYLE):
        yield


def new_figure(width: float, height: float) -> Figure:
    """A figure on the Agg canvas, independent of pyplot's global state."""
    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    fig.set_layout_engine("tight")
    return fig


def figure_png(fig: Figure) -> bytes:
    """PNG bytes of ``fig``, without metadata that would vary between runs."""
    buffer = io.BytesIO()
    with plot_style():
        fig.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    return buffer.getvalue()


def accuracy_plot(models: Mapping[str, Mapping[str, float]]) -> bytes:
    with plot_style():
        fig = new_figure(6.0, 3.5)
        ax = fig.add_subplot(1, 1, 1)
        names = list(models)
        x = np.arange(len(names))
        original = [100 * (models[m].get("original") or 0.0) for m in names]
        anonymized = [100 * (models[m].get("anonymized") or 0.0) for m in names]
        for shift, side, heights, label in (
            (-0.2, "original", original, "trained on original"),
            (0.2, "anonymized", anonymized, "trained on release"),
        ):
            errors = _error_bars(models, names, side, heights)
            ax.bar(
                x + shift,
                heights,
                width=0.4,
                label=label,
                yerr=errors,
                capsize=3 if errors is not None else 0,
            )
        ax.set_xticks(x, [n.replace("_", " ") for n in names])
        low = min(original + anonymized, default=0.0)
        ax.set_ylim(max(0.0, low - 10.0), 100.0)
        ax.set_ylabel("test accuracy (%)")
        ax.set_title("Accuracy before and after anonymization")
        ax.legend(loc="upper right")
        ax.grid(True, axis="y", alpha=0.3)
        return figure_png(fig)


def _error_bars(
    models: Mapping[str, Mapping[str, Any]],
    names: Sequence[str],
    side: str,
    heights: Sequence[float],
) -> np.ndarray | None:
    """(2, n) distances from each bar to its 95 % interval's ends, or None
    when no model has an interval (a report made before intervals existed)."""
    intervals = [models[m].get(f"{side}_ci95") for m in names]
    if not any(intervals):
        return None
    out = np.zeros((2, len(names)))
    for i, (interval, height) in enumerate(zip(intervals, heights)):
        if interval:
            out[0, i] = max(height - 100 * interval[0], 0.0)
            out[1, i] = max(100 * interval[1] - height, 0.0)
    return out


def class_size_plot(tables: Mapping[str, Mapping[str, Any]], k: int | None) -> bytes:
    with plot_style():
        fig = new_figure(6.0, 3.5)
        ax = fig.add_subplot(1, 1, 1)
        for name, loss in tables.items():
            pairs = loss.get("class_size_distribution") or []
            if not pairs:
                continue
            sizes = np.array([p[0] for p in pairs], dtype=float)
            counts = np.array([p[1] for p in pairs], dtype=float)
            bins = np.unique(np.geomspace(1, max(sizes.max(), 2) + 1, 30).round())
            ax.hist(sizes, bins=bins, weights=counts, histtype="step", label=name)
        if k:
            ax.axvline(k, linestyle="--", color="grey", label=f"required k = {k}")
        ax.set_xscale("log")
        ax.set_xlabel("equivalence-class size")
        ax.set_ylabel("number of classes")
        ax.set_title("Class-size distribution")
        ax.legend()
        ax.grid(True, alpha=0.3)
        return figure_png(fig)


def _metric(entry: Mapping[str, Any], *names: str) -> float | None:
    lowered = {str(k).lower(): v for k, v in entry.items()}
    for name in names:
        value = lowered.get(name.lower())
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def pareto_plot(front: list[Mapping[str, Any]]) -> bytes:
    with plot_style():
        fig = new_figure(6.0, 3.5)
        ax = fig.add_subplot(1, 1, 1)
        # A lattice search's front is k vs information loss; DMPD's is
        # partition anonymity (k) vs the wrapper's accuracy.
        by_accuracy = all(_metric(e, "GLM", "ncp") is None for e in front)
        measure = ("accuracy",) if by_accuracy else ("GLM", "ncp")
        points = [
            (_metric(e, "k"), _metric(e, *measure), bool(e.get("chosen")))
            for e in front
        ]
        points = [p for p in points if p[0] is not None and p[1] is not None]
        others = [(k, g) for k, g, chosen in points if not chosen]
        chosen = [(k, g) for k, g, c in points if c]
        if others:
            ax.scatter(*zip(*others), s=20, label="Pareto front")
        if chosen:
            ax.scatter(
                *zip(*chosen),
                s=90,
                marker="*",
                color="crimson",
                label="released" if by_accuracy else "chosen node",
            )
        if points and min(p[0] for p in points) > 0:
            ax.set_xscale("log")  # achieved k spans orders of magnitude
        ax.set_xlabel("achieved k")
        if by_accuracy:
            ax.set_ylabel("accuracy (wrapper cross-validation)")
            ax.set_title("Pareto front: accuracy vs partition anonymity")
        else:
            ax.set_ylabel("GLM (information loss)")
            ax.set_title("Pareto front of the lattice search")
        if points:
            ax.legend()
        ax.grid(True, alpha=0.3)
        return figure_png(fig)
