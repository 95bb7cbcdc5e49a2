"""Out-of-core verification of a release stored as (partitioned) Parquet.

The checks are those of :mod:`ppdm.verify`, computed from group-by aggregates
that Dask evaluates partition by partition: one ``groupby(QI + [SA]).size()``
gives every (class, sensitive value) count, from which class sizes, distinct /
entropy / recursive l, t-closeness and the risk figures follow. Only that
aggregate (one row per class and sensitive value) is brought into memory,
never the rows; it is then handed to the same code as the in-memory path
(:func:`ppdm.verify.verify_partition`), so both give equal certificates.

Dask and distributed are imported only when the Dask engine is used.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError, SourceError
from ppdm.privacy import Requirement
from ppdm.privacy.measures import (
    ClassPartition,
    SensitiveCounts,
    canonical_classes,
    sensitive_value_ranks,
)
from ppdm.release.artifacts import sha256_file
from ppdm.verify.certificate import (
    Certificate,
    Covers,
    certificate_of,
    verify_partition,
)

__all__ = [
    "verify_parquet",
    "verify_csv_files",
    "released_text",
    "parquet_files",
    "DASK_THRESHOLD_BYTES",
]

#: Parquet bytes on disk above which ``engine="auto"`` uses Dask. Parquet
#: text columns expand several-fold in memory, so 256 MB on disk is already
#: a few GB as a pandas frame.
DASK_THRESHOLD_BYTES = 256 * 2**20


def released_text(frame: pd.DataFrame) -> pd.DataFrame:
    """Cells as a released CSV would hold them: text, missing as ``""``.

    Applied to every partition (and to the in-memory table), so a Parquet
    release is read exactly like its CSV form.
    """
    out = {}
    for name in frame.columns:
        column = frame[name]
        if isinstance(column.dtype, pd.StringDtype) and column.dtype.na_value is np.nan:
            text = column
        else:
            text = column.astype("str")
        out[name] = text.where(column.notna(), "")
    return pd.DataFrame(out, index=frame.index).astype("str")


def parquet_files(path: str | Path) -> list[Path]:
    """The Parquet files of a release: the file itself or a directory's parts."""
    path = Path(path)
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.parquet") if p.is_file())
        if files:
            return files
        raise SourceError(f"no .parquet files under {str(path)!r}")
    raise SourceError(f"released table {str(path)!r} does not exist")


def _release_hash(files: Sequence[Path], root: Path) -> str:
    if len(files) == 1 and files[0] == root:
        return sha256_file(root)
    # A directory release: hash of the sorted (relative name, file hash) list.
    digest = hashlib.sha256()
    for f in files:
        digest.update(f"{f.relative_to(root).as_posix()}\t{sha256_file(f)}\n".encode())
    return digest.hexdigest()


def verify_parquet(
    path: str | Path,
    requirement: Requirement,
    *,
    engine: str = "auto",
    memory_limit: str = "2GB",
    original: pd.DataFrame | None = None,
    input_sha256: str | None = None,
    name: str | None = None,
    n_workers: int = 1,
    threads_per_worker: int = 2,
    client: Any = None,
) -> Certificate:
    """Verify a release stored as a Parquet file or a directory of parts.

    Parameters
    ----------
    path : str or pathlib.Path
        A ``.parquet`` file, or a directory of ``*.parquet`` parts (one table).
    requirement : Requirement
    engine : {"auto", "pandas", "dask"}, default="auto"
        "pandas" reads the table into memory; "dask" aggregates it out of core
        on a local ``distributed`` cluster; "auto" picks Dask when the files
        exceed :data:`DASK_THRESHOLD_BYTES`.
    memory_limit : str, default="2GB"
        Memory limit of each Dask worker.
    original : pandas.DataFrame, optional
        Population for journalist / marketer risk.
    input_sha256 : str, optional
    name : str, optional
        Table name in the certificate (default: the file or directory name).
    n_workers, threads_per_worker : int
        Size of the local Dask cluster.
    client : distributed.Client, optional
        Run on this existing cluster instead of starting a local one (then
        ``memory_limit`` and the sizes above are the cluster's business).

    Returns
    -------
    Certificate
        Equal to the in-memory verifier's certificate of the same table.
    """
    if engine not in ("auto", "pandas", "dask"):
        raise InvalidParameterError(
            f"engine must be one of ['auto', 'pandas', 'dask']; got {engine!r}"
        )
    root = Path(path)
    files = parquet_files(root)
    table_name = name or root.name
    if engine == "auto":
        size = sum(f.stat().st_size for f in files)
        engine = "dask" if size > DASK_THRESHOLD_BYTES else "pandas"
    digest = _release_hash(files, root)
    if engine == "pandas":
        frames = [pd.read_parquet(f) for f in files]
        table = released_text(pd.concat(frames, ignore_index=True))
        qis = tuple(q for q in requirement.quasi_identifiers if q in table.columns)
        partition = ClassPartition.of(table, qis)
        columns: Sequence[str] = list(table.columns)
    else:
        import pyarrow.parquet as pq

        columns = list(pq.read_schema(files[0]).names)
        partition, columns = _dask_partition(
            lambda wanted: _read_parquet_text(files, wanted),
            columns,
            requirement,
            memory_limit,
            n_workers,
            threads_per_worker,
            client,
        )
    checked = verify_partition(
        table_name, partition, columns, requirement, original=original, sha256=digest
    )
    return certificate_of([checked], requirement, input_sha256)


