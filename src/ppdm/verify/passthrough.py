"""The pass-through check: columns released as is, measured on the released files.

A release may publish some columns unchanged on purpose (role
``insensitive``, or a survey weight kept explicitly). The privacy models say
nothing about them, yet such a column can undo the anonymization: on Adult,
``fnlwgt`` alone is unique for 18,314 rows, and ``education-num`` is a 1:1
code of ``education``, so generalizing education hides nothing while it is
published. For every column released as is the verifier measures

(a) **below k**: the column added to the quasi-identifiers. The released
    table is grouped by its released quasi-identifier cells plus the column;
    reported are the number of classes smaller than k, the share of rows in
    them and the share of rows alone in their class (unique);
(b) **proxy**: whether the column pins a quasi-identifier more finely than
    the release shows it. For a quasi-identifier ``q``, a value ``v`` of the
    column *pins* ``q`` when, in the original table, the ``v`` rows number at
    least k and all have one value ``x`` of ``q``. The proxy share of ``q`` is
    the share of released rows whose column value pins ``q`` although their
    released ``q`` cell does not show ``x`` itself (it is generalized,
    suppressed, or ``q`` is not released in that table). A released cell
    shows ``x`` itself when, of the original values of ``q``, it covers ``x``
    alone (read with the grammar of :mod:`ppdm.values` and the hierarchy
    labels' coverage, as the population risk reads it).

Released rows are shuffled, so (b) never aligns rows: the rows holding a
column value are the same people in both tables, and the test works on
(value, released cell) counts. Column values are compared as canonical text
(numbers in their shortest form), so ``2.0`` written by a CSV writer meets
the original ``2``.

k is the smallest class the requirement accepts
(:attr:`~ppdm.privacy.Requirement.minimal_class_size`: the k of k-anonymity,
or l when an l-diversity model asks for larger classes).

A column above a limit of the :class:`PassthroughPolicy` fails the
certificate unless the data owner accepted it by name.

>>> import pandas as pd
>>> from ppdm.privacy import Requirement
>>> original = pd.DataFrame({
...     "education": ["HS", "HS", "HS", "BSc", "BSc", "BSc"],
...     "education-num": [9, 9, 9, 13, 13, 13],
...     "income": ["lo", "hi", "lo", "hi", "lo", "hi"]})
>>> released = original.astype(str).assign(education="*")
>>> policy = PassthroughPolicy(columns=("education-num",))
>>> [result] = check_passthrough(
...     released, Requirement.of(("education",), k=3), policy, original)
>>> result.below_k_share, result.proxy_share, result.passed
(0.0, 1.0, False)
>>> print(result.describe())  # doctest: +NORMALIZE_WHITESPACE
column 'education-num' released as is: 0 classes below k=3 (0% of rows, 0%
unique); it reveals the original education of 100% of rows whose released
education is generalized or suppressed (limit 1%)
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.identifiers import looks_identifying
from ppdm.privacy import Requirement
from ppdm.privacy.result import json_value
from ppdm.values import SUPPRESSED, format_number, parse_cell

__all__ = [
    "PassthroughPolicy",
    "PassthroughResult",
    "ProxyGroups",
    "check_passthrough",
    "below_k_figures",
    "below_k_from_sums",
    "proxy_groups",
    "proxy_shares",
    "PassthroughTable",
    "canonical_text",
    "checked_columns",
    "FIX",
    "FIX_IDENTIFIER",
]

#: What the data owner can do about a column that fails the check.
FIX = (
    "declare it a quasi-identifier, drop it (role drop), or accept it by name "
    "in accept_passthrough"
)
#: ... about a column that looks like a direct identifier: never accept it.
FIX_IDENTIFIER = "declare it identifying, or drop it (role drop)"

#: Released cell of a quasi-identifier a table does not carry: nothing shown.
_NOT_RELEASED = SUPPRESSED

_INTEGER = re.compile(r"^[+-]?\d+$")


@dataclass(frozen=True)
class PassthroughPolicy:
    """Which columns are released as is, which are accepted, and the limits.

    Parameters
    ----------
    columns : tuple of str, default=()
        Columns released unchanged on purpose (role ``insensitive``, and kept
        weights); each is checked in every released table that carries it.
    accepted : tuple of str, default=()
        Columns the data owner accepts although they exceed a limit (config
        ``accept_passthrough``): they pass, flagged as accepted, unless they
        look like a direct identifier (:func:`ppdm.identifiers.looks_identifying`:
        named or valued like one, or more than 50 % distinct).
    acknowledged : tuple of str, default=()
        Columns of ``accepted`` the data owner releases although they look
        like a direct identifier (config ``acknowledge_identifier_passthrough``,
        where the owner writes why): they pass, flagged.
    max_below_k_share : float, default=0.0
        Largest share of rows in classes below k once the column is added to
        the quasi-identifiers.
    max_proxy_share : float, default=0.01
        Largest share of rows whose quasi-identifier the column pins while
        the release generalized it (per quasi-identifier).

    Examples
    --------
    >>> policy = PassthroughPolicy(columns=["fnlwgt"], accepted=["fnlwgt"])
    >>> PassthroughPolicy.from_dict(policy.to_dict()) == policy
    True
    """

    columns: tuple[str, ...] = ()
    accepted: tuple[str, ...] = ()
    acknowledged: tuple[str, ...] = ()
    max_below_k_share: float = 0.0
    max_proxy_share: float = 0.01

    def __post_init__(self) -> None:
        for name in ("columns", "accepted", "acknowledged"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(c, str) for c in value):
                raise InvalidParameterError(
                    f"{name} must be a sequence of column names; got {value!r}"
                )
            object.__setattr__(self, name, tuple(value))
        if len(set(self.columns)) != len(self.columns):
            raise InvalidParameterError(
                f"columns lists a column twice: {list(self.columns)}"
            )
        for name in ("max_below_k_share", "max_proxy_share"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not 0.0 <= float(value) <= 1.0
            ):
                raise InvalidParameterError(
                    f"{name} must be a number in [0, 1]; got {value!r}"
                )
            object.__setattr__(self, name, float(value))

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the manifest's ``passthrough`` entry)."""
        out: dict[str, Any] = {
            "columns": list(self.columns),
            "accepted": list(self.accepted),
            "max_below_k_share": self.max_below_k_share,
            "max_proxy_share": self.max_proxy_share,
        }
        if self.acknowledged:  # absent when empty: earlier manifests read alike
            out["acknowledged"] = list(self.acknowledged)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PassthroughPolicy:
        """The policy of :meth:`to_dict` (absent keys take their defaults).

        Raises
        ------
        InvalidParameterError
            An unknown key or a value out of range.
        """
        if not isinstance(data, Mapping):
            raise InvalidParameterError(
                f"a pass-through policy must be a mapping; got {data!r}"
            )
        known = (
            "columns",
            "accepted",
            "acknowledged",
            "max_below_k_share",
            "max_proxy_share",
        )
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise InvalidParameterError(
                f"unknown pass-through policy keys {unknown}; allowed: {list(known)}"
            )
        return cls(**{key: data[key] for key in known if key in data})


