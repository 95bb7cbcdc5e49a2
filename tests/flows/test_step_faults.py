"""Faults in every step of a release: an exception, a SIGKILL, a full or read-only disk.

Every case starts from an output directory that already holds an earlier
German release (seed 1) and its audit log, and runs German's shipped
configuration (seed 0) into it through the pipeline's own order of steps
(:func:`ppdm.pipeline.run_steps`):

- an exception raised inside each of the seven steps (the step runner runs
  the step and raises before handing its result on; publish raises before
  publishing), in this process;
- a SIGKILL of the releasing process at each step boundary (after ingest,
  after validate, ..., after publish), one process per boundary (each forked
  from one process that imported the stack once);
- the artifact store (``work_dir``) on a full disk, and on a read-only one
  (a small tmpfs where this process may mount one; otherwise ENOSPC raised by
  the store's file writes, and a directory without write permission);
- the user errors of issue #13 that surface inside a step, through ``ppdm
  run`` on the flow tests' Prefect backend: one line, no traceback (not even
  Prefect's), nothing published.

After each, no partial release directory is visible (only the earlier one,
or after a completed publication the new one, whole), no staging directory
or temporary artifact is left, the audit chain verifies with nothing to
recover, and running the release again publishes exactly the bytes of a
fault-free reference run. Faults inside publication itself (every write,
fsync and rename of it) are the subject of
``tests/unit/release/test_publish_faults.py``; a full and a read-only
*output* directory under ``ppdm run``, of ``tests/flows/test_storage_failures.py``.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from ppdm import pipeline
from ppdm.config import ReleaseConfig, default_config
from ppdm.exceptions import StorageError
from ppdm.flows.cli import EXIT_FAILED, EXIT_OK, main
from ppdm.prepare import datasets
from ppdm.release import artifacts
from ppdm.release.audit import (
    AUDIT_LOG_NAME,
    RELEASE_EVENTS,
    read_entries,
    verify_audit_log,
)
from ppdm.verify.release_check import check_release

STEPS = pipeline.STEPS
#: Fields of a manifest about its history, not its content: when, by which
#: flow run and at which commit of the code it was made (a checkout may move
#: between a crash and the rerun), and its seal binding it to its place in the
#: audit log.
VOLATILE = ("created_at", "flow_run_id", "code_version", "audit_seal")
#: Configuration keys of where a run reads and writes (not part of a release's id).
LOCATIONS = ("output_dir", "work_dir")


@dataclass(frozen=True)
class Reference:
    config: ReleaseConfig  # German, seed 0
    release: str  # <dataset>/<release id> of the reference run
    files: dict[str, bytes]  # its release directory, manifest without VOLATILE
    earlier: Path  # an output directory holding the seed-1 release and its log
    earlier_release: str


def _files(release_dir: Path) -> dict[str, bytes]:
    """A release directory's bytes; the manifest without its volatile fields."""
    files = {}
    for path in sorted(release_dir.rglob("*")):
        if not path.is_file() or path.name == "report.html":
            # the page is the release's record: it names when it was
            # published and its audit entry, which a re-run changes
            continue
        data = path.read_bytes()
        if path.name == "manifest.json":
            manifest = json.loads(data)
            for key in VOLATILE:
                manifest.pop(key, None)
            for key in LOCATIONS:  # where the run wrote, not what it released
                manifest["config"].pop(key, None)
            manifest.get("artifacts", {}).pop("report.html", None)
            data = json.dumps(manifest, sort_keys=True).encode()
        files[path.relative_to(release_dir).as_posix()] = data
    return files


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    root = tmp_path_factory.mktemp("step-faults")
    config = default_config("german").with_overrides(
        output_dir=str(root / "reference"), work_dir=str(root / "reference-work")
    )
    earlier = pipeline.run_release(
        config.with_overrides(
            seed=1, output_dir=str(root / "earlier"), work_dir=str(root / "work-1")
        )
    )
    # The reference run publishes next to the same earlier release, so it is
    # checked against it (the release series) exactly as the faulty runs are.
    shutil.copytree(root / "earlier", root / "reference")
    outcome = pipeline.run_release(config)
    return Reference(
        config=config,
        release=outcome.release_dir.relative_to(root / "reference").as_posix(),
        files=_files(outcome.release_dir),
        earlier=root / "earlier",
        earlier_release=earlier.release_dir.relative_to(root / "earlier").as_posix(),
    )


def _case(reference: Reference, where: Path) -> ReleaseConfig:
    """A copy of the earlier output directory, a fresh work directory."""
    shutil.copytree(reference.earlier, where / "out")
    return reference.config.with_overrides(
        output_dir=str(where / "out"), work_dir=str(where / "work")
    )


