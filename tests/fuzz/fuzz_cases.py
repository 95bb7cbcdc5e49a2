"""Malformed inputs for a release, and the one judgement every case gets.

Each fuzz test builds an input (a CSV, Parquet or SQLite source, or a
configuration file) from a small slice of Statlog German credit, spoiled in
one way a hypothesis strategy chose, and hands it to :func:`judge`. A case
passes when it ends in one of two ways:

- an error of the project (a subclass of
  :class:`ppdm.exceptions.AnonymizationError`) whose message is one line and
  names the file, a column or a key the case touched, with nothing published:
  no release directory under ``<output_dir>/<dataset>/``, no ``.staging-*``
  left, and an audit log, if one was written, that verifies;
- a release that the independent verifier
  (:func:`ppdm.verify.release_check.check_release`) accepts, the only one in
  its output directory.

Any other exception fails the test. Outcomes are counted per family (the
source kind or "config") and error class in :data:`COUNTS`; with
``PPDM_FUZZ_COUNTS=<file>`` set, the fuzz folder's conftest writes them there
as JSON (``benchmarks/fuzz_counts.py`` runs the folder so and prints the
table of ``benchmarks/results/fuzzing.md``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from hypothesis import HealthCheck, settings

from ppdm.config import ReleaseConfig, default_config, parse_config
from ppdm.exceptions import AnonymizationError
from ppdm.pipeline import run_steps
from ppdm.prepare import datasets
from ppdm.release.audit import AUDIT_LOG_NAME, verify_audit_log
from ppdm.verify.release_check import check_release

#: Rows of German credit every case starts from (a seeded sample, so every
#: category and both classes are present).
ROWS = 150


def fuzz(max_examples: int) -> settings:
    """Settings of every fuzz test: ``max_examples`` examples, the same on every run.

    Derandomized and without an example database, so each run generates
    the same cases (and the recorded counts are reproducible); no
    per-example deadline (a release takes about a second).
    """
    return settings(
        max_examples=max_examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        print_blob=True,
    )


#: (family, what was spoiled, outcome) -> cases; outcome is an error class
#: with the stage that raised it, or "release verified".
COUNTS: Counter[tuple[str, str, str]] = Counter()
#: The first message of each counted outcome, the case's folder as ``<case>``.
EXAMPLES: dict[tuple[str, str, str], str] = {}

NUMERIC = ("duration", "credit-amount", "installment-rate", "age", "existing-credits")
CATEGORICAL = (
    "checking-status",
    "purpose",
    "savings",
    "employment-since",
    "personal-status-sex",
    "housing",
    "job",
    "foreign-worker",
    "credit",
)


@cache
def german() -> pd.DataFrame:
    """The seeded slice every case spoils (a fresh copy per call)."""
    return datasets.load("german").sample(ROWS, random_state=7).reset_index(drop=True)


def table() -> pd.DataFrame:
    return german().copy()


def fresh_dir(root: Path) -> Path:
    """A new directory per example (hypothesis runs many in one test call)."""
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(dir=root))


def config_data(case_dir: Path, source: dict[str, Any], **changes: Any) -> dict:
    """German's shipped configuration as a dict, reading ``source``, in ``case_dir``."""
    data = default_config("german").model_dump(by_alias=True)
    data.update(
        source=source,
        output_dir=str(case_dir / "out"),
        work_dir=str(case_dir.parent / "work"),
        **changes,
    )
    return data


@dataclass(frozen=True)
class Outcome:
    """How a case ended: the error (None for a release) and the stage."""

    error: AnonymizationError | None
    stage: str
    release_dir: Path | None = None

    @property
    def label(self) -> str:
        if self.error is None:
            return "release verified"
        return f"{type(self.error).__name__} ({self.stage})"


