"""The ``compute:`` section, and the old sections it replaces.

Configurations written before ``compute:`` spread where the work runs over
``engine``, ``parallel``, ``out_of_core`` and ``verification``. They keep
loading into the same ``compute`` values (so the same run), ``ppdm run``
says once per old section which keys replace it, and an old key given next
to its ``compute`` key is one error line.
"""

from __future__ import annotations

import pytest
import yaml

from ppdm.compute_config import LEGACY_SECTIONS, ComputeConfig
from ppdm.config import ConfigError, ReleaseConfig, default_config, parse_config
from ppdm.flows.cli import main
from ppdm.release.manifest import identity_config, public_config


def _german(**sections) -> dict:
    """German's shipped configuration as written (no compute), with ``sections``."""
    from ppdm import resources

    data = yaml.safe_load(resources.config_file("german").read_text())
    data.update(sections)
    return data


#: Old forms (as the README and docs/out-of-core.md wrote them) and the
#: compute values each one means.
OLD_FORMS = [
    ({}, {}),
    ({"engine": "dask"}, {"engine": "dask"}),
    (
        {
            "engine": "dask",
            "out_of_core": {
                "partition_rows": 250_000,
                "workers": 4,
                "threads_per_worker": 2,
                "memory_limit": "3GB",
                "sample_rows": 100_000,
                "size_threshold_mb": 512.0,
            },
        },
        {
            "engine": "dask",
            "partition_rows": 250_000,
            "workers": 4,
            "threads_per_worker": 2,
            "memory_limit": "3GB",
            "sample_rows": 100_000,
            "size_threshold_mb": 512.0,
        },
    ),
    (
        {"out_of_core": {"address": "tcp://127.0.0.1:8786"}},
        {"address": "tcp://127.0.0.1:8786"},
    ),
    (
        {"parallel": {"runner": "dask", "workers": 3, "processes": True}},
        {"runner": "dask", "workers": 3, "processes": True},
    ),
    (
        {"parallel": {"runner": "dask", "address": "tcp://127.0.0.1:8786"}},
        {"runner": "dask", "address": "tcp://127.0.0.1:8786"},
    ),
    ({"parallel": {"runner": "threads"}}, {"runner": "threads"}),
    (
        {"verification": {"engine": "dask", "size_threshold_mb": 64}},
        {"verify_engine": "dask", "verify_threshold_mb": 64.0},
    ),
    (
        # Two sections that agree on the one key they share.
        {
            "engine": "pandas",
            "verification": {"engine": "pandas", "memory_limit": "1GB"},
            "out_of_core": {"memory_limit": "1GB", "workers": 2},
            "parallel": {"runner": "none", "workers": 2},
        },
        {
            "engine": "pandas",
            "verify_engine": "pandas",
            "memory_limit": "1GB",
            "workers": 2,
            "runner": "none",
        },
    ),
]


@pytest.mark.parametrize(("old", "expected"), OLD_FORMS)
def test_old_sections_give_the_same_compute_values(old, expected):
    config = parse_config(_german(**old))
    assert config.compute == ComputeConfig(**expected)
    # The new form of the same file is the same configuration, and the same
    # release (its identity), with no note.
    new = parse_config(_german(compute=expected))
    assert new.model_dump() == config.model_dump() and new.deprecations == ()
    assert identity_config(public_config(new)) == identity_config(public_config(config))
    assert len(config.deprecations) == len(old)
    for section, note in zip(old, config.deprecations, strict=True):
        assert note.startswith(f"'{section}:' is deprecated")
        assert all(
            f"compute.{key}" in note for key in LEGACY_SECTIONS[section].values()
        )


def test_the_defaults_are_those_of_the_old_sections():
    compute = default_config("german").compute
    assert (compute.runner, compute.engine, compute.verify_engine) == (
        "none",
        "auto",
        "auto",
    )
    assert (compute.workers, compute.threads_per_worker, compute.processes) == (
        2,
        1,
        False,
    )
    assert (compute.memory_limit, compute.address) == ("2GB", None)
    assert (compute.partition_rows, compute.sample_rows) == (250_000, 200_000)
    assert (compute.size_threshold_mb, compute.verify_threshold_mb) == (1024.0, 256.0)


def test_an_old_manifest_has_the_identity_of_its_new_form():
    """A release recorded before compute: is found again by the same config."""
    old_record = {
        **public_config(parse_config(_german())),
        "engine": "auto",
        "parallel": {"runner": "dask", "workers": 4, "threads_per_worker": 1,
                     "processes": False, "address": None},
        "out_of_core": {"size_threshold_mb": 1024.0, "partition_rows": 250_000,
                        "workers": 2, "threads_per_worker": 1,
                        "memory_limit": "2GB", "address": None,
                        "sample_rows": 200_000},
        "verification": {"engine": "auto", "size_threshold_mb": 256.0,
                         "memory_limit": "2GB"},
    }  # fmt: skip
    del old_record["compute"]
    config = parse_config(_german(compute={"runner": "dask", "workers": 4}))
    assert identity_config(old_record) == identity_config(public_config(config))
    # Known answer: the rule releases were identified by before compute:
    # (parallel, the locations and out_of_core's cluster keys left out), so
    # a configuration keeps its release id.
    cluster = ("workers", "threads_per_worker", "memory_limit", "address")
    before = {
        k: v
        for k, v in old_record.items()
        if k not in ("output_dir", "work_dir", "hierarchies", "schema", "audit_key",
                     "parallel", "privacy_budget")
    }  # fmt: skip
    before["out_of_core"] = {
        k: v for k, v in before["out_of_core"].items() if k not in cluster
    }
    assert identity_config(public_config(config)) == before
    moved = parse_config(_german(compute={"partition_rows": 1000}))
    assert identity_config(old_record) != identity_config(public_config(moved))


