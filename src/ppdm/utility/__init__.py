"""Utility of a release: information loss, classification accuracy, the report.

- :mod:`ppdm.utility.loss`: information-loss metrics computed from the
  original and the released table(s) (NCP/GLM, discernibility,
  classification metric, suppressed cells, lost records), per table and for
  the whole release;
- :mod:`ppdm.utility.features`: released cells -> model features;
- :mod:`ppdm.utility.learners`: the models (C4.5, naive Bayes, logistic
  regression) and their treatment of unknown cells;
- :mod:`ppdm.utility.views`: the training views of a multi-table release and
  the naive Bayes rule combining them (DMPD);
- :mod:`ppdm.utility.scoring`: train on the original and on the release,
  score on untouched test rows;
- :mod:`ppdm.utility.preprocessing`: discretization fitted on a training
  part only;
- :mod:`ppdm.utility.holdout`: the hold-out protocol of the release report;
- :mod:`ppdm.utility.cross_validation`: the 5 x 2 CV protocol;
- :mod:`ppdm.utility.intervals`: Wilson and t intervals of accuracies;
- :mod:`ppdm.utility.report`: ``utility.json`` content and the HTML report,
  and :func:`utility_report`, the pipeline's one call;

Accuracy-vs-k sweeps over algorithms live in :mod:`ppdm.experiments`.
"""

from __future__ import annotations

from ppdm.utility.cross_validation import CV_PROTOCOL, cross_validate, summarize_cv
from ppdm.utility.features import CellFeaturizer
from ppdm.utility.holdout import HOLDOUT_PROTOCOL, AnonymizeFn, holdout_utility
from ppdm.utility.intervals import t_interval, wilson_interval
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
from ppdm.utility.loss import (
    classification_metric,
    covers_from_hierarchies,
    discernibility_metric,
    information_loss,
    lost_records,
    ncp,
    release_loss,
    suppressed_cells,
)
from ppdm.utility.preprocessing import (
    DiscretizeSettings,
    FoldDiscretizer,
    PrepareFn,
    make_discretize_prepare,
)
from ppdm.utility.report import build_utility, render_report_html, utility_report
from ppdm.utility.scoring import Covers, train_and_score
from ppdm.utility.views import as_training_views, naive_bayes_combination

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
    "make_discretize_prepare",
    "make_model",
    "train_and_score",
    "CellFeaturizer",
    "DiscretizeSettings",
    "FoldDiscretizer",
    "as_training_views",
    "build_utility",
    "classification_metric",
    "covers_from_hierarchies",
    "cross_validate",
    "discernibility_metric",
    "holdout_utility",
    "information_loss",
    "lost_records",
    "naive_bayes_combination",
    "ncp",
    "release_loss",
    "render_report_html",
    "summarize_cv",
    "suppressed_cells",
    "t_interval",
    "utility_report",
    "wilson_interval",
]
