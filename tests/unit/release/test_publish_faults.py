"""Crash consistency of publishing: a fault at every write point, as an error and as a kill.

One German release is computed once (the pipeline's own steps, with the
publish call recorded instead of made). A clean publication of it into a fresh
output directory is traced by ``publish_fault_points.WritePoints``: every
``open`` for writing, ``write``, ``fsync``, ``rename``, ``mkdir``, copy and
temporary file, in order. Then, for every point, in two starting states (an
empty output directory, and one that already holds a release and its log):

- the point raises ENOSPC in this process (a write first writes half its
  bytes): publishing fails with a StorageError naming a path in the output
  directory (EIO: with the OSError itself), no release is visible without its
  entry even before the log is opened again, nothing needs recovering, no
  staging directory is left;
- the publishing process SIGKILLs itself at the point (a forked child of
  ``publish_fault_points.py``): no visible release is partial, opening the log
  records what the crash left (a torn tail, a release without entry) and the
  chain verifies.

After either, publishing again without faults gives the reference release's
bytes and a valid chain. The invariant is the one of ``ppdm.release.publish``.
"""

from __future__ import annotations

import errno
import json
import os
import pickle
import signal
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import publish_fault_points as fp
import pytest

from ppdm import pipeline
from ppdm.config import default_config
from ppdm.exceptions import StorageError
from ppdm.release.artifacts import sha256_file
from ppdm.release.audit import (
    AUDIT_LOG_NAME,
    RELEASE_EVENTS,
    read_entries,
    verify_audit_log,
)
from ppdm.release.publish import publish_directory
from ppdm.steps import publish as steps_publish

HELPER = Path(__file__).with_name("publish_fault_points.py")
SCENARIOS = ("empty", "logged")
#: Where the "logged" state's earlier release lives (another release id).
EARLIER = "german/0000000000000000"


@dataclass(frozen=True)
class Inputs:
    args: tuple[Any, ...]  # publish_directory's arguments, for <recorded out dir>
    args_file: Path  # the same, pickled for the publishing subprocess
    release: str  # <dataset>/<release id>
    reference: dict[str, bytes]  # every file of a clean publication
    points: dict[str, list[tuple[str, str]]]  # scenario -> normalized points


def _files(release_dir: Path) -> dict[str, bytes]:
    return {
        p.relative_to(release_dir).as_posix(): p.read_bytes()
        for p in sorted(release_dir.rglob("*"))
        if p.is_file()
    }


def _data(files: dict[str, bytes]) -> dict[str, bytes]:
    """The released bytes: everything but the manifest (it holds a timestamp)
    and the page (it names the sequence number of its audit entry, which
    depends on what the log held before); both are checked against each
    other by :func:`_complete`."""
    return {
        rel: data
        for rel, data in files.items()
        if rel not in ("manifest.json", "report.html")
    }


