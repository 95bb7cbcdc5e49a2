"""The algorithm classes, by registry name.

What each algorithm is (module, parameters, capabilities) is declared in
:mod:`ppdm.algorithm_registry`, which the configuration and ``ppdm
algorithms`` read without importing this package; importing it imports every
algorithm's module.
"""

from __future__ import annotations

from typing import Any

from ppdm.algorithm_registry import DECLARED, registered
from ppdm.algorithms.base import Anonymizer, validate_spec
from ppdm.exceptions import UnknownAlgorithmError
from ppdm.params import did_you_mean

__all__ = ["ALGORITHMS", "Anonymizer", "get_algorithm", "validate_spec"]

#: The classes of the declared algorithms; a plugin or a test may register
#: one more here (``ppdm.algorithm_registry.registered`` then lists it).
ALGORITHMS: dict[str, type[Anonymizer]] = {
    name: entry.load() for name, entry in DECLARED.items()
}


def get_algorithm(name: str, **params: Any) -> Anonymizer:
    """Instantiate the algorithm registered as ``name`` with ``params``."""
    try:
        cls = ALGORITHMS[name]
    except KeyError:
        hint = did_you_mean(name, ALGORITHMS)
        raise UnknownAlgorithmError(
            f"unknown algorithm {name!r}"
            + (f" ({hint})" if hint else "")
            + f"; registered: {', '.join(sorted(ALGORITHMS))}"
        ) from None
    registered()[name].check_parameter_names(params)
    return cls(**params)
