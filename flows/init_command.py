"""The ``ppdm init`` command: a dataset folder for a data owner's own table.

``ppdm init SOURCE --dataset NAME [--target COL] [--sensitive COL[,COL...]]
[--quasi-identifiers A,B,...] [--query SQL] [--password SPEC] [--dir DIR]
[--force]`` reads the
table (a CSV or Parquet file, or a database URL with ``--query``), proposes a
role for every column and writes ``DIR/NAME/`` with the release configuration
``NAME.yaml``, ``schema.yaml``, ``suite.json`` and ``hierarchies/``
(:mod:`ppdm.prepare.init_folder`). It prints one line per column (role,
column, reason) and, last, the configuration's path, so that

    ppdm run --config "$(ppdm init clinic.csv --dataset clinic | tail -n 1)"

releases with the guesses as they are. Read them first.

Exit codes: 0 written (or already up to date); 2 a bad argument, files that
differ would be overwritten without ``--force``, or a table no release can be
made from as it stands (fewer rows than k, no quasi-identifier found, a
target that looks continuous, has a class too small for the utility report's
split or too many rows without a value); 1 the source cannot be read.
Prefect is not involved.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ppdm.exceptions import AnonymizationError, InvalidParameterError

__all__ = ["add_parser", "main", "run"]

_EXIT_USAGE = 2


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``init`` sub-command to the ``ppdm`` parser.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers`` returned.

    Returns
    -------
    argparse.ArgumentParser
        The ``init`` parser.
    """
    parser = subparsers.add_parser(
        "init",
        help="profile your own table and write its dataset folder (roles, schema, "
        "suite, hierarchies, release configuration)",
        description="Read a table, propose a role for every column (identifying, "
        "quasi_identifier, sensitive, insensitive, target, weight, drop) and write "
        "DIR/NAME/ with NAME.yaml (the release configuration, each guess with its "
        "reason), schema.yaml, suite.json and hierarchies/. Check every role before "
        "the first `ppdm run --config DIR/NAME/NAME.yaml`.",
    )
    _add_arguments(parser)
    return parser


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "source",
        help="a CSV (.csv) or Parquet (.parquet) file, or a SQLAlchemy database URL "
        "such as sqlite:///data.db (with --query)",
    )
    parser.add_argument(
        "--dataset", required=True, metavar="NAME", help="the dataset's name"
    )
    parser.add_argument(
        "--target", metavar="COL", help="the column an analyst predicts"
    )
    parser.add_argument(
        "--sensitive",
        metavar="COL[,COL...]",
        help="the sensitive attribute(s), protected by l-diversity",
    )
    parser.add_argument(
        "--quasi-identifiers",
        metavar="A,B,...",
        help="the quasi-identifiers (default: guessed from names and values)",
    )
    parser.add_argument("--query", metavar="SQL", help="the SQL query of a database")
    parser.add_argument(
        "--password",
        metavar="SPEC",
        help="where the database password is, for a URL without one: "
        "env:<VARIABLE> or prefect-secret:<block name>; the configuration "
        "records this name, never the password",
    )
    parser.add_argument(
        "--dir",
        dest="directory",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="where the folder NAME/ is written (default: .)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite files that differ from what would be written (your edits)",
    )


def _names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [part.strip() for part in text.split(",") if part.strip()]
    return names


def run(args: argparse.Namespace) -> int:
    """Write the dataset folder and print the roles, then the configuration's path.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``init`` arguments: ``source``, ``dataset``, ``target``,
        ``sensitive``, ``quasi_identifiers``, ``query``, ``directory``,
        ``force``.

    Returns
    -------
    int
        0 when written; 2 for a bad argument or a refusal to overwrite (the
        message is on standard error).

    Raises
    ------
    ppdm.exceptions.SourceError
        The source cannot be read (``ppdm`` reports it with exit code 1).
    """
    from ppdm.prepare.init_folder import OwnerRoles, plan_dataset, write_dataset

    password = getattr(args, "password", None)
    if password and password.startswith("prefect-secret:"):
        import ppdm.tasks  # noqa: F401 - registers the prefect-secret key resolver
    try:
        plan = plan_dataset(
            args.source,
            dataset=args.dataset,
            directory=args.directory,
            roles=OwnerRoles(
                target=args.target,
                sensitive=_names(args.sensitive),
                quasi_identifiers=_names(args.quasi_identifiers),
            ),
            query=args.query,
            password=password,
        )
        path = write_dataset(plan, force=args.force)
    except InvalidParameterError as err:
        print(f"ppdm init: {err}", file=sys.stderr)
        return _EXIT_USAGE
    width = max((len(c.name) for c in plan.profile.columns), default=0)
    for column in plan.profile.columns:
        line = f"{column.role:<16} {column.name:<{width}}  {column.reason}"
        hierarchy = plan.hierarchies.get(column.name)
        if hierarchy is not None:
            line += f"; {hierarchy.summary}"
        print(line)
    sys.stdout.flush()  # the roles first, then the warnings, then the path
    for note in plan.notes:
        print(f"ppdm init: {note}", file=sys.stderr)
    if plan.profile.target is None:
        print(
            "ppdm init: no column looks like a class label; give the column an "
            f"analyst predicts the role `target` in {path} (or run again with "
            "--target COL) before `ppdm run`",
            file=sys.stderr,
        )
    if plan.private:
        sys.stdout.flush()
        print(
            f"ppdm init: the database URL's password is written into {path} "
            "(readable by you only); keep it out of files: a URL without one and "
            "--password env:<VARIABLE>",
            file=sys.stderr,
        )
    sys.stderr.flush()
    print(path)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m ppdm.flows.init_command ...``: the ``init`` command on its own."""
    parser = argparse.ArgumentParser(
        prog="python -m ppdm.flows.init_command",
        description="Profile a table and write its dataset folder.",
    )
    _add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except AnonymizationError as err:
        print(f"ppdm init: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
