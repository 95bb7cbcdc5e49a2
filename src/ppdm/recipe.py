"""One recipe: prepare a table, then anonymize it, or a training split and its test.

A release, the utility report's hold-out protocol and ``ppdm compare`` all
make a release the same way: the numeric quasi-identifiers are discretized
(unless the algorithm takes raw numbers), then the configured algorithm
anonymizes the prepared table with ``numpy.random.default_rng(seed)``. On a
training split the cut points are fitted on the training rows alone and
applied unchanged to its test rows. A :class:`Recipe` holds what decides the
outcome (the algorithm with its parameters, the requirement, target,
suppression limit and hierarchies in its spec, the discretization settings
and the seed); the functions below are the only places where the steps are
chained, so the three entry points cannot drift apart.

The rule about unbinned numbers is :func:`takes_raw_numbers`: an algorithm
that generalizes along hierarchies, or declares ``numeric_input = "raw"``,
gets the raw values (its hierarchies list raw values, or it splits numbers
itself); every other algorithm gets the numeric quasi-identifiers binned as
configured. The baseline of the accuracy protocols (models trained on the
original training rows) is always binned as configured, so it never depends
on the algorithm (:func:`baseline_preparation`).

Examples
--------
>>> import pandas as pd
>>> from ppdm.algorithms import get_algorithm
>>> from ppdm.model import AnonymizationSpec
>>> from ppdm.utility.preprocessing import Binning
>>> table = pd.DataFrame({"age": [21, 23, 25, 41, 44, 47] * 2,
...                       "income": ["lo", "lo", "lo", "hi", "hi", "hi"] * 2})
>>> spec = AnonymizationSpec.of(("age",), None, "income", k=3)
>>> recipe = Recipe(get_algorithm("mondrian"), spec, seed=0,
...                 discretize=Binning(method="mdl"))
>>> prepare_table(recipe, table).cut_points
{'age': [33.0]}
>>> sorted(release_table(recipe, table).tables["release"]["age"].unique())
['< 33', '>= 33']
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdm.model import AnonymizationSpec, Release
from ppdm.prepare.discretize import Discretization, discretize
from ppdm.utility.preprocessing import Binning, FoldDiscretizer
from ppdm.utility.views import as_training_views

if TYPE_CHECKING:
    from ppdm.algorithms.base import Anonymizer
    from ppdm.config import ReleaseConfig

__all__ = [
    "Recipe",
    "TrainingRelease",
    "anonymize_table",
    "anonymize_training_split",
    "baseline_preparation",
    "bin_table",
    "binning_for",
    "prepare_table",
    "release_table",
    "split_preparation",
    "takes_raw_numbers",
]


def takes_raw_numbers(algorithm: Any) -> bool:
    """True when ``algorithm`` gets its numeric quasi-identifiers unbinned.

    The one rule of the project: an algorithm that generalizes along
    hierarchies needs the raw values its hierarchies list, and one that
    declares ``numeric_input = "raw"`` splits or generalizes numbers itself.

    Parameters
    ----------
    algorithm : str, Anonymizer subclass or instance
        A registry name, an algorithm class or an instance.

    Examples
    --------
    >>> takes_raw_numbers("lattice-optimal"), takes_raw_numbers("kactus")
    (True, False)
    """
    if isinstance(algorithm, str):
        from ppdm.algorithms import ALGORITHMS

        algorithm = ALGORITHMS[algorithm]
    return bool(
        getattr(algorithm, "uses_hierarchies", False)
        or getattr(algorithm, "numeric_input", "either") == "raw"
    )


def binning_for(algorithm: Any, settings: Any) -> Binning:
    """The discretization ``algorithm`` gets: ``settings``, or none for raw input.

    ``settings`` is anything :meth:`Binning.of` reads (the
    configuration's ``discretize`` section, a mapping, None).
    """
    if takes_raw_numbers(algorithm):
        return Binning(method="none")
    return Binning.of(settings)


def bin_table(
    settings: Binning,
    table: pd.DataFrame,
    quasi_identifiers: Any,
    target: str | None,
) -> Discretization:
    """Discretize ``table`` with ``settings``, the cut points fitted on it.

    ``settings.columns`` None means every numeric quasi-identifier. Method
    ``"none"`` or no column to bin returns ``table`` itself with no cut point.
    """
    columns = (
        settings.columns_of(table, quasi_identifiers)
        if settings.method != "none"
        else []
    )
    if not columns:
        return Discretization(table=table, cut_points={}, method=settings.method)
    return discretize(
        table, columns, target, method=settings.method, n_bins=settings.n_bins
    )


@dataclass(frozen=True)
class Recipe:
    """How a release is made: the algorithm, its spec, the binning and the seed.

    Parameters
    ----------
    algorithm : Anonymizer
        The configured algorithm instance (its parameters set). It is used
        as given; work that runs in parallel builds one recipe per unit
        (:meth:`of_config`), as an algorithm records its evidence on itself.
    spec : AnonymizationSpec
        The requirement (quasi-identifiers and privacy models), target,
        suppression limit and hierarchies.
    seed : int
        The release seed: every anonymization draws from
        ``numpy.random.default_rng(seed)`` afresh.
    discretize : Binning, default=no binning
        The configured discretization, before the rule about unbinned
        numbers (:attr:`binning` applies it).
    """

    algorithm: Anonymizer
    spec: AnonymizationSpec
    seed: int
    discretize: Binning = field(default_factory=lambda: Binning(method="none"))

    @classmethod
    def of_config(
        cls, config: ReleaseConfig, *, hierarchies: Mapping[str, Any] | None = None
    ) -> Recipe:
        """The recipe of a release configuration (a fresh algorithm instance)."""
        return cls(
            algorithm=config.build_algorithm(),
            spec=AnonymizationSpec(
                requirement=config.requirement,
                target=config.target,
                suppression_limit=config.suppression_limit,
                hierarchies=hierarchies,
            ),
            seed=int(config.seed),
            discretize=Binning.of(config.discretize),
        )

    @property
    def binning(self) -> Binning:
        """The discretization the algorithm gets (:func:`binning_for`)."""
        return binning_for(self.algorithm, self.discretize)


def prepare_table(recipe: Recipe, table: pd.DataFrame) -> Discretization:
    """``table`` as the algorithm gets it: binned with cut points fitted on it."""
    spec = recipe.spec
    return bin_table(recipe.binning, table, spec.quasi_identifiers, spec.target)


def anonymize_table(recipe: Recipe, table: pd.DataFrame) -> Release:
    """The algorithm's release of an already prepared ``table``."""
    return recipe.algorithm.anonymize(
        table, recipe.spec, np.random.default_rng(recipe.seed)
    )


def release_table(recipe: Recipe, table: pd.DataFrame) -> Release:
    """Prepare, then anonymize a whole table."""
    return anonymize_table(recipe, prepare_table(recipe, table).table)


def split_preparation(recipe: Recipe, table: pd.DataFrame) -> FoldDiscretizer | None:
    """The preparation of a training split for the algorithm, or None.

    ``prepare(train, test) -> (train, test)`` fits the cut points on the
    training rows only; ``table`` (any rows of the data) decides which
    columns are numeric.
    """
    spec = recipe.spec
    return recipe.binning.prepare_for(table, spec.quasi_identifiers, spec.target)


def baseline_preparation(recipe: Recipe, table: pd.DataFrame) -> FoldDiscretizer | None:
    """The preparation of the baseline's training split: binned as configured.

    The same for every algorithm on one table, split and seed, so that the
    baseline accuracy never depends on the algorithm compared with it.
    """
    spec = recipe.spec
    return recipe.discretize.prepare_for(table, spec.quasi_identifiers, spec.target)


@dataclass(frozen=True)
class TrainingRelease:
    """A training split prepared and anonymized, and its test split prepared.

    Attributes
    ----------
    train : pandas.DataFrame
        The training rows as the algorithm got them.
    test : pandas.DataFrame
        The test rows, binned with the training rows' cut points.
    release : Release
    views : list of (str, pandas.DataFrame)
        The training views an analyst trains on
        (``algorithm.training_views(release)``).
    seconds : float
        Wall time of the anonymization alone.
    """

    train: pd.DataFrame
    test: pd.DataFrame
    release: Release
    views: list[tuple[str, pd.DataFrame]]
    seconds: float


def anonymize_training_split(
    recipe: Recipe, train: pd.DataFrame, test: pd.DataFrame
) -> TrainingRelease:
    """Fit the preparation on ``train``, apply it to both, anonymize ``train``.

    Neither input is modified, and no test row shapes a cut point.
    """
    prepare = split_preparation(recipe, train)
    if prepare is not None:
        train, test = prepare(train, test)
    train_copy = train.copy()
    started = time.perf_counter()
    release = anonymize_table(recipe, train_copy)
    seconds = time.perf_counter() - started
    views = as_training_views(release, algorithm=recipe.algorithm)
    return TrainingRelease(train, test, release, views, seconds)