def verify_csv_files(
    files: Mapping[str, Path],
    requirement: Requirement,
    *,
    memory_limit: str = "2GB",
    original: pd.DataFrame | None = None,
    input_sha256: str | None = None,
    covers: Covers | None = None,
    n_workers: int = 1,
    threads_per_worker: int = 2,
) -> Certificate:
    """Out-of-core :func:`ppdm.verify.verify_files`: released CSVs read by Dask.

    The files are read in blocks exactly as :func:`ppdm.verify.read_released_table`
    reads them (text, ``"*"`` and ``""`` kept as values) and only the
    (class, sensitive value) counts come into memory, so a release larger than
    memory is checked with the same code and gives the same certificate.
    """
    checked = []
    for table_name, path in files.items():
        path = Path(path)
        if not path.is_file():
            raise SourceError(f"released table {str(path)!r} does not exist")
        columns = list(pd.read_csv(path, nrows=0).columns)
        partition, _ = _dask_partition(
            lambda wanted, p=path: _read_csv_text(p, wanted),
            columns,
            requirement,
            memory_limit,
            n_workers,
            threads_per_worker,
            None,
        )
        checked.append(
            verify_partition(
                table_name,
                partition,
                columns,
                requirement,
                original=original,
                sha256=sha256_file(path),
                covers=covers,
            )
        )
    return certificate_of(checked, requirement, input_sha256)


def _read_csv_text(path: Path, wanted: list[str]) -> Any:
    import dask.dataframe as dd

    return dd.read_csv(
        str(path), usecols=wanted, dtype=str, keep_default_na=False, blocksize="64MB"
    )


def _read_parquet_text(files: Sequence[Path], wanted: list[str]) -> Any:
    import dask.dataframe as dd

    frame = dd.read_parquet([str(f) for f in files], columns=wanted)
    meta = pd.DataFrame({c: pd.Series([], dtype="str") for c in wanted})
    return frame.map_partitions(released_text, meta=meta)


def _dask_partition(
    read: Any,
    columns: list[str],
    requirement: Requirement,
    memory_limit: str,
    n_workers: int,
    threads_per_worker: int,
    client: Any,
) -> tuple[ClassPartition, list[str]]:
    """Class partition from ``read(wanted_columns)``, a Dask frame of text cells."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - dask ships with prefect-dask
        raise ImportError(
            "engine='dask' needs dask[dataframe] and distributed "
            "(pip install 'dask[dataframe]' distributed)"
        ) from exc

    qis = [q for q in requirement.quasi_identifiers if q in columns]
    sa = requirement.sensitive_attribute
    wanted = [*qis, sa] if sa is not None and sa in columns else list(qis)

    def aggregate() -> pd.Series:
        text = read(wanted)
        # One output partition: the aggregate is small (classes x values), and
        # a tree reduction avoids the shuffle Dask would otherwise plan.
        return (
            text.groupby(wanted, dropna=False, observed=True)
            .size(split_out=1)
            .compute()
        )

    if client is not None:
        with client.as_current():
            counts = aggregate()
    else:
        with (
            LocalCluster(
                n_workers=n_workers,
                threads_per_worker=threads_per_worker,
                memory_limit=memory_limit,
                processes=True,
                dashboard_address=None,
            ) as cluster,
            Client(cluster),
        ):
            counts = aggregate()
    sensitive = sa if len(wanted) > len(qis) else None
    return _partition_from_counts(counts, qis, sensitive), columns


def _partition_from_counts(
    counts: pd.Series, qis: Sequence[str], sa: str | None
) -> ClassPartition:
    """Classes and sensitive counts from a ``groupby(QI [+ SA]).size()``."""
    index = counts.index.to_frame(index=False)
    weights = counts.to_numpy(dtype=np.int64)
    if qis:
        ids, class_rows = _class_ids(index[list(qis)])
    else:  # no QI in the table: every row is one class
        ids, class_rows = np.zeros(len(index), dtype=np.int64), np.array([0])
    n_classes = len(class_rows)
    sizes = np.bincount(ids, weights=weights, minlength=n_classes).astype(np.int64)
    keys = index.iloc[class_rows][list(qis)].reset_index(drop=True)
    sensitive = []
    if sa is not None:
        codes, uniques = pd.factorize(index[sa], use_na_sentinel=False)
        values = np.asarray(uniques, dtype=object)
        sensitive.append(
            SensitiveCounts(
                sa,
                sizes,
                ids,
                codes.astype(np.int64),
                weights,
                values,
                sensitive_value_ranks(values, index[sa].dtype),
            )
        )
    return ClassPartition.from_aggregates(qis, keys, sizes, sensitive)


def _class_ids(keys: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    ids, _ = canonical_classes(keys, list(keys.columns))
    return ids, np.unique(ids, return_index=True)[1]
