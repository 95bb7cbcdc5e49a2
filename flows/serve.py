"""The ``ppdm serve`` command: the release flow of one configuration, on a schedule.

``ppdm serve --config FILE [--cron EXPR | --interval SECONDS] [--timezone TZ]
[--name NAME]`` registers a deployment of :func:`ppdm.flows.release.release` with the
Prefect server at ``PREFECT_API_URL`` and runs its scheduled flow runs from this
process until it is stopped (Ctrl-C or SIGTERM pauses the schedule). No work pool
or worker is needed. Without ``--cron``/``--interval`` the schedule is the monthly
one of ``deployments/prefect.yaml`` (02:00 UTC on the first day of each month).

Prefect 3.8 starts each flow run in a *spawned* subprocess that re-imports the
main module, so whatever calls :func:`run` must be a console script or a module
whose entry is guarded by ``if __name__ == "__main__":`` (``ppdm``,
``python -m ppdm.flows.serve`` and ``deployments/serve.py`` all are).

Prefect is imported only inside :func:`run` and :func:`schedule`: the rest of the
``ppdm`` command starts no Prefect.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import typing
import zoneinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ppdm.exceptions import AnonymizationError, InvalidParameterError

if TYPE_CHECKING:
    from prefect import Flow
    from prefect.schedules import Schedule

    from ppdm.config import ReleaseConfig

__all__ = [
    "DEFAULT_CRON",
    "DEFAULT_TIMEZONE",
    "add_parser",
    "deployment_parameters",
    "schedule",
    "servable_release",
    "run",
    "main",
]

#: The default schedule: 02:00 on the first day of each month (as deployments/prefect.yaml).
DEFAULT_CRON = "0 2 1 * *"
#: Time zone of a schedule unless ``--timezone`` says otherwise.
DEFAULT_TIMEZONE = "UTC"
# Characters Prefect refuses in deployment names.
_BANNED_NAME_CHARACTERS = "/%&><"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``serve`` sub-command to the ``ppdm`` parser.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers`` returned.

    Returns
    -------
    argparse.ArgumentParser
        The ``serve`` parser.
    """
    parser = subparsers.add_parser(
        "serve",
        help="serve the release flow of a configuration on a schedule "
        "(needs PREFECT_API_URL)",
        description="Register a scheduled deployment of the release flow with the "
        "Prefect server at PREFECT_API_URL and run its flow runs from this process "
        "until stopped. Relative paths of the configuration (output_dir, source "
        "path) are read from the directory this command is started in.",
    )
    _add_arguments(parser)
    return parser


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config", type=Path, required=True, help="release configuration (YAML)"
    )
    when = parser.add_mutually_exclusive_group()
    when.add_argument(
        "--cron",
        metavar="EXPR",
        help=f"cron expression (default: {DEFAULT_CRON!r}, 02:00 on the 1st of "
        "each month)",
    )
    when.add_argument(
        "--interval",
        type=float,
        metavar="SECONDS",
        help="run every SECONDS seconds instead of a cron schedule",
    )
    parser.add_argument(
        "--timezone",
        default=DEFAULT_TIMEZONE,
        metavar="TZ",
        help=f"IANA time zone of the schedule (default: {DEFAULT_TIMEZONE})",
    )
    parser.add_argument(
        "--name",
        help="deployment name (default: the configuration file's name without "
        "extension); runs appear as release/NAME",
    )


