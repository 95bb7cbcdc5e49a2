"""The release flow: the core's one order of steps, each step run as its Prefect task."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prefect import Flow, flow

from ppdm import parallel, progress
from ppdm.config import ReleaseConfig
from ppdm.exceptions import OutOfMemoryError
from ppdm.pipeline import STEPS, run_steps
from ppdm.scale.engine import ClusterSettings, run_cluster
from ppdm.tasks import anonymize as anonymize_module
from ppdm.tasks import discretize as discretize_module
from ppdm.tasks import report as report_module
from ppdm.tasks import republication as republication_module
from ppdm.tasks import validate as validate_module
from ppdm.tasks.anonymize import anonymize
from ppdm.tasks.discretize import discretize
from ppdm.tasks.ingest import ingest
from ppdm.tasks.publish import publish
from ppdm.tasks.report import utility_report
from ppdm.tasks.republication import republication
from ppdm.tasks.validate import validate
from ppdm.tasks.verify import verify

#: The Prefect task of each step of :data:`ppdm.pipeline.STEPS`; each task is a
#: thin wrapper of the step function :func:`ppdm.pipeline.run_steps` names.
TASKS = {
    "ingest": ingest,
    "validate": validate,
    "discretize": discretize,
    "anonymize": anonymize,
    "republication": republication,
    "verify": verify,
    "utility-report": utility_report,
    "publish": publish,
}


#: How a step shows its output in the UI (its artifacts). A task shows what it
#: computes; a step served from Prefect's cache is shown again by the flow, so
#: every run's Artifacts tab holds every step.
SHOWN_WHEN_CACHED = {
    "validate": validate_module.show,
    "discretize": discretize_module.show,
    "anonymize": anonymize_module.show,
    "republication": republication_module.show,
    "utility-report": report_module.show,
}


def run_task(name: str, fn: Callable[..., Any], *args: Any) -> Any:
    """Run step ``name`` as its Prefect task (retries, cache policy, UI artifacts).

    A step that runs out of memory fails the run with
    :class:`~ppdm.exceptions.OutOfMemoryError` naming the step (and, where the
    step knows it, the column), which the command line prints as one line.
    """
    progress.step(name, STEPS.index(name) + 1, len(STEPS))
    state = TASKS[name](*args, return_state=True)
    try:
        output = state.result()  # a failed step raises its own error here
    except MemoryError as err:
        raise out_of_memory(name, err) from err
    if state.name == "Cached" and name in SHOWN_WHEN_CACHED:
        SHOWN_WHEN_CACHED[name](args[0], output)
    return output


def out_of_memory(step: str, err: MemoryError) -> OutOfMemoryError:
    """The one-line error of step ``step`` running out of memory."""
    detail = str(err) or "no detail given"
    return OutOfMemoryError(
        f"step {step!r} ran out of memory: {detail}; nothing was published "
        "(give the process more memory, or release fewer rows or columns)"
    )


def run_name() -> str:
    """``<dataset>-<algorithm>-k<k>-<UTC date and time>``: what the operator sees in the UI."""
    from datetime import UTC, datetime

    from prefect.runtime import flow_run

    config = flow_run.parameters["config"]
    if isinstance(config, ReleaseConfig):
        named = config.model_dump(include={"dataset", "algorithm", "k"})
    else:  # a served run gets it as JSON, which the flow's parameter validates
        named = config
    when = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{named.get('dataset')}-{named.get('algorithm')}-k{named.get('k')}-{when}"


@flow(name="release", flow_run_name=run_name, log_prints=True)
def release(config: ReleaseConfig) -> str:
    """Release: ingest, validate, discretize, anonymize, republication, verify, report, publish."""
    mapper = None
    compute = config.compute
    if compute.runner != "none":
        from ppdm.tasks.parallel import prefect_mapper

        mapper = prefect_mapper(compute.workers)
    cluster = ClusterSettings.of(compute)
    with (
        parallel.mapped_by(mapper),
        run_cluster(
            cluster,
            address_of=_dask_runner_address() if compute.runner == "dask" else None,
        ),
    ):
        return str(run_steps(config, run_step=run_task).release_dir)


def _dask_runner_address() -> Callable[[], str] | None:
    """The scheduler address of the flow's Dask task runner, asked for when needed.

    The runner starts its cluster (or connects to ``compute.address``) on
    first use; the steps then connect to the same scheduler rather than
    start a cluster of their own. None when the runner is not Dask's.
    """
    from prefect.context import FlowRunContext
    from prefect_dask import DaskTaskRunner

    context = FlowRunContext.get()
    runner = context.task_runner if context is not None else None
    if not isinstance(runner, DaskTaskRunner):  # the flow run without release_for
        return None
    return lambda: runner.client.scheduler.address


def _runs_on_dask(config: ReleaseConfig) -> bool:
    """Whether the release or its verification is set to run out of core."""
    from ppdm.compute_config import resolve_engine

    return resolve_engine(config) == "dask" or config.compute.verify_engine == "dask"


def preload() -> None:
    """Import what the release's steps will need (validation, learners, plots).

    ``ppdm run`` calls it while its temporary Prefect API starts: on a 2-core
    machine the seconds of these imports then overlap the server's start
    instead of adding to it. The steps import the same modules themselves.
    """
    import great_expectations  # noqa: F401 - the validate step's suite
    import sklearn.tree  # noqa: F401 - the utility report's learners

    import ppdm.utility.report  # noqa: F401 - matplotlib, the report


def release_for(config: ReleaseConfig) -> Flow:
    """The release flow with the task runner ``config.compute`` asks for."""
    from ppdm.flows.runners import release_runner, task_runner

    settings = release_runner(config.compute, out_of_core=_runs_on_dask(config))
    if settings is None:
        return release
    return release.with_options(task_runner=task_runner(settings))
