"""report.html from the templates: the same bytes as the pages released before.

The fixtures in ``tests/data/reports`` (made by ``capture.py`` there) hold a
utility dict and the page the string-built renderer made of it: the published
German and Adult pages (``ppdm run --dataset german|adult --seed 7``), a page
with every optional section filled and markup and quotes in its text, and the
page of an almost empty dict.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path

import pytest

from ppdm.pages import environment
from ppdm.utility.report import render_report_html

DATA = Path(__file__).resolve().parents[2] / "data" / "reports"
PAGES = ("german", "adult", "every-section", "empty")


def _fixture(name: str) -> tuple[dict, str, str]:
    stored = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    expected = gzip.decompress((DATA / f"{name}.html.gz").read_bytes()).decode()
    return stored["utility"], stored["title"], expected


@pytest.mark.parametrize("name", PAGES)
def test_page_is_byte_identical_to_the_released_one(name):
    utility, title, expected = _fixture(name)
    page = render_report_html(utility, title=title)
    if page != expected:
        got, want = page.split("\n"), expected.split("\n")
        line = next(
            (i for i, (a, b) in enumerate(zip(got, want)) if a != b),
            min(len(got), len(want)),
        )
        pytest.fail(
            f"{name}: line {line + 1} differs\n"
            f"  got:  {got[line][:300] if line < len(got) else '<end>'}\n"
            f"  want: {want[line][:300] if line < len(want) else '<end>'}"
        )


def test_text_from_the_data_is_escaped_and_markup_of_the_template_is_not():
    utility, title, _ = _fixture("every-section")
    page = render_report_html(utility, title=title)
    # The title and names carry <, >, &, ' and " on purpose.
    assert "<credit>" not in page and "&lt;credit&gt; &amp; &#x27;DMPD&#x27;" in page
    assert "&quot;views&quot;" in page
    assert "view &lt;2&gt; &amp; &#x27;x&#x27;" in page
    assert "<view" not in page and "<b>" not in page
    # The template's own markup stays markup.
    assert "<strong>Warning: Accepted by the data owner</strong>" in page
    assert page.count("<table>") == page.count("</table>") > 10


def test_environment_escapes_what_it_is_given():
    env = environment()
    assert env.autoescape is True
    rendered = env.from_string("<p>{{ x }}</p>").render(x="<a href='x'>&</a>")
    assert rendered == "<p>&lt;a href=&#x27;x&#x27;&gt;&amp;&lt;/a&gt;</p>"


def test_plots_written_beside_the_page_are_the_embedded_ones(tmp_path):
    utility, title, _ = _fixture("every-section")
    page = render_report_html(utility, title=title, plots_dir=tmp_path)
    embedded = [
        base64.b64decode(m) for m in re.findall(r"base64,([A-Za-z0-9+/=]+)", page)
    ]
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["accuracy.png", "class_sizes.png", "pareto.png"]
    assert sorted(embedded) == sorted(p.read_bytes() for p in tmp_path.iterdir())
