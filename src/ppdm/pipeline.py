"""The release steps as plain functions over an artifact store, and their one order.

Each ``*_step`` function is one step of ``ingest -> validate -> discretize ->
anonymize -> verify -> utility report -> publish``. It receives its own slice
of the configuration (a small frozen settings object, :class:`IngestSettings`
... :class:`PublishSettings`, all made by :func:`plan_release`), the
:class:`~ppdm.release.artifacts.ArtifactStore` and the references of its inputs; it
reads them, calls the core module that does the work, writes its outputs to
the store and returns references plus a small summary for whoever displays
progress.

:func:`run_steps` is the only place where the steps are put in order. It
executes each one through a ``run_step(name, fn, *args)`` callable:
:func:`run_release` calls ``fn(*args)`` in this process (a notebook, a test),
the Prefect flow (``flows/release.py``) calls the Prefect task named ``name``,
a thin wrapper of ``fn``. A step sees only what it reads, so a cache keyed on
its arguments is exact: a new ``utility.test_size`` or ``output_dir`` re-runs
the utility report (and publication) only, a new algorithm does not re-run
validation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ppdm.config import ReleaseConfig
from ppdm.exceptions import VerificationError
from ppdm.steps.anonymize import anonymize_step
from ppdm.steps.base import StepOutput
from ppdm.steps.discretize import discretize_step
from ppdm.steps.ingest import ingest_step
from ppdm.steps.plan import ReleasePlan, plan_release, store_for
from ppdm.steps.publish import publish_step, release_files
from ppdm.steps.republication import republication_step
from ppdm.steps.utility import utility_step
from ppdm.steps.validate import validate_step
from ppdm.steps.verify import record_refusal, verify_step

__all__ = [
    "STEPS",
    "StepOutput",
    "StepRunner",
    "ReleaseOutcome",
    "ReleasePlan",
    "plan_release",
    "store_for",
    "run_steps",
    "run_release",
]

#: The steps in the order :func:`run_steps` runs them; also the Prefect task names.
STEPS = (
    "ingest",
    "validate",
    "discretize",
    "anonymize",
    "republication",
    "verify",
    "utility-report",
    "publish",
)


#: ``run_step(name, fn, *args)``: execute step ``name``, whose work is ``fn(*args)``.
StepRunner = Callable[..., Any]


@dataclass(frozen=True)
class ReleaseOutcome:
    """What a release run produced: where it is, and what was checked and measured."""

    release_dir: Path
    certificate: dict[str, Any]
    utility: dict[str, Any]

    def __fspath__(self) -> str:
        return str(self.release_dir)

    def __str__(self) -> str:
        return str(self.release_dir)


def run_steps(config: ReleaseConfig, *, run_step: StepRunner) -> ReleaseOutcome:
    """Run every step of a release in order.

    Parameters
    ----------
    config : ReleaseConfig
        Names the dataset folder (schema and suite), the source and the rest.
    run_step : callable
        ``run_step(name, fn, *args)`` executes the step ``name`` (one of
        :data:`STEPS`), whose work is ``fn(*args)``, and returns its result.

    Returns
    -------
    ReleaseOutcome
    """
    from ppdm.preflight import preflight_for_run

    preflight_for_run(config)
    plan = plan_release(config)
    from ppdm.scale.engine import run_cluster, using

    # One cluster for the run, started when a step first needs it (never, for
    # an in-memory release verified in memory); an enclosing block's cluster
    # (the flow's Dask task runner's) is used instead of a new one.
    with run_cluster(plan.cluster) as running:
        if plan.ingest.partitions is None:
            return _run_planned(plan, run_step)
        with using(running.part_cluster()):
            return _run_planned(plan, run_step)


def _run_planned(plan: ReleasePlan, run_step: StepRunner) -> ReleaseOutcome:
    store = plan.store
    ingested = run_step("ingest", ingest_step, plan.ingest, store)
    validated = run_step("validate", validate_step, plan.validate, store, ingested.raw)
    binned = run_step(
        "discretize", discretize_step, plan.discretize, store, validated.clean
    )
    candidate = run_step(
        "anonymize", anonymize_step, plan.anonymize, store, binned.discretized
    )
    try:
        republished = run_step(
            "republication",
            republication_step,
            plan.republication,
            store,
            candidate.tables,
            ingested.raw,
            validated.quarantine,
            validated.clean,
            binned.discretized,
            ingested.source_sha256,
        )
    except VerificationError as refused:
        record_refusal(plan.verify, "republication", refused)
        raise
    verified = run_step(
        "verify",
        verify_step,
        plan.verify,
        store,
        republished.tables,
        validated.clean,
        ingested.source_sha256,
    )
    assert candidate.evidence is not None
    reported = run_step(
        "utility-report",
        utility_step,
        plan.utility,
        store,
        validated.clean,
        republished.tables,
        candidate.evidence,
        verified.certificate,
    )
    files = release_files(validated, binned, candidate, verified, reported, republished)
    release_dir = run_step(
        "publish",
        publish_step,
        plan.publish,
        ingested.source_sha256,
        files,
        republished.summary,
    )
    return ReleaseOutcome(
        release_dir=Path(release_dir),
        certificate=dict(verified.summary),
        utility=dict(reported.summary),
    )


def _call(name: str, fn: Callable[..., Any], *args: Any) -> Any:
    return fn(*args)


def run_release(config: ReleaseConfig) -> ReleaseOutcome:
    """Run every step in order in this process.

    From a notebook: ``outcome = pipeline.run_release(config.load_config(PATH))``;
    ``outcome.release_dir``, ``outcome.certificate`` and ``outcome.utility``
    hold where the release is, what the verifier found and what it is worth.
    """
    return run_steps(config, run_step=_call)
