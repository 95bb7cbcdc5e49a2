"""Out-of-core verification of a release, in either format it is published in.

A table is read as :mod:`ppdm.release.data_files` reads it, a CSV or Parquet
parts alike (:func:`ppdm.release.data_files.lazy_released_table`: text cells,
in blocks).

The checks are those of :mod:`ppdm.verify`, computed from group-by aggregates
that Dask evaluates partition by partition: one ``groupby(QI + [SA]).size()``
gives every (class, sensitive value) count, from which class sizes, distinct /
entropy / recursive l, t-closeness and the risk figures follow. Only that
aggregate (one row per class and sensitive value) is brought into memory,
never the rows; it is then handed to the same code as the in-memory path
(:func:`ppdm.verify.verify_partition`), so both give equal certificates.

The pass-through check of columns released as is
(:mod:`ppdm.verify.passthrough`) is computed the same way: per column, the
class sizes over the quasi-identifiers plus the column stay on the cluster
and only four sums come back, and the proxy part reads only the counts of
rows whose column value pins a quasi-identifier in the original table.

Dask and distributed are imported only when the Dask engine is used.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError, SourceError
from ppdm.identifiers import looks_identifying
from ppdm.privacy import Requirement
from ppdm.privacy._containment import quasi_identifier_columns
from ppdm.privacy.measures import (
    ClassPartition,
    SensitiveCounts,
    canonical_classes,
    sensitive_value_ranks,
)
from ppdm.release.data_files import (
    ReleasedFiles,
    lazy_released_table,
    read_released_table,
    released_header,
    released_sha256,
    table_files,
)
from ppdm.verify.certificate import (
    Certificate,
    Covers,
    VerifyOptions,
    certificate_of,
    verify_partition,
)
from ppdm.verify.passthrough import (
    PassthroughPolicy,
    PassthroughResult,
    PassthroughTable,
    below_k_from_sums,
    canonical_text,
    check_passthrough,
    checked_columns,
    proxy_groups,
)

__all__ = [
    "verify_parquet",
    "verify_tables_out_of_core",
    "DASK_THRESHOLD_BYTES",
]

#: Parquet bytes on disk above which ``engine="auto"`` uses Dask. Parquet
#: text columns expand several-fold in memory, so 256 MB on disk is already
#: a few GB as a pandas frame.
DASK_THRESHOLD_BYTES = 256 * 2**20


def _existing_files(files: ReleasedFiles) -> list[Path]:
    """The files of one released table, each of which must exist."""
    paths = table_files(files)
    for path in paths:
        if not path.is_file():
            raise SourceError(f"released table {str(path)!r} does not exist")
    return paths


def verify_parquet(
    path: str | Path | Sequence[str | Path],
    requirement: Requirement,
    options: VerifyOptions = VerifyOptions(),
    *,
    engine: str = "auto",
    memory_limit: str = "2GB",
    name: str | None = None,
    n_workers: int = 1,
    threads_per_worker: int = 2,
    client: Any = None,
) -> Certificate:
    """Verify one released table: a Parquet file, a directory of parts, or a CSV.

    Parameters
    ----------
    path : str, pathlib.Path or sequence of them
        A ``.parquet`` file, a directory of ``*.parquet`` parts, the parts
        themselves, or a released CSV (one table).
    requirement : Requirement
    options : VerifyOptions, optional
        The original table (population for journalist / marketer risk), the
        input's hash, the hierarchy covers and the pass-through policy, as for
        :func:`ppdm.verify.verify_files` (with Dask the pass-through columns
        are checked from group-by counts, out of core).
    engine : {"auto", "pandas", "dask"}, default="auto"
        "pandas" reads the table into memory; "dask" aggregates it out of core
        on a local ``distributed`` cluster; "auto" picks Dask when the files
        exceed :data:`DASK_THRESHOLD_BYTES`.
    memory_limit : str, default="2GB"
        Memory limit of each Dask worker.
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
    _refuse_release_models(requirement)
    if engine not in ("auto", "pandas", "dask"):
        raise InvalidParameterError(
            f"engine must be one of ['auto', 'pandas', 'dask']; got {engine!r}"
        )
    files = _existing_files(path)
    table_name = name or (
        Path(path).name if isinstance(path, str | Path) else files[0].parent.name
    )
    if engine == "auto":
        size = sum(f.stat().st_size for f in files)
        engine = "dask" if size > DASK_THRESHOLD_BYTES else "pandas"
    results: list[PassthroughResult] | None = None
    if engine == "dask":
        with _dask_session(memory_limit, n_workers, threads_per_worker, client):
            checked, results = _verify_lazily(table_name, path, requirement, options)
        return certificate_of([checked], requirement, options.input_sha256, results)
    table = read_released_table(files)
    qis = quasi_identifier_columns(table.columns, requirement.quasi_identifiers)
    if options.passthrough is not None:
        results = check_passthrough(
            table,
            requirement,
            options.passthrough,
            options.original,
            options.covers,
            table=table_name,
        )
    checked = verify_partition(
        table_name,
        ClassPartition.of(table, qis),
        list(table.columns),
        requirement,
        options,
        sha256=released_sha256(path),
    )
    return certificate_of([checked], requirement, options.input_sha256, results)


