"""The ``ppdm`` command: run a release, re-verify one, check the audit trail.

It sits on top of the flows (``ppdm run`` starts the Prefect flow, on an
ephemeral API unless ``PREFECT_API_URL`` is set); the other commands use the
core library only and start no Prefect at all.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ppdm.exceptions import (
    AnonymizationError,
    PPDMWarning,
    StorageError,
    UnknownDatasetError,
)
from ppdm.flows import compare_command, init_command, serve

if TYPE_CHECKING:
    from ppdm.algorithm_registry import AlgorithmEntry
    from ppdm.config import ReleaseConfig
    from ppdm.flows.api_server import TemporaryAPI

#: Exit codes, documented in the README: 0 done; 1 the release or the check
#: failed (verification, validation, an infeasible requirement, a broken audit
#: log); 2 the configuration or the command line is wrong; 3 the audit log is
#: intact but this call recorded a recovery; 4 the file system refused
#: (full disk, read-only, no permission); 5 ``verify`` / ``show``: every check
#: that needs no key passed, but no audit key was at hand to check the
#: manifest's seal (a manifest rewritten with its data passes the rest).
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_RECOVERED, EXIT_STORAGE = 0, 1, 2, 3, 4
EXIT_UNSEALED = 5

# Offline by default: no telemetry, a generous start-up time for a fresh database.
_PREFECT_DEFAULTS = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_UI_SHOW_PROMOTIONAL_CONTENT": "false",
    "PREFECT_CLOUD_ENABLE_ORCHESTRATION_TELEMETRY": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
    "PREFECT_LOGGING_EXTRA_LOGGERS": "ppdm",
    "PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW": "ignore",
}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ppdm")
    except PackageNotFoundError:  # running from a checkout that is not installed
        return "unknown"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ppdm",
        description="Verified, audited anonymized releases of person-level data.",
    )
    parser.add_argument("--version", action="version", version=f"ppdm {_version()}")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the traceback of an expected error (a wrong config, bad input)",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser(
        "run",
        help="run a release (default: the embedded Adult data, documented defaults)",
    )
    run.add_argument("--config", type=Path, help="release configuration (YAML)")
    run.add_argument(
        "--dataset", help="embedded dataset when no --config: adult, german"
    )
    run.add_argument("--algorithm", help="registered algorithm (see `ppdm algorithms`)")
    run.add_argument("--k", type=int, help="k of k-anonymity")
    run.add_argument("--l", type=int, help="l of l-diversity")
    run.add_argument("--seed", type=int, help="seed of every random choice")
    run.add_argument("--out", help="output directory (releases, audit log)")
    shown = run.add_mutually_exclusive_group()
    shown.add_argument(
        "--quiet", action="store_true", help="print only the release directory"
    )
    shown.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object: release directory, verdict, figures",
    )
    run.add_argument(
        "--work-dir",
        help="private directory of the intermediate artifacts (raw data); "
        "default: $PPDM_WORK_DIR or ~/.cache/ppdm/work",
    )

    verify = commands.add_parser("verify", help="re-check a published release")
    verify.add_argument("release_dir", type=Path)
    _add_key_argument(verify)
    verify.add_argument(
        "--against",
        type=Path,
        nargs="+",
        default=[],
        metavar="EARLIER",
        help="earlier release directories of the same dataset to check the "
        "release against (differencing); those its certificate names are "
        "checked anyway when they are beside it",
    )

    audit = commands.add_parser("audit", help="audit-trail commands")
    audit_commands = audit.add_subparsers(dest="audit_command", required=True)
    audit_verify = audit_commands.add_parser(
        "verify", help="check the hash chain and every recorded file hash"
    )
    audit_verify.add_argument("--out", type=Path, default=Path("releases"))
    audit_verify.add_argument(
        "--key",
        default="env:PPDM_AUDIT_KEY",
        help="the audit key: env:<VARIABLE> (default env:PPDM_AUDIT_KEY) or "
        "prefect-secret:<block name>",
    )

    releases = commands.add_parser(
        "releases", help="list the releases the audit log records"
    )
    releases.add_argument("--out", type=Path, default=Path("releases"))
    budget = commands.add_parser(
        "budget",
        help="differential privacy spent and remaining per dataset, from the "
        "verified audit log",
    )
    budget.add_argument("--out", type=Path, default=Path("releases"))
    budget.add_argument(
        "--key",
        default="env:PPDM_AUDIT_KEY",
        help="the audit key: env:<VARIABLE> (default env:PPDM_AUDIT_KEY) or "
        "prefect-secret:<block name>",
    )
    show = commands.add_parser(
        "show", help="what a published release holds: manifest and certificate"
    )
    show.add_argument("release_dir", type=Path)
    _add_key_argument(show)

    commands.add_parser(
        "algorithms",
        help="list the registered algorithms and what each supports, needs and "
        "releases",
    )

    export = commands.add_parser(
        "export-sqlite", help="write an embedded dataset into a SQLite database"
    )
    export.add_argument("dataset", help="embedded dataset: adult, german")
    export.add_argument("database", type=Path, help="SQLite file to create or update")
    export.add_argument("--table", help="table name (default: the dataset name)")
    init_command.add_parser(commands)
    compare_command.add_parser(commands)
    serve.add_parser(commands)
    return parser


def _add_key_argument(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--key",
        default="env:PPDM_AUDIT_KEY",
        help="the audit key that sealed the manifest: env:<VARIABLE> (default "
        "env:PPDM_AUDIT_KEY) or prefect-secret:<block name>; without one the "
        "seal is not checked (exit code 5 when all else passes)",
    )


def _load_key_resolver(key: str) -> None:
    if key.startswith("prefect-secret:"):
        import ppdm.tasks  # noqa: F401 - registers the prefect-secret key resolver


def _run(args: argparse.Namespace) -> int:
    # The start-up is mostly imports (Prefect, pandas, scikit-learn, Great
    # Expectations, matplotlib): millions of long-lived objects that the cyclic
    # garbage collector would walk again and again (a tenth of the start-up's
    # CPU). It is paused until the flow starts (_start_collecting).
    gc.disable()
    try:
        return _release(args)
    finally:
        gc.enable()
        gc.unfreeze()


def _start_collecting() -> None:
    """End the start-up's pause of the garbage collector, as the flow starts.

    What the start-up imported lives as long as the process: it is frozen
    (kept out of every later collection), so the flow's collections walk
    only what the flow allocates.
    """
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def _release(args: argparse.Namespace) -> int:
    # The configuration is checked (keys, ranges, roles, the algorithm's
    # capabilities, hierarchies, dataset folder, cheap feasibility) before
    # Prefect is imported: a bad one fails at once.
    from ppdm.config import default_config, load_config

    # The flags replace keys of the file before its one validation.
    overrides = {
        "algorithm": args.algorithm,
        "k": args.k,
        "l": args.l,
        "seed": args.seed,
        "output_dir": args.out,
        "work_dir": args.work_dir,
    }
    if args.config is not None:
        config = load_config(args.config, overrides)
        for note in config.deprecations:  # old sections still work; say what's new
            print(f"{args.config}: {note}", file=sys.stderr)
        if args.dataset and args.dataset != config.dataset:
            raise AnonymizationError(
                f"--dataset {args.dataset} contradicts dataset {config.dataset!r} "
                f"in {args.config}"
            )
    else:
        config = default_config(args.dataset or "adult", overrides)
    for key, value in _PREFECT_DEFAULTS.items():
        os.environ.setdefault(key, value)
    # The configuration is valid: a temporary Prefect API (unless one is
    # configured) starts now, so that its seconds of start-up overlap the
    # pre-flight, Prefect's import and the steps' imports.
    from ppdm.flows.api_server import TemporaryAPI

    api = None if _api_configured() else TemporaryAPI().start()
    # Only now: the pre-flight reads the data (pandas), which a configuration
    # error never needs.
    from ppdm.preflight import preflight

    level = os.environ.get("PREFECT_LOGGING_LEVEL")
    try:
        if any(
            spec.startswith("prefect-secret:")
            for spec in (
                config.audit_key,
                config.pseudonym_key,
                config.source.password or "",
            )
        ):
            import ppdm.tasks  # noqa: F401 - registers the prefect-secret key resolver
        preflight(config)
        if args.quiet or args.json:
            # Prefect's own log lines off; an error still ends in its one line.
            os.environ["PREFECT_LOGGING_LEVEL"] = "CRITICAL"
        release_dir = _run_with_progress(
            config, api, show=not (args.quiet or args.json)
        )
    finally:
        if level is None:
            os.environ.pop("PREFECT_LOGGING_LEVEL", None)
        else:
            os.environ["PREFECT_LOGGING_LEVEL"] = level
        if api is not None:
            api.stop()
    for line in release_warnings(Path(release_dir)):
        print(f"ppdm run: warning: {line}", file=sys.stderr)
    if args.json:
        print(json.dumps(release_summary(Path(release_dir)), sort_keys=True))
    else:
        print(release_dir)
    return 0


def release_warnings(release_dir: Path) -> list[str]:
    """What the data owner must know before sharing a release: the scope of a
    differential privacy guarantee, and one line per column released as is
    only because the owner accepted it."""
    certificate = json.loads(
        (release_dir / "verification.json").read_text(encoding="utf-8")
    )
    lines = []
    dp = certificate.get("differential_privacy")
    if dp:
        # The guarantee is the released tables'; the rest of the directory is
        # computed on the original rows and is for the data owner.
        lines.append(
            "the differential privacy guarantee covers the released tables "
            f"(data/) only; not covered: {dp.get('not_covered')}: share data/ "
            "alone with anyone the guarantee is meant to protect against"
        )
    for r in certificate.get("passthrough") or ():
        if r.get("acknowledged"):
            lines.append(
                f"column {r['column']!r} is released as is although "
                f"{r.get('identifier')} (acknowledge_identifier_passthrough)"
            )
        elif r.get("accepted") and r.get("exceeds"):
            lines.append(
                f"column {r['column']!r} is released as is although it exceeds "
                f"the pass-through limits ({', '.join(r['exceeds'])}; "
                "accept_passthrough)"
            )
    return lines


def _api_configured() -> bool:
    """Whether a Prefect API is configured, as far as is known before importing Prefect.

    A profile may name one too; :func:`_run_flow` asks Prefect once it is
    imported and then stops the temporary API it no longer needs.
    """
    if os.environ.get("PREFECT_API_URL"):
        return True
    if "prefect.settings" in sys.modules:  # imported already (a notebook, the tests)
        from prefect.settings import PREFECT_API_URL

        return bool(PREFECT_API_URL.value())
    return False


def _run_with_progress(
    config: ReleaseConfig, api: TemporaryAPI | None, *, show: bool
) -> str:
    """Run the flow, with a progress bar when standard error is a terminal."""
    from ppdm.flows.progress_bar import ReleaseProgress, terminal_console

    console = terminal_console() if show else None
    if console is None:
        return _run_flow(config, api)
    with ReleaseProgress(console=console):
        return _run_flow(config, api)


def _run_flow(config: ReleaseConfig, api: TemporaryAPI | None) -> str:
    """Run the release flow on a configured API, or on the temporary one ``api``."""
    from prefect import tags
    from prefect.settings import PREFECT_API_URL

    def release_flow(*, preload: bool = False) -> Any:
        from ppdm.flows.release import preload as preload_steps
        from ppdm.flows.release import release_for

        if preload:
            preload_steps()
        return release_for(config)

    run_tags = ("ppdm", f"dataset:{config.dataset}", f"algorithm:{config.algorithm}")
    with tags(*run_tags):
        if PREFECT_API_URL.value():  # a server (environment or profile) is configured
            if api is not None:
                api.stop()  # named by the profile: the temporary one is not needed
            flow = release_flow()
            _start_collecting()
            return flow(config)
        # Not Prefect's own ephemeral server: that one outlives a killed run.
        if api is None:
            from ppdm.flows.api_server import TemporaryAPI

            api = TemporaryAPI().start()
        # The flow's modules load while the server starts (both take seconds).
        flow = release_flow(preload=True)
        with api.serving():
            _start_collecting()
            return flow(config)


def release_summary(release_dir: Path) -> dict:
    """What a script needs of a published release: where, verdict, figures."""
    from ppdm.verify.figures import check_figures

    manifest = json.loads((release_dir / "manifest.json").read_text(encoding="utf-8"))
    certificate = json.loads(
        (release_dir / "verification.json").read_text(encoding="utf-8")
    )
    utility = json.loads((release_dir / "utility.json").read_text(encoding="utf-8"))
    holdout = utility.get("holdout") or {}
    return {
        "release_dir": str(release_dir),
        "release_id": manifest["release_id"],
        "dataset": manifest["dataset"],
        "algorithm": manifest["algorithm"],
        "requirement": manifest["requirement"],
        "passed": certificate["passed"],
        # Each check the release was verified for, with its own figures.
        "checks": [row.to_dict() for row in check_figures(certificate)],
        "rows": {f["path"]: f["rows"] for f in manifest["files"]},
        "accuracy": holdout.get("accuracy"),
        "created_at": manifest["created_at"],
    }


def _verify(args: argparse.Namespace) -> int:
    from ppdm.verify.release_check import check_release

    _load_key_resolver(args.key)
    outcome = check_release(args.release_dir, against=args.against, key=args.key)
    for line in outcome.lines:
        print(line)
    if not outcome.passed:
        # The first problem on stderr too: what a script's log keeps.
        print(
            f"ppdm verify: {args.release_dir}: {outcome.problems[0]}", file=sys.stderr
        )
        return EXIT_FAILED
    return EXIT_OK if outcome.seal_checked else EXIT_UNSEALED


def _releases(args: argparse.Namespace) -> int:
    from ppdm.release.audit import AUDIT_LOG_NAME, read_entries

    log = args.out / AUDIT_LOG_NAME
    if not log.is_file():
        raise AnonymizationError(f"no audit log {log}: nothing was released there")
    shown = 0
    for entry in read_entries(log):
        if entry.get("event") not in ("publish", "republish", "recovered"):
            continue
        shown += 1
        print(
            f"{entry.get('created_at', '?'):<25} {entry.get('event', ''):<10} "
            f"{entry.get('dataset', '')}/{entry.get('release_id', '')}  "
            f"{entry.get('algorithm', '')}  {_models_in_words(entry.get('requirement'))}"
        )
    if not shown:
        print(f"no release recorded in {log}")
    return EXIT_OK


def _budget(args: argparse.Namespace) -> int:
    from ppdm.release.audit import AUDIT_LOG_NAME
    from ppdm.release.budget import read_ledger

    if not args.out.is_dir():
        raise AnonymizationError(f"output directory {args.out} does not exist")
    log = args.out / AUDIT_LOG_NAME
    if not log.is_file():
        raise AnonymizationError(f"no audit log {log}: nothing was released there")
    _load_key_resolver(args.key)
    ledgers = read_ledger(args.out, key=args.key)
    if not ledgers:
        print(f"no release recorded in {log}")
    for name in sorted(ledgers):
        ledger = ledgers[name]
        limit = ledger.budget
        spent = (
            ledger.spent(limit.composition, limit.delta_prime)
            if limit is not None
            else ledger.spent()
        )
        how = limit.composition if limit is not None else "basic"
        print(
            f"{name}: spent epsilon={spent[0]:.6g} delta={spent[1]:.6g} by "
            f"{len(ledger.dp)} differentially private release(s) ({how} composition)"
        )
        if limit is not None:
            print(
                f"  budget epsilon={limit.epsilon:g} delta={limit.delta:g}; remaining "
                f"epsilon={max(limit.epsilon - spent[0], 0.0):.6g} "
                f"delta={max(limit.delta - spent[1], 0.0):.6g}"
            )
        else:
            print("  budget: none recorded (no release was published under one)")
        for spend in ledger.dp:
            assert spend.cost is not None
            print(
                f"  {spend.created_at or '?':<25} {spend.release_dir}  "
                f"{spend.algorithm or '?'}  epsilon={spend.cost.epsilon:.6g} "
                f"delta={spend.cost.delta:.6g}"
            )
        if ledger.non_dp:
            print(
                f"  not differentially private ({len(ledger.non_dp)}; no epsilon "
                "spent, no differential privacy guarantee):"
            )
            for release in ledger.non_dp:
                print(
                    f"    {release.created_at or '?':<25} {release.release_dir}  "
                    f"{release.algorithm or '?'}"
                )
    return EXIT_OK


def _models_in_words(described: object) -> str:
    """``5-anonymity; distinct 2-diversity of diagnosis`` from a recorded requirement."""
    from ppdm.release.seal import models_in_words

    return models_in_words(described)


def _show(args: argparse.Namespace) -> int:
    from ppdm.release.seal import check_seal
    from ppdm.verify.figures import CheckFigures
    from ppdm.verify.release_check import changed_files

    manifest = args.release_dir / "manifest.json"
    if not manifest.is_file():
        raise AnonymizationError(
            f"{args.release_dir} is not a release directory (no manifest.json)"
        )
    try:
        summary = release_summary(args.release_dir)
    except FileNotFoundError as err:
        raise AnonymizationError(
            f"{args.release_dir}: {Path(str(err.filename)).name} is missing"
        ) from err
    data = json.loads(manifest.read_text(encoding="utf-8"))
    # The certificate's verdict holds only for the files it was made on, as
    # published: a changed file, or a manifest that is not the sealed one,
    # turns it into a failure.
    _load_key_resolver(args.key)
    seal = check_seal(args.release_dir, args.key)
    problems = [*changed_files(args.release_dir, data), *seal.problems]
    verdict = "PASSED" if summary["passed"] else "FAILED"
    if problems:
        verdict = f"FAILED, not as published: {problems[0]}"
    elif not seal.checked:
        verdict += " (seal not checked: no audit key at hand)"
    print(f"release {summary['dataset']}/{summary['release_id']}")
    print(f"  created      {summary['created_at']}")
    print(f"  source       {data['source']} (sha256 {data['source_sha256'][:16]}...)")
    print(f"  algorithm    {summary['algorithm']} {data.get('params') or ''}")
    quasi = ", ".join(summary["requirement"].get("quasi_identifiers", []))
    print(f"  requirement  {_models_in_words(summary['requirement'])} over {quasi}")
    print(f"  verdict      {verdict}")
    for line in release_warnings(args.release_dir):
        print(f"  warning      {line}")
    for row in summary["checks"]:
        print(f"  check        {CheckFigures(**row).line()}")
    for path, rows in summary["rows"].items():
        print(f"  data         {path}: {rows} rows")
    roles = data.get("roles") or {}
    for role in ("quasi_identifier", "sensitive", "insensitive", "target"):
        named = [c for c, r in roles.items() if r == role]
        if named:
            print(f"  {role:<12} {', '.join(named)}")
    withheld = [c for c, r in roles.items() if r in ("identifying", "weight", "drop")]
    if withheld:
        print(f"  not released {', '.join(withheld)}")
    for model, figures in (summary["accuracy"] or {}).items():
        print(
            f"  accuracy     {model}: {figures['original']:.4f} on the original, "
            f"{figures['anonymized']:.4f} on the release"
        )
    print(f"  code         {data.get('code_version')}")
    print(f"  seal         {seal.note or 'FAILED'}")
    if problems:
        print(f"ppdm show: {args.release_dir}: {problems[0]}", file=sys.stderr)
        for problem in problems[1:]:
            print(f"  also: {problem}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK if seal.checked else EXIT_UNSEALED


def _audit_verify(args: argparse.Namespace) -> int:
    from ppdm.release.audit import verify_audit_log

    _load_key_resolver(args.key)
    report = verify_audit_log(args.out, key=args.key)
    for recovery in report.recoveries:
        print(f"recovered: {recovery}")
    if report.ok:
        print(
            f"audit log OK: {report.entries} entries, {report.files_checked} file "
            f"hashes checked in {args.out}"
            + (
                f"; {report.recovered_now} recovery recorded by this check"
                if report.recovered_now
                else ""
            )
        )
        print(
            f"head: {report.head} (key id {report.key_id}); keep a copy outside "
            f"{args.out} to detect a roll-back of the whole log"
        )
        return EXIT_RECOVERED if report.recovered_now else EXIT_OK
    state = "UNKEYED" if report.unkeyed else "BROKEN"
    print(f"audit log {state}: {report.broken}", file=sys.stderr)
    for problem in report.problems[1:]:
        print(f"  also: {problem}", file=sys.stderr)
    return EXIT_FAILED


_NUMERIC_INPUT = {
    "binned": "binned (the discretize step bins numeric quasi-identifiers)",
    "raw": "raw values (not discretized)",
    "either": "binned or raw",
}
_RELEASES = {
    "table": "one table",
    "projections": "several projections, each with the target",
    "columns": "one table on a subset of the columns",
}


def _allowed(constraint: object) -> str:
    if constraint is None:
        return "None"
    if isinstance(constraint, tuple):
        return " or ".join(_allowed(c) for c in constraint)
    describe = getattr(constraint, "describe", None)
    return describe() if callable(describe) else repr(constraint)


def _parameter_lines(entry: AlgorithmEntry) -> list[str]:
    lines = []
    for name, default in entry.parameters.items():
        line = f"{name} = {default!r}"
        if name in entry.constraints:
            line += f"  ({_allowed(entry.constraints[name])})"
        lines.append(line)
    return lines or ["(none)"]


def _describe_algorithm(name: str, entry: AlgorithmEntry) -> list[str]:
    import textwrap

    caps = entry.capabilities()
    rows = [
        ("privacy models", [", ".join(caps["models"])]),
        ("needs a target", ["yes" if caps["needs_target"] else "no"]),
        (
            "hierarchies",
            [
                "yes: generalizes along the dataset's hierarchy files"
                if caps["uses_hierarchies"]
                else "no"
            ],
        ),
        (
            "numeric input",
            [_NUMERIC_INPUT.get(caps["numeric_input"], caps["numeric_input"])],
        ),
        ("releases", [_RELEASES.get(caps["releases"], caps["releases"])]),
        (
            "out of core",
            [
                "yes: compute.engine dask runs it on the frequency table"
                if caps["frequency_table"]
                else "no: it needs the table's rows (compute.engine pandas)"
            ],
        ),
        ("parameters", _parameter_lines(entry)),
    ]
    lines = [name]
    lines += textwrap.wrap(
        entry.summary, width=88, initial_indent="  ", subsequent_indent="  "
    )
    width = max(len(label) for label, _ in rows)
    indent = " " * (width + 4)
    for label, values in rows:
        for i, value in enumerate(values):
            first = f"  {label if i == 0 else '':<{width}}  "
            lines += textwrap.wrap(
                value,
                width=88,
                initial_indent=first,
                subsequent_indent=indent,
                break_on_hyphens=False,
            )
    return lines


def _algorithms(_: argparse.Namespace) -> int:
    # The registry describes every algorithm without importing its module.
    from ppdm.algorithm_registry import registered

    blocks = [
        "\n".join(_describe_algorithm(name, entry))
        for name, entry in sorted(registered().items())
    ]
    print("\n\n".join(blocks))
    return 0


def _export_sqlite(args: argparse.Namespace) -> int:
    from ppdm.prepare import datasets
    from ppdm.prepare.ingest import write_sqlite

    url = write_sqlite(
        datasets.load(args.dataset), args.database, args.table or args.dataset
    )
    print(url)
    return 0


def _one_line_warnings() -> None:
    """Show the product's own warnings as one line: the category and the message.

    Python adds the file and the source line that raised a warning, which
    name the code, not what the user should do; Prefect's log of a step
    formats captured warnings the same way, so both paths read alike.
    """
    plain = warnings.formatwarning

    def formatted(message, category, filename, lineno, line=None):  # noqa: ANN001
        if issubclass(category, PPDMWarning):
            # A log record (Prefect captures warnings into its log) ends its
            # own line; a warning written to stderr needs the newline.
            captured = getattr(logging, "_warnings_showwarning", None) is not None
            return f"{category.__name__}: {message}" + ("" if captured else "\n")
        return plain(message, category, filename, lineno, line)

    warnings.formatwarning = formatted


def main(argv: list[str] | None = None) -> int:
    _one_line_warnings()
    parser = _parser()
    if not (sys.argv[1:] if argv is None else argv):
        parser.print_help()
        return EXIT_OK
    args = parser.parse_args(argv)
    handlers = {
        "run": _run,
        "verify": _verify,
        "algorithms": _algorithms,
        "audit": _audit_verify,
        "releases": _releases,
        "budget": _budget,
        "show": _show,
        "export-sqlite": _export_sqlite,
        "serve": serve.run,
        "init": init_command.run,
        "compare": compare_command.run,
    }
    try:
        code = handlers[args.command](args)
    except (StorageError, AnonymizationError, json.JSONDecodeError, MemoryError):
        if args.debug:
            raise
        code = _report(args.command, sys.exc_info()[1])
    if argv is None and args.command == "run":
        _exit_now(code)
    return code


def _exit_now(code: int) -> NoReturn:
    """End the ``ppdm run`` process with ``code``, without the interpreter's teardown.

    Everything a normal exit does that has an effect outside the process runs
    here, in the interpreter's order: the threads' exit hooks (Prefect's log and
    event workers drain) and the join of the threads still running, the
    ``atexit`` callbacks (temporary directories removed, logging handlers
    flushed), the standard streams flushed. What is skipped is the teardown of
    every module and object (pandas, scikit-learn, Great Expectations, Prefect),
    which takes a second or more and changes nothing on disk: the release and
    its audit entry were written and synced by the publish step, and Prefect's
    records reached the API before it stopped. Only the ``ppdm`` command itself
    ends this way (:func:`main` called without ``argv``); a caller of
    :func:`main` gets the exit code back.
    """
    import atexit
    import threading

    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or a reader that went away
            pass
    os._exit(code)


def _report(command: str, err: BaseException | None) -> int:
    """One line on stderr for an expected error, and its exit code."""
    if isinstance(err, json.JSONDecodeError):
        print(f"ppdm {command}: unreadable JSON: {err}", file=sys.stderr)
        return EXIT_FAILED
    if isinstance(err, MemoryError) and not isinstance(err, AnonymizationError):
        # outside a step (a step's names itself, OutOfMemoryError)
        print(
            f"ppdm {command}: out of memory: {err or 'no detail given'}",
            file=sys.stderr,
        )
        return EXIT_FAILED
    print(f"ppdm {command}: {err}", file=sys.stderr)
    if isinstance(err, StorageError):
        return EXIT_STORAGE
    usage = (
        isinstance(err, UnknownDatasetError) or "config" in type(err).__name__.lower()
    )
    return EXIT_USAGE if usage else EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
