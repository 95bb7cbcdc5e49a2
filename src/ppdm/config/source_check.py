"""A configuration checked against its source's header, before any step runs."""

from __future__ import annotations

import difflib

from ppdm.config.errors import ConfigError
from ppdm.config.release_config import ReleaseConfig
from ppdm.config.sections import ROLES

__all__ = ["check_source_columns"]


def check_source_columns(config: ReleaseConfig) -> list[str] | None:
    """Refuse a configuration that does not fit its source's columns, before any step.

    Reads the source's header only. Every column the configuration names
    must exist (the message names the key, the column, the closest existing
    names and the source), and every column of the source must have a role.

    Returns
    -------
    list of str or None
        The source's columns, or None when they cannot be known cheaply.

    Raises
    ------
    ConfigError
    """
    from ppdm.prepare import ingest

    source = config.source
    columns = ingest.source_columns(
        source.kind, source.location, **source.reader_options()
    )
    if columns is None:
        return None
    named: list[tuple[str, str]] = [
        ("quasi_identifiers", q) for q in config.quasi_identifiers
    ]
    named += [("target", config.target)]
    named += [
        ("sensitive attribute", a) for a in config.requirement.sensitive_attributes
    ]
    named += [("discretize.columns", c) for c in config.discretize.columns or ()]
    named += [
        ("columns", c)
        for c in config.columns
        if c not in config.quasi_identifiers and c != config.target
    ]
    problems = []
    seen = set()
    for key, column in named:
        if column not in columns and (key, column) not in seen:
            seen.add((key, column))
            close = difflib.get_close_matches(column, columns, n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            problems.append(f"{key} names {column!r}, not a column of the source{hint}")
    unroled = [c for c in columns if c not in config.columns]
    if unroled:
        problems.append(
            f"column{'s' if len(unroled) > 1 else ''} "
            f"{', '.join(map(repr, unroled))} of the source "
            f"{'have' if len(unroled) > 1 else 'has'} no role; give each one under "
            f"'columns:' ({' | '.join(ROLES)}), e.g. {unroled[0]!r}: drop"
        )
    if problems:
        raise ConfigError(
            f"config for {config.dataset}: "
            + "; ".join(problems)
            + f" (the source has columns: {', '.join(columns)})"
        )
    return columns
