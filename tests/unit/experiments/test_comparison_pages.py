"""comparison.html and the page of recorded comparisons from the templates:
the same bytes as the string-built pages (``tests/data/comparisons``, made by
``capture.py`` there before the templates)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "data" / "comparisons"


def _capture():
    spec = importlib.util.spec_from_file_location("capture", DATA / "capture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["compare-german", "compare-german-dmpd-pareto"])
def test_comparison_page_is_byte_identical(name):
    expected = (DATA / f"{name}.html").read_text(encoding="utf-8")
    assert _capture().comparison_page(name) == expected


def test_page_of_recorded_comparisons_is_byte_identical():
    """Plots drawn again (matplotlib, a few seconds), compared without their bytes."""
    expected = (DATA / "overview.html").read_text(encoding="utf-8")
    page = _capture().overview_page()
    assert page == expected
    assert "<busy>" not in page and "&lt;busy&gt;" in page


def test_names_and_notes_are_escaped():
    page = _capture().comparison_page("compare-german")
    assert "<title>Comparison &lt;German&gt; &amp; &#x27;credit&#x27;</title>" in page
    assert "&quot;shared&quot; machine &amp; &lt;busy&gt;" in page
