"""A release under entropy l-diversity shows that check's own figures everywhere.

German credit is released once with ``ppdm run`` (the Prefect flow, in this
process) under k-anonymity and entropy l-diversity of ``purpose``: no
distinct l, no t. The figure of entropy l is read from ``verification.json``
and cross-checked against a plain count on the released file; then every
display of the certificate must show the entropy-l-diversity row with that
figure, and none a line of distinct or recursive l or of t: ``ppdm verify``,
``ppdm show``, the ``--json`` summary, the verify step's log lines, the
Prefect artifacts of verify and publish, and the published ``report.html``.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import time
from pathlib import Path

import pandas as pd
import pytest

from ppdm.config import default_config
from ppdm.flows.cli import EXIT_OK, EXIT_UNSEALED, main, release_summary

# A Prefect flow run of German with its utility report, then two re-reads.
pytestmark = pytest.mark.slow

SENSITIVE = "purpose"
#: What a display must not show: a measure of a model not configured.
NOT_CONFIGURED = re.compile(
    r"distinct-l-diversity|distinct_l|recursive|t-closeness|t_ordered|\bt = "
)


@pytest.fixture(scope="module")
def released(prefect_backend, tmp_path_factory):
    where = tmp_path_factory.mktemp("check-figures")
    data = default_config("german").model_dump(mode="json", by_alias=True)
    data.update(
        output_dir=str(where / "out"),
        work_dir=str(where / "work"),
        sensitive_attribute=SENSITIVE,
        l=2,
        l_variant="entropy",
    )
    config = where / "release.yaml"
    config.write_text(json.dumps(data), encoding="utf-8")
    out = io.StringIO()
    # Not --json: it turns Prefect's log lines off.
    with contextlib.redirect_stdout(out):
        code = main(["run", "--config", str(config)])
    assert code == EXIT_OK, out.getvalue()
    release_dir = Path(out.getvalue().strip().splitlines()[-1])
    # What `ppdm run --json` prints of the release.
    return release_summary(release_dir)


def _run_log(flow_run_id: str, deadline_s: float = 60.0) -> list[str]:
    """The verify step's lines of the run's log, as the Prefect API holds them
    (they are sent in the background: polled until they arrive)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
    from prefect.logging.handlers import APILogWorker

    APILogWorker.drain_all(timeout=5, at_exit=False)
    started = time.monotonic()
    while True:
        with get_client(sync_client=True) as client:
            logs = client.read_logs(
                log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id]))
            )
        lines = [log.message for log in logs if log.message.startswith("verify: ")]
        if lines or time.monotonic() - started > deadline_s:
            return lines
        time.sleep(0.5)


def _entropy_l(release_dir: Path) -> float:
    """Entropy l from verification.json, checked against a count of the file."""
    content = json.loads((release_dir / "verification.json").read_text())
    (model,) = [
        m
        for m in content["tables"]["release"]["models"]
        if m["requirement"]["model"] == "entropy-l-diversity"
    ]
    recorded = model["achieved"]
    table = pd.read_csv(release_dir / "data" / "release.csv", dtype=str)
    qis = content["requirement"]["quasi_identifiers"]
    plain = min(
        math.exp(-sum(p * math.log(p) for p in shares))
        for _, group in table.fillna("").groupby(qis)
        for shares in [list(group[SENSITIVE].value_counts(normalize=True))]
    )
    assert recorded == pytest.approx(plain, rel=1e-9)
    assert model["passed"] and recorded >= 2
    return recorded


def _row(prefix: str, value: float) -> str:
    return (
        f"{prefix}entropy-l-diversity on release: required attribute = "
        f"{SENSITIVE}, l = 2; achieved l = {value:g}; passed"
    )


def test_the_json_summary_lists_the_checks_configured(released):
    summary = released
    value = _entropy_l(Path(summary["release_dir"]))
    assert [(r["check"], r["on"]) for r in summary["checks"]] == [
        ("k-anonymity", "release"),
        ("entropy-l-diversity", "release"),
    ]
    entropy = summary["checks"][1]
    assert entropy["achieved"] == f"l = {value:g}" and entropy["verdict"] == "passed"


def test_ppdm_verify_and_show_print_the_entropy_row_and_no_other_measure(released):
    summary = released
    release_dir = summary["release_dir"]
    value = _entropy_l(Path(release_dir))
    for command, prefix in (("verify", "check "), ("show", "  check        ")):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main([command, release_dir])
        assert code in (EXIT_OK, EXIT_UNSEALED), out.getvalue()
        printed = out.getvalue()
        assert _row(prefix, value) in printed.splitlines(), printed
        assert not NOT_CONFIGURED.search(printed), printed


def test_the_run_log_states_each_check_in_its_own_figures(released):
    release_dir = Path(released["release_dir"])
    value = _entropy_l(release_dir)
    manifest = json.loads((release_dir / "manifest.json").read_text())
    shown = _run_log(manifest["flow_run_id"])
    assert _row("verify: ", value) in shown, shown
    assert any(line.startswith("verify: k-anonymity on release") for line in shown)
    assert not NOT_CONFIGURED.search("\n".join(shown))


def test_the_prefect_artifacts_and_the_record_page_show_the_entropy_row(released):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    summary = released
    release_dir = Path(summary["release_dir"])
    value = _entropy_l(release_dir)
    manifest = json.loads((release_dir / "manifest.json").read_text())
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(
                flow_run_id=ArtifactFilterFlowRunId(any_=[manifest["flow_run_id"]])
            )
        )
    by_key = {a.key: str(a.data) for a in artifacts if a.key}
    row = (
        f"| entropy-l-diversity | class | release | attribute = {SENSITIVE}, l = 2 "
        f"| l = {value:g} | passed |"
    )
    for key in ("german-verify", "german-report"):
        assert row in by_key[key], by_key[key]
        assert not NOT_CONFIGURED.search(by_key[key]), key
    page = (release_dir / "report.html").read_text()
    cells = (
        "entropy-l-diversity",
        "class",
        "release",
        f"attribute = {SENSITIVE}, l = 2",
        f"l = {value:g}",
        "passed",
    )
    assert "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>" in page
    assert not NOT_CONFIGURED.search(page)