def _refuse_release_models(requirement: Requirement) -> None:
    """Release models read all tables at once: not on this path."""
    if requirement.release_models:
        names = ", ".join(str(m) for m in requirement.release_models)
        raise InvalidParameterError(
            f"{names} judge(s) the released tables together, which the "
            "out-of-core verifier does not do; verify this release in memory "
            "(compute: {verify_engine: pandas})"
        )


def verify_tables_out_of_core(
    files: Mapping[str, ReleasedFiles],
    requirement: Requirement,
    options: VerifyOptions = VerifyOptions(),
    *,
    memory_limit: str = "2GB",
    n_workers: int = 1,
    threads_per_worker: int = 2,
    client: Any = None,
) -> Certificate:
    """Out-of-core :func:`ppdm.verify.verify_files`: released tables read by Dask.

    Each table is a CSV or Parquet parts, in whatever format it was published
    (:data:`ppdm.release.data_files.ReleasedFiles`). The files are read in
    blocks exactly as :func:`ppdm.verify.read_released_table` reads them
    (text, ``"*"`` and ``""`` kept as values;
    :func:`ppdm.release.data_files.lazy_released_table`) and only the
    (class, sensitive value) counts come into memory, so a release larger than
    memory is checked with the same code and gives the same certificate.

    With ``options.passthrough``, every column released as is is checked as
    :func:`ppdm.verify.verify_files` checks it: the below-k figures are
    reduced by Dask (the class sizes never come into memory), and the proxy
    part brings in only the counts of rows whose column value pins a
    quasi-identifier in ``options.original`` (at most one group per k original
    rows).
    ``client`` runs on an existing cluster instead of a local one.
    """
    _refuse_release_models(requirement)
    for path in files.values():  # before a cluster starts
        _existing_files(path)
    checked = []
    results: list[PassthroughResult] | None = (
        None if options.passthrough is None else []
    )
    with _dask_session(memory_limit, n_workers, threads_per_worker, client):
        for table_name, path in files.items():
            table, found = _verify_lazily(table_name, path, requirement, options)
            checked.append(table)
            if results is not None and found is not None:
                results.extend(found)
    return certificate_of(checked, requirement, options.input_sha256, results)


def _verify_lazily(
    table_name: str,
    given: ReleasedFiles,
    requirement: Requirement,
    options: VerifyOptions,
) -> tuple[Any, list[PassthroughResult] | None]:
    """One table's check and its pass-through results, from Dask aggregates.

    Runs inside :func:`_dask_session`.
    """
    files = _existing_files(given)
    columns = released_header(files)

    def read(wanted: list[str]) -> Any:
        return lazy_released_table(files, wanted)

    partition = _dask_partition(read, columns, requirement)
    results = None
    if options.passthrough is not None:
        results = _dask_passthrough(
            read,
            table_name,
            partition.n_rows,
            columns,
            requirement,
            options.passthrough,
            options.original,
            options.covers,
        )
    checked = verify_partition(
        table_name,
        partition,
        columns,
        requirement,
        options,
        sha256=released_sha256(given),
    )
    return checked, results


@contextlib.contextmanager
def _dask_session(
    memory_limit: str, n_workers: int, threads_per_worker: int, client: Any
) -> Iterator[None]:
    """Dask computations inside run on ``client``, else on the run's cluster.

    Outside a run (a direct call), :func:`ppdm.scale.engine.cluster` starts a
    local cluster of ``n_workers`` for the block.
    """
    try:
        import distributed  # noqa: F401 - the cluster's package
    except ImportError as exc:  # pragma: no cover - dask ships with prefect-dask
        raise ImportError(
            "engine='dask' needs dask[dataframe] and distributed "
            "(pip install 'dask[dataframe]' distributed)"
        ) from exc
    if client is not None:
        with client.as_current():
            yield
        return
    from ppdm.scale.engine import ClusterSettings, cluster

    settings = ClusterSettings(
        workers=n_workers,
        threads_per_worker=threads_per_worker,
        memory_limit=memory_limit,
    )
    with cluster(settings) as running, running.client.as_current():
        yield


