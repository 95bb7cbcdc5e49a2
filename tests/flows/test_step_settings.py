"""Each step reads only its slice of the configuration, so its cache key is exact.

In-process: the slices themselves, and the cache keys the tasks' policies make of
them (no flow run). The end-to-end proof on Prefect is in test_release_flow.py.
"""

from __future__ import annotations

import json
import shutil
from types import SimpleNamespace

import pytest

from ppdm import pipeline
from ppdm.config import default_config, default_work_dir
from ppdm.flows.release import TASKS
from ppdm.release.artifacts import ArtifactRef
from ppdm.steps import base as steps_base
from ppdm.tasks._ui import STEP_CACHE

#: ReleasePlan attribute of each step name.
FIELDS = {name: name.split("-")[0] for name in pipeline.STEPS}


def _base(tmp_path):
    return default_config("german").with_overrides(
        output_dir=str(tmp_path / "out"), work_dir=str(tmp_path / "store")
    )


def _changed_steps(before, after) -> set[str]:
    one, two = pipeline.plan_release(before), pipeline.plan_release(after)
    return {
        name
        for name, attribute in FIELDS.items()
        if getattr(one, attribute) != getattr(two, attribute)
    }


# Every change re-makes the publication (the manifest records the whole config).
@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"utility": {"test_size": 0.25}}, {"utility-report"}),
        ({"output_dir": "elsewhere"}, {"verify"}),  # where a rejection is logged
        ({"work_dir": "another-store"}, set()),
        # The republication step shuffles what it changes with the seed and
        # judges differences with the requirement.
        ({"seed": 3}, {"anonymize", "republication", "utility-report"}),
        ({"k": 7}, {"anonymize", "republication", "verify", "utility-report"}),
        ({"republication": {"policy": "refuse"}}, {"republication", "publish"}),
        ({"suppression_limit": 0.05}, {"anonymize", "utility-report"}),
        ({"algorithm": "kactus"}, {"anonymize", "verify", "utility-report"}),
        (
            {"algorithm": "lattice-optimal"},  # raw numbers: nothing is binned
            {"discretize", "anonymize", "verify", "utility-report"},
        ),
        ({"validation": {"max_rejected_fraction": 0.1}}, {"validate"}),
        ({"discretize": {"n_bins": 8}}, set()),  # MDL reads no n_bins
        (
            {"discretize": {"method": "equal-frequency"}},
            {"discretize", "utility-report"},  # the report refits on its split
        ),
        ({"compute": {"verify_engine": "dask"}}, {"verify"}),
        (
            {"source": {"kind": "csv", "path": "german.csv"}},
            {"ingest", "validate"},
        ),
    ],
)
def test_a_change_reaches_exactly_the_steps_that_read_it(tmp_path, change, expected):
    before = _base(tmp_path)
    after = before.with_overrides(**change)
    assert _changed_steps(before, after) == expected | {"publish"}


def test_slices_carry_the_config_values(tmp_path):
    config = _base(tmp_path).with_overrides(algorithm="lattice-optimal", seed=11)
    plan = pipeline.plan_release(config)
    assert plan.anonymize.requirement is config.requirement  # built once
    assert (plan.anonymize.seed, plan.anonymize.algorithm) == (11, "lattice-optimal")
    assert plan.discretize.method == "none"
    assert plan.anonymize.hierarchies.attributes == tuple(
        sorted(p.stem for p in config.hierarchy_dir.iterdir())
    )
    assert plan.store.root == (tmp_path / "store").resolve()
    assert plan.verify.audit_log == str((tmp_path / "out" / "audit.jsonl").resolve())
    # The default store is outside the output directory (which may be shared).
    plain = default_config("german").with_overrides(output_dir=str(tmp_path / "o"))
    assert pipeline.store_for(plain).root == default_work_dir().resolve()
    assert not pipeline.store_for(plain).root.is_relative_to(tmp_path / "o")


def test_mondrian_gets_no_hierarchies_but_the_verifier_does(tmp_path):
    plan = pipeline.plan_release(_base(tmp_path))
    assert plan.anonymize.hierarchies is None
    assert plan.verify.hierarchies is not None
    assert plan.utility.hierarchies == plan.verify.hierarchies