def _prepare(out: Path, scenario: str, args: tuple[Any, ...]) -> None:
    """Bring ``out`` to the scenario's starting state (empty: not made yet)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    if scenario == "logged":
        earlier = fp.rebased(args, out)
        publish_directory(out, out / EARLIER, *earlier[2:])


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Inputs:
    root = tmp_path_factory.mktemp("publish-inputs")
    config = default_config("german").with_overrides(
        work_dir=str(root / "work"), output_dir=str(root / "recorded")
    )
    calls: list[tuple[Any, ...]] = []

    def record(*args: Any, **keywords: Any) -> Path:
        # The key spec is the default the replays below use as well; the
        # page renderer (report.html, written under the lock) is positional,
        # so the replays publish it too.
        assert keywords == {"audit_key": "env:PPDM_AUDIT_KEY", "check": None}, keywords
        assert callable(args[6]), args
        calls.append(args)
        return args[1]

    def run_step(name: str, fn: Any, *args: Any) -> Any:
        if name != "publish":
            return fn(*args)
        # publish_step builds the manifest and the entry, then hands them to
        # publish_directory: keep that call instead of making it.
        with mock.patch.object(steps_publish, "publish_directory", record):
            return fn(*args)

    pipeline.run_steps(config, run_step=run_step)
    (args,) = calls
    args_file = root / "publish-args.pickle"
    args_file.write_bytes(pickle.dumps(args))
    release = args[1].relative_to(args[0]).as_posix()

    points = {}
    reference: dict[str, bytes] = {}
    for scenario in SCENARIOS:
        out = root / f"reference-{scenario}" / "out"
        _prepare(out, scenario, args)
        counter = fp.WritePoints()
        with counter.installed():
            publish_directory(*fp.rebased(args, out))
        # The audit hook saw no file-system change outside a wrapped call:
        # the points are every write the publication makes.
        assert counter.unwrapped == [], counter.unwrapped
        points[scenario] = fp.normalized(counter.calls, out)
        files = _files(out / release)
        assert not reference or _data(files) == _data(reference)
        reference = files
    return Inputs(args, args_file, release, reference, points)


# -- what every case checks ----------------------------------------------------
def _visible(out: Path) -> set[str]:
    """Release directories a reader sees: ``<dataset>/<name>``, no dot names."""
    if not out.is_dir():
        return set()
    return {
        f"{dataset.name}/{release.name}"
        for dataset in out.iterdir()
        if dataset.is_dir() and not dataset.name.startswith(".")
        for release in dataset.iterdir()
        if release.is_dir() and not release.name.startswith(".")
    }


def _recorded(out: Path) -> set[str]:
    return {
        e["release_dir"]
        for e in read_entries(out / AUDIT_LOG_NAME)
        if e.get("event") in RELEASE_EVENTS and "release_dir" in e
    }


def _complete(out: Path, release: str) -> list[str]:
    """What is missing or wrong in a visible release (nothing: complete)."""
    release_dir = out / release
    try:
        manifest = json.loads((release_dir / "manifest.json").read_text())
    except (OSError, ValueError) as err:
        return [f"{release}: manifest.json unreadable ({err})"]
    expected = {f["path"]: f["sha256"] for f in manifest["files"]}
    expected.update(manifest["artifacts"])
    problems = []
    for rel, digest in sorted(expected.items()):
        path = release_dir / rel
        if not path.is_file():
            problems.append(f"{release}/{rel} missing")
        elif sha256_file(path) != digest:
            problems.append(f"{release}/{rel} differs from the manifest")
    return problems


def _rerun(inputs: Inputs, out: Path) -> list[str]:
    """Publish again without faults: the reference bytes, a valid chain."""
    problems = []
    publish_directory(*fp.rebased(inputs.args, out))
    if _data(_files(out / inputs.release)) != _data(inputs.reference):
        problems.append("the rerun's bytes differ from the reference release")
    report = verify_audit_log(out)
    if not report.ok:
        problems.append(f"after the rerun: {report.broken}")
    if report.recovered_now:
        problems.append("the rerun left something to recover")
    if _visible(out) - _recorded(out):
        problems.append(f"unrecorded after the rerun: {_visible(out) - _recorded(out)}")
    return problems


def _describe(failures: dict[int, list[str]]) -> str:
    return "\n".join(
        f"point {index} {lines[0]}: " + "; ".join(lines[1:])
        for index, lines in sorted(failures.items())
    )


# -- a failure that is not a crash: an error at every point ---------------------
#: A full disk (deterministic: a StorageError saying so) and an I/O error (not
#: deterministic: the OSError itself, which the flow may retry).
ERRORS = {
    "ENOSPC": (errno.ENOSPC, "no space left on device (ENOSPC)"),
    "EIO": (errno.EIO, None),
}


# Each point replays the whole publication (report.html included): CI's slow
# stage runs these; the README's command keeps the torn-tail case below.
@pytest.mark.slow
@pytest.mark.parametrize(
    ("scenario", "code"),
    [
        pytest.param(scenario, code, id=f"{scenario}-{code}")
        for scenario in SCENARIOS
        for code in ERRORS
    ],
)
def test_an_error_at_every_write_point_leaves_no_release_without_entry(
    inputs: Inputs, scenario: str, code: str, tmp_path: Path
) -> None:
    number, message = ERRORS[code]
    points = inputs.points[scenario]
    assert len(points) > 30  # a copy, an fsync, ... per file: the trace is whole
    failures: dict[int, list[str]] = {}
    outcomes: Counter[str] = Counter()
    for index, point in enumerate(points):
        out = tmp_path / str(index) / "out"
        _prepare(out, scenario, inputs.args)
        before = _recorded(out) if (out / AUDIT_LOG_NAME).exists() else set()
        faults = fp.WritePoints(index, "raise", code=number)
        error: BaseException | None = None
        with faults.installed():
            try:
                publish_directory(*fp.rebased(inputs.args, out))
            except Exception as err:  # noqa: BLE001 - judged below
                error = err
        problems = []
        fired = faults.fired and fp.normalized([faults.fired[1:]], out)[0]
        if fired != point:
            problems.append(f"fired at {fired}, expected {point}")
        if error is None:
            # Path.mkdir(exist_ok=True) ignores an error on a directory that
            # exists: the publication went through. Nothing else may.
            outcomes["succeeded (mkdir of an existing directory)"] += 1
            if point[0] != "os.mkdir":
                problems.append("no error although the point failed")
        else:
            outcomes[type(error).__name__] += 1
            if not isinstance(error, OSError) or error.errno != number:
                problems.append(f"{type(error).__name__}: {error}")
            elif message is None:  # not deterministic: the error itself
                if isinstance(error, StorageError):
                    problems.append(f"an I/O error became a StorageError: {error}")
            elif not isinstance(error, StorageError):
                problems.append(f"not a StorageError: {error!r}")
            elif message not in str(error) or str(out) not in str(error):
                problems.append(f"the message names no path in {out}: {error}")
        # Before anything opens the log again: every visible release has its
        # entry already (the failed one was taken back).
        log_exists = (out / AUDIT_LOG_NAME).exists()
        recorded = _recorded(out) if log_exists else set()
        if _visible(out) - recorded:
            problems.append(f"visible without entry: {_visible(out) - recorded}")
        if error is not None and recorded != before:
            problems.append(f"entries added by a failed publication: {recorded}")
        if list(out.glob("*/.staging-*")):
            problems.append(f"left behind: {list(out.glob('*/.staging-*'))}")
        if log_exists or _visible(out):
            report = verify_audit_log(out)
            if not report.ok:
                problems.append(f"chain: {report.broken}")
            if report.recovered_now:  # a failed append is taken back whole
                problems.append(f"recovered: {report.recoveries}")
        problems += _rerun(inputs, out)
        if problems:
            failures[index] = [str(point), *problems]
    print(
        f"\n{code}, {scenario} output directory: {len(points)} write points, "
        f"{len(points) - len(failures)} survived; outcomes {dict(outcomes)}"
    )
    assert not failures, _describe(failures)


def test_a_torn_tail_that_cannot_be_taken_back_is_recovered(
    inputs: Inputs, tmp_path: Path
) -> None:
    """The audit line is half written, ENOSPC, and truncating it fails too."""
    points = inputs.points["logged"]
    index = points.index(("os.write", f"<out>/{AUDIT_LOG_NAME}"))
    out = tmp_path / "out"
    _prepare(out, "logged", inputs.args)
    entries_before = read_entries(out / AUDIT_LOG_NAME)

    def refuse(fd: int, length: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    faults = fp.WritePoints(index, "raise")
    with faults.installed(), mock.patch.object(os, "ftruncate", refuse):
        with pytest.raises(StorageError, match="no space left on device"):
            publish_directory(*fp.rebased(inputs.args, out))
    tail = (out / AUDIT_LOG_NAME).read_bytes().split(b"\n")[-1]
    assert len(tail) > 0  # a real torn tail was left
    assert _visible(out) == {EARLIER}  # the release was taken back
    report = verify_audit_log(out)
    assert report.ok and report.recovered_now == 1
    (recovery,) = report.recoveries
    assert f"a torn last line ({len(tail)} bytes" in recovery
    entries = read_entries(out / AUDIT_LOG_NAME)
    assert entries[: len(entries_before)] == entries_before
    assert [e["event"] for e in entries[len(entries_before) :]] == ["recovered"]
    assert _rerun(inputs, out) == []


# -- a crash: SIGKILL at every point -------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_sigkill_at_every_write_point_is_recovered(
    inputs: Inputs, scenario: str, tmp_path: Path
) -> None:
    points = inputs.points[scenario]
    for index in range(len(points)):
        _prepare(tmp_path / str(index) / "out", scenario, inputs.args)
    done = subprocess.run(
        [
            sys.executable,
            str(HELPER),
            str(inputs.args_file),
            str(tmp_path),
            *map(str, range(len(points))),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    killed = [json.loads(line) for line in done.stdout.splitlines()]
    assert [k["point"] for k in killed] == list(range(len(points)))

    failures: dict[int, list[str]] = {}
    outcomes: Counter[str] = Counter()
    for index, point in enumerate(points):
        out = tmp_path / str(index) / "out"
        problems = []
        status = killed[index]
        if status["signal"] != signal.SIGKILL:
            problems.append(f"the publisher was not killed: {status}")
        fired = status["fired"]
        if (
            fired is None
            or fp.normalized([(fired["function"], fired["path"])], out)[0] != point
        ):
            problems.append(f"fired at {fired}, expected {point}")
        for release in sorted(_visible(out)):  # no partial release is visible
            problems += _complete(out, release)
        had_entries = (
            read_entries(out / AUDIT_LOG_NAME)
            if (out / AUDIT_LOG_NAME).exists()
            else []
        )
        if _visible(out) or had_entries or (out / AUDIT_LOG_NAME).exists():
            report = verify_audit_log(out)
            if not report.ok:
                problems.append(f"chain: {report.broken}")
            if _visible(out) - _recorded(out):
                problems.append(f"unrecorded: {_visible(out) - _recorded(out)}")
            what = sorted(
                e.get("what", "?")
                + (f" of {e['bytes']} bytes" if e.get("what") == "torn-tail" else "")
                for e in read_entries(out / AUDIT_LOG_NAME)[len(had_entries) :]
                if e["event"] == "recovered"
            )
            if len(what) != report.recovered_now:
                problems.append(f"{report.recovered_now} recoveries, entries {what}")
            outcomes[" + ".join(what) or "nothing to recover"] += 1
        else:
            outcomes["no log, no release visible"] += 1
        if list(out.glob("*/.staging-*")):
            outcomes["a hidden .staging-* directory stays"] += 1
        problems += _rerun(inputs, out)
        if list(out.glob("*/.staging-*")):
            problems.append("the next publication left the killed one's staging")
        if problems:
            failures[index] = [str(point), *problems]
    print(
        f"\nSIGKILL, {scenario} output directory: {len(points)} write points, "
        f"{len(points) - len(failures)} survived; outcomes {dict(outcomes)}"
    )
    assert not failures, _describe(failures)


def test_the_points_name_every_file_and_the_log(inputs: Inputs) -> None:
    """Known answers about the trace: each file copied and synced, one rename, one
    line appended and synced, in that order."""
    for scenario, points in inputs.points.items():
        copies = [path for name, path in points if name == "shutil.copyfile"]
        named = inputs.args[2]
        assert len(copies) == len(named)
        assert {p.split("/", 3)[-1] for p in copies} == set(named)
        renames = [path for name, path in points if name == "os.rename"]
        release_id = inputs.release.split("/")[1]
        assert renames == [
            f"<out>/german/.staging-{release_id}-* -> <out>/{inputs.release}"
        ]
        log = [name for name, path in points if path == f"<out>/{AUDIT_LOG_NAME}"]
        assert log == ["os.open", "os.write", "os.fsync"], scenario
        order = [name for name, _ in points]
        assert order.index("os.rename") < order.index("os.write")
        assert order.index("shutil.copyfile") < order.index("os.rename")
