"""Utility of a release: information loss, classification accuracy, the report.

- :mod:`ppdm.utility.loss`: information-loss metrics computed from the
  original and the released table(s) (NCP/GLM, discernibility,
  classification metric, suppressed cells, lost records), per table and for
  the whole release;
- :mod:`ppdm.utility.features`: released cells -> model features (sparse
  CSR matrices);
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

import importlib
from typing import Any

# Names are looked up on first use (PEP 562): importing one module of the
# package (the report, the views) must not import scikit-learn and every
# learner, which would make `ppdm algorithms` and a config error slow.
_WHERE: dict[str, str] = {
    "AnonymizeFn": "ppdm.utility.holdout",
    "BlockImputer": "ppdm.utility.learners",
    "CV_PROTOCOL": "ppdm.utility.cross_validation",
    "CellFeaturizer": "ppdm.utility.features",
    "Covers": "ppdm.utility.scoring",
    "Binning": "ppdm.utility.preprocessing",
    "FoldDiscretizer": "ppdm.utility.preprocessing",
    "HOLDOUT_PROTOCOL": "ppdm.utility.holdout",
    "MISSING": "ppdm.utility.learners",
    "MISSING_TEXT": "ppdm.utility.learners",
    "MODELS": "ppdm.utility.learners",
    "MembershipNB": "ppdm.utility.learners",
    "NB_BINS": "ppdm.utility.learners",
    "PrepareFn": "ppdm.utility.preprocessing",
    "RANGES": "ppdm.utility.learners",
    "SklearnModel": "ppdm.utility.learners",
    "UnknownIndicator": "ppdm.utility.learners",
    "as_training_views": "ppdm.utility.views",
    "build_utility": "ppdm.utility.report",
    "classification_metric": "ppdm.utility.loss",
    "covers_from_hierarchies": "ppdm.utility.loss",
    "cross_validate": "ppdm.utility.cross_validation",
    "discernibility_metric": "ppdm.utility.loss",
    "holdout_utility": "ppdm.utility.holdout",
    "information_loss": "ppdm.utility.loss",
    "lost_records": "ppdm.utility.loss",
    "make_discretize_prepare": "ppdm.utility.preprocessing",
    "make_model": "ppdm.utility.learners",
    "naive_bayes_combination": "ppdm.utility.views",
    "ncp": "ppdm.utility.loss",
    "release_loss": "ppdm.utility.loss",
    "render_report_html": "ppdm.utility.report",
    "summarize_cv": "ppdm.utility.cross_validation",
    "suppressed_cells": "ppdm.utility.loss",
    "t_interval": "ppdm.utility.intervals",
    "train_and_score": "ppdm.utility.scoring",
    "utility_report": "ppdm.utility.report",
    "wilson_interval": "ppdm.utility.intervals",
}


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
    "SklearnModel",
    "UnknownIndicator",
    "make_discretize_prepare",
    "make_model",
    "train_and_score",
    "CellFeaturizer",
    "Binning",
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


def __getattr__(name: str) -> Any:
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(
            f"module 'ppdm.utility' has no attribute {name!r}"
        ) from None
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)
