"""Write the expected comparison pages (``*.html``) from the recorded
comparisons here (copies of ``benchmarks/results/compare-german`` and
``compare-german-dmpd-pareto``).

The expected pages were made by the string-built renderer, before the pages
moved to Jinja2 templates; ``tests/unit/experiments/test_comparison_pages.py``
checks that the templates give the same bytes. Inlined plots are replaced by
``PLOT`` (their bytes are matplotlib's, not the templates'). Usage::

    uv run python tests/data/comparisons/capture.py
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from ppdm.experiments.compare import comparison_from_json, render_html, render_overview

HERE = Path(__file__).resolve().parent
NAMES = ("compare-german", "compare-german-dmpd-pareto")
TITLE = "Comparison <German> & 'credit'"
NOTES = 'Recorded on a "shared" machine & <busy>'


def without_plots(page: str) -> str:
    """``page`` with every inlined PNG replaced by ``PLOT``."""
    return re.sub(r"base64,[A-Za-z0-9+/=]+", "base64,PLOT", page)


def comparison_page(name: str) -> str:
    """comparison.html of the recorded comparison ``name`` (a stand-in plot)."""
    result = comparison_from_json(HERE / name / "comparison.json")
    return render_html(
        result, title=TITLE, notes=NOTES, plots={"Accuracy vs k": b"\x89PNG"}
    )


def overview_page() -> str:
    """The page of the recorded comparisons, its plots drawn again in a copy."""
    with tempfile.TemporaryDirectory() as scratch:
        copies = [shutil.copytree(HERE / n, Path(scratch) / n) for n in NAMES]
        _, page = render_overview(copies, docs=scratch, note=NOTES)
    return without_plots(page)


if __name__ == "__main__":
    for name in NAMES:
        (HERE / f"{name}.html").write_text(comparison_page(name), encoding="utf-8")
    (HERE / "overview.html").write_text(overview_page(), encoding="utf-8")
