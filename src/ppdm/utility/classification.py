"""How much classification accuracy a release costs (the names in one place).

This module gathers, under the names callers have always imported from it,
the accuracy harness that lives in modules with one job each:

- :mod:`ppdm.utility.learners`: the models (:class:`MembershipNB`,
  :class:`BlockImputer`, :func:`make_model`) and their treatment of unknown
  cells (:data:`MISSING`);
- :mod:`ppdm.utility.views`: training views of a multi-table release and the
  naive Bayes rule combining them;
- :mod:`ppdm.utility.scoring`: :func:`train_and_score`, train on the
  original and on the release, score on the test part;
- :mod:`ppdm.utility.preprocessing`: preparation fitted on the training part
  only (:func:`make_discretize_prepare`);
- :mod:`ppdm.utility.holdout`: :func:`holdout_utility`, the release report's
  protocol;
- :mod:`ppdm.utility.cross_validation`: :func:`cross_validate` and
  :func:`summarize_cv`, the kACTUS paper's 5 x 2 CV;
- :mod:`ppdm.utility.intervals`: Wilson and t intervals of the accuracies.
"""

from __future__ import annotations

from ppdm.utility.cross_validation import CV_PROTOCOL, cross_validate, summarize_cv
from ppdm.utility.holdout import HOLDOUT_PROTOCOL, AnonymizeFn, holdout_utility
from ppdm.utility.learners import (
    MISSING,
    MISSING_TEXT,
    MODELS,
    NB_BINS,
    RANGES,
    BlockImputer,
    MembershipNB,
    make_model,
)
from ppdm.utility.preprocessing import PrepareFn, make_discretize_prepare
from ppdm.utility.scoring import Covers, train_and_score

__all__ = [
    "CV_PROTOCOL",
    "HOLDOUT_PROTOCOL",
    "MISSING",
    "MISSING_TEXT",
    "MODELS",
    "NB_BINS",
    "RANGES",
    "AnonymizeFn",
    "BlockImputer",
    "Covers",
    "MembershipNB",
    "PrepareFn",
    "cross_validate",
    "holdout_utility",
    "make_discretize_prepare",
    "make_model",
    "summarize_cv",
    "train_and_score",
]
