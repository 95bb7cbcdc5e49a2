"""Where a release's work runs: the ``compute:`` section of its configuration.

One section says it for every part of a run: the Prefect task runner of the
independent evaluations (``runner``), the in-memory or out-of-core engine
(``engine``), the independent verifier's engine (``verify_engine``), and the
one Dask cluster all of them share (``address``, or a local cluster of
``workers``). Configurations written before this section existed spread these
keys over ``engine``, ``parallel``, ``out_of_core`` and ``verification``;
:func:`fold_legacy_sections` reads them into ``compute`` and says, one line
per old section, which keys replace it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from ppdm.config import ReleaseConfig

__all__ = [
    "LEGACY_SECTIONS",
    "ComputeConfig",
    "fold_legacy_sections",
    "resolve_engine",
]

#: ``address``: a Dask scheduler's URL.
_ADDRESS = r"^(tcp|tls|inproc|ucx)://\S+$"
#: ``memory_limit``: bytes with a unit, as Dask reads them.
_MEMORY = r"^[0-9.]+\s*[KMGT]i?B$"


class ComputeConfig(BaseModel):
    """Where a release's work runs, and the one Dask cluster it shares.

    Within one run every user of Dask (the out-of-core steps, the verifier's
    out-of-core read, Prefect's Dask task runner with ``runner: dask``) works
    on the same cluster: the existing scheduler at ``address``, or one local
    cluster of ``workers`` started for the run and stopped at its end.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    runner: Literal["none", "threads", "dask"] = Field(
        "none",
        description="the Prefect task runner of the algorithms' independent "
        "evaluations (DMPD's fitness, cross-validation folds), split into "
        "`workers` batches: none (one thread), threads (a pool of `workers`), "
        "dask (the run's Dask cluster); the results do not depend on it",
    )
    engine: Literal["auto", "pandas", "dask"] = Field(
        "auto",
        description="pandas: the table in memory; dask: out of core, partition by "
        "partition (algorithms that run on the frequency table); auto: dask when "
        "the source file is above size_threshold_mb and the algorithm can",
    )
    verify_engine: Literal["auto", "pandas", "dask"] = Field(
        "auto",
        description="how the independent verifier reads an in-memory release's "
        "candidate: pandas (in memory), dask (out of core, on the run's "
        "cluster), auto (dask above verify_threshold_mb of candidate files); an "
        "out-of-core release is always verified out of core",
    )
    address: str | None = Field(
        None,
        pattern=_ADDRESS,
        description="an existing Dask scheduler (e.g. tcp://10.0.0.5:8786) that "
        "every part of the run uses instead of a local cluster",
    )
    workers: int = Field(
        2,
        ge=1,
        le=1024,
        strict=True,
        description="workers of the local Dask cluster; threads of runner "
        "threads; batches of the independent evaluations",
    )
    threads_per_worker: int = Field(
        1, ge=1, le=64, strict=True, description="threads of each local Dask worker"
    )
    processes: bool = Field(
        False,
        strict=True,
        description="runner dask: local workers as processes (each reaches the "
        "run's Prefect API) rather than threads; out-of-core work always runs "
        "on worker processes",
    )
    memory_limit: str = Field(
        "2GB",
        pattern=_MEMORY,
        description="memory of each local Dask worker process, e.g. 2GB",
    )
    partition_rows: int = Field(
        250_000,
        ge=1,
        le=100_000_000,
        strict=True,
        description="rows of each Parquet partition of an out-of-core release",
    )
    sample_rows: int = Field(
        200_000,
        ge=1_000,
        le=10_000_000,
        strict=True,
        description="rows of the seeded sample an out-of-core release's utility "
        "report measures",
    )
    size_threshold_mb: float = Field(
        1024.0,
        gt=0.0,
        strict=True,
        allow_inf_nan=False,
        description="engine auto: run out of core when the source file is larger",
    )
    verify_threshold_mb: float = Field(
        256.0,
        gt=0.0,
        strict=True,
        allow_inf_nan=False,
        description="verify_engine auto: verify out of core when the candidate "
        "files are larger",
    )


#: The sections ``compute`` replaces: old key -> ``compute`` key. ``engine``
#: was a top-level value, not a section (its key is None).
LEGACY_SECTIONS: dict[str, dict[str | None, str]] = {
    "engine": {None: "engine"},
    "parallel": {
        "runner": "runner",
        "workers": "workers",
        "threads_per_worker": "threads_per_worker",
        "processes": "processes",
        "address": "address",
    },
    "out_of_core": {
        "size_threshold_mb": "size_threshold_mb",
        "partition_rows": "partition_rows",
        "workers": "workers",
        "threads_per_worker": "threads_per_worker",
        "memory_limit": "memory_limit",
        "address": "address",
        "sample_rows": "sample_rows",
    },
    "verification": {
        "engine": "verify_engine",
        "size_threshold_mb": "verify_threshold_mb",
        "memory_limit": "memory_limit",
    },
}


def _old_name(section: str, key: str | None) -> str:
    return section if key is None else f"{section}.{key}"


def fold_legacy_sections(
    data: dict[str, Any], *, lenient: bool = False
) -> tuple[dict[str, Any], list[str], dict[str, str]]:
    """Move the old sections of ``data`` into its ``compute`` section.

    Returns the mapping without them (a copy when any was found), one note
    per old section naming the ``compute`` keys that replace it, and for
    each ``compute`` key set from an old one the old key's name (so that an
    error names the key the file has).
    ``lenient`` (for a configuration recorded by an earlier release, which
    was valid when made) keeps the first value of a key set twice and skips
    unknown keys instead of raising.

    Raises
    ------
    ValueError
        An old section names a key it never had, or sets a key that
        ``compute`` (or another old section, to another value) sets too.
    """
    found = [section for section in data if section in LEGACY_SECTIONS]  # file order
    if not found:
        return data, [], {}
    data = dict(data)
    given = data.get("compute")
    if given is None:
        given = {}
    if not isinstance(given, dict):
        return data, [], {}  # the field's own validation names the problem
    compute = dict(given)
    came_from: dict[str, str] = {}
    notes = []
    for section in found:
        mapping = LEGACY_SECTIONS[section]
        value = data.pop(section)
        if None in mapping:
            values: dict[str | None, Any] = {None: value}
        elif isinstance(value, dict):
            values = dict(value)
        elif value is None:
            values = {}
        else:
            raise ValueError(
                f"{section}: expected a mapping of keys (or write them under "
                f"'compute:'), got {value!r}"
            )
        unknown = [key for key in values if key not in mapping]
        if lenient:
            values = {k: v for k, v in values.items() if k in mapping}
        elif unknown:
            raise ValueError(
                f"unknown key {_old_name(section, str(unknown[0]))!r}; allowed keys "
                f"of {section}: {', '.join(str(k) for k in mapping)}"
            )
        if (
            not lenient
            and section == "parallel"
            and values.get("address") is not None
            and values.get("runner", "none") != "dask"
        ):
            raise ValueError(
                f"parallel.address is for runner dask; runner is "
                f"{values.get('runner', 'none')!r}"
            )
        for key, new in mapping.items():
            if key not in values:
                continue
            old = _old_name(section, key)
            if lenient and (new in given or new in came_from):
                continue
            if new in given:
                raise ValueError(
                    f"{old} and compute.{new} both set one key: keep compute.{new} "
                    f"and remove {old}"
                )
            if new in came_from and compute[new] != values[key]:
                raise ValueError(
                    f"{came_from[new]} = {compute[new]!r} and {old} = "
                    f"{values[key]!r} now set one key, compute.{new} (one cluster "
                    f"runs every part of a release): give compute.{new} once"
                )
            compute[new] = values[key]
            came_from.setdefault(new, old)
        replaced = ", ".join(
            f"{_old_name(section, key)} -> compute.{new}"
            for key, new in mapping.items()
        )
        notes.append(
            f"'{section}:' is deprecated and read into 'compute:' "
            f"({replaced}); write those keys under 'compute:'"
        )
    data["compute"] = compute
    return data, notes, came_from


def resolve_engine(config: ReleaseConfig) -> Literal["pandas", "dask"]:
    """The engine a release runs on: the configured one, or for ``auto`` by size.

    ``auto`` runs out of core when the source file (or the Parquet
    directory's files) is above ``compute.size_threshold_mb`` and the
    algorithm runs on the frequency table; a database source is read in
    memory unless ``compute: {engine: dask}`` says otherwise.
    """
    if config.compute.engine != "auto":
        return config.compute.engine
    from ppdm.algorithm_registry import registered

    if (
        not registered()[config.algorithm].frequency_table
        or config.republication.policy == "consistent"
        or config.republication.record_key is not None
        or config.source.kind not in ("csv", "parquet")
    ):
        return "pandas"
    path = Path(config.source.path)
    if path.is_dir():
        size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    else:
        size = path.stat().st_size if path.is_file() else 0
    threshold = config.compute.size_threshold_mb * 2**20
    return "dask" if size > threshold else "pandas"
