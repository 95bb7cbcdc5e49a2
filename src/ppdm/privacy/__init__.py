"""Privacy models: small immutable objects with one ``check``.

>>> import pandas as pd
>>> from ppdm.privacy import KAnonymity
>>> t = pd.DataFrame({"zip": ["130**"] * 3, "dx": ["flu", "flu", "cold"]})
>>> KAnonymity(3).check(t, ["zip"]).passed
True

:data:`PRIVACY_MODELS` maps each model's registry name to its class; a new
model is one module plus one line here.
"""

from __future__ import annotations

from ppdm.privacy._k_anonymity import KAnonymity
from ppdm.privacy._l_diversity import (
    DistinctLDiversity,
    EntropyLDiversity,
    RecursiveCLDiversity,
)
from ppdm.privacy._t_closeness import TCloseness
from ppdm.privacy.base import PrivacyModel, PrivacyResult

__all__ = [
    "PRIVACY_MODELS",
    "PrivacyModel",
    "PrivacyResult",
    "KAnonymity",
    "DistinctLDiversity",
    "EntropyLDiversity",
    "RecursiveCLDiversity",
    "TCloseness",
]

PRIVACY_MODELS: dict[str, type[PrivacyModel]] = {
    "k-anonymity": KAnonymity,
    "distinct-l-diversity": DistinctLDiversity,
    "entropy-l-diversity": EntropyLDiversity,
    "recursive-cl-diversity": RecursiveCLDiversity,
    "t-closeness": TCloseness,
}
