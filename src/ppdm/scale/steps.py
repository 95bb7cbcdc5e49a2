"""The release steps out of core: each step one Parquet partition at a time.

:mod:`ppdm.pipeline` calls these when a release runs on the Dask engine.
Every table between the steps is a partitioned artifact of the store (a
directory of Parquet parts); each worker reads one partition, does its part
and writes its output partition, so no process ever holds the table:

* ingest streams the source into parts;
* validate runs pandera and Great Expectations per part, the suite's
  table-level expectations from the parts' summaries;
* discretize fits cut points on exact per-part histograms;
* anonymize reduces every part to its frequency table of (quasi-identifiers,
  sensitive attributes, target), sums them, runs the algorithm's
  :meth:`~ppdm.algorithms.base.Anonymizer.recode` on the sum, and applies the
  recoding to every part; the released rows are then shuffled across parts
  (:func:`scatter` and :func:`gather`, seeded from the release seed);
* verify aggregates the released parts on the cluster (the same verifier as
  the in-memory path);
* the utility report measures a seeded sample of the rows.
"""

from __future__ import annotations

import functools
import pickle
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ppdm._lazy import pandas as pd
from ppdm.release.artifacts import ArtifactRef, ArtifactStore
from ppdm.scale.engine import fold_parts, map_parts
from ppdm.scale.frequency import FrequencyTable
from ppdm.scale.recoding import Recoding

__all__ = [
    "frequency_table",
    "release_parts",
    "sample_parts",
    "seed_for",
    "parquet_rows",
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


def _write(frame: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(path, index=False, engine="pyarrow", compression="zstd")


def _read(path: str | Path, columns: Sequence[str] | None = None) -> pd.DataFrame:
    return pd.read_parquet(path, engine="pyarrow", columns=columns)


def parquet_rows(path: str | Path) -> int:
    """Rows of a Parquet file, from its footer."""
    import pyarrow.parquet as pq

    return int(pq.ParquetFile(path).metadata.num_rows)


# -- the frequency table ---------------------------------------------------------
@dataclass(frozen=True)
class _FrequencyJob:
    path: str
    columns: tuple[str, ...]


def _part_frequencies(job: _FrequencyJob) -> FrequencyTable:
    return FrequencyTable.of(_read(job.path, list(job.columns)), job.columns)


def frequency_table(parts: Sequence[Path], columns: Sequence[str]) -> FrequencyTable:
    """The frequency table of the partitioned table over ``columns``."""
    columns = tuple(dict.fromkeys(columns))
    # Summed as they arrive: one part's table is most of the whole's distinct
    # combinations, so a list of all of them would be the partitions times it.
    return fold_parts(
        _part_frequencies,
        [_FrequencyJob(str(p), columns) for p in parts],
        FrequencyTable.combine,
    )


# -- the release: recode every part, then shuffle across parts ------------------------
@dataclass(frozen=True)
class _ScatterJob:
    source: str
    pieces: str
    index: int
    n_out: int
    seed: int
    recoding: str


@functools.lru_cache(maxsize=1)
def _recoding(path: str) -> Recoding:
    # Read once per worker process: the recoding holds every distinct
    # combination, too much to send again with each of hundreds of partitions.
    with open(path, "rb") as handle:
        return pickle.load(handle)


def _scatter(job: _ScatterJob) -> list[int]:
    """Recode one part; send each released row to a random output part.

    The rows bound for output part ``j`` are record batch ``j`` of this
    part's pieces file (Arrow IPC, LZ4): one file per input part, whatever
    the number of output parts, and each batch read on its own by
    :func:`_gather`.
    """
    import pyarrow as pa

    released = _recoding(job.recoding).apply(_read(job.source))
    bucket = seed_for(job.seed, SHUFFLE_STREAM, job.index).integers(
        job.n_out, size=len(released)
    )
    sizes = np.bincount(bucket, minlength=job.n_out)
    order = np.argsort(bucket, kind="stable")
    batch = pa.RecordBatch.from_pandas(released.iloc[order], preserve_index=False)
    options = pa.ipc.IpcWriteOptions(compression="lz4")
    with pa.ipc.new_file(job.pieces, batch.schema, options=options) as writer:
        for first, size in zip(np.cumsum(sizes) - sizes, sizes, strict=True):
            writer.write_batch(batch.slice(int(first), int(size)))
    return sizes.tolist()


@dataclass(frozen=True)
class _GatherJob:
    pieces: tuple[str, ...]
    target: str
    index: int
    seed: int


def _gather(job: _GatherJob) -> int:
    """One output part: its batch from every input part, in a random order."""
    import pyarrow as pa

    batches = []
    for path in job.pieces:
        with pa.memory_map(path) as source:
            batches.append(pa.ipc.open_file(source).get_batch(job.index))
    frame = pa.Table.from_batches(batches).to_pandas()
    order = seed_for(job.seed, ORDER_STREAM, job.index).permutation(len(frame))
    _write(frame.iloc[order].reset_index(drop=True), Path(job.target))
    return len(frame)


def release_parts(
    parts: Sequence[Path], recoding: Recoding, out_dir: Path, *, seed: int
) -> int:
    """Write the release of the partitioned table to ``out_dir``, rows shuffled.

    Every row goes to an output part drawn from the seed's shuffle stream of
    its input part, and every output part is permuted with its own stream: no
    row keeps its input position or its input part, and the same input,
    recoding and seed give the same bytes. Returns the rows released.
    """
    pieces = out_dir.parent / f"{out_dir.name}.pieces"
    pieces.mkdir(parents=True, exist_ok=True)
    n_out = len(parts)
    shared = pieces / "recoding.pickle"
    with open(shared, "wb") as handle:
        pickle.dump(recoding, handle, protocol=pickle.HIGHEST_PROTOCOL)
    scatter = [
        _ScatterJob(
            str(p), str(pieces / f"from-{i:05d}.arrow"), i, n_out, seed, str(shared)
        )
        for i, p in enumerate(parts)
    ]
    map_parts(_scatter, scatter)
    gather = [
        _GatherJob(
            tuple(job.pieces for job in scatter),
            str(out_dir / f"part-{j:05d}.parquet"),
            j,
            seed,
        )
        for j in range(n_out)
    ]
    rows = sum(map_parts(_gather, gather))
    shutil.rmtree(pieces, ignore_errors=True)
    return rows


# -- the utility report's sample -----------------------------------------------------
@dataclass(frozen=True)
class _SampleJob:
    path: str
    share: float
    index: int
    seed: int


def _sample_part(job: _SampleJob) -> pd.DataFrame:
    frame = _read(job.path)
    keep = seed_for(job.seed, SAMPLE_STREAM, job.index).random(len(frame)) < job.share
    return frame[keep]


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
