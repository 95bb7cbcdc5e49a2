"""The core library never imports Prefect, the tasks, the flows or the schemas."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "ppdm"
FORBIDDEN = {"prefect", "prefect_dask", "tasks", "flows"}


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


def test_tasks_find_no_files_of_their_own():
    """Hierarchies, schemas and configs reach a task as arguments, never by path."""
    tasks = Path(__file__).resolve().parent.parent / "tasks"
    for path in tasks.glob("*.py"):
        text = path.read_text()
        assert "__file__" not in text and "hierarchies" not in text, path
        assert "from schemas" not in text and "get_schema" not in text, path


def test_the_flow_runs_the_core_order_of_steps():
    flow = (Path(__file__).resolve().parent.parent / "flows" / "release.py").read_text()
    assert "run_steps(" in flow
    # No step function is called here, in another order.
    steps = "ingest|validate|discretize|anonymize|verify|utility|publish"
    assert not re.search(rf"\b({steps})_step\b", flow)


def test_a_wheel_carries_the_data_files_inside_the_package():
    import tomllib

    root = Path(__file__).resolve().parent.parent
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["force-include"] == {
        "hierarchies": "ppdm/_data/hierarchies",
        "configs": "ppdm/_data/configs",
        "schemas": "ppdm/_data/schemas",
    }
    for source in wheel["force-include"]:
        assert (root / source).is_dir()
    assert "src/ppdm" in wheel["packages"]
