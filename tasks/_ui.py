"""Prefect UI glue shared by the tasks: artifact keys and summaries."""

from __future__ import annotations

import re
from typing import Any

from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import INPUTS, TASK_SOURCE, CacheKeyFnPolicy

from ppdm.config import ReleaseConfig
from ppdm.pipeline import store_for

__all__ = ["artifact_key", "table_artifact", "markdown_artifact", "STEP_CACHE"]


def _store_generation(context: Any, parameters: dict[str, Any]) -> str:
    return store_for(parameters["config"]).generation()


#: Deterministic steps are cached on their inputs (content-addressed references
#: and the config), their source, and the artifact store's generation: a store
#: that was deleted and made anew invalidates every reference into the old one.
STEP_CACHE = INPUTS + TASK_SOURCE + CacheKeyFnPolicy(cache_key_fn=_store_generation)


def artifact_key(config: ReleaseConfig, step: str) -> str:
    """Prefect artifact keys allow lowercase letters, digits and dashes only."""
    return re.sub(r"[^a-z0-9-]+", "-", f"{config.dataset}-{step}".lower()).strip("-")


def table_artifact(
    config: ReleaseConfig, step: str, rows: list[dict[str, Any]], description: str
) -> None:
    create_table_artifact(
        key=artifact_key(config, step), table=rows, description=description
    )


def markdown_artifact(
    config: ReleaseConfig, step: str, markdown: str, description: str
) -> None:
    create_markdown_artifact(
        key=artifact_key(config, step), markdown=markdown, description=description
    )