def _check_timezone(timezone: str) -> None:
    try:
        zoneinfo.ZoneInfo(timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise InvalidParameterError(
            f"--timezone {timezone!r} is not an IANA time zone; allowed: a name "
            "such as 'UTC' or 'Europe/Berlin'"
        ) from None


def schedule(
    *,
    cron: str | None = None,
    interval: float | None = None,
    timezone: str = DEFAULT_TIMEZONE,
) -> Schedule:
    """The Prefect schedule of a served or deployed release.

    Parameters
    ----------
    cron : str or None, default=None
        Cron expression; with neither ``cron`` nor ``interval``,
        :data:`DEFAULT_CRON`.
    interval : float or None, default=None
        Seconds between runs, > 0; excludes ``cron``.
    timezone : str, default="UTC"
        IANA time zone the schedule is read in.

    Returns
    -------
    prefect.schedules.Schedule

    Raises
    ------
    InvalidParameterError
        Both ``cron`` and ``interval``, a malformed cron expression, an interval
        that is not a positive number of seconds, or an unknown time zone.
    """
    from prefect.schedules import Cron, Interval

    _check_timezone(timezone)
    if cron is not None and interval is not None:
        raise InvalidParameterError(
            f"--cron {cron!r} and --interval {interval!r} exclude each other; "
            "allowed: one of them"
        )
    if interval is not None:
        if not (math.isfinite(interval) and interval > 0):
            raise InvalidParameterError(
                f"--interval = {interval!r} is out of range; allowed: a number of "
                "seconds > 0"
            )
        return Interval(interval, timezone=timezone)
    expression = DEFAULT_CRON if cron is None else cron
    try:
        return Cron(expression, timezone=timezone)
    except ValueError as err:
        raise InvalidParameterError(
            f"--cron {expression!r} is not a cron expression ({err}); allowed: five "
            f"fields 'minute hour day month weekday', e.g. {DEFAULT_CRON!r}"
        ) from None


def deployment_parameters(config: ReleaseConfig) -> dict[str, Any]:
    """The deployment's parameters: the validated configuration as JSON data.

    Parameters
    ----------
    config : ReleaseConfig

    Returns
    -------
    dict
        ``{"config": ...}``; Prefect validates it back into a
        :class:`~ppdm.config.ReleaseConfig` at the start of each run.
    """
    return {"config": config.model_dump(mode="json", by_alias=True)}


def servable_release(config: ReleaseConfig | None = None) -> Flow:
    """The release flow, ready to run from a served deployment.

    With ``config``, the flow carries the task runner its ``compute:``
    section asks for (:func:`ppdm.flows.release.release_for`).

    A served flow run is a spawned process that receives the flow by cloudpickle.
    The flow's function is pickled by value (its module name ``release`` is the
    Flow object, not the function), with only the globals its code names, so the
    ``"ReleaseConfig"`` string annotation of ``from __future__ import annotations``
    cannot be resolved there and every run fails parameter validation
    ("`ReleaseModel` is not fully defined"). Replacing the annotation strings by the
    classes they name, once, makes the pickled function self-contained.

    Returns
    -------
    prefect.Flow
        :func:`ppdm.flows.release.release`, its annotations resolved.
    """
    from ppdm.flows.release import release, release_for

    release.fn.__annotations__ = typing.get_type_hints(release.fn)
    return release if config is None else release_for(config)


def _deployment_name(args: argparse.Namespace) -> str:
    name = args.name if args.name is not None else Path(args.config).stem
    banned = sorted(set(name) & set(_BANNED_NAME_CHARACTERS))
    if not name or banned:
        raise InvalidParameterError(
            f"--name {name!r} is not a deployment name; allowed: a non-empty name "
            f"without any of {' '.join(_BANNED_NAME_CHARACTERS)}"
        )
    return name


def _describe(sched: Schedule) -> str:
    what = (
        f"every {sched.interval.total_seconds():g} s"
        if sched.interval is not None
        else f"cron {sched.cron!r}"
    )
    return f"{what} ({sched.timezone})"


def run(args: argparse.Namespace) -> int:
    """Serve the release flow of ``args.config`` until stopped.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``serve`` arguments: ``config``, ``cron``, ``interval``,
        ``timezone``, ``name``.

    Returns
    -------
    int
        0 once serving stops; 1 when no Prefect server is configured.

    Raises
    ------
    ConfigError
        The configuration is unreadable or invalid.
    InvalidParameterError
        A bad schedule option or deployment name.
    """
    from ppdm.config import load_config

    config = load_config(args.config)
    for note in config.deprecations:  # old sections still work
        print(f"{args.config}: {note}", file=sys.stderr)
    name = _deployment_name(args)

    from ppdm.flows.cli import _PREFECT_DEFAULTS

    for key, value in _PREFECT_DEFAULTS.items():
        os.environ.setdefault(key, value)

    from prefect.settings import get_current_settings

    sched = schedule(cron=args.cron, interval=args.interval, timezone=args.timezone)
    api_url = get_current_settings().api.url
    if not api_url:
        print(
            "ppdm serve: PREFECT_API_URL is not set; start a server "
            "(prefect server start --host 127.0.0.1 --port 4200) and "
            "export PREFECT_API_URL=http://127.0.0.1:4200/api",
            file=sys.stderr,
        )
        return 1

    release = servable_release(config)
    print(
        f"serving release/{name} from {args.config} on {api_url}: {_describe(sched)}; "
        f"releases go to {Path(config.output_dir).resolve()}",
        flush=True,
    )
    # limit=1: releases of one configuration run one at a time, never overlapping.
    release.serve(
        name=name,
        schedules=[sched],
        parameters=deployment_parameters(config),
        description=(
            f"{config.dataset} release by {config.algorithm} "
            # Each model in its own words and parameters (a t, a c, an
            # entropy l), not a fixed k and l.
            f"({'; '.join(str(m) for m in config.requirement.models)}) "
            f"from {args.config}"
        ),
        tags=["ppdm", f"dataset:{config.dataset}", f"algorithm:{config.algorithm}"],
        limit=1,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m ppdm.flows.serve ...``: the ``serve`` command on its own."""
    parser = argparse.ArgumentParser(
        prog="python -m ppdm.flows.serve",
        description="Serve the release flow of a configuration on a schedule.",
    )
    _add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except AnonymizationError as err:
        print(f"ppdm serve: {err}", file=sys.stderr)
        return 2 if "config" in type(err).__name__.lower() else 1


if __name__ == "__main__":
    sys.exit(main())
