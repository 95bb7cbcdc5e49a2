"""The project's HTML pages: Jinja2 templates shipped in ``ppdm/templates``.

:func:`render` fills a template with data the caller computed (rows, plots,
sentences); the templates hold all the markup. Autoescaping is on, and every
value a template writes goes through :func:`html.escape` (the ``finalize``
hook), the escaping the pages had before they were templates, so a release's
``report.html`` keeps its bytes and its hash; markup the templates build
(macros, ``Markup``) passes as it is.
"""

from __future__ import annotations

import base64
import functools
import html
from collections.abc import Mapping
from typing import Any

import jinja2
from markupsafe import Markup

from ppdm.utility.report_text import fmt

__all__ = ["environment", "render"]


def _escape(value: Any) -> Markup:
    """A template value as page text: markup as is, anything else escaped."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value)))


@functools.cache
def environment() -> jinja2.Environment:
    """The Jinja2 environment of the templates in ``ppdm/templates``."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ppdm", "templates"),
        autoescape=True,
        finalize=_escape,
        # One line of template, one line of page: block tags leave no line.
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        # A name the Python side forgot to pass is an error, never an empty cell.
        undefined=jinja2.StrictUndefined,
    )
    env.filters["fmt"] = fmt
    env.filters["thousands"] = lambda n: f"{n:,}"
    env.filters["base64"] = lambda png: base64.b64encode(png).decode("ascii")
    return env


def render(name: str, context: Mapping[str, Any]) -> str:
    """The page of template ``name`` filled with ``context``."""
    return environment().get_template(name).render(context)
