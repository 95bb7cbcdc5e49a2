"""Binary encoding of a table: one 0/1 column per value of each attribute.

:func:`binary_encode` turns attributes into features named
``<attribute>=<value>``: one per category of a categorical column (in the
category order) or per interval of a discretized one, one per distinct value
(sorted as text) of any other column. A row has feature ``a=v`` when its
value of ``a`` is ``v``; a missing value has no feature of its attribute.
The encoding is reversible: :attr:`BinaryEncoding.features` maps every
feature back to its attribute and value, and :func:`decode_features` turns a
projection on some features back into cells of the original attributes (a
value, or the set of values a row's zeros leave possible), the form the
utility report's learners read.

>>> import pandas as pd
>>> t = pd.DataFrame({"sex": ["F", "M", "F"], "age": ["young", "old", "old"]})
>>> enc = binary_encode(t, ["sex", "age"])
>>> enc.names
['sex=F', 'sex=M', 'age=old', 'age=young']
>>> enc.matrix.astype(int).tolist()
[[1, 0, 0, 1], [0, 1, 1, 0], [1, 0, 1, 0]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdm.exceptions import InvalidParameterError
from ppdm.values import SET_SEPARATOR

__all__ = ["BinaryEncoding", "binary_encode", "decode_features", "feature_name"]


def feature_name(attribute: str, value: str) -> str:
    """The column name of a feature: ``attribute=value``."""
    return f"{attribute}={value}"


@dataclass(frozen=True)
class BinaryEncoding:
    """A table as 0/1 features.

    Attributes
    ----------
    matrix : numpy.ndarray of bool, shape (n, d)
    names : list of str
        ``attribute=value`` of every column.
    features : list of (str, str)
        ``(attribute, value)`` of every column.
    domains : dict of str to list of str
        Every attribute's values, in column order.
    """

    matrix: np.ndarray
    names: list[str]
    features: list[tuple[str, str]]
    domains: dict[str, list[str]]

    @property
    def n_features(self) -> int:
        return len(self.names)

    def frame(self, columns: Sequence[int]) -> pd.DataFrame:
        """The projection on ``columns`` as a 0/1 (uint8) frame named by feature."""
        cols = list(columns)
        return pd.DataFrame(
            self.matrix[:, cols].astype(np.uint8),
            columns=[self.names[j] for j in cols],
        )


def _values(column: pd.Series) -> tuple[list[str], np.ndarray]:
    """Values of a column as text, in their order, and each row's code (-1: missing)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        values = [str(c) for c in column.cat.categories]
        codes = np.asarray(column.cat.codes, dtype=np.int64)
        return values, codes
    missing = column.isna().to_numpy()
    text = column.astype(object).where(~missing, None)
    present = sorted({str(v) for v in text[~missing]})
    position = {v: i for i, v in enumerate(present)}
    codes = (
        np.array(
            [-1 if m else position[str(v)] for v, m in zip(text, missing)],
            dtype=np.int64,
        )
        if len(column)
        else np.zeros(0, dtype=np.int64)
    )
    return present, codes


def binary_encode(table: pd.DataFrame, attributes: Sequence[str]) -> BinaryEncoding:
    """One 0/1 column per value of each attribute (see the module docstring).

    Raises
    ------
    InvalidParameterError
        An attribute is not a column of ``table``.
    """
    missing = [a for a in attributes if a not in table.columns]
    if missing:
        raise InvalidParameterError(
            f"attributes {missing} are not columns of the table "
            f"(columns: {list(table.columns)})"
        )
    n = len(table)
    blocks = []
    names: list[str] = []
    features: list[tuple[str, str]] = []
    domains: dict[str, list[str]] = {}
    for attribute in attributes:
        values, codes = _values(table[attribute])
        block = codes[:, None] == np.arange(len(values))[None, :]
        blocks.append(block.reshape(n, len(values)))
        domains[str(attribute)] = values
        names.extend(feature_name(str(attribute), v) for v in values)
        features.extend((str(attribute), v) for v in values)
    matrix = np.hstack(blocks) if blocks else np.zeros((n, 0), dtype=bool)
    return BinaryEncoding(matrix.astype(bool), names, features, domains)


def decode_features(
    frame: pd.DataFrame,
    domains: Mapping[str, Sequence[str]],
    *,
    marker: str = "*",
) -> pd.DataFrame:
    """Cells of the original attributes from a projection on some features.

    For every attribute with a released feature: a row with ``a=v`` set holds
    ``v``; a row with none of them holds the set of values its zeros leave
    possible (``{x|y}``, a single value, or ``marker`` when none is left).
    Attributes without a released feature are left out; other columns of
    ``frame`` (the target) are kept as they are.
    """
    out: dict[str, object] = {}
    used: set[str] = set()
    for attribute, values in domains.items():
        selected = [v for v in values if feature_name(attribute, v) in frame.columns]
        if not selected:
            continue
        rest = [v for v in values if v not in selected]
        if len(rest) == 1:
            other = rest[0]
        elif rest:
            other = "{" + SET_SEPARATOR.join(rest) + "}"
        else:
            other = marker
        cells = np.full(len(frame), other, dtype=object)
        for v in selected:
            name = feature_name(attribute, v)
            used.add(name)
            bits = frame[name].astype(str).isin(["1", "1.0", "True"]).to_numpy()
            cells[bits] = v
        out[attribute] = cells
    for column in frame.columns:
        if column not in used:
            out[str(column)] = frame[column].to_numpy()
    return pd.DataFrame(out, index=frame.index)
