"""The release steps out of core: each step one Parquet partition at a time.

:mod:`ppdm.pipeline` calls these when a release runs on the Dask engine.
Every table between the steps is a partitioned artifact of the store (a
directory of Parquet parts); each worker reads one partition, does its part
and writes its output partition, so no process ever holds the table:

* ingest streams the source into parts;
* validate runs pandera and Great Expectations per part, the suite's
  table-level expectations from the parts' summaries;
* discretize fits cut points on exact per-part histograms;
* anonymize reads every part once (:func:`scattered`): its frequency table of
  (quasi-identifiers, sensitive attributes, target), and its rows sent to
  random output parts (seeded from the release seed). The frequency tables
  are summed, the algorithm's :meth:`~ppdm.algorithms.base.Anonymizer.recode`
  runs on the sum, and each output part is permuted and recoded
  (:func:`release_scattered`);
* verify aggregates the released parts on the cluster (the same verifier as
  the in-memory path);
* the utility report measures a seeded sample of the rows.
"""

from __future__ import annotations

import contextlib
import functools
import pickle
import shutil
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.release.artifacts import ArtifactRef, ArtifactStore
from ppdm.scale.engine import fold_parts, map_parts
from ppdm.scale.frequency import FrequencyTable
from ppdm.scale.part_files import decoded, parquet_rows, read_part_table
from ppdm.scale.recoding import Recoding

__all__ = [
    "Scattered",
    "scattered",
    "release_scattered",
    "release_parts",
    "sample_parts",
    "seed_for",
    "SHUFFLE_STREAM",
    "ORDER_STREAM",
    "SAMPLE_STREAM",
]

#: Streams of the release seed (:func:`seed_for`): which output part each row
#: goes to, the order of the rows within a part, and the utility sample.
SHUFFLE_STREAM, ORDER_STREAM, SAMPLE_STREAM = 101, 102, 103


def seed_for(seed: int, stream: int, index: int) -> np.random.Generator:
    """The generator of partition ``index`` in ``stream``, from the release seed."""
    return np.random.default_rng(
        np.random.SeedSequence(seed, spawn_key=(stream, index))
    )


# -- the release: frequency table and shuffle in one pass, then recode ----------------
@dataclass(frozen=True)
class _ScatterJob:
    source: str
    pieces: str
    index: int
    n_out: int
    seed: int
    columns: tuple[str, ...]


def _scatter(job: _ScatterJob) -> FrequencyTable:
    """One part's frequency table; each of its rows sent to a random output part.

    The rows bound for output part ``j`` are record batch ``j`` of this
    part's pieces file (Arrow IPC, LZ4): one file per input part, whatever
    the number of output parts, and each batch read on its own by
    :func:`_gather`. The rows are sent as read (text as dictionary codes,
    so the shuffle moves integers, not strings); :func:`_gather` recodes
    them once the recoding is known.
    """
    import pyarrow as pa

    table = read_part_table(job.source)
    frequencies = FrequencyTable.of(
        decoded(table.select(list(job.columns)), job.source), job.columns
    )
    bucket = seed_for(job.seed, SHUFFLE_STREAM, job.index).integers(
        job.n_out, size=table.num_rows
    )
    sizes = np.bincount(bucket, minlength=job.n_out)
    order = np.argsort(bucket, kind="stable")
    taken = table.take(order)
    # One record batch, sliced: an empty slice is still written as a batch
    # (a table's empty slice is not), so batch j is always output part j's.
    sent = pa.RecordBatch.from_arrays(
        [column.combine_chunks() for column in taken.columns], schema=taken.schema
    )
    options = pa.ipc.IpcWriteOptions(compression="lz4")
    with pa.ipc.new_file(job.pieces, sent.schema, options=options) as writer:
        for first, size in zip(np.cumsum(sizes) - sizes, sizes, strict=True):
            writer.write_batch(sent.slice(int(first), int(size)))
    return frequencies


@functools.lru_cache(maxsize=1)
def _recoding(path: str) -> Recoding:
    # Read once per worker process: the recoding holds every distinct
    # combination, too much to send again with each of hundreds of partitions.
    with open(path, "rb") as handle:
        return pickle.load(handle)


@dataclass(frozen=True)
class _GatherJob:
    pieces: tuple[str, ...]
    like: str
    target: str
    index: int
    seed: int
    recoding: str


def _gather(job: _GatherJob) -> int:
    """One output part: its batch from every input part, in a random order, recoded."""
    import pyarrow as pa

    from ppdm.release.data_files import write_released_part

    batches = []
    for path in job.pieces:
        with pa.memory_map(path) as source:
            batches.append(pa.ipc.open_file(source).get_batch(job.index))
    table = pa.Table.from_batches(batches)
    order = seed_for(job.seed, ORDER_STREAM, job.index).permutation(table.num_rows)
    recoding = _recoding(job.recoding)
    # Recoding keeps the order of the rows it keeps: permuted first, on the
    # codes. The quasi-identifiers are only looked up (their released values
    # replace them), so they stay codes.
    rows = decoded(table.take(order), job.like, coded=recoding.quasi_identifiers)
    released = recoding.apply(rows)
    write_released_part(released, Path(job.target))
    return len(released)