def _dask_partition(
    read: Any, columns: list[str], requirement: Requirement
) -> ClassPartition:
    """Class partition from ``read(wanted_columns)``, a Dask frame of text cells.

    Runs inside :func:`_dask_session`.
    """
    qis = list(quasi_identifier_columns(columns, requirement.quasi_identifiers))
    sa = requirement.sensitive_attribute
    wanted = [*qis, sa] if sa is not None and sa in columns else list(qis)
    text = read(wanted)
    # One output partition: the aggregate is small (classes x values), and
    # a tree reduction avoids the shuffle Dask would otherwise plan.
    counts = (
        text.groupby(wanted, dropna=False, observed=True).size(split_out=1).compute()
    )
    sensitive = sa if len(wanted) > len(qis) else None
    return _partition_from_counts(counts, qis, sensitive)


def _dask_passthrough(
    read: Any,
    table_name: str,
    n_rows: int,
    columns: list[str],
    requirement: Requirement,
    policy: PassthroughPolicy,
    original: pd.DataFrame | None,
    covers: Covers | None,
) -> list[PassthroughResult]:
    """:func:`ppdm.verify.passthrough.check_passthrough` from Dask aggregates.

    Per column, the class sizes over the QIs plus the column stay distributed
    (one output partition per four input blocks: a near-unique column has
    about as many classes as rows) and only four sums come back; the proxy
    part reads
    the (column value, QI cells) counts of the rows whose value pins a
    quasi-identifier. Everything is computed in one pass over the files.
    Runs inside :func:`_dask_session`.
    """
    import dask

    checked = checked_columns(columns, requirement, policy)
    if not checked:
        return []
    qis = [q for q in requirement.quasi_identifiers if q in columns]
    k = requirement.minimal_class_size
    text = read([*qis, *checked])
    pending: list[Any] = []
    groups_of: dict[str, Any] = {}
    split_out = max(1, text.npartitions // 4)
    for column in checked:
        keys = [column, *qis]
        sizes = text.groupby(keys, dropna=False, observed=True).size(
            split_out=split_out
        )
        small = sizes[sizes < k]
        pending.append(
            (sizes.count(), (sizes < k).sum(), small.sum(), (sizes == 1).sum())
        )
        if original is not None and column in original.columns:
            groups = proxy_groups(original, column, requirement.quasi_identifiers, k)
            groups_of[column] = groups
            # an Index, not a list: Dask passes it to each partition untraversed
            pinning = pd.Index(groups.pinning_keys())
            rows = text[keys].map_partitions(
                _rows_with_values, column, pinning, meta=text[keys]._meta
            )
            pending.append(
                rows.groupby(keys, dropna=False, observed=True).size(split_out=1)
            )
    computed = list(dask.compute(*pending))
    judged = PassthroughTable(
        policy, requirement, table_name, n_rows, qis, original, covers
    )
    results = []
    for column in checked:
        n_classes, n_small, rows_small, n_unique = computed.pop(0)
        figures = below_k_from_sums(
            classes=n_classes,
            classes_below_k=n_small,
            rows_below_k=rows_small,
            unique_rows=n_unique,
            n_rows=n_rows,
        )
        counts = groups = None
        if column in groups_of:
            counts = computed.pop(0).rename("n").reset_index()
            groups = groups_of[column]
        # the values released as is are the original's; without the original
        # (re-verification), the name alone is judged
        identifier = looks_identifying(
            column,
            original[column]
            if original is not None and column in original.columns
            else pd.Series([], dtype=object),
        )
        results.append(judged.result(column, figures, counts, groups, identifier))
    return results


def _rows_with_values(
    frame: pd.DataFrame, column: str, values: pd.Index
) -> pd.DataFrame:
    """The rows of a partition whose ``column`` value (canonical text) is in ``values``."""
    keep = pd.Series(canonical_text(frame[column]), index=frame.index).isin(values)
    return frame[keep.to_numpy()]


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