@dataclass(frozen=True)
class PassthroughResult:
    """The pass-through figures of one column in one released table.

    Attributes
    ----------
    column : str
    table : str or None
        The released table (None when checked outside a certificate).
    rows : int
        Rows of the released table.
    quasi_identifiers : tuple of str
        The released quasi-identifiers the column was grouped with.
    k : int
        Smallest class the requirement accepts.
    classes : int
        Classes over the quasi-identifiers plus the column.
    classes_below_k : int
    below_k_share : float
        Share of rows in classes below k.
    unique_share : float
        Share of rows alone in their class.
    proxy_shares : dict of str to float, or None
        Per quasi-identifier, the share of rows whose original value the
        column pins while the release does not show it; None when not
        measured (no original table).
    max_below_k_share, max_proxy_share : float
        The limits applied.
    accepted : bool
        The data owner accepted the column by name.
    note : str
        Why the proxy part was not measured, when it was not.
    identifier : str
        Why the column looks like a direct identifier ("" when it does not).
    acknowledged : bool
        The data owner acknowledged releasing it although it looks like one.
    """

    column: str
    table: str | None
    rows: int
    quasi_identifiers: tuple[str, ...]
    k: int
    classes: int
    classes_below_k: int
    below_k_share: float
    unique_share: float
    proxy_shares: dict[str, float] | None
    max_below_k_share: float
    max_proxy_share: float
    accepted: bool = False
    note: str = ""
    identifier: str = ""
    acknowledged: bool = False

    @property
    def proxy_measured(self) -> bool:
        return self.proxy_shares is not None

    @property
    def proxy_attribute(self) -> str | None:
        """The quasi-identifier the column pins most often (None if none)."""
        if not self.proxy_shares:
            return None
        best = max(self.proxy_shares.values())
        if best <= 0.0:
            return None
        return next(q for q, s in self.proxy_shares.items() if s == best)

    @property
    def proxy_share(self) -> float | None:
        """The largest proxy share over the quasi-identifiers (None: not measured)."""
        if self.proxy_shares is None:
            return None
        return max(self.proxy_shares.values(), default=0.0)

    @property
    def exceeds(self) -> tuple[str, ...]:
        """The limits the column exceeds: ``below_k_share``, ``proxy_share``."""
        out = []
        if self.below_k_share > self.max_below_k_share:
            out.append("below_k_share")
        share = self.proxy_share
        if share is not None and share > self.max_proxy_share:
            out.append("proxy_share")
        return tuple(out)

    @property
    def flagged(self) -> bool:
        """Some limit is exceeded (whether or not the owner accepted it)."""
        return bool(self.exceeds)

    @property
    def refused(self) -> bool:
        """Looks like a direct identifier and not acknowledged: never passes.

        A column named or valued like an identifier fails even within the
        limits; a column only more than 50 % distinct (which a limit flags
        anyway) cannot be accepted without the acknowledgement.
        """
        if not self.identifier or self.acknowledged:
            return False
        return self.flagged or not self.identifier.endswith("distinct")

    @property
    def passed(self) -> bool:
        """Within the limits, or accepted by the data owner; never refused."""
        return not self.refused and (not self.flagged or self.accepted)

    @property
    def fix(self) -> str:
        """What the data owner can do about the column when it fails."""
        return FIX_IDENTIFIER if self.identifier else FIX

    @property
    def status(self) -> str:
        if self.refused:
            return "looks like an identifier"
        if not self.flagged:
            return "within limits"
        return "accepted by the data owner" if self.accepted else "exceeds limits"

    def describe(self) -> str:
        """The figures in one sentence."""
        where = f" in {self.table}" if self.table else ""
        noun = "class" if self.classes_below_k == 1 else "classes"
        text = (
            f"column {self.column!r} released as is{where}: "
            f"{self.classes_below_k} {noun} below k={self.k} "
            f"({_pct(self.below_k_share)} of rows, {_pct(self.unique_share)} unique)"
        )
        if "below_k_share" in self.exceeds:
            text += f" (limit {_pct(self.max_below_k_share)})"
        if self.proxy_shares is None:
            text += f"; proxy not measured ({self.note})"
        elif self.proxy_attribute is None:
            text += "; it reveals no quasi-identifier the release generalized"
        else:
            q = self.proxy_attribute
            text += (
                f"; it reveals the original {q} of {_pct(self.proxy_shares[q])} "
                f"of rows whose released {q} is generalized or suppressed "
                f"(limit {_pct(self.max_proxy_share)})"
            )
        if self.identifier:
            text += f"; it looks like a direct identifier: {self.identifier}"
            if self.acknowledged:
                text += " (released as is, acknowledged by the data owner)"
            elif self.accepted:
                text += " (accept_passthrough does not release an identifier)"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "column": self.column,
            "rows": int(self.rows),
            "quasi_identifiers": list(self.quasi_identifiers),
            "k": int(self.k),
            "classes": int(self.classes),
            "classes_below_k": int(self.classes_below_k),
            "below_k_share": json_value(self.below_k_share),
            "unique_share": json_value(self.unique_share),
            "proxy_measured": self.proxy_measured,
            "proxy_share": json_value(self.proxy_share),
            "proxy_attribute": self.proxy_attribute,
            "proxy_shares": (
                None
                if self.proxy_shares is None
                else {q: json_value(s) for q, s in self.proxy_shares.items()}
            ),
            "limits": {
                "max_below_k_share": json_value(self.max_below_k_share),
                "max_proxy_share": json_value(self.max_proxy_share),
            },
            "exceeds": list(self.exceeds),
            "accepted": bool(self.accepted),
            "passed": self.passed,
            "status": self.status,
            "note": self.note,
            # absent when empty: certificates of other columns read alike
            **({"identifier": self.identifier} if self.identifier else {}),
            **({"acknowledged": True} if self.acknowledged else {}),
        }


