"""The part mapper on a Dask cluster: results in order, folded, and let go when fetched."""

from __future__ import annotations

import logging
import time
import warnings

import numpy as np
import pandas as pd
import pytest

from ppdm.exceptions import InvalidParameterError
from ppdm.scale.engine import (
    ClusterSettings,
    cluster,
    fold_parts,
    map_large,
    map_parts,
    using,
)
from ppdm.scale.frequency import FrequencyTable


def _block(i: int) -> np.ndarray:
    """About 1 MB per partition, tagged with its number."""
    return np.full(131_072, i, dtype=np.int64)


def _fails_on_seven(i: int) -> int:
    if i == 7:
        raise ArithmeticError(f"partition {i} is broken")
    return i


def _frequencies(job: tuple[int, int]) -> FrequencyTable:
    seed, rows = job
    return FrequencyTable.of(_people(rows, seed), ["age", "sex"])


def _people(rows: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(20, 40, size=rows),
            "sex": pd.array(rng.choice(["F", "M", None], size=rows), dtype="string"),
        }
    )


def _held(client) -> int:
    """Results the workers hold in memory."""
    return sum(client.run(lambda dask_worker: len(dask_worker.data)).values())


def _unfinished(client) -> int:
    """Tasks the scheduler still has queued, waiting or running."""

    def count(dask_scheduler) -> int:
        busy = ("waiting", "queued", "no-worker", "processing")
        return sum(task.state in busy for task in dask_scheduler.tasks.values())

    return client.run_on_scheduler(count)


@pytest.fixture(scope="module")
def running():
    with cluster(ClusterSettings(workers=2, memory_limit="1GB")) as part_cluster:
        yield part_cluster


def test_results_in_the_order_of_the_partitions(running):
    with using(running):
        found = map_parts(_block, range(12))
    assert [int(block[0]) for block in found] == list(range(12))


def _column_sums(matrix: np.ndarray) -> np.ndarray:
    return matrix.sum(axis=0)


def test_large_items_are_sent_once_and_give_the_results_made_here(running):
    # about 16 MB each: inside the task graph Dask would warn and copy them
    items = [np.full((2_000, 1_000), float(i)) for i in range(3)]
    here = map_large(_column_sums, items)
    with using(running), warnings.catch_warnings():
        warnings.simplefilter("error")
        there = map_large(_column_sums, items)
    assert [float(r[0]) for r in there] == [0.0, 2_000.0, 4_000.0]
    for a, b in zip(here, there, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_fetched_result_is_let_go_on_the_worker(running):
    arriving = running.unordered(_block, list(range(12)))
    first = [next(arriving) for _ in range(8)]
    deadline = time.monotonic() + 60  # every partition done; 4 results not fetched yet
    while _unfinished(running.client) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _unfinished(running.client), "partitions still running after 60 s"
    deadline = time.monotonic() + 10
    while _held(running.client) > 4 + 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    # The 4 results not fetched yet, and at most the one just handed over.
    assert _held(running.client) <= 4 + 1
    rest = list(arriving)
    assert sorted(int(b[0]) for b in first + rest) == list(range(12))
    deadline = time.monotonic() + 10
    while _held(running.client) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _held(running.client) == 0


def test_a_failed_partition_raises_its_error_and_the_rest_is_cancelled(running):
    with using(running), pytest.raises(ArithmeticError, match="partition 7"):
        map_parts(_fails_on_seven, range(40))
    deadline = time.monotonic() + 10
    while _held(running.client) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _held(running.client) == 0
    with using(running):  # the cluster still works
        assert map_parts(_fails_on_seven, [1, 2]) == [1, 2]


@pytest.mark.parametrize("every", [1, 2, 16])
def test_folded_frequencies_are_the_whole_tables(running, every):
    jobs = [(seed, rows) for seed, rows in enumerate([0, 5, 300, 41, 1, 77, 250, 9, 3])]
    whole = FrequencyTable.of(
        pd.concat([_people(rows, seed) for seed, rows in jobs], ignore_index=True),
        ["age", "sex"],
    )
    held: list[int] = []

    def combine(tables: list[FrequencyTable]) -> FrequencyTable:
        held.append(len(tables))
        return FrequencyTable.combine(tables)

    here = fold_parts(_frequencies, jobs, combine, every=every)
    with using(running):
        there = fold_parts(_frequencies, jobs, combine, every=every)
    for folded in (here, there):
        pd.testing.assert_frame_equal(folded.frame, whole.frame)
    assert max(held) <= every + 1


def test_nothing_to_fold_is_an_error():
    with pytest.raises(InvalidParameterError, match="no partitions"):
        fold_parts(_block, [], FrequencyTable.combine)


def test_a_local_cluster_prints_nothing_below_a_warning(caplog):
    caplog.set_level(logging.INFO)
    with cluster(ClusterSettings(workers=1, memory_limit="1GB")) as running:
        with using(running):
            assert map_parts(abs, [-3]) == [3]
    chatter = [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("distributed") and r.levelno < logging.WARNING
    ]
    assert chatter == []