def _visible(out: Path) -> set[str]:
    """Release directories a reader sees: ``<dataset>/<name>``, no dot names."""
    return {
        f"{dataset.name}/{release.name}"
        for dataset in out.iterdir()
        if dataset.is_dir() and not dataset.name.startswith(".")
        for release in dataset.iterdir()
        if not release.name.startswith(".")
    }


def _published(out: Path) -> list[str]:
    """Release directories with a ``publish`` entry, in the log's order.

    Running a published release again appends a ``republish`` entry (the
    same directory, found, not copied); only its first publication counts.
    """
    entries = read_entries(out / AUDIT_LOG_NAME)
    assert {e.get("event") for e in entries} <= set(RELEASE_EVENTS)
    return [e["release_dir"] for e in entries if e.get("event") == "publish"]


def _check_left(config: ReleaseConfig, reference: Reference, published: bool) -> None:
    """What a fault may leave: the earlier release, and the new one only whole."""
    out, work = Path(config.output_dir), Path(config.work_dir)
    expected = {reference.earlier_release}
    if published:
        expected.add(reference.release)
        assert check_release(out / reference.release).passed
        assert _files(out / reference.release) == reference.files
    assert _visible(out) == expected
    assert sorted(out.rglob(".staging-*")) == []
    assert sorted(p.name for p in work.rglob("*.tmp")) == []  # no torn artifact
    report = verify_audit_log(out)
    assert report.ok, report.broken
    assert report.recovered_now == 0, report.recoveries
    assert _published(out) == [
        reference.earlier_release,
        *expected - {reference.earlier_release},
    ]


def _rerun(config: ReleaseConfig, reference: Reference) -> None:
    """Running again publishes the reference bytes once, with a valid chain."""
    outcome = pipeline.run_release(config)
    out = Path(config.output_dir)
    assert outcome.release_dir == out / reference.release
    assert _files(outcome.release_dir) == reference.files
    assert _visible(out) == {reference.earlier_release, reference.release}
    assert _published(out) == [reference.earlier_release, reference.release]
    report = verify_audit_log(out)
    assert report.ok and report.recovered_now == 0, report.broken


# -- an exception inside each step ----------------------------------------------
class InjectedFault(Exception):
    """The fault this test raises inside a step."""


def _raising_in(step: str) -> Callable[..., Any]:
    """A step runner that fails step ``step``.

    Before publish: the step runs (its artifacts are written) and fails
    before its result is handed on. Publish fails before publishing.
    """

    def run_step(name: str, fn: Callable[..., Any], *args: Any) -> Any:
        if name == step == "publish":
            raise InjectedFault(f"fault injected before {name}")
        result = fn(*args)
        if name == step:
            raise InjectedFault(f"fault injected inside {name}, after its work")
        return result

    return run_step


@pytest.mark.parametrize("step", STEPS)
def test_an_exception_inside_each_step(reference, tmp_path, step):
    config = _case(reference, tmp_path)
    ran: list[str] = []

    def run_step(name: str, fn: Callable[..., Any], *args: Any) -> Any:
        ran.append(name)
        return _raising_in(step)(name, fn, *args)

    with pytest.raises(InjectedFault):
        pipeline.run_steps(config, run_step=run_step)
    assert ran == list(STEPS[: STEPS.index(step) + 1])
    _check_left(config, reference, published=False)
    _rerun(config, reference)


# -- a SIGKILL at each step boundary ------------------------------------------
#: Imports what the steps need once, then forks one process per case (argv[1]:
#: a JSON list of [boundary, configuration file, output file]), two at a time;
#: each runs the release and SIGKILLs itself once the step named by its
#: boundary has returned. Writes {boundary: exit status} to argv[2] (a
#: negative status: killed by that signal).
_KILLED_AFTER = textwrap.dedent(
    """
    import json, os, signal, sys, threading, traceback

    import great_expectations, sklearn.tree  # what the steps import
    import ppdm.utility.report
    from ppdm.config import load_config
    from ppdm.pipeline import run_steps

    assert threading.active_count() == 1, threading.enumerate()  # safe to fork
    cases = json.loads(open(sys.argv[1]).read())

    def killed_after(path, boundary):
        config = load_config(path)

        def run_step(name, fn, *args):
            result = fn(*args)
            if name == boundary:
                os.kill(os.getpid(), signal.SIGKILL)
            return result

        run_steps(config, run_step=run_step)

    statuses, running = {}, {}
    while cases or running:
        while cases and len(running) < 2:
            boundary, path, output = cases.pop(0)
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:  # the releasing process
                fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                try:
                    killed_after(path, boundary)
                except BaseException:
                    traceback.print_exc()
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(1)  # not killed: the release ended or failed
            running[pid] = boundary
        pid, status = os.wait()
        statuses[running.pop(pid)] = (
            -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        )
    with open(sys.argv[2], "w") as out:
        json.dump(statuses, out)
    """
)


