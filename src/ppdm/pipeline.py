"""The release steps as plain functions over an artifact store.

Each function is one step of ``ingest -> validate -> discretize -> anonymize
-> verify -> utility report -> publish``: it reads its inputs by reference,
calls the core module that does the work, writes its outputs to the
:class:`~ppdm.artifacts.ArtifactStore` and returns references plus a small
summary for whoever displays progress. The Prefect tasks in ``tasks/`` wrap
exactly these functions; :func:`run_release` chains them without Prefect (a
notebook, a test).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm import audit, ingest, provenance, validation
from ppdm.algorithms import ALGORITHMS, get_algorithm
from ppdm.artifacts import (
    ArtifactRef,
    ArtifactStore,
    canonical_json,
    readable_mode,
    sha256_bytes,
    sha256_file,
    write_atomic,
)
from ppdm.config import ReleaseConfig
from ppdm.discretize import apply_cut_points, discretize
from ppdm.exceptions import (
    ArtifactIntegrityError,
    DataValidationError,
    VerificationError,
)
from ppdm.model import AnonymizationSpec, AttributeKind, attribute_kind
from ppdm.privacy import Requirement
from ppdm.utility.classification import holdout_utility
from ppdm.utility.loss import covers_from_hierarchies
from ppdm.utility.report import build_utility, render_report_html
from ppdm.verify import verify_files

__all__ = [
    "StepOutput",
    "store_for",
    "requirement_of",
    "spec_of",
    "candidate_files",
    "candidate_refs",
    "publication_refs",
    "ingest_step",
    "validate_step",
    "discretize_step",
    "anonymize_step",
    "verify_step",
    "utility_step",
    "publish_step",
    "run_release",
]

STORE_DIR = ".artifacts"


@dataclass(frozen=True)
class StepOutput:
    """References a step wrote, and a JSON-safe summary of what it did."""

    refs: dict[str, ArtifactRef]
    summary: dict[str, Any] = field(default_factory=dict)


def store_for(config: ReleaseConfig) -> ArtifactStore:
    return ArtifactStore(Path(config.output_dir).resolve() / STORE_DIR)


def requirement_of(config: ReleaseConfig) -> Requirement:
    return config.requirement


def spec_of(
    config: ReleaseConfig, hierarchies: Mapping[str, Any] | None = None
) -> AnonymizationSpec:
    return AnonymizationSpec(
        requirement=config.requirement,
        target=config.target,
        suppression_limit=config.suppression_limit,
        hierarchies=hierarchies,
    )


# -- ingest -----------------------------------------------------------------
def ingest_step(config: ReleaseConfig) -> StepOutput:
    """Read the source and snapshot it as Parquet; fingerprint the source."""
    source = config.source
    table = ingest.load_source(
        source.kind, source.path or source.url, query=source.query, embedded=source.name
    )
    snapshot = store_for(config).put_table(table, kind="raw-snapshot")
    if source.kind in ("csv", "parquet"):
        source_sha = ingest.file_sha256(source.path)
    else:  # embedded data and SQL results: the content is the source
        source_sha = ingest.fingerprint(table)
    return StepOutput(
        {"raw": snapshot},
        {
            "rows": len(table),
            "columns": list(table.columns),
            "source_sha256": source_sha,
            "source": _describe_source(config),
        },
    )


def _describe_source(config: ReleaseConfig) -> str:
    source = config.source
    if source.kind == "embedded":
        return f"embedded:{source.name}"
    if source.kind == "sql":
        from sqlalchemy.engine import make_url

        return f"sql:{make_url(source.url).render_as_string(hide_password=True)}"
    return f"{source.kind}:{source.path}"


# -- validate ---------------------------------------------------------------
def validate_step(
    config: ReleaseConfig, raw: ArtifactRef, schema: type, suite: dict
) -> StepOutput:
    """Validate with pandera and Great Expectations; quarantine rejected rows."""
    store = store_for(config)
    table = store.read_table(raw)
    try:
        outcome = validation.validate_table(
            table,
            schema,
            suite,
            max_rejected_fraction=config.validation.max_rejected_fraction,
            source=_describe_source(config),
        )
    except DataValidationError as err:
        outcome = getattr(err, "outcome", None)
        if outcome is not None:
            ref = store.put_csv(outcome.quarantine, kind="quarantine")
            raise type(err)(
                f"{err} Rejected rows and reasons: {ref.path}", err.failure_cases
            ) from err
        raise
    refs = {
        "clean": store.put_table(outcome.clean, kind="clean-table"),
        "quarantine": store.put_csv(outcome.quarantine, kind="quarantine"),
        "validation": store.put_json(outcome.report, kind="validation-report"),
    }
    return StepOutput(refs, dict(outcome.report))


# -- discretize -------------------------------------------------------------
def _numeric_qis(config: ReleaseConfig, table: pd.DataFrame) -> list[str]:
    if config.discretize.columns is not None:
        return list(config.discretize.columns)
    return [
        c
        for c in config.quasi_identifiers
        if attribute_kind(table[c]) is AttributeKind.NUMERIC
    ]


def discretize_step(config: ReleaseConfig, clean: ArtifactRef) -> StepOutput:
    """Bin numeric quasi-identifiers into intervals; save the cut points."""
    store = store_for(config)
    table = store.read_table(clean)
    columns = _numeric_qis(config, table)
    method = config.discretize.method
    if ALGORITHMS[config.algorithm].uses_hierarchies:
        method = "none"  # the hierarchies generalize the raw values themselves
    if method == "none" or not columns:
        cut_points: dict[str, list[float]] = {}
        binned = table
    else:
        result = discretize(
            table,
            columns,
            table[config.target],
            method=config.discretize.method,
            n_bins=config.discretize.n_bins,
        )
        binned, cut_points = result.table, result.cut_points
    refs = {
        "discretized": store.put_table(binned, kind="discretized-table"),
        "cut_points": store.put_json(
            {"method": method, "cut_points": cut_points}, kind="cut-points"
        ),
    }
    return StepOutput(refs, {"method": method, "cut_points": cut_points})


# -- anonymize --------------------------------------------------------------
def anonymize_step(
    config: ReleaseConfig,
    discretized: ArtifactRef,
    hierarchies: Mapping[str, Any] | None = None,
) -> StepOutput:
    """Run the configured algorithm with ``rng = default_rng(seed)``."""
    store = store_for(config)
    table = store.read_table(discretized)
    algorithm = get_algorithm(config.algorithm, **config.params)
    release = algorithm.anonymize(
        table, spec_of(config, hierarchies), np.random.default_rng(config.seed)
    )
    refs = {
        f"table:{name}": store.put_csv(frame, kind="release-candidate")
        for name, frame in sorted(release.tables.items())
    }
    refs["evidence"] = store.put_json(
        {
            "algorithm": release.algorithm,
            "params": dict(release.params),
            "records_in": release.records_in,
            "evidence": dict(release.evidence),
        },
        kind="evidence",
    )
    rows_out = {name: len(frame) for name, frame in release.tables.items()}
    return StepOutput(
        refs,
        {"algorithm": config.algorithm, "records_in": len(table), "rows_out": rows_out},
    )


def candidate_files(refs: Mapping[str, ArtifactRef]) -> dict[str, Path]:
    """``{table name: path}`` of the release candidate among a step's refs."""
    return {
        key.split(":", 1)[1]: Path(ref.path)
        for key, ref in refs.items()
        if key.startswith("table:")
    }


