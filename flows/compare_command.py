"""The ``ppdm compare`` command: which algorithm, which k, measured.

``ppdm compare --config FILE --k 5,10,50,100 [--algorithms a,b] [--out DIR]
[--sample N] [--param ALGORITHM.NAME=VALUE] [--runner sequential|threads|dask]
[--workers N] [--dask-address ADDR] [--dask-processes]`` runs every registered
algorithm (or those named) for every k under the same 5 x 2-fold
cross-validation, on the same folds, with the configuration's privacy
requirement, as the Prefect flow ``compare`` (:mod:`ppdm.flows.compare`). It
writes ``comparison.csv``/``.json``, ``folds.csv``, ``accuracy_vs_k.png``
(and ``pareto_fronts.png``), ``comparison.md`` and ``comparison.html`` into
``--out`` and prints a one-screen table, then the output directory.

An algorithm that refuses the configuration, or fails on some fold, is listed
with the reason. Exit codes as the other commands: 0 done; 1 no algorithm
produced a release; 2 the configuration or the command line is wrong; 4 the
file system refused.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from ppdm.exceptions import InvalidParameterError
from ppdm.flows.runners import RUNNERS

__all__ = ["RUNNERS", "add_parser", "main", "parse_params", "run"]

_EXIT_OK, _EXIT_FAILED, _EXIT_USAGE = 0, 1, 2


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``compare`` sub-command to the ``ppdm`` parser.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers`` returned.

    Returns
    -------
    argparse.ArgumentParser
        The ``compare`` parser.
    """
    parser = subparsers.add_parser(
        "compare",
        help="compare every registered algorithm for several k on the same folds "
        "(accuracy, information loss, time, memory)",
        description="Run every registered algorithm (or --algorithms) for every k "
        "under the same seeded 5 x 2-fold cross-validation with the "
        "configuration's privacy requirement; write a comparison table, plots "
        "and an HTML/Markdown page with a recommendation.",
    )
    _add_arguments(parser)
    return parser


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="release configuration (YAML)")
    parser.add_argument(
        "--dataset", help="embedded dataset when no --config: adult, german"
    )
    parser.add_argument(
        "--k", required=True, metavar="K,K,...", help="comma-separated k, e.g. 5,10,50"
    )
    parser.add_argument(
        "--l",
        type=int,
        metavar="L",
        help="l of l-diversity instead of the configuration's (1: k-anonymity only)",
    )
    parser.add_argument(
        "--algorithms",
        metavar="A,B,...",
        help="registered algorithms to compare (default: every registered one)",
    )
    parser.add_argument(
        "--out", type=Path, default=Path("comparison"), help="output directory"
    )
    parser.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="use a seeded stratified sample of N rows (documented in the outputs)",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="ALGORITHM.NAME=VALUE",
        help="an algorithm parameter (JSON value), repeatable",
    )
    parser.add_argument(
        "--models",
        metavar="M,M,...",
        help="learners (default: decision_tree,naive_bayes,logistic_regression)",
    )
    parser.add_argument(
        "--runner",
        choices=RUNNERS,
        default="sequential",
        help="task runner of the fold tasks: one thread, a thread pool, or Prefect's "
        "DaskTaskRunner (a local cluster, or --dask-address)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="threads (threads) or local Dask workers (dask); default: CPU count / 2",
    )
    parser.add_argument(
        "--dask-address", metavar="ADDR", help="an existing Dask scheduler address"
    )
    parser.add_argument(
        "--dask-processes",
        action="store_true",
        help="local Dask workers as processes (needs PREFECT_API_URL); default threads",
    )
    parser.add_argument("--title", default="", help="title of the report page")


def _names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [part.strip() for part in text.split(",") if part.strip()]


def parse_params(items: list[str]) -> dict[str, dict[str, Any]]:
    """``["pbg-ea.generations=5"]`` -> ``{"pbg-ea": {"generations": 5}}``."""
    params: dict[str, dict[str, Any]] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        algorithm, dot, name = key.partition(".")
        if not sep or not dot or not algorithm or not name:
            raise InvalidParameterError(
                f"--param must read ALGORITHM.NAME=VALUE; got {item!r}"
            )
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        params.setdefault(algorithm, {})[name] = value
    return params


def _command(args: argparse.Namespace) -> str:
    """The command line that reproduces this comparison."""
    parts = ["ppdm", "compare"]
    if args.config is not None:
        parts += ["--config", str(args.config)]
    elif args.dataset:
        parts += ["--dataset", args.dataset]
    parts += ["--k", args.k]
    if args.l is not None:
        parts += ["--l", str(args.l)]
    for flag, value in (
        ("--algorithms", args.algorithms),
        ("--sample", args.sample),
        ("--models", args.models),
    ):
        if value is not None:
            parts += [flag, str(value)]
    for item in args.param:
        parts += ["--param", item]
    parts += ["--out", str(args.out)]
    return " ".join(shlex.quote(p) for p in parts)


def _notes(command: str) -> str:
    """Command, machine and date of a comparison, for its outputs."""
    import platform
    from datetime import UTC, datetime

    try:
        load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        load = "n/a"
    return (
        f"Command: `{command}`. Machine: {platform.machine()}, {os.cpu_count()} "
        f"cores, Python {platform.python_version()}; load average at the start: "
        f"{load}. Date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}."
    )