@pytest.fixture(scope="module")
def killed(
    reference: Reference, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[ReleaseConfig, subprocess.CompletedProcess]]:
    """One process per step boundary, run two at a time, each killed after its step."""
    root = tmp_path_factory.mktemp("killed")
    started = {}
    for step in STEPS:
        config = _case(reference, root / step)
        path = root / step / "release.yaml"
        dumped = config.model_dump(mode="json", by_alias=True)
        path.write_text(yaml.safe_dump(dumped, sort_keys=False))  # roles in order
        started[step] = (config, path, root / step / "output.txt")
    cases = root / "cases.json"
    cases.write_text(
        json.dumps([[s, str(p), str(o)] for s, (_, p, o) in started.items()])
    )
    statuses = root / "statuses.json"
    parent = subprocess.run(
        [sys.executable, "-c", _KILLED_AFTER, str(cases), str(statuses)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert parent.returncode == 0, parent.stderr
    codes = json.loads(statuses.read_text())
    return {
        step: (
            config,
            subprocess.CompletedProcess(
                [step], codes[step], "", output.read_text(errors="replace")
            ),
        )
        for step, (config, _, output) in started.items()
    }


@pytest.mark.slow  # seven processes killed and seven releases rerun: .ci/run's 2nd stage
@pytest.mark.parametrize("step", STEPS)
def test_a_sigkill_at_each_step_boundary(reference, killed, step):
    config, process = killed[step]
    assert process.returncode == -signal.SIGKILL, process.stderr
    _check_left(config, reference, published=step == "publish")
    _rerun(config, reference)


# -- a full and a read-only artifact store --------------------------------------
DISK_BYTES = 1024 * 1024


@dataclass
class Disk:
    """The work directory's file system, and how to fill, free and freeze it."""

    root: Path
    mounted: bool

    @property
    def work(self) -> Path:
        return self.root / "work"

    def fill(self, monkeypatch: pytest.MonkeyPatch) -> None:
        if self.mounted:
            stat = os.statvfs(self.root)
            filler = stat.f_bavail * stat.f_frsize - 64 * 1024
            (self.root / "filler").write_bytes(b"\0" * filler)
            return
        # No mount: the store's file writes under the work directory fail
        # as a full disk fails them (ENOSPC, part of the bytes written).
        real = artifacts.os.fsync

        def fsync(fd: int) -> None:
            if Path(os.readlink(f"/proc/self/fd/{fd}")).is_relative_to(self.work):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            real(fd)

        monkeypatch.setattr(artifacts.os, "fsync", fsync)

    def free(self, monkeypatch: pytest.MonkeyPatch) -> None:
        (self.root / "filler").unlink(missing_ok=True)
        monkeypatch.undo()

    def freeze(self) -> None:
        if self.mounted:
            subprocess.run(["mount", "-o", "remount,ro", str(self.root)], check=True)
        else:
            self.root.chmod(0o555)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Disk]:
    root = tmp_path / "disk"
    root.mkdir()
    mounted = False
    if os.geteuid() == 0 and shutil.which("mount"):
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", str(root)],
            capture_output=True,
        )
        mounted = done.returncode == 0
    try:
        yield Disk(root, mounted)
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(root)], check=True)
        else:
            root.chmod(0o755)


def _storage_refusal(config: ReleaseConfig, code: int, meaning: str) -> StorageError:
    with pytest.raises(StorageError) as refused:
        pipeline.run_release(config)
    error = refused.value
    message = str(error)
    print(f"\n{errno.errorcode[code]}: {message}")
    assert error.errno == code and "\n" not in message
    assert str(config.work_dir) in message and meaning in message, message
    return error


@pytest.mark.slow  # a tmpfs mounted and filled: .ci/run's second stage
def test_a_full_work_directory(reference, tmp_path, disk, monkeypatch):
    config = _case(reference, tmp_path).with_overrides(work_dir=str(disk.work))
    disk.fill(monkeypatch)
    _storage_refusal(config, errno.ENOSPC, "no space left on device (ENOSPC)")
    _check_left(config, reference, published=False)
    disk.free(monkeypatch)
    _rerun(config, reference)


@pytest.mark.slow  # a tmpfs mounted and filled: .ci/run's second stage
def test_a_read_only_work_directory(reference, tmp_path, disk):
    config = _case(reference, tmp_path).with_overrides(work_dir=str(disk.work))
    disk.freeze()
    meaning = "(EROFS)" if disk.mounted else "(EACCES)"
    _storage_refusal(config, errno.EROFS if disk.mounted else errno.EACCES, meaning)
    assert _visible(Path(config.output_dir)) == {reference.earlier_release}
    assert not disk.work.exists()
    report = verify_audit_log(config.output_dir)
    assert report.ok and report.recovered_now == 0


