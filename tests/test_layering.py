"""The core library never imports Prefect, the tasks or the flows; nothing imports
the repository's folders by their own top-level names; validating a configuration
and listing the algorithms import no data library."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "ppdm"
#: Modules the core must not import (with all their submodules).
FORBIDDEN = ("prefect", "prefect_dask", "ppdm.flows", "ppdm.tasks")
#: The repository's folders that install inside ppdm, never as top-level names.
FOLDERS = ("flows", "tasks", "schemas", "deployments")
#: The pandas-free boundary: what validating a configuration and listing the
#: algorithms import. ``ppdm algorithms`` and a configuration error answer in
#: well under a second only while these modules, and everything they import,
#: leave the data libraries unimported; the algorithms are described by the
#: registry, which names their modules without importing them.
PANDAS_FREE = (
    "ppdm.algorithm_registry",
    "ppdm.identifier_names",
    "ppdm.params",
    "ppdm.compute_config",
    "ppdm.privacy",
    "ppdm.config",
    "ppdm.flows.cli",
)
#: Libraries the boundary keeps out. The privacy models and the requirement
#: import none of them: what reads values (``ppdm.privacy.evaluation``,
#: ``measures``, ``result`` and the release models' checks) is imported when a
#: check or a search runs.
DATA_LIBRARIES = (
    "numpy",
    "pandas",
    "pyarrow",
    "sklearn",
    "scipy",
    "dask",
    "great_expectations",
    "prefect",
)


def _imports(path: Path) -> set[str]:
    """Every absolute module an ``import`` or ``from ... import`` names in ``path``.

    ``from ppdm import flows`` counts as ``ppdm.flows`` (it may be a submodule).
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _under(name: str, modules: tuple[str, ...]) -> bool:
    return any(name == module or name.startswith(module + ".") for module in modules)


def test_the_import_scan_sees_every_spelling():
    """Cross-check of ``_imports``/``_under`` on a file of known imports."""
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "m.py"
        path.write_text(
            "import prefect\nfrom ppdm import flows\nimport ppdm.tasks.keys\n"
            "from ppdm.flowsx import y\nfrom . import tasks\nimport flows.cli\n"
        )
        found = _imports(path)
    assert sorted(n for n in found if _under(n, FORBIDDEN)) == [
        "ppdm.flows",
        "ppdm.tasks.keys",
        "prefect",
    ]
    assert sorted(n for n in found if _under(n, FOLDERS)) == ["flows.cli"]


def test_core_imports_nothing_from_the_upper_layers():
    modules = sorted(SRC.rglob("*.py"))
    assert len(modules) > 10
    offenders = {
        str(p.relative_to(SRC)): sorted(n for n in _imports(p) if _under(n, FORBIDDEN))
        for p in modules
    }
    assert {path: names for path, names in offenders.items() if names} == {}


_BOUNDARY_IMPORTS = """
import importlib, sys
libraries, modules = sys.argv[1].split(","), sys.argv[2:]
for module in modules:
    importlib.import_module(module)
    pulled = [name for name in libraries if name in sys.modules]
    if "ppdm.algorithms" in sys.modules:
        pulled.append("ppdm.algorithms")
    print(module, *pulled)
"""


