"""Preprocessing fitted on a training part only and applied to its test part.

Both evaluation protocols (the hold-out of the release report and the 5 x 2
cross-validation of the experiments) repeat the release pipeline on a
training part. Whatever the pipeline fits before anonymization, chiefly the
cut points of the numeric quasi-identifiers (supervised MDL reads the
target), must be fitted on that training part alone and applied unchanged
to the test part, or the test rows leak into what is evaluated. A
preparation is a callable ``prepare(train, test) -> (train, test)``;
:class:`FoldDiscretizer` is the discretize step as one, built from the
release's :class:`Binning` (never from cut points fitted on all
rows).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.model import AttributeKind, attribute_kind
from ppdm.prepare.discretize import METHODS, apply_cut_points, discretize

__all__ = [
    "Binning",
    "FoldDiscretizer",
    "PrepareFn",
    "make_discretize_prepare",
]

#: Preprocessing fitted on the training part only, applied to both parts
#: (e.g. discretization): ``(train, test) -> (train, test)``. It may have a
#: ``describe() -> str`` (one sentence for the protocol) and a ``fitted_``
#: dict (what the last call fitted), which the hold-out report records.
PrepareFn = Callable[[pd.DataFrame, pd.DataFrame], tuple[pd.DataFrame, pd.DataFrame]]

_METHOD_TEXT = {
    "mdl": "supervised MDL discretization (Fayyad & Irani 1993, which reads the "
    "target)",
    "equal-frequency": "equal-frequency discretization ({n_bins} bins)",
}


@dataclass(frozen=True)
class Binning:
    """How the release's numeric quasi-identifiers are binned (not the cuts).

    Parameters
    ----------
    method : {"mdl", "equal-frequency", "none"}, default="mdl"
    n_bins : int, default=5
        Bins per column for ``"equal-frequency"``.
    columns : sequence of str or None, default=None
        Columns to bin; None means every numeric quasi-identifier.
    """

    method: str = "mdl"
    n_bins: int = 5
    columns: tuple[str, ...] | None = None

    @classmethod
    def of(cls, settings: Any) -> Binning:
        """Settings from None (no binning), a mapping, or any object with
        ``method``, ``n_bins`` and ``columns`` attributes (the release
        configuration's ``discretize`` section)."""
        if settings is None:
            return cls(method="none")
        if isinstance(settings, Binning):
            return settings
        if isinstance(settings, Mapping):
            get = settings.get
        else:

            def get(key: str, default: Any = None) -> Any:
                return getattr(settings, key, default)

        columns = get("columns", None)
        n_bins = get("n_bins", None)  # None: the method reads no bin count
        out = cls(
            method=str(get("method", "mdl")),
            n_bins=int(n_bins) if n_bins is not None else cls.n_bins,
            columns=tuple(columns) if columns is not None else None,
        )
        if out.method not in (*METHODS, "none"):
            raise InvalidParameterError(
                f"discretize method must be one of {[*METHODS, 'none']}; "
                f"got {out.method!r}"
            )
        return out

    def columns_of(
        self, table: pd.DataFrame, quasi_identifiers: Sequence[str]
    ) -> list[str]:
        """The columns to bin: as listed, or the numeric quasi-identifiers."""
        if self.columns is not None:
            return list(self.columns)
        return [
            c
            for c in quasi_identifiers
            if c in table.columns and attribute_kind(table[c]) is AttributeKind.NUMERIC
        ]

    def prepare_for(
        self,
        table: pd.DataFrame,
        quasi_identifiers: Sequence[str],
        target: str,
    ) -> FoldDiscretizer | None:
        """The fold preparation of these settings on ``table``; None when
        nothing is binned (method "none" or no column)."""
        if self.method == "none":
            return None
        columns = self.columns_of(table, quasi_identifiers)
        if not columns:
            return None
        return FoldDiscretizer(
            columns=tuple(columns),
            target=target,
            method=self.method,
            n_bins=self.n_bins,
        )


class FoldDiscretizer:
    """Fit cut points on the training part, apply them to both parts.

    Parameters
    ----------
    columns : sequence of str
        Numeric columns to bin.
    target : str
        Class column (MDL reads it; equal-frequency does not).
    method : {"mdl", "equal-frequency"}, default="mdl"
    n_bins : int, default=5

    Attributes
    ----------
    fitted_ : dict
        ``{"method", "cut_points"}`` of the last call (fitted on its
        training part).

    Examples
    --------
    >>> import pandas as pd
    >>> train = pd.DataFrame({"age": [18, 20, 21, 35, 40, 52],
    ...                       "y": ["a", "a", "a", "b", "b", "b"]})
    >>> test = pd.DataFrame({"age": [19, 60], "y": ["a", "b"]})
    >>> prepare = FoldDiscretizer(columns=["age"], target="y")
    >>> _, binned = prepare(train, test)
    >>> binned["age"].tolist(), prepare.fitted_["cut_points"]
    (['< 28', '>= 28'], {'age': [28.0]})
    """

    def __init__(
        self,
        *,
        columns: Sequence[str],
        target: str,
        method: str = "mdl",
        n_bins: int = 5,
    ) -> None:
        self.columns = columns
        self.target = target
        self.method = method
        self.n_bins = n_bins

    def __call__(
        self, train: pd.DataFrame, test: pd.DataFrame
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        fitted = discretize(
            train,
            list(self.columns),
            self.target,
            method=self.method,
            n_bins=self.n_bins,
        )
        self.fitted_ = {"method": self.method, "cut_points": fitted.cut_points}
        return fitted.table, apply_cut_points(test, fitted.cut_points)

    def describe(self) -> str:
        """One sentence for the protocol: what is fitted on what."""
        how = _METHOD_TEXT.get(self.method, self.method).format(n_bins=self.n_bins)
        return (
            f"The numeric quasi-identifiers ({', '.join(self.columns)}) are "
            f"binned by {how} with cut points fitted on the training part only "
            "and applied unchanged to the test part, as the release's discretize "
            "step does on the whole table; the models trained on the original "
            "training part see it binned too, so the accuracy difference is the "
            "cost of anonymization alone."
        )

    def __repr__(self) -> str:
        return (
            f"FoldDiscretizer(columns={list(self.columns)!r}, target={self.target!r}, "
            f"method={self.method!r}, n_bins={self.n_bins!r})"
        )


def make_discretize_prepare(
    columns: Sequence[str], target: str, *, method: str = "mdl", n_bins: int = 5
) -> FoldDiscretizer:
    """Fold preprocessing: fit cut points on the training part, apply to both."""
    return FoldDiscretizer(columns=columns, target=target, method=method, n_bins=n_bins)
