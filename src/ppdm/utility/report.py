"""The utility report of a release: ``utility.json`` content and ``report.html``.

:func:`utility_report` is the pipeline's one call: the hold-out protocol,
then :func:`build_utility` (the numbers, :mod:`ppdm.utility.report_data`) and
:func:`render_report_html` (the page from templates,
:mod:`ppdm.utility.report_html`). The words and figures both the page and the
Markdown summary use are in :mod:`ppdm.utility.report_text`, the plots in
:mod:`ppdm.utility.plots`; their public names are importable from here too.

The output is a pure function of the input: no timestamp, no random state,
deterministic PNGs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ppdm.model import AnonymizationSpec
from ppdm.recipe import (
    Recipe,
    anonymize_table,
    baseline_preparation,
    split_preparation,
)
from ppdm.utility.holdout import holdout_utility
from ppdm.utility.learners import MODELS
from ppdm.utility.loss import covers_from_hierarchies
from ppdm.utility.plots import figure_png, new_figure, plot_style
from ppdm.utility.preprocessing import Binning
from ppdm.utility.report_data import (
    build_utility,
    column_releases,
    release_record,
    release_verdict,
)
from ppdm.utility.report_html import render_report_html
from ppdm.utility.report_text import (
    accuracy_markdown,
    accuracy_rows,
    accuracy_warnings,
    readable_label,
)
from ppdm.utility.scoring import Covers
from ppdm.utility.views import as_training_views

__all__ = [
    "accuracy_markdown",
    "accuracy_rows",
    "accuracy_warnings",
    "build_utility",
    "column_releases",
    "figure_png",
    "new_figure",
    "plot_style",
    "readable_label",
    "release_record",
    "release_verdict",
    "render_report_html",
    "utility_report",
]


def utility_report(
    original: pd.DataFrame,
    release_tables: Mapping[str, pd.DataFrame],
    *,
    algorithm: Any,
    spec: AnonymizationSpec,
    discretize_settings: Any,
    test_size: float = 0.3,
    seed: int,
    evidence: Mapping[str, Any] | None = None,
    risk: Mapping[str, Mapping[str, Any]] | None = None,
    covers: Covers | None = None,
    title: str | None = None,
    models: Sequence[str] = MODELS,
    missing: str = "weka",
    roles: Mapping[str, str] | None = None,
    passthrough: Sequence[Mapping[str, Any]] | None = None,
    pseudonymized: Sequence[str] = (),
    record: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], str]:
    """The utility report of a release: ``utility.json`` content and ``report.html``.

    Runs the hold-out protocol (:func:`ppdm.utility.holdout.holdout_utility`)
    by repeating the release pipeline on the training split: the numeric
    quasi-identifiers are discretized with ``discretize_settings`` fitted on
    the training split only (and applied to the test split), then
    ``algorithm`` anonymizes it with ``spec`` and
    ``numpy.random.default_rng(seed)``; the models are trained on
    ``algorithm.training_views(release)`` (several views are combined by the
    naive Bayes rule of DMPD). Then the information loss of the published
    ``release_tables`` against ``original`` (:func:`build_utility`) and the
    page (:func:`render_report_html`).

    Parameters
    ----------
    original : pandas.DataFrame
        The clean table the release was made from, before discretization.
    release_tables : mapping of str to pandas.DataFrame
        The published tables by name (as read back from the candidate files).
    algorithm : Anonymizer
        A fresh instance of the release's algorithm with its parameters.
    spec : AnonymizationSpec
        The release's requirement, target, suppression limit and hierarchies.
    discretize_settings : Binning, mapping, object or None
        ``method`` ("mdl", "equal-frequency" or "none"), ``n_bins`` and
        ``columns`` (None: every numeric quasi-identifier), e.g. the release
        configuration's ``discretize`` section; never fitted cut points. As
        in the discretize step, an algorithm that takes raw numbers gets them
        unbinned (:func:`ppdm.recipe.takes_raw_numbers`); the baseline is
        binned as configured for every algorithm.
    test_size : float, default=0.3
    seed : int
        The release seed: the split, the models and the algorithm's rng.
    evidence : mapping, optional
        The algorithm's evidence (a ``"pareto_front"`` is shown).
    risk : mapping of str to dict, optional
        Re-identification risk per table, from the verification certificate.
    covers : mapping, optional
        Coverage of generalized labels; default: from ``spec.hierarchies``.
    title : str, optional
        Page title; default names the algorithm, k and l.
    models : sequence of str, default=MODELS
    missing : {"weka", "zeros", "indicator"}, default="weka"
        Treatment of unknown cells (:data:`ppdm.utility.learners.MISSING`).
        "indicator" gives naive Bayes and logistic regression a missing-value
        indicator; it is not the default because the test rows are original
        rows, never suppressed, and logistic regression then reads every one
        of them as the "known" part of the release (Adult, kACTUS k = 10:
        84.5 % with "weka", 77.2 % with "indicator", ZeroR 76.1 %;
        benchmarks/results/missing-indicator.md).
    roles : mapping of str to str, optional
        Column -> role (the configuration's ``columns``), for the section
        "Columns and how they are released".
    passthrough : sequence of dict, optional
        The verification certificate's ``passthrough`` section (figures of
        every column released as is, and whether the data owner accepted it).
    pseudonymized : sequence of str, optional
        Identifying columns released as keyed pseudonyms (not in
        ``released_tables``: the learners never see them).
    record : mapping, optional
        What makes the page a record of the release (:func:`release_record`):
        the verdict, the source and data files' sha256, code and library
        versions, the release series; stored as ``utility["record"]``.

    Returns
    -------
    (dict, str)
        The ``utility.json`` content (JSON-serialisable) and the HTML page.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from ppdm.algorithms import get_algorithm
    >>> rng = np.random.default_rng(0)
    >>> age = rng.integers(20, 70, 120)
    >>> table = pd.DataFrame({"age": age, "income": np.where(age > 45, "hi", "lo")})
    >>> spec = AnonymizationSpec.of(("age",), None, "income", k=5)
    >>> algorithm = get_algorithm("mondrian")
    >>> release = algorithm.anonymize(table, spec, np.random.default_rng(0))
    >>> utility, page = utility_report(
    ...     table, release.tables, algorithm=algorithm, spec=spec,
    ...     discretize_settings={"method": "mdl"}, seed=0)
    >>> sorted(utility["holdout"]["accuracy"]["decision_tree"])[:3]
    ['anonymized', 'anonymized_balanced_accuracy', 'anonymized_balanced_accuracy_ci95']
    >>> utility["holdout"]["zero_r"]["class"], utility["verdict"]["dropped"]
    ('hi', [])
    >>> page.startswith("<!DOCTYPE html>")
    True
    """
    recipe = Recipe(algorithm, spec, seed, Binning.of(discretize_settings))
    if covers is None and spec.hierarchies:
        covers = covers_from_hierarchies(spec.hierarchies)
    holdout = None
    if spec.target is not None:
        baseline = baseline_preparation(recipe, original)
        # One object when the algorithm gets the baseline's binning: the split
        # is then binned once, for both sides.
        prepare = (
            baseline
            if recipe.binning == recipe.discretize
            else split_preparation(recipe, original)
        )

        def views_of_training_split(train: pd.DataFrame) -> list:
            release = anonymize_table(recipe, train)
            return as_training_views(release, algorithm=algorithm)

        holdout = holdout_utility(
            original,
            views_of_training_split,
            target=spec.target,
            test_size=test_size,
            seed=seed,
            models=models,
            marker=spec.suppression_marker,
            covers=covers,
            missing=missing,
            prepare=prepare,
            prepare_original=baseline,
        )
    utility = build_utility(
        original,
        release_tables,
        spec,
        holdout,
        evidence or {},
        risk=risk,
        roles=roles,
        passthrough=passthrough,
        pseudonymized=pseudonymized,
    )
    if record is not None:
        utility["record"] = dict(record)
    if title is None:
        name = getattr(algorithm, "name", type(algorithm).__name__)
        models = ", ".join(str(m) for m in spec.models)
        title = f"{name}: {models}"
    return utility, render_report_html(utility, title=title)
