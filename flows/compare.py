"""The comparison sweep: every algorithm x k on one dataset, as Prefect tasks.

One task per (algorithm, k, repeat, fold) (``compare-fold``), all submitted
to the flow's task runner, then one memory probe per (algorithm, k)
(``compare-memory``, run one at a time in the flow's own thread so that
tracemalloc sees nothing else), then ``compare-publish``, which writes the
comparison's files and publishes the comparison table and the accuracy-vs-k
plot as Prefect artifacts. The core work is :mod:`ppdm.experiments.compare`.

The task runner is chosen by :class:`RunnerSettings`: ``sequential`` (one
thread), ``threads`` (a thread pool), or ``dask`` (Prefect's
``DaskTaskRunner`` on a local cluster, or on an existing scheduler given by
its address). Without a running Prefect API a local Dask cluster should use
threads (``processes=False``): each worker *process* would start its own
temporary Prefect server.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from prefect import flow, task, unmapped
from prefect.cache_policies import NO_CACHE

from ppdm.config import ReleaseConfig
from ppdm.experiments.compare import (
    BASELINE,
    Comparison,
    ComparisonPlan,
    FoldOutcome,
    GridCandidate,
    Split,
    assemble,
    evaluate_fold,
    plan_comparison,
    probe_memory,
    write_outputs,
)
from ppdm.flows.runners import RUNNERS, RunnerSettings, task_runner
from ppdm.utility.learners import MODELS

__all__ = ["RUNNERS", "RunnerSettings", "compare", "compare_sweep", "task_runner"]


@task(name="compare-fold", cache_policy=NO_CACHE)
def compare_fold(
    plan: ComparisonPlan, candidate: GridCandidate, split: Split
) -> FoldOutcome:
    """Compare: anonymize one training half with one (algorithm, k), measure it."""
    return evaluate_fold(plan, candidate, split)


@task(name="compare-memory", cache_policy=NO_CACHE)
def compare_memory(plan: ComparisonPlan, candidate: GridCandidate) -> float:
    """Compare: peak memory of one anonymization (first training half)."""
    return probe_memory(plan, candidate)


@task(name="compare-publish", cache_policy=NO_CACHE)
def compare_publish(
    result: Comparison, out: str, title: str = "", notes: str = ""
) -> dict[str, str]:
    """Compare: write the comparison's files; publish its table and plot."""
    from prefect.artifacts import create_markdown_artifact, create_table_artifact

    paths = write_outputs(result, Path(out), title=title, notes=notes)
    table = result.summary.drop(columns=["reason"]).round(4)
    create_table_artifact(
        key=f"comparison-{_key(result.config['dataset'])}",
        table=table.astype(object).where(table.notna(), None).to_dict(orient="records"),
        description=f"{result.config['dataset']}: every algorithm x k, 5 x 2 CV",
    )
    png = base64.b64encode(paths["plot"].read_bytes()).decode("ascii")
    create_markdown_artifact(
        key=f"comparison-{_key(result.config['dataset'])}-report",
        markdown="\n".join(
            [
                f"# {title or 'Comparison: ' + result.config['dataset']}",
                "",
                *[f"- {s}" for s in result.recommendation],
                "",
                f"![accuracy vs k](data:image/png;base64,{png})",
                "",
                f"Files: `{Path(out).resolve()}`",
            ]
        ),
        description="recommendation and accuracy vs k",
    )
    return {name: str(path) for name, path in paths.items()}


def _key(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")


def compare_sweep(
    plan: ComparisonPlan,
    *,
    runner: str = "",
    title: str = "",
    notes: str = "",
    out: str | None = None,
) -> tuple[Comparison, dict[str, str]]:
    """Inside a flow: submit the fold tasks, probe memory, assemble, publish."""
    import time

    started = time.perf_counter()
    units = plan.units()
    futures = compare_fold.map(
        unmapped(plan), [c for c, _ in units], [s for _, s in units]
    )
    outcomes = [f.result() for f in futures]
    memory = {
        (c.algorithm, c.k): compare_memory(plan, c)
        for c in plan.runnable
        if c.algorithm != BASELINE
    }
    result = assemble(
        plan,
        outcomes,
        memory,
        seconds_total=time.perf_counter() - started,
        runner=runner,
    )
    paths = compare_publish(result, out, title, notes) if out is not None else {}
    return result, paths


@flow(name="compare", log_prints=True)
def compare(
    config: ReleaseConfig,
    ks: list[int],
    out: str,
    algorithms: list[str] | None = None,
    params: dict[str, dict[str, Any]] | None = None,
    sample: int | None = None,
    models: list[str] | None = None,
    runner: str = "sequential (one thread)",
    title: str = "",
    notes: str = "",
) -> Comparison:
    """Compare: every registered algorithm x k on one dataset, the same 5 x 2 folds.

    Run it with a task runner of choice:
    ``compare.with_options(task_runner=task_runner(settings))(...)``.
    """
    plan = plan_comparison(
        config,
        ks,
        algorithms=algorithms,
        params=params,
        sample=sample,
        models=tuple(models or MODELS),
    )
    print(
        f"{config.dataset}: {len(plan.table)} rows; algorithms "
        f"{', '.join(plan.algorithms)}; k {plan.ks}; {len(plan.units())} fold units"
    )
    result, _ = compare_sweep(plan, runner=runner, title=title, notes=notes, out=out)
    return result
