"""Hatch build hook: the editable install finds ``ppdm.flows`` and ``ppdm.tasks``.

A wheel ships the repository's top-level ``flows/`` and ``tasks/`` folders as
``ppdm.flows`` and ``ppdm.tasks`` (the ``sources`` mapping in pyproject.toml).
Hatchling cannot install such a mapping in development mode: an editable
build stops with "Dev mode installations are unsupported when any path rewrite
in the `sources` option changes a prefix rather than removes it"
(pypa/hatch#1928). So the editable wheel puts ``src/`` on ``sys.path``
(``dev-mode-dirs``) and this hook adds a module and a ``.pth`` file that load a
small import finder mapping exactly the ``sources`` entries below ``ppdm/`` to
their folders in the checkout. Nothing else is exposed: ``import flows`` and
``import tasks`` fail in an editable install as they do in a wheel's.

The standard (non-editable) wheel is left untouched.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PACKAGE = "ppdm"
MODULE = "_ppdm_editable_subpackages"

FINDER = '''"""ppdm's editable install: {names} are folders of the checkout {root}."""

import importlib.util
import os
import sys

MAPPING = {mapping!r}


class SubpackageFinder:
    """Find each mapped subpackage in its checkout folder; nothing else."""

    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        location = MAPPING.get(fullname)
        if location is None:
            return None
        return importlib.util.spec_from_file_location(
            fullname,
            os.path.join(location, "__init__.py"),
            submodule_search_locations=[location],
        )

    @classmethod
    def invalidate_caches(cls):
        pass


if not any(getattr(f, "MAPPING", None) == MAPPING for f in sys.meta_path):
    SubpackageFinder.MAPPING = MAPPING
    sys.meta_path.insert(0, SubpackageFinder)
'''


def subpackage_mapping(root: str, sources: dict[str, str]) -> dict[str, str]:
    """``{"ppdm.flows": "<root>/flows", ...}`` from the wheel's ``sources``.

    ``sources`` maps a folder of the repository (``"flows/"``) to its place in
    the wheel (``"ppdm/flows/"``); only folders placed *below* ``ppdm/`` need
    the finder (``src/ppdm`` itself is on the path through ``dev-mode-dirs``).
    """
    mapping = {}
    for source, target in sources.items():
        parts = [part for part in target.replace(os.sep, "/").split("/") if part]
        if len(parts) > 1 and parts[0] == PACKAGE:
            folder = os.path.normpath(os.path.join(root, source))
            if not os.path.isfile(os.path.join(folder, "__init__.py")):
                raise ValueError(
                    f"sources maps {source!r} to {target!r}, but {folder} has no "
                    "__init__.py; allowed: a package folder"
                )
            mapping[".".join(parts)] = folder
    return mapping


class EditableSubpackagesHook(BuildHookInterface):
    """Add the subpackage finder to editable wheels (see the module docstring)."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version != "editable":
            return
        mapping = subpackage_mapping(self.root, self.build_config.sources)
        if not mapping:
            return
        self._scratch = tempfile.mkdtemp(prefix="ppdm-editable-")
        finder = os.path.join(self._scratch, f"{MODULE}.py")
        with open(finder, "w", encoding="utf-8") as handle:
            handle.write(
                FINDER.format(
                    names=", ".join(sorted(mapping)), root=self.root, mapping=mapping
                )
            )
        pth = os.path.join(self._scratch, f"{MODULE}.pth")
        with open(pth, "w", encoding="utf-8") as handle:
            handle.write(f"import {MODULE}\n")
        build_data["force_include_editable"][finder] = f"{MODULE}.py"
        build_data["force_include_editable"][pth] = f"{MODULE}.pth"

    def finalize(
        self, version: str, build_data: dict[str, Any], artifact_path: str
    ) -> None:
        scratch = getattr(self, "_scratch", None)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
