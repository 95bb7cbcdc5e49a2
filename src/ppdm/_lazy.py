"""pandas, imported when first used rather than when a module is imported.

``ppdm algorithms`` and a configuration error must answer in well under a
second, and importing pandas alone takes about a second on a 2-core machine.
The configuration and the algorithm listing read the pandas-free algorithm
registry (:mod:`ppdm.algorithm_registry`) and every module outside that
boundary imports pandas plainly. The privacy models and the feature-selection
helpers the configuration imports through :mod:`ppdm.privacy` still hold the
requirement's description and its evaluation on tables in the same modules;
until the two are apart, they refer to pandas through :data:`pandas`, which
imports the real module on its first attribute access.
``tests/test_layering.py`` lists those modules (the list may only shrink) and
checks that the configuration leaves pandas unimported.

The standard library's ``importlib.util.LazyLoader`` does not serve here: it
replaces the entry in ``sys.modules``, and the next ``import pandas``
statement anywhere loads the module at once (the import system reads the
module's ``__spec__``).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["pandas"]


class _ModuleOnFirstUse:
    """Stands for the module ``name`` and imports it on first attribute access."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        module: ModuleType = importlib.import_module(self._name)
        # Later look-ups find the module's names directly, without this hook.
        self.__dict__.update(vars(module))
        return getattr(module, attribute)

    def __repr__(self) -> str:
        return f"<{self._name}, imported on first use>"


pandas: Any = _ModuleOnFirstUse("pandas")
