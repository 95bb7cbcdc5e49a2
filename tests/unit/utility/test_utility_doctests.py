"""The examples in the utility modules' docstrings run and give what they show."""

from __future__ import annotations

import doctest

import pytest

from ppdm.utility import intervals, loss, preprocessing, report, report_text, views


@pytest.mark.parametrize(
    "module",
    [intervals, loss, preprocessing, report, report_text, views],
    ids=lambda m: m.__name__,
)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.attempted > 0
    assert result.failed == 0
