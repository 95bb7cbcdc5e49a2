"""The algorithm registry: one module per algorithm, one line per entry here."""

from __future__ import annotations

from typing import Any

from ppdm.algorithms.approx_ac import ApproxAC
from ppdm.algorithms.base import Anonymizer, validate_spec
from ppdm.algorithms.dmpd import Dmpd
from ppdm.algorithms.fs_anonymity import FsAnonymity
from ppdm.algorithms.kactus import Kactus
from ppdm.algorithms.lattice_optimal import LatticeOptimal
from ppdm.algorithms.mondrian import Mondrian
from ppdm.algorithms.pbg_ea import PbgEa
from ppdm.algorithms.safepub import SafePub
from ppdm.exceptions import InvalidParameterError, UnknownAlgorithmError
from ppdm.params import did_you_mean

__all__ = ["ALGORITHMS", "Anonymizer", "get_algorithm", "validate_spec"]

ALGORITHMS: dict[str, type[Anonymizer]] = {
    "mondrian": Mondrian,
    "kactus": Kactus,
    "pbg-ea": PbgEa,
    "lattice-optimal": LatticeOptimal,
    "approx-ac": ApproxAC,
    "dmpd": Dmpd,
    "fs-anonymity": FsAnonymity,
    "safepub": SafePub,
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
    unknown = set(params) - set(cls._param_names())
    if unknown:
        hints = [
            f"{p!r}: {hint}"
            for p in sorted(unknown)
            if (hint := did_you_mean(p, cls._param_names()))
        ]
        raise InvalidParameterError(
            f"{name}: unknown parameter(s) {sorted(unknown)}"
            + (f" ({'; '.join(hints)})" if hints else "")
            + f"; allowed: {sorted(cls._param_names())}"
        )
    return cls(**params)
