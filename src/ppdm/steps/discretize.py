"""Discretize: numeric quasi-identifiers binned into intervals, the cut points saved."""

from __future__ import annotations

from typing import Literal

from ppdm.model import AttributeKind, attribute_kind
from ppdm.recipe import bin_table
from ppdm.release.artifacts import (
    ArtifactRef,
    ArtifactStore,
)
from ppdm.steps.base import Discretized, PartitionSettings, StepSettings
from ppdm.utility.preprocessing import Binning


class DiscretizeSettings(StepSettings):
    """Discretize: the method the algorithm gets, and only what that method reads.

    ``method`` is ``"none"`` for algorithms that take raw numbers
    (:func:`ppdm.recipe.takes_raw_numbers`: they generalize along hierarchies
    or split numbers themselves). ``columns`` None means every numeric
    quasi-identifier.
    """

    method: Literal["mdl", "equal-frequency", "none"]
    n_bins: int | None = None
    columns: tuple[str, ...] | None = None
    quasi_identifiers: tuple[str, ...] = ()
    target: str | None = None
    partitions: PartitionSettings | None = None

    def binning(self) -> Binning:
        """The method, bin count and columns as the core's discretization reads them."""
        return Binning.of(
            {"method": self.method, "n_bins": self.n_bins, "columns": self.columns}
        )


def discretize_step(
    settings: DiscretizeSettings, store: ArtifactStore, clean: ArtifactRef
) -> Discretized:
    """Bin numeric quasi-identifiers into intervals; save the cut points."""
    if settings.partitions is not None:
        return _discretize_parts(settings, store, clean)
    table = store.read_table(clean)
    # The settings already say what this algorithm gets (ppdm.recipe's rule).
    result = bin_table(
        settings.binning(), table, settings.quasi_identifiers, settings.target
    )
    cut_points = result.cut_points
    return Discretized(
        discretized=store.put_table(result.table, kind="discretized-table"),
        cut_points=store.put_json(
            {"method": settings.method, "cut_points": cut_points}, kind="cut-points"
        ),
        summary={"method": settings.method, "cut_points": cut_points},
    )


def _discretize_parts(
    settings: DiscretizeSettings, store: ArtifactStore, clean: ArtifactRef
) -> Discretized:
    """Discretize out of core: cut points from exact per-part histograms."""
    import pyarrow.parquet as pq

    from ppdm.scale.discretize_parts import (
        apply_cut_points_partitioned,
        fit_cut_points_partitioned,
    )
    from ppdm.scale.engine import map_parts
    from ppdm.scale.steps import parts_of, put_parts

    parts = parts_of(clean)
    if settings.columns is not None:
        columns = list(settings.columns)
    else:
        # The kind of a column is that of its (typed) Parquet schema.
        head = pq.read_schema(parts[0]).empty_table().to_pandas()
        columns = [
            c
            for c in settings.quasi_identifiers
            if attribute_kind(head[c]) is AttributeKind.NUMERIC
        ]
    cut_points: dict[str, list[float]] = {}
    binned_ref = clean
    if settings.method != "none" and columns:
        extra = {"n_bins": settings.n_bins} if settings.n_bins is not None else {}
        cut_points = fit_cut_points_partitioned(
            parts,
            columns,
            settings.target,
            method=settings.method,
            map_parts=map_parts,
            **extra,
        )
        binned = store.staging()
        apply_cut_points_partitioned(parts, cut_points, binned, map_parts=map_parts)
        binned_ref = put_parts(store, binned, kind="discretized-table")
    return Discretized(
        discretized=binned_ref,
        cut_points=store.put_json(
            {"method": settings.method, "cut_points": cut_points}, kind="cut-points"
        ),
        summary={"method": settings.method, "cut_points": cut_points},
    )