def _check(args: argparse.Namespace) -> None:
    if args.sample is not None and args.sample < 8:
        raise InvalidParameterError(
            f"--sample: {args.sample} rows is out of range; allowed: an integer >= 8"
        )
    if args.runner != "dask" and (args.dask_address or args.dask_processes):
        raise InvalidParameterError(
            "--dask-address and --dask-processes need --runner dask"
        )
    if args.workers is not None and args.workers < 1:
        raise InvalidParameterError(
            f"--workers: {args.workers} is out of range; allowed: an integer >= 1"
        )
    if args.dask_address and (args.workers or args.dask_processes):
        raise InvalidParameterError(
            "--dask-address names an existing cluster; --workers and "
            "--dask-processes describe a local one: give one or the other"
        )


def run(args: argparse.Namespace) -> int:
    """Run the comparison flow; print the table and the output directory.

    Returns
    -------
    int
        0 done; 1 no algorithm produced a release; 2 a bad argument or
        configuration (one line on standard error).
    """
    from ppdm.config import default_config, load_config
    from ppdm.experiments.compare import parse_k

    try:
        _check(args)
        ks = parse_k(args.k)
        params = parse_params(args.param)
        algorithms = _names(args.algorithms)
        models = _names(args.models)
        if args.config is not None:
            config = load_config(args.config, {"l": args.l})
            for note in config.deprecations:  # old sections still work
                print(f"{args.config}: {note}", file=sys.stderr)
            if args.dataset and args.dataset != config.dataset:
                raise InvalidParameterError(
                    f"--dataset {args.dataset} contradicts dataset "
                    f"{config.dataset!r} in {args.config}"
                )
        else:
            config = default_config(args.dataset or "adult", {"l": args.l})
        _check_names(algorithms, params, models)
    except InvalidParameterError as err:
        print(f"ppdm compare: {err}", file=sys.stderr)
        return _EXIT_USAGE
    from ppdm.flows.runners import RunnerSettings

    settings = RunnerSettings(
        kind=args.runner,
        workers=args.workers,
        processes=args.dask_processes,
        address=args.dask_address,
    )
    command = _command(args)
    started = time.perf_counter()
    result = _run_flow(
        config,
        ks=ks,
        out=args.out,
        algorithms=algorithms,
        params=params,
        sample=args.sample,
        models=models,
        settings=settings,
        title=args.title,
        notes=_notes(command),
    )
    from ppdm.experiments.compare import terminal_table

    print(terminal_table(result))
    print()
    for sentence in result.recommendation:
        print(f"- {sentence}")
    print(
        f"\n{len(result.summary)} rows in {time.perf_counter() - started:.0f} s "
        f"({settings.describe()})"
    )
    print(args.out)
    produced = result.summary[
        (result.summary["algorithm"] != "original")
        & result.summary["status"].isin(["ok", "partial"])
    ]
    return _EXIT_OK if len(produced) else _EXIT_FAILED


def _check_names(
    algorithms: list[str] | None,
    params: dict[str, dict[str, Any]],
    models: list[str] | None,
) -> None:
    from ppdm.algorithms import ALGORITHMS
    from ppdm.utility.learners import MODELS

    for name in [*(algorithms or []), *params]:
        if name not in ALGORITHMS:
            raise InvalidParameterError(
                f"algorithm {name!r} is not registered; registered: "
                f"{', '.join(sorted(ALGORITHMS))}"
            )
    for model in models or []:
        if model not in MODELS:
            raise InvalidParameterError(
                f"--models: {model!r} is not a learner; allowed: {', '.join(MODELS)}"
            )
    for name, given in params.items():
        allowed = ALGORITHMS[name]._param_names()
        unknown = sorted(set(given) - set(allowed))
        if unknown:
            raise InvalidParameterError(
                f"--param: {name} has no parameter(s) {unknown}; allowed: {allowed}"
            )


def _run_flow(config: Any, *, settings: Any, **kwargs: Any) -> Any:
    """Run the comparison flow on a configured API, or on a temporary one."""
    from ppdm.flows.cli import _PREFECT_DEFAULTS

    for key, value in _PREFECT_DEFAULTS.items():
        os.environ.setdefault(key, value)
    from prefect import tags
    from prefect.settings import PREFECT_API_URL

    from ppdm.flows.compare import compare, task_runner

    flow = compare.with_options(task_runner=task_runner(settings))
    kwargs["out"] = str(kwargs["out"])
    with tags("ppdm", "compare", f"dataset:{config.dataset}"):
        if PREFECT_API_URL.value():
            return flow(config, runner=settings.describe(), **kwargs)
        from ppdm.flows.api_server import temporary_api

        with temporary_api():
            # Dask worker processes read the API's address from the environment.
            os.environ["PREFECT_API_URL"] = str(PREFECT_API_URL.value())
            try:
                return flow(config, runner=settings.describe(), **kwargs)
            finally:
                os.environ.pop("PREFECT_API_URL", None)


def main(argv: list[str] | None = None) -> int:
    """``python -m ppdm.flows.compare_command ...``: the command on its own."""
    from ppdm.exceptions import AnonymizationError

    parser = argparse.ArgumentParser(
        prog="python -m ppdm.flows.compare_command",
        description="Compare every registered algorithm for several k.",
    )
    _add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except AnonymizationError as err:
        print(f"ppdm compare: {err}", file=sys.stderr)
        return _EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