@dataclass(frozen=True)
class Scattered:
    """The partitioned table read once: its frequency table, its rows shuffled."""

    frequencies: FrequencyTable
    pieces: tuple[str, ...]
    like: str
    n_out: int
    directory: Path
    seed: int


@contextlib.contextmanager
def scattered(
    parts: Sequence[Path], columns: Sequence[str], directory: Path, *, seed: int
) -> Iterator[Scattered]:
    """Read every part once: its frequency table over ``columns``, its rows shuffled.

    Every row goes to an output part drawn from the seed's shuffle stream of
    its input part (:func:`release_scattered` then permutes each output part
    with its own stream). The shuffled rows wait in ``directory``, which is
    removed when the block ends, whatever happens in it.
    """
    columns = tuple(dict.fromkeys(columns))
    directory.mkdir(parents=True, exist_ok=True)
    n_out = len(parts)
    try:
        jobs = [
            _ScatterJob(
                str(p), str(directory / f"from-{i:05d}.arrow"), i, n_out, seed, columns
            )
            for i, p in enumerate(parts)
        ]
        # Summed as they arrive: one part's table is most of the whole's distinct
        # combinations, so a list of all of them would be the partitions times it.
        frequencies = fold_parts(_scatter, jobs, FrequencyTable.combine)
        yield Scattered(
            frequencies,
            tuple(job.pieces for job in jobs),
            str(parts[0]),
            n_out,
            directory,
            seed,
        )
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def release_scattered(shuffled: Scattered, recoding: Recoding, out_dir: Path) -> int:
    """Write the release of the scattered table to ``out_dir``; the rows released.

    No row keeps its input position or its input part, and the same input,
    recoding and seed give the same bytes.
    """
    shared = shuffled.directory / "recoding.pickle"
    with open(shared, "wb") as handle:
        pickle.dump(recoding, handle, protocol=pickle.HIGHEST_PROTOCOL)
    out_dir.mkdir(parents=True, exist_ok=True)
    gather = [
        _GatherJob(
            shuffled.pieces,
            shuffled.like,
            str(out_dir / f"part-{j:05d}.parquet"),
            j,
            shuffled.seed,
            str(shared),
        )
        for j in range(shuffled.n_out)
    ]
    return sum(map_parts(_gather, gather))


def release_parts(
    parts: Sequence[Path], recoding: Recoding, out_dir: Path, *, seed: int
) -> int:
    """Write the release of the partitioned table to ``out_dir``, rows shuffled."""
    pieces = out_dir.parent / f"{out_dir.name}.pieces"
    with scattered(parts, recoding.quasi_identifiers, pieces, seed=seed) as shuffled:
        return release_scattered(shuffled, recoding, out_dir)


# -- the utility report's sample -----------------------------------------------------
@dataclass(frozen=True)
class _SampleJob:
    path: str
    share: float
    index: int
    seed: int


def _sample_part(job: _SampleJob) -> pd.DataFrame:
    import pyarrow as pa

    # Kept rows chosen on the codes; strings made for the sample only.
    table = read_part_table(job.path)
    keep = (
        seed_for(job.seed, SAMPLE_STREAM, job.index).random(table.num_rows) < job.share
    )
    return decoded(table.filter(pa.array(keep)), job.path)


def sample_parts(
    parts: Sequence[Path], rows: int, *, total: int | None = None, seed: int
) -> pd.DataFrame:
    """A seeded sample of about ``rows`` rows (each row kept with one probability).

    The whole table when it has no more than ``rows`` rows.
    """
    total = sum(parquet_rows(p) for p in parts) if total is None else total
    share = 1.0 if total <= rows else rows / total
    frames = map_parts(
        _sample_part, [_SampleJob(str(p), share, i, seed) for i, p in enumerate(parts)]
    )
    return pd.concat(frames, ignore_index=True)


def parts_of(ref: ArtifactRef) -> list[Path]:
    """The part files of a partitioned artifact, checked against its hash."""
    ref.verify()
    return ref.parts


def put_parts(store: ArtifactStore, directory: Path, *, kind: str) -> ArtifactRef:
    """Store a directory of parts, counting its rows from the footers."""
    rows = sum(parquet_rows(p) for p in sorted(directory.iterdir()))
    return store.put_parts(directory, kind=kind, rows=rows)


def frequency_columns(spec: Any) -> list[str]:
    """Quasi-identifiers, sensitive attributes and target: what the algorithms read."""
    columns = [*spec.quasi_identifiers, *spec.requirement.sensitive_attributes]
    if spec.target is not None:
        columns.append(spec.target)
    return list(dict.fromkeys(columns))


def recoding_summary(recoding: Recoding, counts: Mapping[str, Any]) -> dict[str, Any]:
    """The evidence file's content for a recoded release."""
    return {
        "algorithm": recoding.algorithm,
        "params": dict(recoding.params),
        "records_in": recoding.records_in,
        "evidence": dict(recoding.evidence),
        **counts,
    }
