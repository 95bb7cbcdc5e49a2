"""Core modules stay small enough to have one job, and a public name means one thing.

A module above :data:`MAX_LINES` lines does several jobs; the ones listed in
:data:`TO_SPLIT` are being split and the list only shrinks: an entry is removed
once its module is under the limit (the test says so). Likewise a public class
or function is defined in one module of ``src/ppdm`` only, except the pairs
in :data:`TO_RENAME`, which are to be renamed.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "ppdm"
MAX_LINES = 1_000

#: Modules above the limit that are to be split, each to under MAX_LINES lines.
TO_SPLIT: dict[str, str] = {}

#: Public names defined in two modules for different things, to be renamed.
TO_RENAME = {}

#: Module-level names Python itself gives a meaning (PEP 562).
PROTOCOL = {"__getattr__", "__dir__"}


def _lines() -> dict[str, int]:
    return {
        path.relative_to(SRC).as_posix(): len(
            path.read_text(encoding="utf-8").splitlines()
        )
        for path in sorted(SRC.rglob("*.py"))
    }


def _public_definitions() -> dict[str, set[str]]:
    """Top-level public class and function names -> the modules defining them."""
    where: dict[str, set[str]] = defaultdict(set)
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in tree.body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                if not node.name.startswith("_") or node.name in PROTOCOL:
                    where[node.name].add(path.relative_to(SRC).as_posix())
    return where


def test_the_scan_sees_every_module():
    """Cross-check: the scan finds known modules with their known shape."""
    lines = _lines()
    assert "algorithms/approx_ac.py" in lines and "release/audit.py" in lines
    assert all(count > 0 for count in lines.values())
    where = _public_definitions()
    assert where["ApproxAC"] == {"algorithms/approx_ac.py"}
    assert "algorithms/base.py" in where["Anonymizer"]


def test_no_module_is_above_the_limit_unless_it_is_being_split():
    lines = _lines()
    over = {name: count for name, count in lines.items() if count > MAX_LINES}
    unlisted = {name: count for name, count in over.items() if name not in TO_SPLIT}
    assert not unlisted, (
        f"modules above {MAX_LINES} lines: {unlisted}; split each by what its code "
        "does (one job a module)"
    )


def test_the_split_list_only_shrinks():
    lines = _lines()
    done = sorted(name for name in TO_SPLIT if lines.get(name, 0) <= MAX_LINES)
    assert not done, (
        f"{done} are under {MAX_LINES} lines now: remove them from TO_SPLIT"
    )


def test_each_public_name_is_defined_once():
    where = _public_definitions()
    twice = {
        name: modules
        for name, modules in where.items()
        if len(modules) > 1 and name not in PROTOCOL
    }
    unlisted = {n: sorted(m) for n, m in twice.items() if TO_RENAME.get(n) != m}
    assert not unlisted, f"public names defined in more than one module: {unlisted}"
    renamed = sorted(name for name in TO_RENAME if name not in twice)
    assert not renamed, f"{renamed} are defined once now: remove them from TO_RENAME"