def candidate_refs(anonymized: StepOutput) -> dict[str, ArtifactRef]:
    """The release candidate's tables among the anonymize step's references."""
    return {k: v for k, v in anonymized.refs.items() if k.startswith("table:")}


def publication_refs(
    validated: StepOutput,
    binned: StepOutput,
    anonymized: StepOutput,
    verified: StepOutput,
    reported: StepOutput,
) -> dict[str, ArtifactRef]:
    """Everything :func:`publish_step` puts in a release directory, by role."""
    return {
        **candidate_refs(anonymized),
        "certificate": verified.refs["certificate"],
        "utility": reported.refs["utility"],
        "report": reported.refs["report"],
        "evidence": anonymized.refs["evidence"],
        "cut_points": binned.refs["cut_points"],
        "validation": validated.refs["validation"],
    }


# -- verify -----------------------------------------------------------------
def verify_step(
    config: ReleaseConfig,
    candidate: Mapping[str, ArtifactRef],
    original: ArtifactRef,
    source_sha256: str,
    hierarchies: Mapping[str, Any] | None = None,
) -> StepOutput:
    """Re-check the candidate files independently; fail (and publish nothing) if short."""
    store = store_for(config)
    for ref in candidate.values():
        ref.verify()
    files = candidate_files(candidate)
    common = {
        "original": store.read_table(original),
        "input_sha256": source_sha256,
        "covers": covers_from_hierarchies(hierarchies) if hierarchies else None,
    }
    if _out_of_core(config, files):
        from ppdm.verify_dask import verify_csv_files

        memory_limit = config.verification.memory_limit
        certificate = verify_csv_files(
            files, requirement_of(config), memory_limit=memory_limit, **common
        )
    else:
        certificate = verify_files(files, requirement_of(config), **common)
    ref = store.put_json(certificate.to_dict(), kind="certificate")
    if not certificate.passed:
        audit.append_entry(
            Path(config.output_dir).resolve() / audit.AUDIT_LOG_NAME,
            {
                "event": "release-rejected",
                "dataset": config.dataset,
                "algorithm": config.algorithm,
                "reason": certificate.summary(),
                "certificate_sha256": ref.sha256,
                "created_at": _now(),
            },
        )
        raise VerificationError(
            f"verification failed, nothing was published: {certificate.summary()}",
            certificate.to_dict(),
        )
    return StepOutput({"certificate": ref}, certificate.to_dict())


