"""Privacy models: small immutable objects with one ``check``.

>>> import pandas as pd
>>> from ppdm.privacy import KAnonymity
>>> t = pd.DataFrame({"zip": ["130**"] * 3, "dx": ["flu", "flu", "cold"]})
>>> KAnonymity(3).check(t, ["zip"]).passed
True

:data:`PRIVACY_CHECKS` is the one registry of privacy checks, of three kinds
(:data:`~ppdm.privacy.base.CHECK_KINDS`): class models judge the equivalence
classes of each released table, release models the released tables together
(including the differential privacy entry), series models a release against
the earlier releases of its dataset. Each has a ``name``, a ``kind`` and a
``check(...)`` whose results (:class:`~ppdm.privacy.base.CheckResult`) carry
their own figures, verdict, one-line summary and examples; the certificate,
``ppdm verify``, the run log and the UI show those and name no model.

:data:`PRIVACY_MODELS` (derived) are the checks a configuration asks for under
``models:``. A new model is one module plus one line in
:data:`PRIVACY_CHECKS`: it subclasses :class:`~ppdm.privacy.base.PrivacyModel`
(``name``, ``describe``, ``per_class``, ``class_passes`` and, where they hold,
the pruning bounds and monotonicity flags). From then on a configuration can
ask for it, every algorithm that lists it in ``supported_models`` enforces it,
and the verifier, certificate, manifest and ``ppdm verify`` check and report it.

This package, the models and :class:`Requirement` import neither numpy nor
pandas: a configuration builds its requirement from them. What reads values
is imported when a check or a search runs: :mod:`ppdm.privacy.evaluation`
(the class models' checks and bounds, the requirement on candidate groups,
:class:`~ppdm.privacy.evaluation.EncodedSensitive`),
:mod:`ppdm.privacy.measures`, :mod:`ppdm.privacy.result`
(:class:`~ppdm.privacy.result.PrivacyResult`) and the release models' own
modules.
"""

from __future__ import annotations

from ppdm.privacy._containment import KAnonymityByContainment
from ppdm.privacy._k_anonymity import KAnonymity
from ppdm.privacy._l_diversity import (
    DistinctLDiversity,
    EntropyLDiversity,
    RecursiveCLDiversity,
)
from ppdm.privacy._set_anonymity import PartitionAnonymity, SetAnonymity
from ppdm.privacy._t_closeness import TCloseness
from ppdm.privacy.base import (
    CHECK_KINDS,
    CheckResult,
    PrivacyCheck,
    PrivacyModel,
)
from ppdm.privacy.differential import DifferentialPrivacy
from ppdm.privacy.requirement import (
    Requirement,
    model_from_description,
    requirement_models,
)
from ppdm.privacy.series_models import Composition, Differencing, SameRows

__all__ = [
    "CHECK_KINDS",
    "CLASS_MODELS",
    "PRIVACY_CHECKS",
    "PRIVACY_MODELS",
    "CheckResult",
    "Composition",
    "Differencing",
    "DifferentialPrivacy",
    "PrivacyCheck",
    "PrivacyModel",
    "SameRows",
    "Requirement",
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

PRIVACY_CHECKS: dict[str, type[PrivacyCheck]] = {
    # class models
    "k-anonymity": KAnonymity,
    "distinct-l-diversity": DistinctLDiversity,
    "entropy-l-diversity": EntropyLDiversity,
    "recursive-cl-diversity": RecursiveCLDiversity,
    "t-closeness": TCloseness,
    # release models
    "k-anonymity-by-containment": KAnonymityByContainment,
    "set-anonymity": SetAnonymity,
    "partition-anonymity": PartitionAnonymity,
    "differential-privacy": DifferentialPrivacy,
    # series models
    "differencing": Differencing,
    "same-rows": SameRows,
    "composition": Composition,
}

#: The checks a configuration asks for under ``models:`` (the others run
#: whenever they apply: a differentially private algorithm, earlier releases).
PRIVACY_MODELS: dict[str, type[PrivacyModel]] = {
    name: check
    for name, check in PRIVACY_CHECKS.items()
    if issubclass(check, PrivacyModel)
}

#: The models that judge the equivalence classes of one released table
#: (``kind == "class"``; the others judge the released files together); an
#: algorithm that releases one table and asks the requirement per class
#: supports them all (``supported_models = CLASS_MODELS``).
CLASS_MODELS: frozenset[str] = frozenset(
    name for name, check in PRIVACY_CHECKS.items() if check.kind == "class"
)
