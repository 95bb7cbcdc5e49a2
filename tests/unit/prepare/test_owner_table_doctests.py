"""The examples in the docstrings of an owner's table's modules run and give what they show.

They are known answers: a stay of ``three`` set aside, a zip pattern learned, ranges with
headroom, a month range from a group's ends, an exact date released as its month.
"""

from __future__ import annotations

import doctest

import pytest

from ppdm.generalization import ordered_text
from ppdm.prepare import column_types, hierarchy_proposal, profile, target_check


@pytest.mark.parametrize(
    "module",
    [ordered_text, profile, column_types, hierarchy_proposal, target_check],
    ids=lambda m: m.__name__,
)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.attempted > 0
    assert result.failed == 0
