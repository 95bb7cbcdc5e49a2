"""A `ppdm run` killed during its utility report, started again, resumes on Prefect's cache.

As an operator meets it: the console script in a process of its own, with
its own temporary Prefect API and a Prefect home kept between the two runs.
The first run is SIGKILLed (with its whole session) while the utility report
is under way, once the log says verification finished. The second run, the
same command, must reuse the steps the first one finished (Prefect logs them
``Cached``; ingest reads the source again by design), publish exactly the
bytes of an uninterrupted run of the same configuration elsewhere (that one on
the session's Prefect API: only its bytes are compared), and leave one audit
entry.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from process_groups import start_group

from ppdm.release.audit import AUDIT_LOG_NAME, read_entries

# Long end-to-end checks (a killed ppdm run with its own API, a resumed one and a
# reference run): .ci/run runs them after the README's command.
pytestmark = pytest.mark.slow

PPDM = Path(sys.executable).with_name("ppdm")
STATE = re.compile(r"Task run '([a-z-]+)-[0-9a-f]+' - Finished in state (\w+)")


def _start(root: Path, log: Path, api: str | None = None) -> subprocess.Popen:
    env = {**os.environ, "PREFECT_HOME": str(root / "prefect"), "NO_COLOR": "1"}
    env.pop("PREFECT_API_URL", None)  # a temporary API of its own, as a user gets
    if api is not None:
        env["PREFECT_API_URL"] = api
    args = ["run", "--dataset", "german", "--out", str(root / "out")]
    return start_group(
        [str(PPDM), *args, "--work-dir", str(root / "work")],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
    )


def _states(log: Path) -> dict[str, str]:
    return dict(STATE.findall(log.read_text(errors="replace")))


def _published(root: Path) -> dict[str, bytes]:
    (release,) = (root / "out" / "german").iterdir()
    return {
        str(path.relative_to(release)): path.read_bytes()
        for path in sorted(release.rglob("*"))
        # the manifest names the flow run; the page its time and audit entry
        if path.is_file() and path.name not in ("manifest.json", "report.html")
    }


def test_killed_during_the_report_resumes_from_the_finished_steps(
    tmp_path, prefect_api_url
):
    reference, resumed = tmp_path / "reference", tmp_path / "resumed"
    reference.mkdir()
    resumed.mkdir()
    uninterrupted = _start(reference, reference / "run.log", prefect_api_url)
    first = _start(resumed, resumed / "killed.log")
    deadline = time.monotonic() + 300
    while "verify" not in _states(resumed / "killed.log"):
        assert first.poll() is None, (resumed / "killed.log").read_text()
        assert time.monotonic() < deadline, "verification never finished"
        time.sleep(0.05)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(timeout=30)
    assert "utility-report" not in _states(resumed / "killed.log")
    assert not list((resumed / "out").rglob("manifest.json")), "killed too late"

    second = _start(resumed, resumed / "resumed.log")
    assert second.wait(timeout=300) == 0, (resumed / "resumed.log").read_text()
    assert uninterrupted.wait(timeout=300) == 0, (reference / "run.log").read_text()

    states = _states(resumed / "resumed.log")
    cached = ("validate", "discretize", "anonymize", "republication")
    assert {step: states[step] for step in cached} == dict.fromkeys(cached, "Cached")
    assert states["ingest"] == "Completed"  # the source is read again, never cached
    assert states["utility-report"] == "Completed" and states["publish"] == "Completed"
    assert _published(resumed) == _published(reference)
    # The operator's log states the domain facts, for cached steps too
    log = (resumed / "resumed.log").read_text()
    for fact in (
        "validate: 1000 rows in, 0 rejected",
        "anonymize (mondrian): 1000 records in; released 1000 rows in release",
        "verify: release passed; 1000 rows",
        "verify: k-anonymity on release: required k = 5; achieved k = ",
        "utility: hold-out accuracy original -> released: decision_tree ",
        "publish: new release german/",
    ):
        assert fact in log, fact
    entries = read_entries(resumed / "out" / AUDIT_LOG_NAME)
    assert [entry["event"] for entry in entries] == ["publish"]
