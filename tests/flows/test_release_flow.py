"""End to end: the release flow on Prefect, the release contract, the audit trail."""

from __future__ import annotations

import html
import json
import re
import shutil
import time
from pathlib import Path

import pandas as pd
import pytest

from ppdm import pipeline
from ppdm.config import default_config
from ppdm.exceptions import VerificationError
from ppdm.flows.cli import main
from ppdm.privacy.measures import distinct_l_diversity, k_anonymity
from ppdm.release.audit import read_entries
from ppdm.selection import binary_encode
from ppdm.steps import anonymize as steps_anonymize
from ppdm.steps import discretize as steps_discretize
from ppdm.steps import ingest as steps_ingest
from ppdm.steps import validate as steps_validate
from ppdm.steps import verify as steps_verify

MANIFEST_KEYS = {
    "dataset",
    "release_id",
    "algorithm",
    "params",
    "quasi_identifiers",
    "sensitive_attribute",
    "target",
    "requirement",
    "seed",
    "source_sha256",
    "files",
    "code_version",
    "created_at",
    "flow_run_id",
}


@pytest.fixture(scope="module")
def published(prefect_backend, tmp_path_factory):
    """`ppdm run` on the German credit data through the real flow."""
    out = tmp_path_factory.mktemp("releases")
    code = main(
        [
            "run",
            "--dataset",
            "german",
            "--k",
            "5",
            "--l",
            "2",
            "--seed",
            "7",
            "--out",
            str(out),
            "--work-dir",
            str(out.parent / f"{out.name}-work"),
        ]
    )
    assert code == 0
    (release_dir,) = (out / "german").iterdir()
    return out, release_dir


