"""What a release directory records about itself: its identity, manifest, audit entry and page."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ppdm.compute_config import ComputeConfig, fold_legacy_sections
from ppdm.config import ReleaseConfig
from ppdm.prepare import ingest
from ppdm.release import audit, provenance
from ppdm.utility.report import (
    accuracy_markdown,
    render_report_html,
)
from ppdm.verify.passthrough import PassthroughPolicy

if TYPE_CHECKING:
    from ppdm.steps.publish import PublishSettings


#: Configuration keys that say where things are (or where the work runs), not
#: what is released: left out of a release's identity, so moving them never
#: makes a second release.
_LOCATION_KEYS = (
    "output_dir",
    "work_dir",
    "hierarchies",
    "schema",
    "audit_key",
    # The budget decides whether a release may be made, not what it holds: a
    # re-run under a raised budget must find the release it already made.
    "privacy_budget",
)


def identity_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The configuration as it decides what is released (no locations, no cluster).

    ``compute`` is identified in the form releases were identified by before
    the section existed (``engine``, ``verification`` and the keys of
    ``out_of_core`` that are no cluster's), so the same configuration keeps
    its release id; a manifest that records those old sections is read
    into ``compute`` first, so both forms compare equal.
    """
    folded, *_ = fold_legacy_sections(dict(config), lenient=True)
    kept = {k: v for k, v in folded.items() if k not in _LOCATION_KEYS}
    if isinstance(kept.get("source"), Mapping) and "password" in kept["source"]:
        # Where the password is kept is no part of what is released.
        kept["source"] = {k: v for k, v in kept["source"].items() if k != "password"}
    compute = kept.pop("compute", None)
    if isinstance(compute, Mapping):
        # A manifest records every key of compute; an old one only what its
        # sections gave: both are completed with the defaults. The runner
        # and the cluster (workers, threads, processes, address) are left out.
        whole = {**ComputeConfig().model_dump(mode="json"), **compute}
        kept["engine"] = whole["engine"]
        kept["verification"] = {
            "engine": whole["verify_engine"],
            "size_threshold_mb": whole["verify_threshold_mb"],
            "memory_limit": whole["memory_limit"],
        }
        kept["out_of_core"] = {
            "size_threshold_mb": whole["size_threshold_mb"],
            "partition_rows": whole["partition_rows"],
            "sample_rows": whole["sample_rows"],
        }
    return kept


def public_config(config: ReleaseConfig) -> dict[str, Any]:
    """The configuration as the manifest records it: a URL's password masked."""
    data = config.model_dump(mode="json", by_alias=True)
    source = data.get("source") or {}
    if source.get("kind") == "sql" and source.get("url"):
        source["url"] = _masked_url(source["url"])
    return data


def _masked_url(url: str) -> str:
    # source_name masks the password (and secret query arguments) however
    # malformed the URL; its " (query: ...)" tail is not wanted here. A URL
    # without a secret is kept as written (so is its release id).
    masked = ingest.source_name("sql", url, "", None).rsplit(" (query: ", 1)[0]
    return masked if "***" in masked else url


def report_markdown(release_dir: Path) -> str:
    """The published page's record and figures as Markdown (no local path)."""
    manifest = json.loads((release_dir / "manifest.json").read_bytes())
    utility = json.loads((release_dir / "utility.json").read_bytes())
    record = utility.get("record") or {}
    head = [
        f"# Release {manifest['release_id']} of {manifest['dataset']}",
        "",
        f"- created (UTC): {manifest.get('created_at')}",
        f"- algorithm: {manifest.get('algorithm')}; requirement: "
        f"{settings_requirement(manifest)}",
        f"- independent verifier: **{record.get('verdict', 'n/a')}**",
        f"- source sha256: `{manifest.get('source_sha256')}`",
        "- files: "
        + ", ".join(f"`{f['path']}` ({f['rows']} rows)" for f in manifest["files"]),
        "- the full page: `report.html` in the release directory",
        "",
    ]
    body = accuracy_markdown(utility).replace("# Utility", "## Utility", 1)
    return "\n".join(head) + "\n" + body