# -- user errors inside a step, through ppdm run ----------------------------------
def _prefect_console_to(stream: Any) -> None:
    """Point every Prefect console log handler that exists at ``stream``."""
    from prefect.logging.handlers import PrefectConsoleHandler

    for logger in [logging.getLogger(), *logging.root.manager.loggerDict.values()]:
        for handler in getattr(logger, "handlers", ()):
            if isinstance(handler, PrefectConsoleHandler):
                handler.setStream(stream)
                handler.console.file = stream


@pytest.fixture
def ppdm_run(
    prefect_backend: None, capfd: pytest.CaptureFixture[str]
) -> Iterator[Callable[[Path], tuple[int, str, str]]]:
    """``ppdm run --config`` through ``ppdm.flows.cli.main``: exit code, stdout, stderr.

    stderr is all of it: Prefect's console log handlers (where a task's
    traceback would be printed) write to this test's stderr while it runs,
    and to the process's own afterwards (a captured stream closes with its
    test).
    """

    def run(config: Path) -> tuple[int, str, str]:
        _prefect_console_to(sys.stderr)
        try:
            code = main(["run", "--config", str(config)])
        finally:
            _prefect_console_to(sys.__stderr__)
        out, err = capfd.readouterr()
        assert "Traceback" not in err, err
        return code, out, err

    yield run
    _prefect_console_to(sys.__stderr__)


def _german_csv(where: Path, frame: pd.DataFrame, **changes: Any) -> Path:
    """German's shipped configuration, reading ``frame`` as a CSV file in ``where``."""
    where.mkdir(parents=True, exist_ok=True)
    frame.to_csv(where / "german.csv", index=False)
    data = default_config("german").model_dump(mode="json", by_alias=True)
    data.update(
        source={"kind": "csv", "path": str(where / "german.csv")},
        output_dir=str(where / "out"),
        work_dir=str(where / "work"),
        **changes,
    )
    path = where / "release.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _sample() -> pd.DataFrame:
    return datasets.load("german").sample(150, random_state=7).reset_index(drop=True)


def _one_line_refusal(ran: tuple[int, str, str], config: Path, code: int) -> str:
    got, out, err = ran
    assert got == code, err
    (line,) = [ln for ln in err.splitlines() if ln.startswith("ppdm run:")]
    published = config.parent / "out" / "german"
    assert not published.exists() or list(published.iterdir()) == []
    return line


def test_a_two_row_table_is_one_line_before_any_step(ppdm_run, tmp_path):
    # The pre-flight reads the target and refuses the split the utility
    # report would fail on (step 7 of 8), before any step runs.
    frame = _sample()
    two = frame.loc[[frame.index[frame["credit"] == c][0] for c in ("good", "bad")]]
    config = _german_csv(tmp_path, two, k=1, l=1)
    line = _one_line_refusal(ppdm_run(config), config, EXIT_FAILED)
    assert line.startswith("ppdm run: target 'credit' of "), line
    assert "2 classes have fewer than 2 rows ('good': 1, 'bad': 1)" in line
    assert "stratified hold-out split needs at least 2 rows of every class" in line


def test_an_age_of_ten_to_the_30_is_a_rejected_row(ppdm_run, tmp_path):
    frame = _sample().astype({"age": object})
    frame.loc[3, "age"] = 10**30
    code, out, err = ppdm_run(_german_csv(tmp_path / "one", frame))
    assert code == EXIT_OK, err
    release_dir = Path(out.strip().splitlines()[-1])
    assert check_release(release_dir).passed
    report = json.loads((release_dir / "validation.json").read_text())
    assert (report["rows_in"], report["rows_rejected"]) == (len(frame), 1)
    # Every age 10^30: the column is not an integer column at all.
    frame["age"] = 10**30
    config = _german_csv(tmp_path / "all", frame)
    line = _one_line_refusal(ppdm_run(config), config, EXIT_FAILED)
    assert line == (
        f"ppdm run: csv:{tmp_path}/all/german.csv: column 'age' cannot be read as "
        f"int64: {len(frame)} of {len(frame)} values are not integers, e.g. "
        f"'{10**30}' at row 0"
    )


def test_k_equal_to_the_rows_is_one_class(ppdm_run, tmp_path):
    frame = _sample()
    code, out, err = ppdm_run(_german_csv(tmp_path, frame, k=len(frame)))
    assert code == EXIT_OK, err
    release_dir = Path(out.strip().splitlines()[-1])
    assert check_release(release_dir).passed
    utility = json.loads((release_dir / "utility.json").read_text())
    # The hold-out re-makes the release on 70% of the rows: fewer than k.
    assert "needs classes of at least 150 rows" in utility["holdout"]["error"]
