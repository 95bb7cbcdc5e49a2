"""deployments/prefect.yaml stays consistent with the flow and the shipped configs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ppdm.config import default_config, parse_config

ROOT = Path(__file__).resolve().parents[2]


def test_each_deployment_releases_its_datasets_shipped_default():
    spec = yaml.safe_load((ROOT / "deployments" / "prefect.yaml").read_text())
    datasets = []
    for entry in spec["deployments"]:
        config = parse_config(entry["parameters"]["config"], origin=entry["name"])
        assert config == default_config(config.dataset), entry["name"]
        datasets.append(config.dataset)
    assert sorted(datasets) == ["adult", "german"]


def test_each_deployment_points_at_the_installed_release_flow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Module-path entrypoints: Prefect loads the installed flow from any directory."""
    from prefect.flows import load_flow_from_entrypoint

    from ppdm.flows.release import release

    spec = yaml.safe_load((ROOT / "deployments" / "prefect.yaml").read_text())
    monkeypatch.chdir(tmp_path)  # no checkout folder to resolve a file path against
    for entry in spec["deployments"]:
        assert entry["entrypoint"] == "ppdm.flows.release:release", entry["name"]
        assert load_flow_from_entrypoint(entry["entrypoint"]) is release
        assert release.name == "release"
