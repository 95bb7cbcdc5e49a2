"""Several publishers into one output directory at once, each its own process.

Real processes (``multiprocessing`` with ``forkserver``: each forked from a
fresh interpreter that imported the release stack once and ran nothing else,
so they share nothing but the file system), released together by a barrier
so that their appends and renames overlap:

- writers appending audit entries: no line interleaved or lost, one chain;
- publishers of small releases, some the same release (one publication, the
  rest republications), some the same directory with other data (one wins,
  the others are refused, nothing overwritten);
- ``ppdm.pipeline.run_release`` of the German data in three processes, two
  with the same configuration and one with another seed, all reaching the
  publish step together.

Afterwards the audit chain verifies, every line is one whole entry, every
release is recorded exactly once as published, and no release was overwritten.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ppdm.release.artifacts import sha256_file
from ppdm.release.audit import AUDIT_LOG_NAME, read_entries, verify_audit_log

PROCESSES = multiprocessing.get_context("forkserver")
# Imported once by the fork server rather than by every process it starts.
PROCESSES.set_forkserver_preload(
    ["ppdm.pipeline", "ppdm.release.publish", "great_expectations", "sklearn.tree"]
)
TIMEOUT = 150  # seconds a child may take, start-up included


def _start(target: Callable[..., None], args_list: list[tuple[Any, ...]]) -> None:
    """Run ``target(*args)`` in one spawned process per args; all must exit 0."""
    processes = [PROCESSES.Process(target=target, args=args) for args in args_list]
    for process in processes:
        process.start()
    try:
        for process in processes:
            process.join(TIMEOUT)
    finally:
        for process in processes:  # only the processes started here
            if process.is_alive():
                process.kill()
                process.join()
    assert [p.exitcode for p in processes] == [0] * len(processes)


def _lines_are_whole_entries(out: Path) -> list[dict[str, Any]]:
    data = (out / AUDIT_LOG_NAME).read_bytes()
    assert data.endswith(b"\n")
    entries = [json.loads(line) for line in data.decode("utf-8").splitlines()]
    assert all(isinstance(e, dict) for e in entries)
    assert [e["seq"] for e in entries] == list(range(len(entries)))
    assert entries == read_entries(out / AUDIT_LOG_NAME)
    return entries


# -- appends -------------------------------------------------------------------------
def _append_many(out: str, writer: int, count: int, barrier: Any) -> None:
    from ppdm.release.audit import append_entry

    barrier.wait(60)
    for i in range(count):
        # lines of 0.1 to 6 kB: longer than a pipe's atomic write (4 kB) for some
        pad = "x" * (100 + 2000 * writer)
        append_entry(
            Path(out) / AUDIT_LOG_NAME,
            {"event": "note", "writer": writer, "i": i, "pad": pad},
        )


def test_concurrent_appends_neither_interleave_nor_get_lost(tmp_path: Path) -> None:
    writers, count = 4, 40
    barrier = PROCESSES.Barrier(writers)
    _start(_append_many, [(str(tmp_path), w, count, barrier) for w in range(writers)])
    entries = _lines_are_whole_entries(tmp_path)
    assert len(entries) == writers * count
    seen = Counter((e["writer"], e["i"]) for e in entries)
    assert set(seen) == {(w, i) for w in range(writers) for i in range(count)}
    assert set(seen.values()) == {1}
    for w in range(writers):  # each writer's entries in its own order
        assert [e["i"] for e in entries if e["writer"] == w] == list(range(count))
    writers_in_order = [e["writer"] for e in entries]
    switches = sum(a != b for a, b in zip(writers_in_order, writers_in_order[1:]))
    assert switches >= writers - 1  # they did take turns
    report = verify_audit_log(tmp_path)
    assert report.ok and report.entries == writers * count, report.problems


# -- small releases ------------------------------------------------------------------
def _publish_many(out: str, writer: int, barrier: Any, result: str) -> None:
    from ppdm.exceptions import ArtifactIntegrityError
    from ppdm.release.publish import publish_directory

    out_dir = Path(out)
    work = out_dir.parent / f"work-{writer}"
    work.mkdir()
    plan = [(f"shared-{j}", f"shared {j}\n") for j in range(5)]
    plan += [(f"own-{writer}-{j}", f"writer {writer} release {j}\n") for j in range(5)]
    plan.append(("contested", f"contested data of writer {writer}\n"))
    outcomes = {}
    barrier.wait(60)
    for name, content in plan:
        source = work / f"{name}.csv"
        source.write_text(content)
        digest = sha256_file(source)
        manifest = {
            "dataset": "ds",
            "release_id": name,
            "files": [{"path": "data/release.csv", "sha256": digest, "rows": 1}],
            "artifacts": {},
        }
        try:
            publish_directory(
                out_dir,
                out_dir / "ds" / name,
                {"data/release.csv": source},
                {"data/release.csv": digest},
                manifest,
                {"dataset": "ds", "release_id": name, "writer": writer},
            )
            outcomes[name] = digest
        except ArtifactIntegrityError:
            outcomes[name] = "refused"
    Path(result).write_text(json.dumps(outcomes))


def test_concurrent_publishers_record_each_release_once_and_overwrite_none(
    tmp_path: Path,
) -> None:
    writers = 3
    out = tmp_path / "out"
    barrier = PROCESSES.Barrier(writers)
    results = [tmp_path / f"result-{w}.json" for w in range(writers)]
    _start(
        _publish_many,
        [(str(out), w, barrier, str(results[w])) for w in range(writers)],
    )
    outcomes = [json.loads(r.read_text()) for r in results]
    entries = _lines_are_whole_entries(out)
    published = Counter(e["release_dir"] for e in entries if e["event"] == "publish")
    republished = Counter(
        e["release_dir"] for e in entries if e["event"] == "republish"
    )
    visible = {
        p.parent.relative_to(out).as_posix() for p in out.glob("*/*/manifest.json")
    }
    expected = {f"ds/shared-{j}" for j in range(5)} | {"ds/contested"}
    expected |= {f"ds/own-{w}-{j}" for w in range(writers) for j in range(5)}
    assert visible == expected
    assert set(published) == expected and set(published.values()) == {1}
    assert republished == {f"ds/shared-{j}": writers - 1 for j in range(5)}
    assert len(entries) == len(expected) + 5 * (writers - 1)
    assert not [e for e in entries if e["event"] == "recovered"]
    # the contested directory: one writer published it, the others were refused,
    # and it holds the winner's bytes
    winners = [o["contested"] for o in outcomes if o["contested"] != "refused"]
    assert len(winners) == 1
    assert sha256_file(out / "ds" / "contested" / "data" / "release.csv") == winners[0]
    assert not list(out.glob("ds/.staging-*"))
    report = verify_audit_log(out)
    assert report.ok and report.recovered_now == 0, report.problems


# -- the whole pipeline ----------------------------------------------------------------
def _run_release(out: str, work: str, seed: int, barrier: Any, result: str) -> None:
    from ppdm import pipeline
    from ppdm.config import default_config
    from ppdm.steps import publish as steps_publish

    publish = steps_publish.publish_directory

    def together(*args: Any, **kwargs: Any) -> Path:
        barrier.wait(TIMEOUT)  # every run has computed its release: publish now
        return publish(*args, **kwargs)

    steps_publish.publish_directory = together
    config = default_config("german").with_overrides(
        output_dir=out, work_dir=work, seed=seed
    )
    outcome = pipeline.run_release(config)
    Path(result).write_text(str(outcome.release_dir))


def test_three_release_runs_publish_into_one_directory_at_once(tmp_path: Path) -> None:
    from ppdm.verify.release_check import check_release

    out, work = tmp_path / "out", tmp_path / "work"  # one store, as by default
    seeds = [1, 1, 2]  # two runs of one configuration, one of another
    barrier = PROCESSES.Barrier(len(seeds))
    results = [tmp_path / f"result-{i}" for i in range(len(seeds))]
    _start(
        _run_release,
        [
            (str(out), str(work), seed, barrier, str(result))
            for seed, result in zip(seeds, results, strict=True)
        ],
    )
    dirs = [Path(r.read_text()) for r in results]
    assert dirs[0] == dirs[1] != dirs[2]
    entries = _lines_are_whole_entries(out)
    events = Counter((e["event"], e["release_dir"]) for e in entries)
    first, second = (d.relative_to(out).as_posix() for d in (dirs[0], dirs[2]))
    assert events == {
        ("publish", first): 1,
        ("republish", first): 1,
        ("publish", second): 1,
    }
    assert sorted(p.parent for p in out.glob("*/*/manifest.json")) == sorted(
        {dirs[0], dirs[2]}
    )
    for release_dir in (dirs[0], dirs[2]):  # whole, and meeting its requirement
        assert check_release(release_dir).passed
    assert not list(out.glob("*/.staging-*"))
    report = verify_audit_log(out)
    assert report.ok and report.recovered_now == 0, report.problems
    assert os.environ.get("PPDM_AUDIT_KEY") and report.keyed
