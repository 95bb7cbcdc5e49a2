"""Pre-flight: what can be known wrong about a release before any step runs.

Run by ``ppdm run`` before Prefect starts, and first thing by
:func:`ppdm.pipeline.run_steps`. Everything here reads headers, file
metadata and at most one column, so a user's mistake costs a second, not a
run: the configuration against the source's header (unknown names with the
closest existing one, columns without a role), the dataset folder (schema
and suite present, the schema's columns against the source's), the
algorithm's capabilities (checked when the configuration loads) and the
feasibility that is cheap to know: k above the row count, l above the
sensitive attribute's distinct values.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from ppdm.config import ConfigError, ReleaseConfig, check_source_columns
from ppdm.exceptions import InfeasibleConstraintError, UnknownDatasetError
from ppdm.prepare.dataset_folder import SCHEMA_FILE, SUITE_FILE
from ppdm.release import audit

__all__ = ["preflight"]


def _schema_columns(folder: Path) -> list[str] | None:
    """The columns ``schema.yaml`` declares, read as plain YAML (no pandera)."""
    path = folder / SCHEMA_FILE
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise UnknownDatasetError(f"{path}: not readable as YAML ({err})") from None
    columns = data.get("columns") if isinstance(data, dict) else None
    if not isinstance(columns, dict):
        raise UnknownDatasetError(f"{path}: no 'columns' mapping")
    return [str(c) for c in columns] if data.get("strict") is True else None


def preflight(config: ReleaseConfig) -> None:
    """Refuse at once a release that cannot succeed, naming what to change.

    Raises
    ------
    ConfigError
        A name, a role or the dataset folder does not fit the source.
    InfeasibleConstraintError
        k above the rows, or l above the sensitive attribute's distinct values.
    UnknownDatasetError
        No dataset folder (schema) for the configuration.
    """
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
    _check_feasible(config)
    # A writer refuses a missing or different key once the log is keyed:
    # better now than after the anonymization.
    audit.check_key(config.output_dir, config.audit_key)


def _describe(config: ReleaseConfig) -> str:
    from ppdm.prepare import ingest  # pandas: only once a source must be read

    source = config.source
    return ingest.source_name(
        source.kind, source.path or source.url, source.query, source.name
    )


def _check_feasible(config: ReleaseConfig) -> None:
    from ppdm.prepare import ingest  # pandas: only once a source must be read

    requirement = config.requirement
    attribute = requirement.sensitive_attribute if requirement.l > 1 else None
    source = config.source
    rows, distinct = ingest.source_bounds(
        source.kind,
        source.path or source.url,
        query=source.query,
        embedded=source.name,
        distinct_of=attribute,
        password=source.password,
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