def settings_requirement(manifest: Mapping[str, Any]) -> str:
    """The manifest's requirement in words."""
    from ppdm.privacy import model_from_description

    models = (manifest.get("requirement") or {}).get("models") or []
    return "; ".join(str(model_from_description(m)) for m in models) or "none"


def record_page(
    settings: PublishSettings,
    utility_path: Path,
    audit_seq: int,
    *,
    release_id: str,
    created_at: str,
    source_sha256: str,
    series: Mapping[str, Any] | None,
) -> bytes:
    """report.html with what makes it a record: id, date, audit entry, command."""
    # The key id only (never the key); resolved as publish_directory resolves it.
    key_id = audit.audit_key(settings.audit_key).id
    utility = json.loads(utility_path.read_bytes())
    record = dict(utility.get("record") or {})
    record.update(
        {
            "release_id": release_id,
            "created_at": created_at,
            "audit_key_id": key_id,
            "audit_seq": audit_seq,
            "source_sha256": source_sha256,
            "series_rows": (
                {
                    "held_back": series.get("rows_held_back"),
                    "kept_from_earlier_releases": series.get(
                        "rows_kept_from_earlier_releases"
                    ),
                    "against": list(series.get("against") or []),
                }
                if series
                else None
            ),
            "command": (
                "ppdm run --config release.yaml  (release.yaml: the `config` object "
                f"of manifest.json; seed {settings.seed}; the source with sha256 "
                f"{source_sha256})"
            ),
        }
    )
    utility["record"] = record
    title = utility.get("title") or f"{settings.dataset}: {settings.algorithm}"
    return render_report_html(utility, title=title).encode("utf-8")


def release_manifest(
    settings: PublishSettings,
    *,
    release_id: str,
    source_sha256: str,
    files: list[dict[str, Any]],
    artifacts: Mapping[str, str],
    created_at: str,
    flow_run_id: str | None,
) -> dict[str, Any]:
    """manifest.json: what was released, from what, how, by which code, and when."""
    return {
        "dataset": settings.dataset,
        "release_id": release_id,
        "algorithm": settings.algorithm,
        "params": dict(settings.params),
        "quasi_identifiers": list(settings.quasi_identifiers),
        "sensitive_attribute": settings.sensitive_attribute,
        "target": settings.target,
        "requirement": settings.requirement.to_dict(),
        "suppression_limit": settings.suppression_limit,
        "seed": settings.seed,
        "source": settings.source,
        "source_sha256": source_sha256,
        "hierarchies": (
            settings.hierarchies.model_dump(mode="json")
            if settings.hierarchies is not None
            else None
        ),
        "schema_sha256": (
            settings.schema_source.sha256 if settings.schema_source else None
        ),
        "roles": dict(settings.roles),
        "passthrough": PassthroughPolicy.from_dict(settings.passthrough).to_dict(),
        "files": files,
        "artifacts": {rel: artifacts[rel] for rel in sorted(artifacts)},
        "config": settings.config,
        "code_version": provenance.code_version(),
        "library_versions": provenance.library_versions(),
        "created_at": created_at,
        "flow_run_id": flow_run_id,
    }


def audit_entry(
    settings: PublishSettings,
    manifest: Mapping[str, Any],
    series: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The release's entry in the keyed audit chain (``series``: the certificate's)."""
    entry = {
        "dataset": settings.dataset,
        "release_id": manifest["release_id"],
        "algorithm": settings.algorithm,
        "requirement": settings.requirement.describe(),
        "seed": settings.seed,
        "source_sha256": manifest["source_sha256"],
        "verified": True,
        "code_version": manifest["code_version"],
        "flow_run_id": manifest["flow_run_id"],
        "created_at": manifest["created_at"],
    }
    if series is not None:
        # What the release was checked against, and a leak the owner accepted
        # with the policy off, stay on the record next to the release.
        entry["republication"] = {
            "policy": settings.config.get("republication", {}).get("policy"),
            "checked_against": series["checked_against"],
            "accepted_risk": any(r["accepted_risk"] for r in series["results"]),
        }
    return entry
