"""One comparison a data owner can trust: every registered algorithm, the same folds.

A data owner's first question is "which algorithm, which k?". This module
answers it with measured evidence: every algorithm of
:data:`ppdm.algorithms.ALGORITHMS` (read when the comparison is planned, so
the comparison grows as algorithms are registered) is run for every k under
the kACTUS paper's 5 x 2-fold cross-validation, on the *same* seeded folds
(:func:`fold_splits`, the splits of :func:`ppdm.utility.cross_validate`). In
each fold the training half alone is prepared (discretized as the release's
discretize step would for that algorithm, cut points fitted on the training
half) and anonymized; the models are trained on what an analyst receives and
tested on the untouched held-out half.

Per algorithm and k it reports accuracy (decision tree, naive Bayes,
logistic regression) mean +- sd over the folds, GLM (NCP) and CM, suppressed
cells, lost records, the achieved k and l of the releases, the anonymization
wall time and the peak memory of one anonymization; between the best two
algorithms at each k, the combined 5 x 2 cv F test
(:func:`ppdm.experiments.significance.combined_5x2cv_f_test`). An algorithm
that refuses the configuration (an unsupported privacy model, a missing
hierarchy, a target it needs) or cannot meet it on a fold (an infeasible k)
is listed with the reason; it never stops the comparison.

The work is cut into independent units, one per (algorithm, k, repeat, fold)
(:func:`evaluate_fold`), plus one memory probe per (algorithm, k)
(:func:`probe_memory`), so that a caller can run them in any executor:
:func:`run_comparison` runs them one after the other (or through any
``map``-like callable), the Prefect flow ``flows/compare.py`` as tasks on a
thread pool or a Dask cluster. :func:`assemble` turns the outcomes into a
:class:`Comparison`; :func:`write_outputs` writes ``comparison.csv``,
``comparison.json``, the folds' rows, the plots, ``comparison.md`` and
``comparison.html``.

References
----------
.. [1] S. Kisilevich, L. Rokach, Y. Elovici and B. Shapira, "Efficient
   Multidimensional Suppression for K-Anonymity", IEEE TKDE 22(3):334-347,
   2010 (5 x 2 CV protocol and the combined F test of their comparisons).
.. [2] E. Alpaydin, "Combined 5 x 2 cv F Test for Comparing Supervised
   Classification Learning Algorithms", Neural Computation 11(8):1885-1892,
   1999.
"""

from ppdm.experiments.compare.cell import FoldOutcome, evaluate_fold, probe_memory
from ppdm.experiments.compare.grid import (
    BASELINE,
    DP_EPSILONS,
    ComparisonPlan,
    GridCandidate,
    Split,
    fold_splits,
    load_table,
    parse_k,
    plan_comparison,
    sweep_config,
)
from ppdm.experiments.compare.pages import (
    comparison_from_json,
    main,
    plot_accuracy_vs_k,
    plot_pareto_fronts,
    render_html,
    render_markdown,
    render_overview,
    terminal_table,
    write_outputs,
)
from ppdm.experiments.compare.results import (
    Comparison,
    assemble,
    recommendation,
    run_comparison,
    significance_tests,
    summarize,
)

__all__ = [
    "BASELINE",
    "GridCandidate",
    "Comparison",
    "ComparisonPlan",
    "DP_EPSILONS",
    "FoldOutcome",
    "Split",
    "assemble",
    "comparison_from_json",
    "evaluate_fold",
    "fold_splits",
    "load_table",
    "main",
    "parse_k",
    "plan_comparison",
    "plot_accuracy_vs_k",
    "plot_pareto_fronts",
    "probe_memory",
    "recommendation",
    "render_html",
    "render_overview",
    "render_markdown",
    "run_comparison",
    "significance_tests",
    "summarize",
    "sweep_config",
    "terminal_table",
    "write_outputs",
]