def _out_of_core(config: ReleaseConfig, files: Mapping[str, Path]) -> bool:
    """Verify with Dask when configured, or (auto) when the candidate is large."""
    engine = config.verification.engine
    if engine != "auto":
        return engine == "dask"
    size = sum(path.stat().st_size for path in files.values())
    return size > config.verification.size_threshold_mb * 2**20


# -- utility report ---------------------------------------------------------
def utility_step(
    config: ReleaseConfig,
    clean: ArtifactRef,
    cut_points: ArtifactRef,
    candidate: Mapping[str, ArtifactRef],
    evidence: ArtifactRef,
    certificate: ArtifactRef,
    hierarchies: Mapping[str, Any] | None = None,
) -> StepOutput:
    """Information loss, hold-out accuracy and risk; utility.json and report.html."""
    store = store_for(config)
    original = store.read_table(clean)
    cuts = store.read_json(cut_points)["cut_points"]
    released = {
        name: pd.read_csv(path, dtype=str, keep_default_na=False)
        for name, path in candidate_files(candidate).items()
    }
    spec = spec_of(config, hierarchies)
    algorithm = get_algorithm(config.algorithm, **config.params)

    def anonymize_training_split(train: pd.DataFrame) -> pd.DataFrame:
        binned = apply_cut_points(train, cuts) if cuts else train
        release = algorithm.anonymize(binned, spec, np.random.default_rng(config.seed))
        return release.table

    covers = covers_from_hierarchies(hierarchies) if hierarchies else None
    holdout = holdout_utility(
        original,
        anonymize_training_split,
        target=config.target,
        test_size=config.utility.test_size,
        seed=config.seed,
        covers=covers,
    )
    evidence_doc = store.read_json(evidence)
    risk = {
        name: table["risk"]
        for name, table in store.read_json(certificate)["tables"].items()
    }
    utility = build_utility(
        original, released, spec, holdout, evidence_doc["evidence"], risk=risk
    )
    html = render_report_html(
        utility,
        title=f"{config.dataset}: {config.algorithm}, k={config.k}, l={config.l}",
    )
    refs = {
        "utility": store.put_json(utility, kind="utility"),
        "report": store.put_bytes(html.encode("utf-8"), kind="report", suffix="html"),
    }
    return StepOutput(refs, utility)