def _pct(share: float) -> str:
    """A share as a percentage, never rounded onto 0% or 100% when it is not."""
    text = f"{100 * share:.3g}%"
    if text == "100%" and share < 1.0:
        return ">99.9%"
    return text


# -- canonical text ------------------------------------------------------------
def _canonical_one(value: object) -> str:
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return "" if math.isnan(value) else format_number(float(value))
    text = str(value)
    if _INTEGER.match(text):
        return str(int(text))
    try:
        number = float(text)
    except ValueError:
        return text
    return format_number(number) if math.isfinite(number) else text


def canonical_text(values: pd.Series | Sequence[object]) -> np.ndarray:
    """Each value as comparable text: missing ``""``, numbers in shortest form.

    Applied alike to original values and to released text, so ``2``, ``2.0``
    and ``"2.0"`` all read ``"2"``. One conversion per distinct value.
    """
    codes, uniques = pd.factorize(pd.Series(values, copy=False), use_na_sentinel=True)
    texts = np.array([*(_canonical_one(u) for u in uniques), ""], dtype=object)
    return texts[codes]  # code -1 (missing) takes the last entry, ""


# -- (a) below k ---------------------------------------------------------------
def below_k_figures(sizes: np.ndarray, k: int, n_rows: int) -> dict[str, Any]:
    """Classes below k, and the shares of rows below k and unique.

    ``sizes`` are the class sizes over the quasi-identifiers plus the column.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    small = sizes < k
    return below_k_from_sums(
        classes=len(sizes),
        classes_below_k=small.sum(),
        rows_below_k=sizes[small].sum(),
        unique_rows=(sizes == 1).sum(),
        n_rows=n_rows,
    )


def below_k_from_sums(
    *,
    classes: int,
    classes_below_k: int,
    rows_below_k: int,
    unique_rows: int,
    n_rows: int,
) -> dict[str, Any]:
    """:func:`below_k_figures` from its four sums (reduced out of core)."""
    n = max(int(n_rows), 1)
    return {
        "classes": int(classes),
        "classes_below_k": int(classes_below_k),
        "below_k_share": int(rows_below_k) / n,
        "unique_share": int(unique_rows) / n,
    }


# -- (b) proxy -----------------------------------------------------------------
@dataclass(frozen=True)
class ProxyGroups:
    """The original table's side of the proxy test for one column.

    Attributes
    ----------
    column : str
    keys : pandas.Index
        Canonical text of each distinct column value (group ``g`` is
        ``keys[g]``).
    sizes : numpy.ndarray
        Original rows per group.
    pinned : dict of str to numpy.ndarray
        Per quasi-identifier: for each group, the index (into ``values[q]``)
        of the single original value its >= k rows share, or -1.
    values : dict of str to numpy.ndarray
        Per quasi-identifier: its distinct original values as canonical text.
    """

    column: str
    keys: pd.Index
    sizes: np.ndarray
    pinned: dict[str, np.ndarray] = field(default_factory=dict)
    values: dict[str, np.ndarray] = field(default_factory=dict)

    def pinning_keys(self) -> np.ndarray:
        """Column values (canonical text) that pin some quasi-identifier."""
        if not self.pinned:
            return np.array([], dtype=object)
        hit = np.zeros(len(self.keys), dtype=bool)
        for x in self.pinned.values():
            hit |= x >= 0
        return np.asarray(self.keys[hit], dtype=object)


def proxy_groups(
    original: pd.DataFrame, column: str, quasi_identifiers: Sequence[str], k: int
) -> ProxyGroups:
    """Group the original rows by the column's value; which groups pin which QI.

    A group pins a quasi-identifier when it holds at least ``k`` rows and a
    single value of it (missing counts as a value).
    """
    keys = canonical_text(original[column])
    codes, uniques = pd.factorize(keys)
    codes = codes.astype(np.int64)
    n_groups = len(uniques)
    sizes = np.bincount(codes, minlength=n_groups)
    big = sizes >= k
    pinned, values = {}, {}
    for q in quasi_identifiers:
        if q not in original.columns:
            continue
        q_codes, q_values = pd.factorize(canonical_text(original[q]))
        q_codes = q_codes.astype(np.int64)
        width = max(len(q_values), 1)
        pairs = np.unique(codes * width + q_codes)  # distinct (group, value)
        group, value = pairs // width, pairs % width
        single = np.bincount(group, minlength=n_groups) == 1
        x = np.full(n_groups, -1, dtype=np.int64)
        keep = single[group] & big[group]
        x[group[keep]] = value[keep]
        pinned[q] = x
        values[q] = np.asarray(q_values, dtype=object)
    return ProxyGroups(column, pd.Index(uniques), sizes, pinned, values)


def _covered(
    cell: str,
    texts: np.ndarray,
    numbers: np.ndarray,
    marker: str,
    labels: Mapping[str, Sequence[str]] | None,
) -> np.ndarray:
    """Which original values (canonical ``texts``, as ``numbers``) ``cell`` covers."""
    parsed = parse_cell(cell, marker)
    if parsed.kind == "value" and labels and parsed.text in labels:
        return np.isin(texts, canonical_text(list(labels[parsed.text])))
    if parsed.kind == "suppressed":
        return np.ones(len(texts), dtype=bool)
    if parsed.kind == "missing":
        return texts == ""
    if parsed.kind == "set":
        return np.isin(texts, canonical_text(list(parsed.members)))
    same = texts == parsed.text
    if parsed.kind == "interval":
        above = numbers >= parsed.low if parsed.low_closed else numbers > parsed.low
        below = numbers <= parsed.high if parsed.high_closed else numbers < parsed.high
        return (above & below & ~np.isnan(numbers)) | same
    canonical = _canonical_one(parsed.text)
    return same | (texts == canonical)


def _shown_value(
    cells: np.ndarray,
    texts: np.ndarray,
    marker: str,
    labels: Mapping[str, Sequence[str]] | None,
) -> np.ndarray:
    """For each distinct released cell, the one original value it shows, or -1.

    A cell shows a value when it covers that value alone among ``texts``
    (the distinct original values, canonical). A plain value (no hierarchy
    label) shows its own canonical text when the original has it, found for
    all such cells at once; the loop runs over the other distinct cells
    (intervals, sets, labels, ``*``), never over rows.
    """
    cells = np.asarray([str(c) for c in cells], dtype=object)
    out = np.full(len(cells), -1, dtype=np.int64)
    kinds = [parse_cell(c, marker).kind for c in cells]
    plain = np.array(
        [
            kind == "value" and not (labels and c in labels)
            for c, kind in zip(cells, kinds)
        ],
        dtype=bool,
    )
    if plain.any():
        index = pd.Index(texts)
        out[plain] = index.get_indexer(pd.Index(canonical_text(cells[plain])))
    rest = np.flatnonzero(~plain)
    if not len(rest):
        return out
    numbers = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce")
    numbers = numbers.to_numpy(dtype=float)
    for i in rest:
        covered = np.flatnonzero(_covered(cells[i], texts, numbers, marker, labels))
        if len(covered) == 1:
            out[i] = covered[0]
    return out


def proxy_shares(
    counts: pd.DataFrame,
    groups: ProxyGroups,
    n_rows: int,
    *,
    marker: str = SUPPRESSED,
    covers: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
) -> dict[str, float]:
    """Per quasi-identifier, the share of released rows the column pins hidden.

    Parameters
    ----------
    counts : pandas.DataFrame
        Released cells and their row counts: the column ``groups.column``,
        any released quasi-identifiers, and ``"n"`` (e.g. a
        ``groupby([column, *qis]).size()``, possibly restricted to the rows
        whose column value is in :meth:`ProxyGroups.pinning_keys`).
    groups : ProxyGroups
        The original table's side (:func:`proxy_groups`).
    n_rows : int
        Rows of the released table (the denominator).
    marker : str, default="*"
    covers : mapping, optional
        Hierarchy labels -> raw values they cover, per attribute.

    Returns
    -------
    dict of str to float
        One share per quasi-identifier found in the original table.
    """
    keys = canonical_text(counts[groups.column])
    group = groups.keys.get_indexer(pd.Index(keys))
    weights = counts["n"].to_numpy(dtype=np.int64)
    n = max(int(n_rows), 1)
    shares = {}
    for q, x_of_group in groups.pinned.items():
        x = np.where(group >= 0, x_of_group[np.maximum(group, 0)], -1)
        pins = x >= 0
        if q in counts.columns:
            cell_codes, cells = pd.factorize(counts[q].astype(str))
        else:  # not released in this table: the column shows what the table hides
            cell_codes = np.zeros(len(counts), dtype=np.int64)
            cells = pd.Index([_NOT_RELEASED])
        needed = np.unique(cell_codes[pins])
        shown = np.full(len(cells), -1, dtype=np.int64)
        if len(needed):
            labels = (covers or {}).get(q)
            shown[needed] = _shown_value(
                np.asarray(cells, dtype=object)[needed],
                groups.values[q],
                marker,
                labels,
            )
        hidden = pins & (shown[cell_codes] != x)
        shares[q] = float(weights[hidden].sum()) / n
    return shares


# -- the check -------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class PassthroughTable:
    """What every column released as is of one table is judged with.

    Attributes
    ----------
    policy : PassthroughPolicy
    requirement : Requirement
    table : str or None
        Name of the released table, carried into the results.
    rows : int
        Rows of the released table.
    quasi_identifiers : list of str
        The requirement's quasi-identifiers the table holds.
    original : pandas.DataFrame or None
        The table the release was made from; None when re-verifying.
    covers : mapping or None
        Hierarchy labels -> raw values they cover, per attribute.
    """

    policy: PassthroughPolicy
    requirement: Requirement
    table: str | None
    rows: int
    quasi_identifiers: list[str]
    original: pd.DataFrame | None
    covers: Mapping[str, Mapping[str, Sequence[str]]] | None

    def result(
        self,
        column: str,
        figures: Mapping[str, Any],
        counts: pd.DataFrame | None,
        groups: ProxyGroups | None,
        identifier: str,
    ) -> PassthroughResult:
        """One column's result from its :func:`below_k_figures`.

        ``counts`` are the released (column value, QI cells) counts ``n`` the
        proxy shares are read from, when the original table gives the column's
        :func:`proxy_groups` (``groups``; None when it cannot).
        ``identifier`` says why the column looks like a direct identifier
        (:func:`ppdm.identifiers.looks_identifying`; "" when it does not).
        """
        policy, requirement = self.policy, self.requirement
        shares = None
        if counts is not None and groups is not None:
            shares = proxy_shares(
                counts,
                groups,
                self.rows,
                marker=requirement.suppression_marker,
                covers=self.covers,
            )
        return PassthroughResult(
            column=column,
            table=self.table,
            rows=int(self.rows),
            quasi_identifiers=tuple(self.quasi_identifiers),
            k=int(requirement.minimal_class_size),
            classes=int(figures["classes"]),
            classes_below_k=int(figures["classes_below_k"]),
            below_k_share=float(figures["below_k_share"]),
            unique_share=float(figures["unique_share"]),
            proxy_shares=None if shares is None else dict(shares),
            max_below_k_share=policy.max_below_k_share,
            max_proxy_share=policy.max_proxy_share,
            accepted=column in policy.accepted,
            note="" if shares is not None else _not_measured(self.original, column),
            identifier=identifier,
            acknowledged=column in policy.acknowledged,
        )


def checked_columns(
    columns: Iterable[str], requirement: Requirement, policy: PassthroughPolicy
) -> list[str]:
    """The policy's columns present in a table, in the policy's order.

    Raises
    ------
    InvalidParameterError
        A column released as is is also a quasi-identifier or a sensitive
        attribute (a column has one role).
    """
    for column in policy.columns:
        if column in requirement.quasi_identifiers:
            raise InvalidParameterError(
                f"column {column!r} is both released as is and a quasi-identifier; "
                "a column has one role"
            )
        if column in requirement.sensitive_attributes:
            raise InvalidParameterError(
                f"column {column!r} is both released as is and a sensitive "
                "attribute; a column has one role"
            )
    present = set(columns)
    return [c for c in policy.columns if c in present]


def _not_measured(original: pd.DataFrame | None, column: str) -> str:
    """Why the proxy part of ``column`` cannot be measured."""
    if original is None:
        return "no original table (re-verification of a published release)"
    return f"the original table has no column {column!r}"


def check_passthrough(
    released: pd.DataFrame,
    requirement: Requirement,
    policy: PassthroughPolicy,
    original: pd.DataFrame | None = None,
    covers: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
    *,
    table: str | None = None,
) -> list[PassthroughResult]:
    """Measure every column of ``policy`` that ``released`` carries.

    Parameters
    ----------
    released : pandas.DataFrame
        A released table, cells as released (text; see
        :func:`ppdm.verify.read_released_table`). Row order does not matter.
    requirement : Requirement
    policy : PassthroughPolicy
    original : pandas.DataFrame, optional
        The table the release was made from (values before discretization).
        Without it (re-verifying a published release) the proxy part is
        reported as not measured.
    covers : mapping, optional
        Hierarchy labels -> raw values they cover, per attribute.
    table : str, optional
        Name of the released table, carried into the results.

    Returns
    -------
    list of PassthroughResult
        One per column of ``policy.columns`` present in ``released``.

    Raises
    ------
    InvalidParameterError
        A column of the policy is a quasi-identifier or sensitive attribute.
    """
    columns = checked_columns(released.columns, requirement, policy)
    qis = [q for q in requirement.quasi_identifiers if q in released.columns]
    k = requirement.minimal_class_size
    judged = PassthroughTable(
        policy, requirement, table, len(released), qis, original, covers
    )
    results = []
    for column in columns:
        counts = (
            released.groupby([column, *qis], dropna=False, observed=True, sort=False)
            .size()
            .rename("n")
            .reset_index()
        )
        figures = below_k_figures(counts["n"].to_numpy(), k, len(released))
        groups = None
        if original is not None and column in original.columns:
            groups = proxy_groups(original, column, requirement.quasi_identifiers, k)
        identifier = looks_identifying(column, released[column])
        results.append(judged.result(column, figures, counts, groups, identifier))
    return results
