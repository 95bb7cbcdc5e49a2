"""deployments/prefect.yaml stays consistent with the flow and the shipped configs."""

from __future__ import annotations

from pathlib import Path

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


def test_each_deployment_points_at_the_release_flow():
    from flows.release import release

    spec = yaml.safe_load((ROOT / "deployments" / "prefect.yaml").read_text())
    for entry in spec["deployments"]:
        path, name = entry["entrypoint"].split(":")
        assert (ROOT / path).is_file() and path == "flows/release.py"
        assert name == "release" and release.name == "release"
