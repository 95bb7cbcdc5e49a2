"""The parallel seam: results in order whoever runs them, and the same answers as in place."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ppdm import parallel
from ppdm.algorithms import get_algorithm
from ppdm.model import AnonymizationSpec
from ppdm.prepare import datasets
from ppdm.utility.cross_validation import cross_validate


def _threads(fn, items):
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = [pool.submit(fn, item) for item in items]
        return [future.result() for future in futures]


@given(st.lists(st.integers(), max_size=40), st.integers(1, 9))
def test_batches_cut_in_order_into_near_equal_parts(items, count):
    cut = parallel.batches(items, count)
    assert [item for batch in cut for item in batch] == items
    assert len(cut) == max(1, min(count, len(items)))
    sizes = [len(batch) for batch in cut]
    assert max(sizes) - min(sizes) <= 1


def test_map_in_order_runs_through_the_installed_mapper_only_inside_the_block():
    calls = []

    def mapper(fn, items):
        calls.append(len(items))
        return [fn(item) for item in reversed(items)][::-1]

    with parallel.mapped_by(mapper):
        assert parallel.map_in_order(lambda x: x * x, [1, 2, 3]) == [1, 4, 9]
    assert parallel.map_in_order(lambda x: x + 1, [1, 2]) == [2, 3]
    assert calls == [3]


def test_a_mapper_that_loses_results_is_refused():
    with parallel.mapped_by(lambda fn, items: [fn(items[0])]):
        with pytest.raises(RuntimeError, match="1 results for 2 items"):
            parallel.map_in_order(str, [1, 2])


def _german():
    table = datasets.load("german")
    qis = ["age", "job", "housing", "personal-status-sex", "employment-since"]
    columns = [*qis, "purpose", "credit"]
    table = table[columns].copy()
    table["age"] = (table["age"].astype(int) // 10 * 10).astype(str)
    return table, AnonymizationSpec.of(qis, "purpose", "credit", k=10, l=1)


def test_dmpd_with_a_thread_mapper_releases_what_it_releases_in_place():
    table, spec = _german()
    algorithm = get_algorithm("dmpd", generations=4, population=10, n_folds=2)
    alone = algorithm.anonymize(table, spec, np.random.default_rng(3))
    with parallel.mapped_by(_threads):
        spread = algorithm.anonymize(table, spec, np.random.default_rng(3))
    assert alone.tables.keys() == spread.tables.keys()
    for name, released in alone.tables.items():
        assert released.equals(spread.tables[name]), name
    assert alone.evidence == spread.evidence


def test_cross_validation_folds_spread_over_threads_give_the_same_rows():
    table, spec = _german()
    mondrian = get_algorithm("mondrian")

    def anonymize(train):
        return mondrian.anonymize(train, spec, np.random.default_rng(0))

    kwargs = dict(target="credit", repeats=2, folds=2, seed=5, models=["naive_bayes"])
    alone = cross_validate(table, anonymize, **kwargs)
    with parallel.mapped_by(_threads):
        spread = cross_validate(table, anonymize, **kwargs)
    columns = [c for c in alone.columns if c != "seconds_anonymize"]
    assert alone[columns].equals(spread[columns])
    assert len(alone) == 4


def test_model_fits_spread_over_threads_score_the_same():
    from ppdm.utility.scoring import train_and_score

    table, spec = _german()
    train, test = table.iloc[:700], table.iloc[700:]
    released = get_algorithm("mondrian").anonymize(
        train, spec, np.random.default_rng(1)
    )
    calls = []

    def counting(fn, items):
        calls.append(len(items))
        return _threads(fn, items)

    kwargs = dict(target="credit", seed=2)
    alone = train_and_score(train, released, test, **kwargs)
    with parallel.mapped_by(counting):
        spread = train_and_score(train, released, test, **kwargs)
    assert alone == spread
    assert calls == [2 * len(alone)]  # every model, on both tables, in one map