def test_hierarchies_are_keyed_by_content_not_place(tmp_path):
    shipped = default_config("german").hierarchy_dir
    copy = tmp_path / "copy"
    copy.mkdir()
    for path in shipped.iterdir():
        (copy / path.name).write_bytes(path.read_bytes())
    here = steps_base.HierarchySource.of(shipped)
    there = steps_base.HierarchySource.of(copy)
    assert here.directory != there.directory
    assert here.model_dump() == there.model_dump()  # what a cache key hashes
    (copy / "job.csv").write_bytes((copy / "job.csv").read_bytes() + b"\n")
    assert steps_base.HierarchySource.of(copy).sha256 != here.sha256


def _anonymize_key(config, discretized: ArtifactRef) -> str:
    plan = pipeline.plan_release(config)
    return STEP_CACHE.compute_key(
        task_ctx=SimpleNamespace(task=TASKS["anonymize"]),
        inputs={
            "settings": plan.anonymize,
            "store": plan.store,
            "discretized": discretized,
        },
        flow_parameters={},
    )


def test_the_anonymize_cache_key_ignores_what_anonymize_does_not_read(tmp_path):
    ref = ArtifactRef(str(tmp_path / "store" / "ab" / "ab.parquet"), "ab", "x", 3)
    base = _base(tmp_path)
    key = _anonymize_key(base, ref)
    unrelated = base.with_overrides(
        utility={"test_size": 0.2}, output_dir=str(tmp_path / "elsewhere")
    )
    assert _anonymize_key(unrelated, ref) == key
    assert _anonymize_key(base.with_overrides(seed=1), ref) != key
    assert _anonymize_key(base.with_overrides(algorithm="kactus"), ref) != key
    other = ArtifactRef(ref.path, "cd", "x", 3)
    assert _anonymize_key(base, other) != key
    # A new store (here: another work_dir) is a new generation: recompute.
    moved = base.with_overrides(work_dir=str(tmp_path / "fresh"))
    assert _anonymize_key(moved, ref) != key


def test_the_validate_cache_key_follows_the_contract_not_its_place(tmp_path):
    ref = ArtifactRef(str(tmp_path / "raw.parquet"), "ef", "raw-snapshot", 3)

    def key(config):
        plan = pipeline.plan_release(config)
        return STEP_CACHE.compute_key(
            task_ctx=SimpleNamespace(task=TASKS["validate"]),
            inputs={"settings": plan.validate, "store": plan.store, "raw": ref},
            flow_parameters={},
        )

    base = _base(tmp_path)
    assert key(base.with_overrides(algorithm="kactus", k=3)) == key(base)
    folder = tmp_path / "contract"
    shutil.copytree(base.schema_dir, folder)
    assert key(base.with_overrides(schema=str(folder))) == key(base)  # moved, same
    suite = json.loads((folder / "suite.json").read_text())
    suite["expectations"] = suite["expectations"][1:]
    (folder / "suite.json").write_text(json.dumps(suite))
    assert key(base.with_overrides(schema=str(folder))) != key(base)
    # Which columns leave the building is part of what validate makes.
    unreleased = base.with_overrides(columns={**base.columns, "telephone": "weight"})
    assert key(unreleased) == key(base)  # dropped either way
    more = base.with_overrides(columns={**base.columns, "duration": "drop"})
    assert key(more) != key(base)


def test_the_flow_has_one_task_per_core_step_with_its_retries_and_cache():
    assert tuple(TASKS) == pipeline.STEPS
    assert {name: task.name for name, task in TASKS.items()} == {
        name: name for name in pipeline.STEPS
    }
    io_steps = {"ingest", "publish"}
    assert {name for name, task in TASKS.items() if task.retries} == io_steps
    cached = {
        name
        for name, task in TASKS.items()
        if type(task.cache_policy).__name__ != "_None"
    }
    assert cached == {
        "validate",
        "discretize",
        "anonymize",
        "republication",
        "utility-report",
    }


def test_a_new_version_of_the_core_library_never_reuses_a_cached_step(
    tmp_path, monkeypatch
):
    from ppdm.release import provenance

    ref = ArtifactRef(str(tmp_path / "store" / "ab" / "ab.parquet"), "ab", "x", 3)
    base = _base(tmp_path)
    key = _anonymize_key(base, ref)
    assert len(provenance.source_fingerprint()) == 64
    # What an edited discretizer or algorithm changes: the sources' hash.
    monkeypatch.setattr(provenance, "source_fingerprint", lambda: "0" * 64)
    assert _anonymize_key(base, ref) != key