@pytest.mark.parametrize(
    ("sections", "expected"),
    [
        (
            {"parallel": {"runner": "dask", "workers": 4}, "compute": {"workers": 4}},
            "parallel.workers and compute.workers both set one key: keep "
            "compute.workers and remove parallel.workers",
        ),
        (
            {"engine": "dask", "compute": {"engine": "dask"}},
            "engine and compute.engine both set one key",
        ),
        (
            {"verification": {"engine": "dask"}, "compute": {"verify_engine": "auto"}},
            "verification.engine and compute.verify_engine both set one key",
        ),
        (
            {"parallel": {"runner": "dask", "workers": 4}, "out_of_core": {"workers": 2}},
            "parallel.workers = 4 and out_of_core.workers = 2 now set one key, "
            "compute.workers",
        ),
        (
            {"verification": {"memory_limit": "1GB"}, "out_of_core": {"memory_limit": "3GB"}},
            "verification.memory_limit = '1GB' and out_of_core.memory_limit = '3GB' "
            "now set one key, compute.memory_limit",
        ),
        (
            {"out_of_core": {"partition_row": 5}},
            "unknown key 'out_of_core.partition_row'; allowed keys of out_of_core:",
        ),
        (
            {"parallel": {"address": "tcp://127.0.0.1:8786"}},
            "parallel.address is for runner dask; runner is 'none'",
        ),
        (
            {"out_of_core": {"workers": 0}},
            "out_of_core.workers = 0 is not allowed",
        ),
        (
            {"verification": {"memory_limit": "lots"}},
            "verification.memory_limit = 'lots' is not allowed",
        ),
        ({"compute": {"wokers": 2}}, "unknown key 'compute.wokers' (did you mean"),
    ],
)  # fmt: skip
def test_a_key_set_twice_or_wrong_is_one_line(sections, expected):
    with pytest.raises(ConfigError) as err:
        parse_config(_german(**sections), origin="old.yaml")
    message = str(err.value)
    assert message.startswith("config old.yaml: ") and "\n" not in message
    assert expected in message


def test_with_overrides_takes_an_old_section_too():
    """A notebook's ``with_overrides(engine=...)`` still replaces the engine."""
    config = default_config("german").with_overrides(
        compute={"workers": 3, "engine": "pandas"}
    )
    changed = config.with_overrides(engine="auto")
    assert changed.compute.engine == "auto" and changed.compute.workers == 3


def test_ppdm_run_prints_one_line_per_old_section(tmp_path, capsys):
    path = tmp_path / "old.yaml"
    old = {"engine": "pandas", "parallel": {"runner": "threads"}}
    path.write_text(yaml.safe_dump(_german(**old)))
    # --dataset contradicts the file: the command stops after reading it,
    # before any step (the notes come first).
    assert main(["run", "--config", str(path), "--dataset", "adult"]) != 0
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if "is deprecated" in line]
    assert notes == [
        f"{path}: {note}" for note in parse_config(_german(**old)).deprecations
    ]
    assert [n.split(": ", 1)[1].split(" ", 1)[0] for n in notes] == [
        "'engine:'",
        "'parallel:'",
    ]
    assert "compute.runner" in notes[1]


def test_a_new_config_prints_no_note(tmp_path, capsys):
    path = tmp_path / "new.yaml"
    path.write_text(yaml.safe_dump(_german(compute={"engine": "pandas"})))
    assert main(["run", "--config", str(path), "--dataset", "adult"]) != 0
    assert "deprecated" not in capsys.readouterr().err


def test_the_schema_describes_every_compute_key():
    fields = ComputeConfig.model_fields
    assert all(field.description for field in fields.values())
    assert "compute" in ReleaseConfig.model_fields
    for section in ("engine", "parallel", "out_of_core", "verification"):
        assert section not in ReleaseConfig.model_fields


def test_ppdm_compare_prints_the_notes_too(tmp_path, capsys):
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(_german(out_of_core={"workers": 2})))
    args = ["compare", "--config", str(path), "--dataset", "adult", "--k", "5"]
    assert main(args) != 0  # the dataset contradicts the file, after the notes
    err = capsys.readouterr().err
    assert f"{path}: 'out_of_core:' is deprecated" in err
    assert "out_of_core.workers -> compute.workers" in err
