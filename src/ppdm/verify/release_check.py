"""Re-check a published release directory against its own manifest.

Used by ``ppdm verify``: every file's sha256 must equal the manifest's record,
and the data files (CSV or Parquet parts, read by
:func:`ppdm.release.data_files.read_released_table`) must meet the manifest's
privacy requirement when checked afresh by the independent verifier. With
the audit key, the manifest itself must be the one published: its seal and
the audit entry that binds it are checked (:func:`ppdm.release.seal.check_seal`);
without it the outcome says the seal was not checked, since a manifest
rewritten together with its data (new hashes, a lower k) matches itself.
When the manifest records the columns released as is (its ``passthrough``
entry), their below-k figures are measured afresh against its limits and
acceptances; the proxy part needs the original table, which a release does
not hold, and is reported as not measured.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ppdm.privacy import Differencing, Requirement
from ppdm.release.artifacts import recorded_file_problem
from ppdm.release.audit import KeyArg
from ppdm.release.data_files import (
    ReleasedFiles,
    read_released_table,
    release_data,
    released_tables,
)
from ppdm.release.seal import SealCheck, check_seal
from ppdm.verify import VerifyOptions, verify_files
from ppdm.verify.differential import DifferentialPrivacyCheck, check_released_files
from ppdm.verify.figures import check_figures, figures_of
from ppdm.verify.out_of_core import DASK_THRESHOLD_BYTES, verify_tables_out_of_core
from ppdm.verify.passthrough import PassthroughPolicy

__all__ = ["ReleaseCheck", "changed_files", "check_release"]


@dataclass(frozen=True)
class ReleaseCheck:
    """The outcome of :func:`check_release`.

    Attributes
    ----------
    passed : bool
        Every check that ran passed.
    lines : list of str
        What was checked and found, ``FAIL: ...`` lines naming each problem;
        the last line is ``PASS`` or ``FAIL``.
    seal_checked : bool
        The manifest's seal and audit entry were checked (a key was at hand).
        ``passed`` without it vouches only for a manifest taken as found.
    """

    passed: bool
    lines: list[str] = field(default_factory=list)
    seal_checked: bool = False

    @property
    def problems(self) -> list[str]:
        """The failed checks, each one line (``FAIL: ``/``FAILED: `` lines, unprefixed)."""
        found = [
            line.split(": ", 1)[1]
            for line in "\n".join(self.lines[:-1]).splitlines()
            if line.startswith(("FAIL: ", "FAILED: "))
        ]
        return found or ([] if self.passed else ["the release failed its checks"])


def changed_files(release_dir: Path, manifest: dict) -> list[str]:
    """Every file the manifest lists that is missing or differs from its sha256."""
    records = [
        *manifest["files"],
        *({"path": p, "sha256": h} for p, h in manifest.get("artifacts", {}).items()),
    ]
    problems = []
    for record in records:
        said = {
            "missing": f"{record['path']} is missing",
            "changed": f"{record['path']} changed since release "
            "(sha256 differs from the manifest)",
        }
        found = recorded_file_problem(release_dir / record["path"], record["sha256"])
        if found is not None:
            problems.append(said[found])
    return problems


def check_release(
    release_dir: Path | str,
    against: Sequence[Path | str] = (),
    *,
    key: KeyArg = None,
) -> ReleaseCheck:
    """Check hashes, the seal and the privacy requirement of one release directory.

    The release is also checked by differencing against ``against`` (earlier
    release directories of the same dataset) and against the releases its
    certificate names, found beside it (``<dataset>/<release id>``).

    ``key`` is the audit key (a spec such as ``"env:PPDM_AUDIT_KEY"``, or the
    key's bytes): with it, the manifest's seal and the audit entry binding it
    are checked and any difference fails the check; without (None, or a spec
    naming nothing) a line says the seal was not checked and
    :attr:`ReleaseCheck.seal_checked` is False.
    """
    release_dir = Path(release_dir)
    manifest_path = release_dir / "manifest.json"
    if not manifest_path.is_file():
        return ReleaseCheck(False, [f"FAIL: no manifest.json in {release_dir}"])
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    changed = changed_files(release_dir, manifest)
    lines = [f"FAIL: {problem}" for problem in changed]
    intact = not changed
    seal = check_seal(release_dir, key)
    lines.extend(_seal_lines(seal))
    requirement = Requirement.from_dict(manifest["requirement"])
    # Releases made before the pass-through check carry no policy: nothing
    # to re-check then. Without the original table only the below-k part is
    # measured (the proxy part needs the original values).
    recorded = manifest.get("passthrough")
    policy = PassthroughPolicy.from_dict(recorded) if recorded is not None else None
    data = release_data(release_dir, manifest)
    size = sum(path.stat().st_size for path in _paths(data))
    # Larger than memory comfortably holds; release models read every table
    # at once, so such a release is checked in memory.
    options = VerifyOptions(passthrough=policy)
    if size > DASK_THRESHOLD_BYTES and not requirement.release_models:
        certificate = verify_tables_out_of_core(data, requirement, options)
    else:
        certificate = verify_files(data, requirement, options)
    lines.append(
        f"release {manifest['release_id']} ({manifest['dataset']}, "
        f"{manifest['algorithm']}): required {requirement}"
    )
    certificate = certificate.with_differential_privacy(
        _differential_privacy(release_dir, manifest, data)
    )
    # Each check the files were verified for, with its own figures (the
    # series checks follow, from their own re-check).
    lines.extend(f"check {row.line()}" for row in check_figures(certificate))
    if policy is None:
        lines.append(
            "columns released as is: not checked (the manifest records no "
            "pass-through policy)"
        )
    for result in certificate.passthrough or ():
        lines.append(f"{result.describe()}: {result.status}")
    series = _series_check(release_dir, manifest, requirement, data, against)
    lines.extend(series.lines)
    lines.extend(_recorded_series(release_dir))
    lines.append(certificate.summary())
    passed = intact and certificate.passed and series.passed and not seal.problems
    if not passed:
        lines.append("FAIL")
    else:
        lines.append("PASS" if seal.checked else "PASS, but the seal was NOT CHECKED")
    return ReleaseCheck(passed, lines, seal.checked)


def _seal_lines(seal: SealCheck) -> list[str]:
    if seal.problems:
        return [f"FAIL: {problem}" for problem in seal.problems]
    return [f"seal {seal.note}"]


def _paths(data: dict[str, ReleasedFiles]) -> list[Path]:
    return [
        Path(p)
        for files in data.values()
        for p in ([files] if isinstance(files, str | Path) else files)
    ]


def _series_check(
    release_dir: Path,
    manifest: dict,
    requirement: Requirement,
    data: dict[str, ReleasedFiles],
    against: Sequence[Path | str],
) -> ReleaseCheck:
    """Differencing against earlier releases, on the released files alone."""
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
    differencing = Differencing(requirement, accepted=policy.get("policy") == "off")
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
            name: read_released_table(
                [directory / p for p in paths], current_labels=True
            )
            for name, paths in released_tables(
                f["path"] for f in recorded["files"]
            ).items()
        }
        where = f"against release {recorded['release_id']}"
        for result in differencing.check(
            tables, earlier, against=recorded["release_id"]
        ):
            lines.append(
                ("series: " if result.passed else "FAIL: series: ") + result.summary()
            )
            lines.append(f"check {figures_of(where, result).line()}")
            passed = passed and result.passed
    return ReleaseCheck(passed, lines)


def _recorded_series(release_dir: Path) -> list[str]:
    """The series checks the release's certificate recorded that need the owner's
    table (same rows, composition): shown as recorded, since a release
    directory cannot re-check them."""
    recorded = release_dir / "verification.json"
    if not recorded.is_file():
        return []
    content = json.loads(recorded.read_text(encoding="utf-8"))
    lines = []
    for row in check_figures(content):
        if row.kind == "series" and row.check != Differencing.name:
            lines.append(f"series, as recorded at release ({row.check}): {row.summary}")
            lines.append(f"check {row.line()} (as recorded at release)")
    return lines


def _differential_privacy(
    release_dir: Path, manifest: dict, data: dict[str, ReleasedFiles]
) -> DifferentialPrivacyCheck | None:
    """The differential privacy entry, derived afresh from the manifest's
    algorithm and parameters; a default delta (it depends on the input's
    rows, which a release does not hold) is the one its certificate recorded."""
    algorithm, params = manifest.get("algorithm"), manifest.get("params") or {}
    recorded = release_dir / "verification.json"
    delta = None
    if recorded.is_file():
        entry = json.loads(recorded.read_text(encoding="utf-8")).get(
            "differential_privacy"
        )
        delta = None if entry is None else entry.get("delta")
    config = manifest.get("config") if isinstance(manifest.get("config"), dict) else {}
    kept = {"quasi_identifier", "sensitive", "target", "insensitive"}
    declared = [
        column
        for column, role in (manifest.get("roles") or {}).items()
        if role in kept
        or (role == "weight" and column in (config.get("keep_weights") or ()))
        or (role == "identifying" and config.get("pseudonymize"))
    ]
    if not isinstance(algorithm, str):
        return None
    return check_released_files(
        data, algorithm, params, declared_columns=declared, delta=delta
    )