def judge(
    family: str,
    spoiled: str,
    make_config: Callable[[], ReleaseConfig],
    names: Iterable[str],
    out_dir: Path,
) -> Outcome:
    """Run one case to its end and check that end; count it.

    ``make_config`` reads or validates the configuration (a ConfigError there
    is an outcome too); ``names`` are the file, columns and keys the case
    touched: an error's message must name at least one of them.
    """
    steps: list[str] = []

    def run_step(name: str, fn: Callable[..., Any], *args: Any) -> Any:
        steps.append(name)
        return fn(*args)

    stage = "config"
    dataset = "german"
    try:
        config = make_config()
        dataset = config.dataset
        stage = "pre-flight"
        result = run_steps(config, run_step=run_step)
    except AnonymizationError as error:
        outcome = Outcome(error, steps[-1] if steps else stage)
        _check_refusal(outcome, list(names), out_dir, dataset)
    else:
        outcome = Outcome(None, "publish", result.release_dir)
        _check_release(result.release_dir, out_dir)
    key = (family, spoiled, outcome.label)
    COUNTS[key] += 1
    if outcome.error is not None and key not in EXAMPLES:
        EXAMPLES[key] = (
            str(outcome.error)
            .replace(str(out_dir.parent), "<case>")
            .replace(str(out_dir.parent.parent), "<run>")  # the shared work_dir
        )
    return outcome


def _check_refusal(
    outcome: Outcome, names: list[str], out_dir: Path, dataset: str
) -> None:
    message = str(outcome.error)
    assert message and "\n" not in message, f"not one line: {message!r}"
    assert "Traceback" not in message, message
    assert any(name and name in message for name in names), (
        f"{outcome.label}: the message names none of {names}: {message}"
    )
    published = out_dir / dataset
    if published.is_dir():
        left = sorted(p.name for p in published.iterdir())
        assert left == [], f"{outcome.label} left {left} in {published}: {message}"
    staging = sorted(out_dir.rglob(".staging-*")) if out_dir.is_dir() else []
    assert staging == [], staging
    if (out_dir / AUDIT_LOG_NAME).exists():  # a rejected verification is logged
        report = verify_audit_log(out_dir)
        assert report.ok, report.broken


def _check_release(release_dir: Path, out_dir: Path) -> None:
    checked = check_release(release_dir)
    assert checked.passed, checked.lines
    releases = [p for p in release_dir.parent.iterdir() if not p.name.startswith(".")]
    assert releases == [release_dir], releases
    assert sorted(out_dir.rglob(".staging-*")) == []
    assert verify_audit_log(out_dir).ok


# -- writing spoiled sources --------------------------------------------------
def write_csv(
    frame: pd.DataFrame,
    path: Path,
    *,
    encoding: str = "utf-8",
    sep: str = ",",
    header: list[str] | None = None,
) -> Path:
    """Write a table as CSV text, optionally with another header line."""
    text = frame.to_csv(index=False, sep=sep, lineterminator="\n")
    if header is not None:
        text = sep.join(header) + "\n" + text.split("\n", 1)[1]
    path.write_bytes(text.encode(encoding))
    return path


def write_sqlite(rows: list[tuple], columns: list[str], path: Path) -> str:
    """A SQLite table ``t`` of untyped columns holding ``rows`` exactly as given."""
    quoted = ", ".join('"' + c.replace('"', '""') + '"' for c in columns)
    with sqlite3.connect(path) as connection:
        connection.execute(f"CREATE TABLE t ({quoted})")
        marks = ", ".join("?" * len(columns))
        connection.executemany(f"INSERT INTO t VALUES ({marks})", rows)
    connection.close()
    return f"sqlite:///{path}"


def rows_of(frame: pd.DataFrame) -> list[tuple]:
    """A table's rows as plain Python values (missing as None)."""
    plain = frame.astype(object).where(frame.notna(), None)
    return [tuple(row) for row in plain.itertuples(index=False, name=None)]


def yaml_text(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def write_counts(path: Path | str) -> None:
    """Add :data:`COUNTS` to the JSON file ``path`` (one run may span processes)."""
    path = Path(path)
    old = json.loads(path.read_text()) if path.is_file() else []
    old += [[*key, n, EXAMPLES.get(key)] for key, n in sorted(COUNTS.items())]
    path.write_text(json.dumps(old, indent=1, ensure_ascii=False))


def counts_file() -> str | None:
    return os.environ.get("PPDM_FUZZ_COUNTS")


__all__ = [
    "CATEGORICAL",
    "COUNTS",
    "EXAMPLES",
    "fuzz",
    "NUMERIC",
    "Outcome",
    "ROWS",
    "config_data",
    "counts_file",
    "fresh_dir",
    "german",
    "judge",
    "parse_config",
    "rows_of",
    "table",
    "write_counts",
    "write_csv",
    "write_sqlite",
    "yaml_text",
]
