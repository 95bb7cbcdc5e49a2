"""Algorithms that release one node of the full-domain generalization lattice.

lattice-optimal and PBG-EA differ only in how they choose the node
(:meth:`FullDomainAnonymizer._search`). Releasing it is the same for both: the
table generalized to the node's levels
(:func:`~ppdm.generalization.lattice_release.generalized_release`), or, on the
Dask engine, the same release decided on a frequency table as a recoding
(:func:`~ppdm.generalization.lattice_release.generalized_recoding`), with the
search's evidence and the rows it suppressed or dropped.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ppdm.algorithms.base import Anonymizer
from ppdm.generalization.hierarchies import Hierarchy
from ppdm.generalization.lattice import GeneralizationLattice
from ppdm.generalization.lattice_metrics import NodeMetrics
from ppdm.generalization.lattice_release import (
    generalized_recoding,
    generalized_release,
)
from ppdm.model import AnonymizationSpec, Release
from ppdm.scale.frequency import FrequencyTable
from ppdm.scale.recoding import Recoding

__all__ = ["FullDomainAnonymizer", "LatticeBuilder"]

#: ``build(hierarchies, spread_l=False)``: the lattice of the table to release.
LatticeBuilder = Callable[..., GeneralizationLattice]


class FullDomainAnonymizer(Anonymizer):
    """An algorithm that chooses one lattice node and releases the table at it.

    What the release of a node needs fixes the capabilities: every
    quasi-identifier's hierarchy, raw numbers (the hierarchies generalize
    them), and any class model (the classes a model rejects are suppressed);
    the same release decided on a frequency table serves the Dask engine.
    """

    @abstractmethod
    def _search(
        self,
        build: LatticeBuilder,
        spec: AnonymizationSpec,
        rng: np.random.Generator,
    ) -> tuple[dict[str, Hierarchy], NodeMetrics, dict[str, Any]]:
        """The hierarchies, the chosen node and the evidence of the search.

        ``build(hierarchies, spread_l=...)`` is the lattice of the table: from
        its rows (:meth:`GeneralizationLattice.from_table`) or from a frequency
        table (:meth:`GeneralizationLattice.from_frequencies`), which evaluate
        every node alike, so both paths choose the same node.
        """

    def _anonymize(
        self, table: pd.DataFrame, spec: AnonymizationSpec, rng: np.random.Generator
    ) -> Release:
        build = _builder(GeneralizationLattice.from_table, table, spec)
        hierarchies, chosen, evidence = self._search(build, spec, rng)
        released, counts = generalized_release(table, spec, hierarchies, chosen.levels)
        evidence.update(
            released_suppressed=counts["suppressed"], dropped=counts["dropped"]
        )
        return self._release(released, spec, table, evidence)

    def _recode(
        self,
        frequencies: FrequencyTable,
        spec: AnonymizationSpec,
        rng: np.random.Generator,
    ) -> Recoding:
        build = _builder(GeneralizationLattice.from_frequencies, frequencies, spec)
        hierarchies, chosen, evidence = self._search(build, spec, rng)
        original, released, kept, counts = generalized_recoding(
            frequencies, spec, hierarchies, chosen.levels
        )
        evidence.update(
            released_suppressed=counts["suppressed"], dropped=counts["dropped"]
        )
        return self._recoding(frequencies, spec, (original, released, kept), evidence)


def _builder(
    make: Callable[..., GeneralizationLattice], data: Any, spec: AnonymizationSpec
) -> LatticeBuilder:
    """``make`` (a lattice constructor) bound to ``data`` and the spec's columns."""

    def build(
        hierarchies: dict[str, Hierarchy], *, spread_l: bool = False
    ) -> GeneralizationLattice:
        return make(
            data,
            spec.quasi_identifiers,
            hierarchies,
            sensitive_attribute=spec.sensitive_attribute,
            target=spec.target,
            suppression_limit=spec.suppression_limit,
            spread_l=spread_l,
            requirement=spec.requirement,
        )

    return build
