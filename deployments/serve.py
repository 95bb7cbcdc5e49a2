"""Serve the monthly releases from this process, without a work pool.

    prefect server start --host 127.0.0.1 --port 4200 --analytics-off &
    PREFECT_API_URL=http://127.0.0.1:4200/api python deployments/serve.py

Schedules and parameters are read from deployments/prefect.yaml, their only home.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from prefect import serve

from ppdm.config import parse_config
from ppdm.flows.serve import (
    DEFAULT_TIMEZONE,
    deployment_parameters,
    schedule,
    servable_release,
)

ROOT = Path(__file__).resolve().parent.parent


def deployments_from_yaml(path: Path = ROOT / "deployments" / "prefect.yaml"):
    """The deployments of prefect.yaml, built as ``ppdm serve`` builds its one."""
    release = servable_release()
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    for entry in spec["deployments"]:
        config = parse_config(
            entry["parameters"]["config"], origin=f"{path} ({entry['name']})"
        )
        yield release.to_deployment(
            name=entry["name"],
            schedules=[
                schedule(cron=s["cron"], timezone=s.get("timezone", DEFAULT_TIMEZONE))
                for s in entry["schedules"]
            ],
            parameters=deployment_parameters(config),
            description=entry.get("description"),
        )


if __name__ == "__main__":
    serve(*deployments_from_yaml())