# -- publish ----------------------------------------------------------------
def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def publish_step(
    config: ReleaseConfig,
    *,
    source_sha256: str,
    refs: Mapping[str, ArtifactRef],
    flow_run_id: str | None = None,
) -> Path:
    """Publish an immutable release directory atomically and log it in the audit chain.

    ``refs`` holds the candidate tables (``table:<name>``) and the keys
    ``certificate``, ``utility``, ``report``, ``evidence``, ``cut_points`` and
    ``validation``. The directory is assembled under a temporary name beside its
    final place and renamed in one step. Its id is derived from the released
    content, so a re-run with the same inputs, config and seed finds its own
    release instead of writing a second copy.
    """
    out_dir = Path(config.output_dir).resolve()
    for ref in refs.values():
        ref.verify()
    named = {
        f"data/{name}.csv": Path(path) for name, path in candidate_files(refs).items()
    }
    named.update(
        {
            "verification.json": Path(refs["certificate"].path),
            "utility.json": Path(refs["utility"].path),
            "report.html": Path(refs["report"].path),
            "evidence.json": Path(refs["evidence"].path),
            "cut_points.json": Path(refs["cut_points"].path),
            "validation.json": Path(refs["validation"].path),
        }
    )
    hashes = {rel: sha256_file(path) for rel, path in named.items()}
    files = [
        {
            "path": rel,
            "sha256": hashes[rel],
            "rows": refs[f"table:{Path(rel).stem}"].rows,
        }
        for rel in sorted(named)
        if rel.startswith("data/")
    ]
    identity = {
        "source_sha256": source_sha256,
        "config": config.model_dump(mode="json", by_alias=True, exclude={"output_dir"}),
        "files": hashes,
    }
    release_id = sha256_bytes(canonical_json(identity))[:16]
    release_dir = out_dir / config.dataset / release_id
    manifest = {
        "dataset": config.dataset,
        "release_id": release_id,
        "algorithm": config.algorithm,
        "params": dict(config.params),
        "quasi_identifiers": list(config.quasi_identifiers),
        "sensitive_attribute": config.sensitive_attribute,
        "target": config.target,
        "requirement": config.requirement.to_dict(),
        "suppression_limit": config.suppression_limit,
        "seed": config.seed,
        "source": _describe_source(config),
        "source_sha256": source_sha256,
        "files": files,
        "artifacts": {
            rel: hashes[rel] for rel in sorted(hashes) if not rel.startswith("data/")
        },
        "config": config.model_dump(mode="json", by_alias=True),
        "code_version": provenance.code_version(),
        "library_versions": provenance.library_versions(),
        "created_at": _now(),
        "flow_run_id": flow_run_id,
    }
    log_path = out_dir / audit.AUDIT_LOG_NAME
    event = "publish"
    if release_dir.exists():
        existing = _existing_data_hashes(release_dir)
        if existing != {f["path"]: f["sha256"] for f in files}:
            raise ArtifactIntegrityError(
                f"{release_dir} already exists with different content; "
                "a published release is never overwritten"
            )
        event = "republish"  # same content: nothing to write, the run is recorded
    else:
        release_dir.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(
            tempfile.mkdtemp(prefix=f".staging-{release_id}-", dir=release_dir.parent)
        )
        staging.chmod(readable_mode(directory=True))  # mkdtemp makes it private
        try:
            for rel, path in named.items():
                (staging / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, staging / rel)
            write_atomic(staging / "manifest.json", canonical_json(manifest))
            staging.rename(release_dir)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    manifest_path = release_dir / "manifest.json"
    recorded = [
        {"path": str((release_dir / rel).relative_to(out_dir)), "sha256": h}
        for rel, h in sorted(hashes.items())
    ]
    recorded.append(
        {
            "path": str(manifest_path.relative_to(out_dir)),
            "sha256": sha256_file(manifest_path),
        }
    )
    audit.append_entry(
        log_path,
        {
            "event": event,
            "dataset": config.dataset,
            "release_id": release_id,
            "release_dir": str(release_dir.relative_to(out_dir)),
            "algorithm": config.algorithm,
            "requirement": config.requirement.describe(),
            "seed": config.seed,
            "source_sha256": source_sha256,
            "files": recorded,
            "verified": True,
            "code_version": manifest["code_version"],
            "flow_run_id": flow_run_id,
            "created_at": manifest["created_at"],
        },
    )
    return release_dir


def _existing_data_hashes(release_dir: Path) -> dict[str, str]:
    import json

    manifest = json.loads((release_dir / "manifest.json").read_text(encoding="utf-8"))
    return {f["path"]: f["sha256"] for f in manifest["files"]}


# -- the whole chain without Prefect ---------------------------------------
def run_release(
    config: ReleaseConfig,
    schema: type,
    suite: dict,
    *,
    hierarchies: Mapping[str, Any] | None = None,
    on_step: Callable[[str, StepOutput], None] | None = None,
) -> Path:
    """Run every step in order in this process and return the release directory."""

    def step(name: str, output: StepOutput) -> StepOutput:
        if on_step is not None:
            on_step(name, output)
        return output

    ingested = step("ingest", ingest_step(config))
    source_sha = ingested.summary["source_sha256"]
    validated = step(
        "validate", validate_step(config, ingested.refs["raw"], schema, suite)
    )
    binned = step("discretize", discretize_step(config, validated.refs["clean"]))
    candidate = step(
        "anonymize", anonymize_step(config, binned.refs["discretized"], hierarchies)
    )
    tables = candidate_refs(candidate)
    verified = step(
        "verify",
        verify_step(config, tables, validated.refs["clean"], source_sha, hierarchies),
    )
    reported = step(
        "utility",
        utility_step(
            config,
            validated.refs["clean"],
            binned.refs["cut_points"],
            tables,
            candidate.refs["evidence"],
            verified.refs["certificate"],
            hierarchies,
        ),
    )
    refs = publication_refs(validated, binned, candidate, verified, reported)
    return publish_step(config, source_sha256=source_sha, refs=refs)
