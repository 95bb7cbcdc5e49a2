"""Anonymize: the configured algorithm makes the release candidate."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
from pydantic import Field

from ppdm.algorithms import Anonymizer, get_algorithm
from ppdm.generalization.ordered_text import date_kinds, months_not_days
from ppdm.model import AnonymizationSpec
from ppdm.recipe import Recipe, anonymize_table
from ppdm.release.artifacts import (
    ArtifactRef,
    ArtifactStore,
)
from ppdm.release.data_files import put_released_table
from ppdm.release.row_order import shuffled_rows
from ppdm.steps.base import (
    Candidate,
    HierarchySource,
    PartitionSettings,
    RequirementField,
    StepSettings,
    hierarchies_of,
)
from ppdm.utility.preprocessing import Binning


class AnonymizeSettings(StepSettings):
    """Anonymize: the algorithm, its parameters, the requirement and the seed.

    The released tables' rows are shuffled with a generator of their own,
    derived from the same seed (no positional linkage to the input order).
    """

    algorithm: str
    params: dict[str, Any]
    requirement: RequirementField
    target: str | None
    suppression_limit: float
    seed: int
    hierarchies: HierarchySource | None = Field(
        None, description="given to algorithms that generalize along hierarchies"
    )
    partitions: PartitionSettings | None = None

    def build_algorithm(self) -> Anonymizer:
        return get_algorithm(self.algorithm, **self.params)

    def spec(self, hierarchies: Mapping[str, Any] | None = None) -> AnonymizationSpec:
        return AnonymizationSpec(
            requirement=self.requirement,
            target=self.target,
            suppression_limit=self.suppression_limit,
            hierarchies=hierarchies,
        )

    def recipe(self, discretize: Any = None) -> Recipe:
        """The recipe of these settings (a fresh algorithm, the hierarchies loaded).

        ``discretize``: the configured binning (None: the table is prepared).
        """
        return Recipe(
            self.build_algorithm(),
            self.spec(hierarchies_of(self.hierarchies)),
            self.seed,
            Binning.of(discretize),
        )


def anonymize_step(
    settings: AnonymizeSettings, store: ArtifactStore, discretized: ArtifactRef
) -> Candidate:
    """Run the configured algorithm with ``rng = default_rng(seed)``."""
    if settings.partitions is not None:
        return _anonymize_parts(settings, store, discretized)
    table = store.read_table(discretized)
    # The table is prepared already (the discretize step, same recipe).
    release = anonymize_table(settings.recipe(), table)
    # No exact date of a quasi-identifier leaves, whatever the algorithm kept.
    dates = date_kinds(table, settings.requirement.quasi_identifiers)
    shuffle = np.random.default_rng(np.random.SeedSequence(settings.seed).spawn(1)[0])
    tables = {
        name: put_released_table(
            store, shuffled_rows(months_not_days(frame, dates), shuffle)
        )
        for name, frame in sorted(release.tables.items())
    }
    evidence = store.put_json(
        {
            "algorithm": release.algorithm,
            "params": dict(release.params),
            "records_in": release.records_in,
            "evidence": dict(release.evidence),
        },
        kind="evidence",
    )
    rows_out = {name: len(frame) for name, frame in release.tables.items()}
    return Candidate(
        tables=tables,
        evidence=evidence,
        summary={
            "algorithm": settings.algorithm,
            "records_in": len(table),
            "rows_out": rows_out,
        },
    )


def _anonymize_parts(
    settings: AnonymizeSettings, store: ArtifactStore, discretized: ArtifactRef
) -> Candidate:
    """Anonymize out of core: recode the frequency table, release part by part."""
    from ppdm.scale import steps

    parts = steps.parts_of(discretized)
    spec = settings.spec(hierarchies_of(settings.hierarchies))
    released = store.staging()
    # One read of every part: its frequency table, and its rows shuffled
    # across parts while the algorithm runs on the sum.
    with steps.scattered(
        parts,
        steps.frequency_columns(spec),
        released.parent / f"{released.name}.pieces",
        seed=settings.seed,
    ) as shuffled:
        frequencies = shuffled.frequencies
        recoding = settings.build_algorithm().recode(
            frequencies, spec, np.random.default_rng(settings.seed)
        )
        dates = date_kinds(recoding.original, spec.quasi_identifiers)
        if dates:  # no exact date of a quasi-identifier leaves
            recoding = replace(
                recoding, released=months_not_days(recoding.released, dates)
            )
        rows = steps.release_scattered(shuffled, recoding, released)
    tables = {"release": steps.put_parts(store, released, kind="release-candidate")}
    evidence = store.put_json(
        steps.recoding_summary(
            recoding,
            {"combinations": len(frequencies), "partitions": len(parts)},
        ),
        kind="evidence",
    )
    return Candidate(
        tables=tables,
        evidence=evidence,
        summary={
            "algorithm": settings.algorithm,
            "records_in": frequencies.n_rows,
            "rows_out": {"release": rows},
        },
    )
