"""Privacy models: small immutable objects with one ``check``.

>>> import pandas as pd
>>> from ppdm.privacy import KAnonymity
>>> t = pd.DataFrame({"zip": ["130**"] * 3, "dx": ["flu", "flu", "cold"]})
>>> KAnonymity(3).check(t, ["zip"]).passed
True

:data:`PRIVACY_MODELS` maps each model's registry name to its class; a new
model is one module plus one line here: it subclasses
:class:`~ppdm.privacy.base.PrivacyModel` (``name``, ``describe``, ``per_class``,
``class_passes`` and, where they hold, the pruning bounds and monotonicity
flags). From then on a configuration can ask for it under ``models:``, every
algorithm that lists it in ``supported_models`` enforces it, and the verifier,
certificate, manifest and ``ppdm verify`` check and report it.
"""

from __future__ import annotations

from ppdm.privacy._containment import KAnonymityByContainment
from ppdm.privacy._k_anonymity import KAnonymity
from ppdm.privacy._l_diversity import (
    DistinctLDiversity,
    EntropyLDiversity,
    RecursiveCLDiversity,
)
from ppdm.privacy._partition_anonymity import PartitionAnonymity, SetAnonymity
from ppdm.privacy._t_closeness import TCloseness
from ppdm.privacy.base import PrivacyModel, PrivacyResult
from ppdm.privacy.requirement import (
    EncodedSensitive,
    Requirement,
    model_from_description,
    requirement_models,
)

__all__ = [
    "CLASS_MODELS",
    "PRIVACY_MODELS",
    "PrivacyModel",
    "PrivacyResult",
    "Requirement",
    "EncodedSensitive",
    "model_from_description",
    "requirement_models",
    "KAnonymity",
    "KAnonymityByContainment",
    "DistinctLDiversity",
    "EntropyLDiversity",
    "RecursiveCLDiversity",
    "TCloseness",
    "SetAnonymity",
    "PartitionAnonymity",
]

PRIVACY_MODELS: dict[str, type[PrivacyModel]] = {
    "k-anonymity": KAnonymity,
    "distinct-l-diversity": DistinctLDiversity,
    "entropy-l-diversity": EntropyLDiversity,
    "recursive-cl-diversity": RecursiveCLDiversity,
    "t-closeness": TCloseness,
    "k-anonymity-by-containment": KAnonymityByContainment,
    "set-anonymity": SetAnonymity,
    "partition-anonymity": PartitionAnonymity,
}

#: The models that judge the equivalence classes of one released table
#: (``scope == "class"``; the others judge the released files together); an
#: algorithm that releases one table and asks the requirement per class
#: supports them all (``supported_models = CLASS_MODELS``).
CLASS_MODELS: frozenset[str] = frozenset(
    name for name, model in PRIVACY_MODELS.items() if model.scope == "class"
)
