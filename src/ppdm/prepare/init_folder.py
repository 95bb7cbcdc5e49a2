"""Write a dataset folder for a data owner's own table (``ppdm init``).

``init_dataset("clinic.csv", dataset="clinic", directory=".")`` reads the
table once, profiles it (:mod:`ppdm.prepare.profile`) and writes::

    ./clinic/
        clinic.yaml        the release configuration: every column's role,
                           with the reason of each guess as a comment
        schema.yaml        pandera schema of a valid row (DataFrameSchema.to_yaml)
        suite.json         Great Expectations suite of a valid table
        hierarchies/       one <attribute>.json (intervals) or .csv per
                           quasi-identifier

The configuration names the folder relative to itself (``schema: .``,
``hierarchies: hierarchies``), so the folder can move as a whole; the source
is written as an absolute path (CSV, Parquet) or as the database URL and
query (SQL; a relative SQLite path is made absolute). Its defaults are
``k: 5``, ``l: 2`` when a sensitive column has at least two values, the
Mondrian algorithm, seed 0 and ``output_dir: releases``.

Every role is a guess to check before the first release: the owner edits the
files, and ``ppdm run --config clinic/clinic.yaml`` releases. Running
``ppdm init`` again on the same table rewrites nothing; a file that differs
from what it would write now (an edited one) is never overwritten without
``force=True`` (``--force``), and the refusal names the files.

The folder describes the data: the schema lists observed value sets and
ranges (the extremes of numeric columns included), never the values of
identifying or dropped columns. Keep it with the data. A database URL with a
password makes the configuration readable by its owner only (mode 0600).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ppdm.exceptions import AnonymizationError, InvalidParameterError
from ppdm.params import did_you_mean
from ppdm.prepare.contract import build_schema, build_suite, typed_frame
from ppdm.prepare.ingest import load_source, other_format, sniff_delimiter, source_name
from ppdm.prepare.ingest.sql import sqlite_file
from ppdm.prepare.profile import (
    HierarchyPlan,
    TableProfile,
    columns_analysis,
    profile_table,
    propose_hierarchy,
)

if TYPE_CHECKING:
    from ppdm.prepare.trial import TrialOutcome

__all__ = [
    "CONFIG_DEFAULTS",
    "DatasetPlan",
    "OwnerRoles",
    "config_text",
    "init_dataset",
    "plan_dataset",
    "source_entry",
    "write_dataset",
]

#: Defaults of a configuration ``ppdm init`` writes (``l`` is added when a
#: sensitive column has at least two values).
CONFIG_DEFAULTS: dict[str, Any] = {
    "k": 5,
    "algorithm": "mondrian",
    "seed": 0,
    "output_dir": "releases",
}
_DEFAULT_L = 2
_INIT_BINS = 10
_SCHEMA_FILE, _SUITE_FILE, _HIERARCHY_DIR = "schema.yaml", "suite.json", "hierarchies"
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_FILE_KINDS = {".csv": "csv", ".tsv": "csv", ".parquet": "parquet", ".pq": "parquet"}
# A YAML plain scalar that stays a string: no indicator first, no ": " or " #".
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_YAML_WORDS = frozenset(
    "y yes n no true false on off null ~".split()
)  # read as booleans or null by some YAML parsers


@dataclass(frozen=True)
class OwnerRoles:
    """The roles the data owner names, overriding the guesses of ``ppdm init``.

    Attributes
    ----------
    target : str, optional
        The column an analyst predicts (``--target``).
    sensitive : str or sequence of str, optional
        The sensitive columns (``--sensitive``).
    quasi_identifiers : sequence of str, optional
        The quasi-identifiers (``--quasi-identifiers``); when given, no other
        column is guessed one.

    A role left ``None`` is guessed (:func:`ppdm.prepare.profile.profile_table`).
    """

    target: str | None = None
    sensitive: str | Sequence[str] | None = None
    quasi_identifiers: Sequence[str] | None = None


@dataclass(frozen=True)
class DatasetPlan:
    """Everything ``ppdm init`` would write, before anything is written.

    Attributes
    ----------
    folder : pathlib.Path
        The dataset folder, absolute.
    config_path : pathlib.Path
        ``folder / "<dataset>.yaml"``.
    profile : TableProfile
        The proposed roles and their reasons.
    hierarchies : dict of str to HierarchyPlan
        One per quasi-identifier (``kind == "none"`` when none could be made).
    files : dict of str to str
        Path relative to ``folder`` -> text to write.
    private : frozenset of str
        Files written readable by their owner only (a configuration holding a
        database password).
    trial : TrialOutcome or None
        What the trial release found (:mod:`ppdm.prepare.trial`): the columns
        it moved from ``insensitive``, and why.
    notes : tuple of str
        What the owner should know before the first run, one line each (rows
        without a target value, set aside by validation).
    """

    folder: Path
    config_path: Path
    profile: TableProfile
    hierarchies: dict[str, HierarchyPlan]
    files: dict[str, str]
    private: frozenset[str] = frozenset()
    trial: TrialOutcome | None = None
    notes: tuple[str, ...] = ()


def init_dataset(
    source: str | Path,
    *,
    dataset: str,
    directory: str | Path = ".",
    force: bool = False,
    roles: OwnerRoles = OwnerRoles(),
    query: str | None = None,
    password: str | None = None,
) -> Path:
    """Profile a table and write its dataset folder ``directory/dataset/``.

    Parameters
    ----------
    source : str or pathlib.Path
        A CSV (``.csv``) or Parquet (``.parquet``, ``.pq``) file, or a
        SQLAlchemy database URL (then ``query`` is required).
    dataset : str
        The dataset's name: letters, digits, ``_``, ``.``, ``-``.
    directory : str or pathlib.Path, default="."
        Where the folder ``dataset/`` is created.
    force : bool, default=False
        Overwrite files that differ from what would be written now.
    roles : OwnerRoles, default=OwnerRoles()
        The owner's own roles; they override the guesses (none by default).
    query : str, optional
        The SQL query returning the table (database sources only).
    password : str, optional
        Where the database password is, for a URL without one: a key spec,
        ``"env:NAME"`` or ``"prefect-secret:<block>"``. The configuration
        records the spec, never the password.

    Returns
    -------
    pathlib.Path
        The release configuration written, ``directory/dataset/dataset.yaml``
        (absolute).

    Raises
    ------
    InvalidParameterError
        A bad name, source or column; or files that differ exist and
        ``force`` is False (the message names them).
    ppdm.exceptions.SourceError
        The source cannot be read, or holds no rows.
    """
    plan = plan_dataset(
        source,
        dataset=dataset,
        directory=directory,
        roles=roles,
        query=query,
        password=password,
    )
    return write_dataset(plan, force=force)


def plan_dataset(
    source: str | Path,
    *,
    dataset: str,
    directory: str | Path = ".",
    roles: OwnerRoles = OwnerRoles(),
    query: str | None = None,
    password: str | None = None,
) -> DatasetPlan:
    """Read and profile the source; return what :func:`write_dataset` writes.

    Parameters and errors as :func:`init_dataset` (nothing is written).
    """
    if (
        not isinstance(dataset, str)
        or not _NAME.match(dataset)
        or dataset
        in (
            ".",
            "..",
        )
    ):
        raise InvalidParameterError(
            f"dataset must be a name of letters, digits, '_', '.' and '-'; "
            f"got {dataset!r}"
        )
    entry = source_entry(source, query=query, password=password)
    location = entry.get("path", entry.get("url"))
    frame = load_source(
        entry["kind"],
        location,
        query=entry.get("query"),
        delimiter=entry.get("delimiter"),
        password=entry.get("password"),
    )
    described = source_name(entry["kind"], location, entry.get("query"), None)
    _refuse_too_few_rows(frame, described)
    _refuse_unknown_names(frame, roles)

    analysis = columns_analysis(frame)

    def profile_of(overrides: dict[str, tuple[str, str]]) -> TableProfile:
        return profile_table(
            frame,
            dataset=dataset,
            target=roles.target,
            sensitive=roles.sensitive,
            quasi_identifiers=roles.quasi_identifiers,
            overrides=overrides,
            analysis=analysis,
        )

    def hierarchies_of(profile: TableProfile) -> dict[str, HierarchyPlan]:
        typed = typed_frame(frame, profile, analysis)
        return {
            name: propose_hierarchy(typed[name], bounds=profile[name].bounds)
            for name in profile.quasi_identifiers
        }

    # Refused before the trial release: what no release can be made from.
    notes = _refuse_unreleasable_roles(frame, profile_of({}), described, entry["kind"])
    # Imported here: the trial's validation and algorithms take a second to
    # import, which a refusal above need not wait for.
    from ppdm.prepare.trial import passthrough_trial

    # The guessed roles, then a trial release: a column guessed `insensitive`
    # that would fail the verifier's pass-through check is moved before the
    # owner's first run meets the failure.
    trial = passthrough_trial(
        frame,
        profile_of,
        hierarchies_of,
        k=CONFIG_DEFAULTS["k"],
        l=_DEFAULT_L,
        algorithm=CONFIG_DEFAULTS["algorithm"],
        seed=CONFIG_DEFAULTS["seed"],
        owner_named_quasi_identifiers=roles.quasi_identifiers is not None,
    )
    profile = profile_of(trial.roles)
    folder = Path(directory).expanduser().resolve() / dataset
    typed = typed_frame(frame, profile, analysis)
    hierarchies = hierarchies_of(profile)
    files = {
        _SCHEMA_FILE: _target_required(build_schema(frame, profile), profile).to_yaml(),
        _SUITE_FILE: json.dumps(build_suite(frame, profile), indent=1) + "\n",
    }
    for plan in hierarchies.values():
        if plan.file_name is not None:
            files[f"{_HIERARCHY_DIR}/{plan.file_name}"] = plan.text()
    config_name = f"{dataset}.yaml"
    files[config_name] = config_text(profile, entry, hierarchies, typed)
    private = frozenset({config_name}) if _has_password(entry) else frozenset()
    return DatasetPlan(
        folder=folder,
        config_path=folder / config_name,
        profile=profile,
        hierarchies=hierarchies,
        files=files,
        private=private,
        trial=trial,
        notes=notes,
    )


# -- refusals: a table ppdm cannot release as it stands -----------------------
def _refuse_too_few_rows(frame: pd.DataFrame, source: str) -> None:
    """Refuse a table with fewer rows than the k the configuration gets."""
    k = CONFIG_DEFAULTS["k"]
    if len(frame) < k:
        raise InvalidParameterError(
            f"source {source} holds {len(frame)} row{'s' * (len(frame) != 1)}, "
            f"fewer than k = {k}: k-anonymity hides every person among at least k "
            "rows, so this table cannot be released; extract more rows"
        )


def _refuse_unknown_names(frame: pd.DataFrame, roles: OwnerRoles) -> None:
    """Refuse a column the owner named that the table lacks, with the closest name."""
    sensitive = roles.sensitive
    named = [("--target", roles.target)] if roles.target is not None else []
    named += [
        ("--sensitive", n)
        for n in ([sensitive] if isinstance(sensitive, str) else sensitive or [])
    ]
    named += [("--quasi-identifiers", n) for n in roles.quasi_identifiers or []]
    columns = [str(c) for c in frame.columns]
    for option, name in named:
        if name not in columns:
            hint = did_you_mean(name, columns)
            raise InvalidParameterError(
                f"{option} names {name!r}, not a column of the table"
                + (f" ({hint})" if hint else "")
                + f"; columns: {', '.join(columns)}"
            )


def _refuse_unreleasable_roles(
    frame: pd.DataFrame, profile: TableProfile, source: str, kind: str
) -> tuple[str, ...]:
    """Refuse roles no release can be made from; return notes for the owner.

    No quasi-identifier: nothing to generalize (names in another language
    than English are not recognised), so the owner names them. A target
    that looks continuous or has a class too small for the utility report's
    split is refused (:mod:`ppdm.prepare.target_check`); rows without a
    target value are quarantined by validation (:func:`_target_required`),
    which is a note, unless they are more than validation may reject.
    """
    from ppdm.config.sections import DEFAULT_MAX_REJECTED_FRACTION
    from ppdm.prepare.target_check import check_target_values, missing_rows

    if not profile.quasi_identifiers:
        raise InvalidParameterError(
            f"no column of {source} looks like a quasi-identifier (a demographic "
            "attribute such as age, sex or zip code, recognised by English names): "
            "name them with --quasi-identifiers A,B,C; columns: "
            + ", ".join(str(c) for c in frame.columns)
        )
    target = profile.target
    if target is None:
        return ()
    values = frame[target]
    try:
        check_target_values(values, target=target, source=source)
    except AnonymizationError as err:
        raise InvalidParameterError(f"{err} (--target COL)") from None
    missing, where = missing_rows(values, csv=kind == "csv")
    if not missing:
        return ()
    found = (
        f"target {target!r} of {source} has no value in {missing:,} of "
        f"{len(values):,} rows ({where})"
    )
    if missing > DEFAULT_MAX_REJECTED_FRACTION * len(values):
        raise InvalidParameterError(
            f"{found}: {missing / len(values):.1%}, more than the "
            f"{DEFAULT_MAX_REJECTED_FRACTION:.0%} validation may set aside; fill "
            "in or drop those rows in the source, or pick another column "
            "(--target COL)"
        )
    return (
        f"{found}; {_SCHEMA_FILE} requires a value, so `ppdm run` sets those rows "
        "aside in quarantine",
    )


def _target_required(schema: Any, profile: TableProfile) -> Any:
    """The schema with the target not nullable: a row without a class is quarantined.

    Such a row can neither train nor test the utility report's classifiers;
    validation sets it aside (with its reason) rather than let it fail the
    report at the end of the run.
    """
    if profile.target is None:
        return schema
    return schema.update_column(profile.target, nullable=False)


def write_dataset(plan: DatasetPlan, *, force: bool = False) -> Path:
    """Write a :class:`DatasetPlan`'s files; unchanged files are left as they are.

    Raises
    ------
    InvalidParameterError
        Without ``force``: a file exists with other content (edited, or written
        from another table), or a hierarchy of a quasi-identifier exists in the
        other format (``.csv`` for a ``.json``, or the reverse), which would
        define the attribute twice. Nothing is written then.
    """
    folder = plan.folder
    if folder.exists() and not folder.is_dir():
        raise InvalidParameterError(f"{folder} exists and is not a directory")
    changed = [
        name
        for name, text in plan.files.items()
        if (folder / name).exists() and _read(folder / name) != text
    ]
    rivals = _rival_hierarchies(plan)
    if (changed or rivals) and not force:
        listed = ", ".join(
            changed + [f"{r} (defines the attribute again)" for r in rivals]
        )
        raise InvalidParameterError(
            f"dataset folder {folder}: {len(changed) + len(rivals)} file(s) differ "
            f"from what ppdm init writes now and would be overwritten: {listed}; "
            "keep your edits, or run again with --force to overwrite them"
        )
    (folder / _HIERARCHY_DIR).mkdir(parents=True, exist_ok=True)
    for rival in rivals:
        (folder / rival).unlink()
    for name, text in plan.files.items():
        path = folder / name
        if path.exists() and _read(path) == text:
            continue
        _write_atomically(path, text, private=name in plan.private)
    return plan.config_path


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # unreadable: treated as different


def _rival_hierarchies(plan: DatasetPlan) -> list[str]:
    rivals = []
    for hierarchy in plan.hierarchies.values():
        if hierarchy.file_name is None:
            continue
        other = {"intervals": ".csv", "levels": ".json"}[hierarchy.kind]
        name = f"{_HIERARCHY_DIR}/{hierarchy.attribute}{other}"
        if (plan.folder / name).exists():
            rivals.append(name)
    return rivals


def _write_atomically(path: Path, text: str, *, private: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, 0o600 if private else 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# -- source -------------------------------------------------------------------
def source_entry(
    source: str | Path, *, query: str | None = None, password: str | None = None
) -> dict[str, str]:
    """The configuration's ``source:`` mapping for a file path or a database URL.

    A file becomes ``{kind: csv|parquet, path: <absolute path>}``; a URL
    (``scheme://...``) becomes ``{kind: sql, url, query}``, a relative SQLite
    database path made absolute, plus ``password`` (the spec naming where the
    password is) when given. A CSV file separated by something else than
    commas gets its ``delimiter`` (:func:`ppdm.prepare.ingest.sniff_delimiter`),
    so that every later run reads it as ``ppdm init`` did.

    Raises
    ------
    InvalidParameterError
        A file of another type (a spreadsheet: export it as CSV), a URL
        without ``query``, a ``query`` or a ``password`` with a file, a
        malformed ``password`` spec, or one next to a URL that holds a
        password.
    ppdm.exceptions.SourceError
        A CSV file that cannot be read.
    """
    text = str(source)
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", text):
        if not query:
            raise InvalidParameterError(
                f"source {_masked(text)} is a database URL; it needs a query "
                "(--query 'SELECT * FROM <table>')"
            )
        entry = {"kind": "sql", "url": _absolute_sqlite(text), "query": query}
        if password is not None:
            if not re.match(r"^[a-z-]+:.+$", password):
                raise InvalidParameterError(
                    f"--password {password!r} must name where the password is: "
                    "env:<VARIABLE> or prefect-secret:<block name>"
                )
            if _has_password(entry):
                raise InvalidParameterError(
                    f"source {_masked(text)} holds a password and --password names "
                    "another; give the URL without one (user@host)"
                )
            entry["password"] = password
        return entry
    path = Path(text).expanduser()
    kind = _FILE_KINDS.get(path.suffix.lower())
    if kind is None:
        what = other_format(path)
        raise InvalidParameterError(
            f"source {text!r}: "
            + (f"{what}: export it as CSV (UTF-8); " if what else "")
            + f"a file must end in {', '.join(_FILE_KINDS)}, or be a "
            "database URL such as sqlite:///data.db with --query"
        )
    if query or password:
        option = "--query" if query else "--password"
        raise InvalidParameterError(
            f"{option} is for database URLs; source {text!r} is a {kind} file"
        )
    entry = {"kind": kind, "path": str(path.resolve())}
    if kind == "csv":
        delimiter = sniff_delimiter(path)
        if delimiter != ",":  # the default: configurations stay as they were
            entry["delimiter"] = delimiter
    return entry


def _absolute_sqlite(url: str) -> str:
    import sqlalchemy as sa

    try:
        parsed = sa.make_url(url)
    except (sa.exc.ArgumentError, ValueError):
        return url  # load_source names the problem
    database = sqlite_file(parsed)
    if database is not None and not Path(database).is_absolute():
        parsed = parsed.set(database=str(Path(database).resolve()))
        return parsed.render_as_string(hide_password=False)
    return url


def _has_password(entry: dict[str, str]) -> bool:
    if entry["kind"] != "sql":
        return False
    import sqlalchemy as sa

    try:
        return bool(sa.make_url(entry["url"]).password)
    except (sa.exc.ArgumentError, ValueError):
        return True


def _masked(url: str) -> str:
    return re.sub(r"(//[^:/@]*:)[^@]*@", r"\1***@", url)


# -- configuration text -------------------------------------------------------
def config_text(
    profile: TableProfile,
    source: dict[str, str],
    hierarchies: dict[str, HierarchyPlan],
    frame: pd.DataFrame,
) -> str:
    """The release configuration as YAML text, each role with its reason.

    Written by hand, not by a YAML dumper, for the comments; every key and
    value is a plain word or a JSON string (which YAML reads as a
    double-quoted scalar), so ``yaml.safe_load`` reads it back exactly.
    """
    roles = profile.roles
    sensitive = [
        name for name in profile.sensitive_attributes if frame[name].nunique() >= 2
    ]
    lines = [
        f"# Release configuration of {profile.dataset}, written by `ppdm init` from a "
        f"table of {profile.rows:,} rows",
        f"# and {len(roles)} columns. Every role below is a GUESS from the column's "
        "name and values,",
        "# with its reason as a comment: check each one before the first release.",
        "#   identifying       dropped (or keyed pseudonyms with pseudonymize: true)",
        "#   quasi_identifier  generalized by the algorithm, along hierarchies/",
        "#   sensitive         released as is, protected by l-diversity",
        "#   insensitive       released as is; the pass-through check stops the run "
        "if it singles people out",
        "#   target            the class an analyst predicts, released as is",
        "#   weight            dropped unless listed in keep_weights",
        "#   drop              never released",
        f"dataset: {_scalar(profile.dataset)}",
        f"schema: .                  # {_SCHEMA_FILE} and {_SUITE_FILE} beside this file",
        f"hierarchies: {_HIERARCHY_DIR}   # one file per quasi-identifier",
        "source:",
    ]
    if source["kind"] == "sql" and _has_password(source):
        lines.append(
            "  # the URL holds a password: this file is readable by you only; "
            "keep it out:"
        )
        lines.append(
            "  # a URL without one and `password: env:<VARIABLE>` (or "
            "prefect-secret:<block>)"
        )
    lines += [f"  {key}: {_scalar(value)}" for key, value in source.items()]
    lines.append("columns:")
    width = min(max((len(_scalar(n)) for n in roles), default=0) + 1, 32)
    role_width = max(len(r) for r in roles.values()) if roles else 0
    for column in profile.columns:
        reason = column.reason
        plan = hierarchies.get(column.name)
        if plan is not None:
            reason += f"; {plan.summary}"
        key = f"{_scalar(column.name)}:".ljust(width + 1)
        lines.append(f"  {key} {column.role.ljust(role_width)}  # {_one_line(reason)}")
    if profile.target is None:
        lines.append(
            "# No column is the target yet: give the column an analyst predicts the "
            "role `target`."
        )
    if sensitive:
        others = "; the others by the models below" if len(sensitive) > 1 else ""
        lines.append(
            f"sensitive_attribute: {_scalar(sensitive[0])}   # protected by "
            f"l-diversity{others}"
        )
    lines.append(f"k: {CONFIG_DEFAULTS['k']}")
    if sensitive:
        lines.append(
            f"l: {_DEFAULT_L}   # at least {_DEFAULT_L} distinct values of "
            f"{_one_line(sensitive[0])} in every class"
        )
    if len(sensitive) > 1:
        lines.append("models:")
        for name in sensitive[1:]:
            lines.append(
                f"  - {{model: distinct-l-diversity, attribute: {_scalar(name)}, "
                f"l: {_DEFAULT_L}}}"
            )
    lines.append(f"algorithm: {_scalar(CONFIG_DEFAULTS['algorithm'])}")
    # MDL cuts a number only where the target's distribution changes: with a
    # target the numbers do not predict it makes no cut at all, and the
    # whole column is released as one interval. Equal-size bins keep the
    # numbers useful whatever the target.
    lines += [
        "discretize:                # numeric quasi-identifiers, for algorithms that take bins",
        "  method: equal-frequency  # or mdl: cuts only where the target changes",
        f"  n_bins: {_INIT_BINS}",
    ]
    for key in ("seed", "output_dir"):
        lines.append(f"{key}: {_scalar(CONFIG_DEFAULTS[key])}")
    return "\n".join(lines) + "\n"


def _scalar(value: Any) -> str:
    """A YAML scalar that reads back as the same string (or number)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InvalidParameterError(f"cannot write {value!r} into the configuration")
    if isinstance(value, int):
        return str(value)
    if _PLAIN.match(value) and value.lower() not in _YAML_WORDS:
        return value
    return json.dumps(value, ensure_ascii=False)


def _one_line(text: str) -> str:
    return " ".join(text.split())
