"""Pre-flight: what can be known wrong about a release before any step runs.

Run by ``ppdm run`` before Prefect starts, and first thing by
:func:`ppdm.pipeline.run_steps` (:func:`preflight_for_run`: once per run, so a
configuration the command line has just checked is not checked again, and a
scheduled run checks each time it fires). Everything here reads headers, file
metadata and at most one column, so a user's mistake costs a second, not a
run: the configuration against the source's header (unknown names with the
closest existing one, columns without a role), the dataset folder (schema
and suite present, the schema's columns against the source's), the
algorithm's capabilities (checked when the configuration loads) and the
feasibility that is cheap to know: k above the row count, l above the
sensitive attribute's distinct values, and a target the utility report could
not use (:mod:`ppdm.prepare.target_check`: continuous, a class too small for
its split, or rows without a class that validation would let through or could
not quarantine within its limit).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from ppdm.config import ConfigError, ReleaseConfig, check_source_columns
from ppdm.exceptions import InfeasibleConstraintError, UnknownDatasetError
from ppdm.prepare.dataset_folder import SCHEMA_FILE, SUITE_FILE
from ppdm.release import audit

__all__ = ["preflight", "preflight_for_run"]

#: Configurations (by the sha256 of their JSON) that passed pre-flight in this
#: process and whose run has not started yet.
_PASSED: set[str] = set()


def _key(config: ReleaseConfig) -> str:
    return hashlib.sha256(config.model_dump_json().encode("utf-8")).hexdigest()


def preflight_for_run(config: ReleaseConfig) -> None:
    """Pre-flight for a run that starts now, unless it has just passed.

    A configuration that passed :func:`preflight` in this process is taken
    once, by the run that follows; any other run (a schedule firing, a
    notebook) is checked here.
    """
    key = _key(config)
    if key in _PASSED:
        _PASSED.discard(key)
        return
    _check(config)


def _schema_yaml(folder: Path) -> tuple[dict, dict]:
    """``schema.yaml`` and its ``columns`` mapping, read as plain YAML (no pandera)."""
    path = folder / SCHEMA_FILE
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise UnknownDatasetError(f"{path}: not readable as YAML ({err})") from None
    columns = data.get("columns") if isinstance(data, dict) else None
    if not isinstance(columns, dict):
        raise UnknownDatasetError(f"{path}: no 'columns' mapping")
    return data, columns


def _schema_columns(folder: Path) -> list[str] | None:
    """The columns ``schema.yaml`` declares, when it is strict."""
    data, columns = _schema_yaml(folder)
    return [str(c) for c in columns] if data.get("strict") is True else None


def _lets_missing_through(folder: Path, column: str) -> bool:
    """Whether validation passes a row without a value in ``column``.

    True when the schema declares it ``nullable`` or does not declare it at
    all (pandera's default is not nullable).
    """
    _, columns = _schema_yaml(folder)
    declared = columns.get(column)
    if not isinstance(declared, dict):
        return declared is None
    return declared.get("nullable") is True


def preflight(config: ReleaseConfig) -> None:
    """Refuse at once a release that cannot succeed, naming what to change.

    The run of ``config`` that follows in this process
    (:func:`preflight_for_run`) does not check it again.

    Raises
    ------
    ConfigError
        A name, a role or the dataset folder does not fit the source.
    InfeasibleConstraintError
        k above the rows, or l above the sensitive attribute's distinct values.
    UnknownDatasetError
        No dataset folder (schema) for the configuration.
    """
    _check(config)
    _PASSED.add(_key(config))


def _check(config: ReleaseConfig) -> None:
    columns = check_source_columns(config)
    folder = config.schema_dir
    if not (folder / SUITE_FILE).is_file():
        raise UnknownDatasetError(f"dataset folder {folder}: {SUITE_FILE} is missing")
    declared = _schema_columns(folder)
    if columns is not None and declared is not None:
        missing = [c for c in declared if c not in columns]
        extra = [c for c in columns if c not in declared]
        if missing or extra:
            raise ConfigError(
                f"schema {folder / SCHEMA_FILE} does not fit the source "
                f"{_describe(config)}: "
                + "; ".join(
                    part
                    for part in (
                        f"declared but absent: {', '.join(missing)}" if missing else "",
                        f"present but not declared (the schema is strict): "
                        f"{', '.join(extra)}"
                        if extra
                        else "",
                    )
                    if part
                )
            )
    rows = _check_feasible(config)
    _check_target(config, folder)
    # A writer refuses a missing or different key once the log is keyed:
    # better now than after the anonymization.
    audit.check_key(config.output_dir, config.audit_key)
    _check_series_engine(config)
    _check_budget(config, rows)


def _check_series_engine(config: ReleaseConfig) -> None:
    """Refuse a Dask release into an output directory holding releases of its dataset.

    The plan refuses it too; here it is said before the flow starts.
    """
    from ppdm.compute_config import resolve_engine
    from ppdm.release.audit_log import release_entries

    if resolve_engine(config) == "dask" and any(
        release_entries(Path(config.output_dir).resolve(), config.dataset)
    ):
        raise out_of_core_series_error(config.dataset)


def out_of_core_series_error(dataset: str) -> ConfigError:
    """The refusal of a Dask release into an output directory holding releases of ``dataset``.

    Said by the pre-flight, and by :func:`ppdm.steps.plan.plan_release` for a
    run without one.
    """
    return ConfigError(
        f"the output directory already holds releases of {dataset!r}; checking "
        "a new release against them (republication) runs in memory, which "
        "the Dask engine does not do yet: use compute: {engine: pandas}, or another "
        "output_dir"
    )


def _check_budget(config: ReleaseConfig, rows: int | None) -> None:
    """Refuse a differentially private release its dataset's budget cannot pay for.

    The cost is the algorithm's for the source's rows; where they are not
    known before the run (a SQL source), publication checks it alone (it
    always does, under the audit log's lock, with the rows the algorithm ran on).
    """
    if config.privacy_budget is None or rows is None:
        return
    from ppdm.algorithms import get_algorithm
    from ppdm.release import budget

    cost = get_algorithm(config.algorithm, **config.params).privacy_cost(rows)
    if cost is None:
        return
    budget.check_before_run(
        config.output_dir,
        config.dataset,
        budget.Budget.from_config(config.privacy_budget.model_dump()),
        cost,
        key=config.audit_key,
        rerun_of=_rerun_of(config),
    )


def _rerun_of(config: ReleaseConfig) -> Callable[[Mapping[str, Any]], bool]:
    """Whether a published manifest records this source and configuration.

    The source is read (and hashed as the ingest step does) only when the
    budget would refuse the run and an earlier release may be this one.
    """
    from ppdm.prepare import ingest
    from ppdm.release.manifest import identity_config, public_config

    found: list[str] = []

    def source_sha256() -> str:
        if not found:
            source = config.source
            if source.kind in ("csv", "parquet"):
                found.append(ingest.file_sha256(source.path))
            else:
                table = ingest.load_source(
                    source.kind, source.location, **source.reader_options()
                )
                found.append(ingest.fingerprint(table))
        return found[0]

    identity = identity_config(public_config(config))

    def same(manifest: Mapping[str, Any]) -> bool:
        return (
            identity_config(manifest.get("config") or {}) == identity
            and manifest.get("source_sha256") == source_sha256()
        )

    return same


def _describe(config: ReleaseConfig) -> str:
    from ppdm.prepare import ingest  # pandas: only once a source must be read

    source = config.source
    return ingest.source_name(source.kind, source.location, source.query, source.name)


def _check_target(config: ReleaseConfig, folder: Path) -> None:
    """Refuse a target the utility report cannot use, from its column alone."""
    from ppdm.prepare import ingest  # pandas: only once a source must be read
    from ppdm.prepare.target_check import check_target_values, missing_rows

    source, target = config.source, config.target
    values = ingest.source_column(
        source.kind, source.location, target, **source.reader_options()
    )
    if values is None:
        return
    described = _describe(config)
    check_target_values(
        values, target=target, source=described, test_size=config.utility.test_size
    )
    missing, where = missing_rows(values, csv=source.kind == "csv")
    if not missing:
        return
    rows = len(values)
    found = (
        f"target {target!r} of {described} has no value in {missing:,} of "
        f"{rows:,} rows ({where})"
    )
    if _lets_missing_through(folder, target):
        raise InfeasibleConstraintError(
            f"{found}, and {folder / SCHEMA_FILE} lets such rows through "
            f"validation; a row without a class cannot train or test the utility "
            f"report's classifiers: declare {target!r} `nullable: false` there "
            "(validation then sets those rows aside in quarantine), or fill in or "
            "drop them in the source"
        )
    limit = config.validation.max_rejected_fraction
    if missing > limit * rows:
        raise InfeasibleConstraintError(
            f"{found}: validation would quarantine {missing / rows:.1%} of the rows, "
            f"above validation.max_rejected_fraction = {limit:g}; fill in or drop "
            "those rows in the source, or pick another column"
        )


def _check_feasible(config: ReleaseConfig) -> int | None:
    """Refuse k or l the source cannot meet; return its row count (None: unknown)."""
    from ppdm.prepare import ingest  # pandas: only once a source must be read

    requirement = config.requirement
    attribute = requirement.sensitive_attribute if requirement.l > 1 else None
    source = config.source
    rows, distinct = ingest.source_bounds(
        source.kind, source.location, distinct_of=attribute, **source.reader_options()
    )
    if rows is not None and requirement.k > rows:
        raise InfeasibleConstraintError(
            f"k = {requirement.k} is above the {rows} rows the source "
            f"{_describe(config)} has at most; lower k (k-anonymity needs at least k "
            "rows per class)"
        )
    if distinct is not None and requirement.l > distinct:
        raise InfeasibleConstraintError(
            f"l = {requirement.l} is above the {distinct} distinct values of the "
            f"sensitive attribute {attribute!r} in {_describe(config)}; lower l to "
            f"at most {distinct}"
        )
    return rows
