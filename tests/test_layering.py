"""The core library never imports Prefect, the tasks, the flows or the schemas."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "ppdm"
FORBIDDEN = {"prefect", "prefect_dask", "tasks", "flows", "schemas"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_core_imports_nothing_from_the_upper_layers():
    modules = sorted(SRC.rglob("*.py"))
    assert len(modules) > 10
    offenders = {
        str(p.relative_to(SRC)): sorted(_imports(p) & FORBIDDEN)
        for p in modules
        if _imports(p) & FORBIDDEN
    }
    assert offenders == {}


def test_tasks_stay_thin():
    tasks = Path(__file__).resolve().parent.parent / "tasks"
    for path in tasks.glob("*.py"):
        assert "ppdm.algorithms." not in path.read_text(), path
