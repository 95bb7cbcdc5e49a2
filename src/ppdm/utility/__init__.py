"""Utility of a release: information loss, classification accuracy, the report.

- :mod:`ppdm.utility.loss`: information-loss metrics computed from the
  original and the released table (NCP/GLM, discernibility, classification
  metric, suppressed cells, lost records);
- :mod:`ppdm.utility.features`: released cells -> model features;
- :mod:`ppdm.utility.classification`: the hold-out and 5 x 2 CV protocols;
- :mod:`ppdm.utility.report`: ``utility.json`` content and the HTML report;
- :mod:`ppdm.utility.experiment`: accuracy-vs-k sweeps
  (``python -m ppdm.utility.experiment``).
"""

from __future__ import annotations

from ppdm.utility.classification import (
    MODELS,
    cross_validate,
    holdout_utility,
    summarize_cv,
)
from ppdm.utility.features import CellFeaturizer
from ppdm.utility.loss import (
    classification_metric,
    covers_from_hierarchies,
    discernibility_metric,
    information_loss,
    lost_records,
    ncp,
    suppressed_cells,
)
from ppdm.utility.report import build_utility, render_report_html

__all__ = [
    "MODELS",
    "CellFeaturizer",
    "build_utility",
    "classification_metric",
    "covers_from_hierarchies",
    "cross_validate",
    "discernibility_metric",
    "holdout_utility",
    "information_loss",
    "lost_records",
    "ncp",
    "render_report_html",
    "summarize_cv",
    "suppressed_cells",
]
