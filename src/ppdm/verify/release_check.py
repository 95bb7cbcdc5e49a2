"""Re-check a published release directory against its own manifest.

Used by ``ppdm verify``: every file's sha256 must equal the manifest's record,
and the data files must meet the manifest's privacy requirement when checked
afresh by the independent verifier. When the manifest records the columns
released as is (its ``passthrough`` entry), their below-k figures are
measured afresh against its limits and acceptances; the proxy part needs the
original table, which a release does not hold, and is reported as not
measured.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ppdm.privacy import Requirement
from ppdm.release.artifacts import sha256_file
from ppdm.verify import verify_files
from ppdm.verify.out_of_core import DASK_THRESHOLD_BYTES, verify_csv_files
from ppdm.verify.passthrough import PassthroughPolicy

__all__ = ["ReleaseCheck", "check_release"]


@dataclass(frozen=True)
class ReleaseCheck:
    passed: bool
    lines: list[str] = field(default_factory=list)


def check_release(
    release_dir: Path | str, against: Sequence[Path | str] = ()
) -> ReleaseCheck:
    """Check hashes and the privacy requirement of one release directory.

    The release is also checked by differencing against ``against`` (earlier
    release directories of the same dataset) and against the releases its
    certificate names, found beside it (``<dataset>/<release id>``).
    """
    release_dir = Path(release_dir)
    manifest_path = release_dir / "manifest.json"
    if not manifest_path.is_file():
        return ReleaseCheck(False, [f"FAIL: no manifest.json in {release_dir}"])
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    lines: list[str] = []
    intact = True
    records = [
        *manifest["files"],
        *({"path": p, "sha256": h} for p, h in manifest.get("artifacts", {}).items()),
    ]
    for record in records:
        path = release_dir / record["path"]
        if not path.is_file():
            intact = False
            lines.append(f"FAIL: {record['path']} is missing")
        elif sha256_file(path) != record["sha256"]:
            intact = False
            lines.append(
                f"FAIL: {record['path']} changed since release "
                "(sha256 differs from the manifest)"
            )
    requirement = Requirement.from_dict(manifest["requirement"])
    # Releases made before the pass-through check carry no policy: nothing
    # to re-check then. Without the original table only the below-k part is
    # measured (the proxy part needs the original values).
    recorded = manifest.get("passthrough")
    policy = PassthroughPolicy.from_dict(recorded) if recorded is not None else None
    data = {
        Path(f["path"]).stem: release_dir / f["path"]
        for f in manifest["files"]
        if (release_dir / f["path"]).is_file()
    }
    size = sum(path.stat().st_size for path in data.values())
    # Larger than memory comfortably holds; release models read every table
    # at once, so such a release is checked in memory.
    if size > DASK_THRESHOLD_BYTES and not requirement.release_models:
        certificate = verify_csv_files(data, requirement, passthrough=policy)
    else:
        certificate = verify_files(data, requirement, passthrough=policy)
    lines.append(
        f"release {manifest['release_id']} ({manifest['dataset']}, "
        f"{manifest['algorithm']}): required {requirement}"
    )
    for table, measures in sorted(certificate.achieved.items()):
        shown = ", ".join(f"{name}={value}" for name, value in sorted(measures.items()))
        lines.append(f"achieved in {table}: {shown}")
    if policy is None:
        lines.append(
            "columns released as is: not checked (the manifest records no "
            "pass-through policy)"
        )
    for result in certificate.passthrough or ():
        lines.append(f"{result.describe()}: {result.status}")
    series = _series_check(release_dir, manifest, requirement, data, against)
    lines.extend(series.lines)
    lines.append(certificate.summary())
    passed = intact and certificate.passed and series.passed
    lines.append("PASS" if passed else "FAIL")
    return ReleaseCheck(passed, lines)


def _series_check(
    release_dir: Path,
    manifest: dict,
    requirement: Requirement,
    data: dict[str, Path],
    against: Sequence[Path | str],
) -> ReleaseCheck:
    """Differencing against earlier releases, on the released files alone."""
    from ppdm.verify.certificate import read_released_table
    from ppdm.verify.series import check_against

    named = []
    certificate = release_dir / "verification.json"
    if certificate.is_file():
        recorded = json.loads(certificate.read_text(encoding="utf-8")).get("series")
        for release_id in (recorded or {}).get("checked_against", []):
            named.append(release_dir.parent / release_id)
    directories = list(dict.fromkeys([*named, *map(Path, against)]))
    if not directories:
        return ReleaseCheck(True, [])
    policy = (manifest.get("config") or {}).get("republication") or {}
    accepted = policy.get("policy") == "off"
    tables = {name: read_released_table(path) for name, path in data.items()}
    lines, passed = [], True
    for directory in directories:
        earlier_manifest = directory / "manifest.json"
        if not earlier_manifest.is_file():
            lines.append(f"FAIL: earlier release {directory} not found (no manifest)")
            passed = False
            continue
        recorded = json.loads(earlier_manifest.read_text(encoding="utf-8"))
        if recorded.get("dataset") != manifest.get("dataset"):
            lines.append(
                f"FAIL: {directory} is a release of {recorded.get('dataset')!r}, "
                f"not {manifest.get('dataset')!r}"
            )
            passed = False
            continue
        earlier = {
            Path(f["path"]).stem: read_released_table(directory / f["path"])
            for f in recorded["files"]
        }
        for result in check_against(
            tables,
            earlier,
            requirement,
            against=recorded["release_id"],
            accepted=accepted,
        ):
            lines.append(
                ("series: " if result.passed else "FAIL: series: ") + result.describe()
            )
            passed = passed and result.passed
    return ReleaseCheck(passed, lines)