def _task_states(flow_run_id) -> dict[str, str]:
    """``{step: state name}`` of a flow run's task runs, read from the Prefect API."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    only_this_run = FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id]))
    deadline = time.monotonic() + 120  # task run states reach the API as events
    while True:
        with get_client(sync_client=True) as client:
            runs = client.read_task_runs(flow_run_filter=only_this_run)
        states = {
            run.name.rsplit("-", 1)[0]: run.state.name
            for run in runs
            if run.state is not None and run.state.is_final()
        }
        if len(states) == len(pipeline.STEPS) or time.monotonic() > deadline:
            return states
        time.sleep(0.5)


def test_release_directory_contract(published):
    out, release_dir = published
    manifest = json.loads((release_dir / "manifest.json").read_text())
    assert MANIFEST_KEYS <= set(manifest)
    assert manifest["release_id"] == release_dir.name
    assert manifest["flow_run_id"]  # run on Prefect, not in-process
    for name in ("verification.json", "utility.json", "report.html"):
        assert (release_dir / name).is_file(), name
    (data_file,) = manifest["files"]
    table = pd.read_csv(
        release_dir / data_file["path"], dtype=str, keep_default_na=False
    )
    assert len(table) == data_file["rows"]
    qi = manifest["quasi_identifiers"]
    # An independent count on the published bytes, not the verifier's word.
    assert k_anonymity(table, qi) >= 5
    assert distinct_l_diversity(table, qi, "purpose") >= 2
    certificate = json.loads((release_dir / "verification.json").read_text())
    assert certificate["passed"] is True
    html = (release_dir / "report.html").read_text()
    assert "data:image/png;base64," in html


def test_audit_entry_records_every_file(published):
    out, release_dir = published
    (entry,) = read_entries(out / "audit.jsonl")
    assert entry["event"] == "publish" and entry["release_id"] == release_dir.name
    recorded = {f["path"] for f in entry["files"]}
    assert f"german/{release_dir.name}/manifest.json" in recorded
    assert main(["audit", "verify", "--out", str(out)]) == 0
    assert main(["verify", str(release_dir)]) == 0


def test_a_new_test_size_reuses_the_cached_anonymization(published, tmp_path):
    """Through the real flow: only the utility report (and publication) re-run."""
    from ppdm.flows.release import release

    out, release_dir = published
    config = default_config("german").with_overrides(
        k=5,
        l=2,
        seed=7,
        utility={"test_size": 0.25},
        output_dir=str(tmp_path),  # a new place to publish ...
        work_dir=str(out.parent / f"{out.name}-work"),  # ... from the first run's store
    )
    state = release(config, return_state=True)
    again = Path(state.result())
    assert _task_states(state.state_details.flow_run_id) == {
        "ingest": "Completed",  # I/O: never cached
        "validate": "Cached",
        "discretize": "Cached",
        "anonymize": "Cached",
        "republication": "Cached",  # no earlier release in the new place
        "verify": "Completed",  # the independent check always runs
        "utility-report": "Completed",
        "publish": "Completed",
    }
    data = sorted(p.name for p in (release_dir / "data").iterdir())
    assert data == sorted(p.name for p in (again / "data").iterdir())
    for name in data:
        first = (release_dir / "data" / name).read_bytes()
        assert (again / "data" / name).read_bytes() == first
    # The report did re-run, on the new split.
    assert (again / "utility.json").read_bytes() != (
        release_dir / "utility.json"
    ).read_bytes()
    # The cached steps are shown on this run too: its Artifacts tab has them all.
    assert {
        "german-validate",
        "german-discretize",
        "german-anonymize",
        "german-republication",
    } <= _artifact_keys(state.state_details.flow_run_id)


def _artifacts(flow_run_id) -> list:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    with get_client(sync_client=True) as client:
        return client.read_artifacts(
            artifact_filter=ArtifactFilter(
                flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id])
            )
        )


def _artifact_keys(flow_run_id) -> set[str]:
    return {artifact.key for artifact in _artifacts(flow_run_id) if artifact.key}


def test_the_operator_sees_the_certificate_the_report_and_progress(published):
    _, release_dir = published
    manifest = json.loads((release_dir / "manifest.json").read_text())
    artifacts = _artifacts(manifest["flow_run_id"])
    by_key = {artifact.key: artifact for artifact in artifacts if artifact.key}
    certificate = by_key["german-verify"].data
    assert "# Verification: PASSED" in certificate
    assert "| k-anonymity | k = 5 |" in certificate
    assert "| release | 1000 | yes |" in certificate
    # The report renders in the UI as Markdown: the record and the figures,
    # no link to a local file an operator's browser cannot open.
    report = by_key["german-report"]
    assert report.type == "markdown"
    assert f"# Release {manifest['release_id']} of german" in report.data
    assert manifest["created_at"] in report.data
    assert "| decision_tree | release |" in report.data
    assert "majority class" in report.data
    # No private path (the work directory: raw snapshot, quarantine) in any
    # artifact, nor a file:// link.
    work = f"{release_dir.parent.parent.name}-work"
    for artifact in artifacts:
        shown = str(artifact.data) + str(artifact.description)
        assert work not in shown and "file://" not in shown, artifact.key
    progress = [artifact for artifact in artifacts if artifact.type == "progress"]
    assert len(progress) == 2 and all(a.data == 100.0 for a in progress)


def test_same_seed_gives_byte_identical_data_without_prefect(published, tmp_path):
    _, release_dir = published
    config = default_config("german").with_overrides(
        k=5, l=2, seed=7, output_dir=str(tmp_path)
    )
    again = pipeline.run_release(config).release_dir
    assert again.name == release_dir.name
    for path in (release_dir / "data").iterdir():
        assert (again / "data" / path.name).read_bytes() == path.read_bytes()


def test_a_changed_byte_fails_audit_and_verify(published, tmp_path, capsys):
    out, release_dir = published
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    copied_release = copy / "german" / release_dir.name
    data = next((copied_release / "data").iterdir())
    content = bytearray(data.read_bytes())
    content[-2] = ord("x") if content[-2] != ord("x") else ord("y")
    data.write_bytes(bytes(content))
    assert main(["audit", "verify", "--out", str(copy)]) == 1
    assert main(["verify", str(copied_release)]) == 1
    err = capsys.readouterr().err
    assert "changed (sha256 differs from record)" in err


def test_an_edited_audit_log_fails(published, tmp_path, capsys):
    out, _ = published
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    log = copy / "audit.jsonl"
    log.write_text(log.read_text().replace('"k": 5', '"k": 50'))
    assert main(["audit", "verify", "--out", str(copy)]) == 1
    assert "entry seq=0 (line 1)" in capsys.readouterr().err


def test_failed_verification_publishes_nothing(tmp_path):
    config = default_config("german").with_overrides(
        k=5, seed=7, output_dir=str(tmp_path)
    )
    plan = pipeline.plan_release(config)
    store = plan.store
    ingested = steps_ingest.ingest_step(plan.ingest, store)
    validated = steps_validate.validate_step(plan.validate, store, ingested.raw)
    binned = steps_discretize.discretize_step(plan.discretize, store, validated.clean)
    candidate = steps_anonymize.anonymize_step(
        plan.anonymize, store, binned.discretized
    )
    tables = candidate.tables
    # Make one person unique: the candidate no longer meets k = 5.
    path = Path(next(iter(tables.values())).path)
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    table.loc[0, "housing"] = "castle"
    forged = {"release": store.put_csv(table, kind="release-candidate")}
    with pytest.raises(VerificationError, match="nothing was published"):
        steps_verify.verify_step(
            plan.verify,
            store,
            forged,
            validated.clean,
            ingested.summary["source_sha256"],
        )
    assert not (tmp_path / "german").exists()
    (entry,) = read_entries(tmp_path / "audit.jsonl")
    assert entry["event"] == "release-rejected"


def test_bad_input_file_stops_the_run_naming_the_column(tmp_path, capsys):
    from ppdm.prepare import datasets

    source = tmp_path / "german.csv"
    datasets.load("german").drop(columns=["age"]).to_csv(source, index=False)
    from ppdm.config import ConfigError, parse_config

    config = default_config("german").model_dump(by_alias=True)
    config.update(
        source={"kind": "csv", "path": str(source)}, output_dir=str(tmp_path / "out")
    )
    with pytest.raises(ConfigError, match="quasi_identifiers names 'age', not a col"):
        pipeline.run_release(parse_config(config))
    assert not (tmp_path / "out" / "german").exists()


def test_release_from_a_sqlite_database(tmp_path):
    database = tmp_path / "credit.sqlite"
    assert (
        main(["export-sqlite", "german", str(database), "--table", "applicants"]) == 0
    )
    config = default_config("german").model_dump(by_alias=True)
    config.update(
        source={
            "kind": "sql",
            "url": f"sqlite:///{database}",
            "query": "SELECT * FROM applicants",
        },
        output_dir=str(tmp_path / "out"),
    )
    from ppdm.config import parse_config

    release_dir = pipeline.run_release(parse_config(config)).release_dir
    manifest = json.loads((release_dir / "manifest.json").read_text())
    assert manifest["source"] == f"sql:sqlite:///{database}"
    # The same rows as the embedded route: the same content fingerprint.
    embedded_plan = pipeline.plan_release(
        default_config("german").with_overrides(output_dir=str(tmp_path / "e"))
    )
    embedded = steps_ingest.ingest_step(embedded_plan.ingest, embedded_plan.store)
    assert manifest["source_sha256"] == embedded.summary["source_sha256"]


def test_a_deleted_artifact_store_is_rebuilt_not_served_from_cache(
    prefect_backend, tmp_path
):
    args = [
        "run",
        "--dataset",
        "german",
        "--k",
        "5",
        "--seed",
        "3",
        "--out",
        str(tmp_path),
    ]
    args += ["--work-dir", str(tmp_path / "work")]
    assert main(args) == 0
    shutil.rmtree(tmp_path / "work")  # an owner freeing disk space
    assert main(args) == 0  # the cached steps recompute instead of failing
    events = [entry["event"] for entry in read_entries(tmp_path / "audit.jsonl")]
    assert events == ["publish", "republish"]
    assert main(["audit", "verify", "--out", str(tmp_path)]) == 0


def test_out_of_core_verification_gives_the_same_certificate(tmp_path):
    config = default_config("german").with_overrides(seed=7, output_dir=str(tmp_path))
    plan = pipeline.plan_release(config)
    store = plan.store
    ingested = steps_ingest.ingest_step(plan.ingest, store)
    validated = steps_validate.validate_step(plan.validate, store, ingested.raw)
    binned = steps_discretize.discretize_step(plan.discretize, store, validated.clean)
    candidate = steps_anonymize.anonymize_step(
        plan.anonymize, store, binned.discretized
    )
    tables = candidate.tables
    source = ingested.summary["source_sha256"]
    certificates = {}
    for engine in ("pandas", "dask"):
        chosen = plan.verify.model_copy(update={"engine": engine})
        output = steps_verify.verify_step(
            chosen, store, tables, validated.clean, source
        )
        certificates[engine] = output.summary
    assert certificates["dask"] == certificates["pandas"]
    assert certificates["dask"]["passed"] is True


@pytest.mark.slow  # a whole Adult release by pbg-ea: .ci/run's second stage
def test_readme_notebook_example_releases_pbg_ea(tmp_path, monkeypatch):
    """The README's three lines for pbg-ea: the config finds the hierarchies."""
    from ppdm import config, resources
    from ppdm.generalization.hierarchies import load_hierarchies

    monkeypatch.chdir(tmp_path)  # nothing is found through the working directory
    cfg = config.load_config(resources.config_file("adult-pbg-ea"))
    release_dir = pipeline.run_release(cfg).release_dir
    assert release_dir.parent == tmp_path / "releases" / "adult"
    manifest = json.loads((release_dir / "manifest.json").read_text())
    shipped = resources.hierarchies_dir("adult")
    assert manifest["algorithm"] == "pbg-ea"
    assert manifest["hierarchies"]["sha256"] == resources.hierarchy_fingerprint(shipped)
    (data_file,) = manifest["files"]
    table = pd.read_csv(
        release_dir / data_file["path"], dtype=str, keep_default_na=False
    )
    qi = cfg.quasi_identifiers
    assert k_anonymity(table, qi) >= 10
    assert distinct_l_diversity(table, qi, "occupation") >= 2
    # Every released QI value is a label of the attribute's hierarchy.
    hierarchies = load_hierarchies(shipped)
    for attribute in qi:
        labels = set().union(*map(set, hierarchies[attribute].labels))
        assert set(table[attribute]) <= labels, attribute
    generalized = [
        a for a in qi if set(table[a]) - set(hierarchies[a].labels[0]) - {""}
    ]
    assert generalized  # the hierarchies were used, not just passed


