"""Rows rejected in every refinement: the lower bound a lattice search prunes on.

A more specific generalization splits each equivalence class into subclasses.
:meth:`Requirement.rows_rejected_in_refinements` claims that, however the
classes are split, the models reject at least that many rows. The claim is
checked against random splits of random tables, for every model the lattice
search asks (k-anonymity, distinct, entropy and recursive l-diversity, equal
and ordered t-closeness), with and without frequency weights; and against the
exact answer on a worked example.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.privacy import Requirement

#: Shorthand requirements, as a data owner's configuration writes them.
REQUIREMENTS = {
    "k": dict(k=4),
    "distinct l": dict(k=2, l=3),
    "entropy l": dict(k=2, l=2.5, l_variant="entropy"),
    "recursive": dict(k=1, l=2, l_variant="recursive", c=2.0),
    "t": dict(k=1, t=0.2),
    "ordered t": dict(k=1, t=0.15, ordered=True),
    "entropy and t": dict(k=3, l=1.8, l_variant="entropy", t=0.3),
}


def _requirement(name: str) -> tuple[Requirement, str]:
    arguments = dict(REQUIREMENTS[name])
    attribute = "score" if arguments.pop("ordered", False) else "dx"
    needs = any(key in arguments for key in ("l", "t"))
    return (
        Requirement.of(("q",), attribute if needs else None, **arguments),
        attribute,
    )


def _rejected_rows(
    requirement: Requirement, table: pd.DataFrame, ids: np.ndarray, weights
) -> float:
    encoded = requirement.encode(table, weights=weights)
    n = int(ids.max()) + 1
    accepted = requirement.accepts_groups(ids, n, encoded, weights=weights)
    sizes = np.bincount(ids, weights=weights, minlength=n)
    return float(sizes[~accepted].sum())


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(sorted(REQUIREMENTS)),
    st.integers(0, 2**32 - 1),
    st.integers(6, 60),
    st.booleans(),
)
def test_no_split_of_the_classes_rejects_fewer_rows_than_the_bound(
    name, seed, rows, weighted
):
    rng = np.random.default_rng(seed)
    requirement, _ = _requirement(name)
    table = pd.DataFrame(
        {
            # skewed values, so that some classes fail and some pass
            "dx": rng.choice(list("abcde"), rows, p=[0.5, 0.2, 0.15, 0.1, 0.05]),
            "score": rng.integers(0, 6, rows),
        }
    )
    weights = rng.integers(1, 4, rows) if weighted else None
    coarse = rng.integers(0, max(1, rows // 8), rows)
    coarse = np.unique(coarse, return_inverse=True)[1]
    encoded = requirement.encode(table, weights=weights)
    bound = requirement.rows_rejected_in_refinements(
        coarse, int(coarse.max()) + 1, encoded, weights=weights
    )
    assert bound <= _rejected_rows(requirement, table, coarse, weights) + 1e-9
    for _ in range(8):
        # a refinement: each class split into up to four parts at random
        fine = coarse * 4 + rng.integers(0, 4, rows)
        fine = np.unique(fine, return_inverse=True)[1]
        assert bound <= _rejected_rows(requirement, table, fine, weights) + 1e-9


def test_the_bounds_of_a_worked_example():
    """Two classes of 10 rows, 0.8 and 0.2 of value a; the whole table is half a."""
    table = pd.DataFrame({"dx": list("aaaaaaaabb" + "aabbbbbbbb")})
    ids = np.repeat([0, 1], 10)
    # t = 0.2: each class is at distance 0.3, so at least (0.3 - 0.2) / (1 - 0.2)
    # of its rows fail in any split
    requirement = Requirement.of(("q",), "dx", t=0.2)
    bound = requirement.rows_rejected_in_refinements(ids, 2, requirement.encode(table))
    assert bound == pytest.approx(2 * 10 * (0.3 - 0.2) / 0.8, abs=1e-6)
    # entropy l = 2: each class has entropy H(0.8, 0.2) = 0.500 < log 2
    requirement = Requirement.of(("q",), "dx", l=2, l_variant="entropy")
    bound = requirement.rows_rejected_in_refinements(ids, 2, requirement.encode(table))
    entropy = -(0.8 * math.log(0.8) + 0.2 * math.log(0.2))
    assert bound == pytest.approx(2 * 10 * (1 - entropy / math.log(2)), rel=1e-6)
    # a split that meets it closely: class 0 as {a x 6} (fails: one value) and
    # {a, a, b, b} (passes): 6 rows rejected, above the 2.8 of the bound
    split = np.array([0] * 6 + [1] * 4 + [2] * 10)
    encoded = requirement.encode(table)
    accepted = requirement.accepts_groups(split, 3, encoded)
    assert accepted.tolist() == [False, True, False]
    assert 6 >= bound / 2