def test_the_configuration_and_the_listing_import_no_data_library():
    """Each boundary module, imported in a fresh interpreter, pulls in nothing heavy.

    The modules are imported one by one, so a failure names the first that
    pulls a data library (or the algorithms' bodies) in.
    """
    done = subprocess.run(
        [sys.executable, "-c", _BOUNDARY_IMPORTS, ",".join(DATA_LIBRARIES)]
        + list(PANDAS_FREE),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == list(PANDAS_FREE)


_VALIDATE_CONFIGURATIONS = """
import sys
from ppdm.config import ConfigError, load_config
libraries, paths = sys.argv[1].split(","), sys.argv[2:]
for path in paths:
    config = load_config(path)
    requirement = config.requirement
    assert requirement.to_dict()["models"], path
    print(path, str(requirement.minimal_class_size), *[
        name for name in libraries if name in sys.modules])
try:
    load_config(paths[0], overrides={"k": 0})
except ConfigError:
    print("refused", *[name for name in libraries if name in sys.modules])
"""


def test_validating_every_shipped_configuration_loads_no_data_library():
    """Beyond imports: reading each configuration, building its requirement
    (models made from their descriptions) and refusing a bad k run no code
    that loads numpy, pandas or the others (a fresh interpreter)."""
    paths = sorted(str(path) for path in (ROOT / "configs").glob("*.yaml"))
    assert len(paths) >= 5
    done = subprocess.run(
        [sys.executable, "-c", _VALIDATE_CONFIGURATIONS, ",".join(DATA_LIBRARIES)]
        + paths,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "refused"
    assert [line.split()[0] for line in lines[:-1]] == paths
    # Each line is the path and the requirement's smallest class, nothing after.
    assert all(len(line.split()) == 2 for line in lines[:-1]), lines


def test_the_boundary_check_sees_a_module_that_imports_pandas():
    """Cross-check: a module known to import pandas is reported, with the name."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _BOUNDARY_IMPORTS,
            "pandas",
            "ppdm.params",
            "ppdm.model",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.splitlines() == ["ppdm.params", "ppdm.model pandas"]


def test_nothing_imports_the_folders_by_a_top_level_name():
    """flows/ and tasks/ are ppdm.flows and ppdm.tasks, in a checkout as installed."""
    modules = [
        path
        for folder in ("src", "flows", "tasks", "tests", "benchmarks", "deployments")
        for path in sorted((ROOT / folder).rglob("*.py"))
    ]
    assert len(modules) > 50
    offenders = {
        str(p.relative_to(ROOT)): sorted(n for n in _imports(p) if _under(n, FOLDERS))
        for p in modules
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_development_install_maps_the_folders_under_ppdm_only(tmp_path):
    """In the editable install too, flows/ and tasks/ are ppdm.flows and ppdm.tasks only.

    Run from a directory outside the checkout, so that nothing comes from the
    working directory (hatch_build.py's finder serves the two subpackages).
    """
    code = (
        "import importlib.util as u, json, ppdm, ppdm.flows.cli, ppdm.tasks.keys\n"
        "print(json.dumps([[m.__file__ for m in (ppdm, ppdm.flows, ppdm.tasks)],\n"
        "    [u.find_spec(n) is None for n in ('flows', 'tasks', 'schemas')]]))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    files, absent = json.loads(result.stdout)
    assert files == [
        str(SRC / "__init__.py"),
        str(ROOT / "flows" / "__init__.py"),
        str(ROOT / "tasks" / "__init__.py"),
    ]
    assert absent == [True, True, True]


def test_tasks_stay_thin():
    tasks = ROOT / "tasks"
    for path in tasks.glob("*.py"):
        assert "ppdm.algorithms." not in path.read_text(), path


def test_tasks_find_no_files_of_their_own():
    """Hierarchies, schemas and configs reach a task as arguments, never by path."""
    tasks = ROOT / "tasks"
    for path in tasks.glob("*.py"):
        text = path.read_text()
        assert "__file__" not in text and "hierarchies" not in text, path
        assert "from schemas" not in text and "get_schema" not in text, path


def test_the_flow_runs_the_core_order_of_steps():
    flow = (ROOT / "flows" / "release.py").read_text()
    assert "run_steps(" in flow
    # No step function is called here, in another order.
    steps = "ingest|validate|discretize|anonymize|verify|utility|publish"
    assert not re.search(rf"\b({steps})_step\b", flow)


def test_a_wheel_carries_the_data_files_inside_the_package():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["force-include"] == {
        "hierarchies": "ppdm/_data/hierarchies",
        "configs": "ppdm/_data/configs",
        "schemas": "ppdm/_data/schemas",
    }
    for source in wheel["force-include"]:
        assert (ROOT / source).is_dir()


def test_a_wheel_installs_every_folder_under_ppdm():
    """flows/ and tasks/ become ppdm.flows and ppdm.tasks; nothing else is top level."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["sources"] == {
        "src/ppdm": "ppdm",
        "flows": "ppdm/flows",
        "tasks": "ppdm/tasks",
    }
    assert sorted(wheel["only-include"]) == sorted(wheel["sources"])
    for source in wheel["sources"]:
        assert (ROOT / source / "__init__.py").is_file()
    assert project["project"]["scripts"] == {"ppdm": "ppdm.flows.cli:main"}