def test_the_flow_run_is_named_for_the_operator(published):
    from prefect.client.orchestration import get_client

    _, release_dir = published
    manifest = json.loads((release_dir / "manifest.json").read_text())
    with get_client(sync_client=True) as client:
        run = client.read_flow_run(manifest["flow_run_id"])
    assert re.fullmatch(r"german-mondrian-k5-\d{8}T\d{6}Z", run.name), run.name


def test_open_intervals_read_alike_in_the_file_the_verifier_and_the_page(
    prefect_backend, tmp_path, capsys
):
    # Equal-frequency bins give age two open ends; the released file writes
    # them as comparisons, the independent verifier reads the raw ages into
    # them, the page and fs-anonymity's feature names show the same text.
    config = default_config("german").with_overrides(
        k=5,
        l=2,
        seed=7,
        output_dir=str(tmp_path / "out"),
        discretize={"method": "equal-frequency", "n_bins": 4},
    )
    release_dir = pipeline.run_release(config).release_dir
    released = pd.read_csv(
        release_dir / "data" / "release.csv", dtype=str, keep_default_na=False
    )
    ages = set(released["age"])
    assert not {a for a in ages if "inf" in a}, ages
    below = {a for a in ages if re.fullmatch(r"< [\d.]+", a)}
    above = {a for a in ages if re.fullmatch(r">= [\d.]+", a)}
    assert below and above, ages
    certificate = json.loads((release_dir / "verification.json").read_text())
    assert certificate["passed"]
    capsys.readouterr()
    assert main(["verify", str(release_dir)]) == 0
    assert "PASS" in capsys.readouterr().out
    page = (release_dir / "report.html").read_text()
    shown = [a for a in released["age"].head(5) if a in below | above]
    assert shown, "the page's sample holds an open interval"
    for label in shown:
        assert html.escape(label) in page
    assert "-inf" not in page and "inf)" not in page
    binned = pd.DataFrame({"age": pd.Categorical(sorted(ages))})
    names = binary_encode(binned, ["age"]).names
    assert {f"age={a}" for a in below | above} <= set(names)
