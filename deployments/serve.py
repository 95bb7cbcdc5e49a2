"""Serve the monthly releases from this process, without a work pool.

    prefect server start --host 127.0.0.1 --port 4200 --analytics-off &
    PREFECT_API_URL=http://127.0.0.1:4200/api python deployments/serve.py

Schedules and parameters are read from deployments/prefect.yaml, their only home.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml
from prefect import serve

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flows.release import release  # noqa: E402


def deployments_from_yaml(path: Path = ROOT / "deployments" / "prefect.yaml"):
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    for entry in spec["deployments"]:
        cron = entry["schedules"][0]["cron"]
        yield release.to_deployment(
            name=entry["name"],
            cron=cron,
            parameters=entry["parameters"],
            description=entry.get("description"),
        )


if __name__ == "__main__":
    serve(*deployments_from_yaml())
