"""Feature matrices as dense arrays or scipy.sparse CSR, read the same way.

:class:`ppdm.utility.features.CellFeaturizer` returns CSR matrices: a
nominal attribute is one column per value of its training domain, and a
date or code column easily has tens of thousands of values, of which a row
sets one (or the few of a value set). Stored densely that is
``n_rows * n_values`` floats (35,000 rows x 19,682 dates = 5.13 GiB); stored
sparsely it is what the rows hold. The learners read their attribute blocks
through these helpers, so each accepts a dense array (the unit tests', a
caller's own) or a CSR matrix: numeric columns come out dense (one float a
row, NaN unknown), membership blocks stay sparse.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

__all__ = [
    "MAX_DENSE_CELLS",
    "Matrix",
    "as_matrix",
    "dense_column",
    "is_sparse",
    "n_features_varying",
    "row_blocks",
    "row_sums",
    "split_blocks",
]

#: A feature matrix: a dense float array or a CSR matrix.
Matrix = np.ndarray | sp.csr_matrix

#: Most cells a learner that needs dense input (centring before logistic
#: regression, scikit-learn's dense tree path) densifies at once: 2**23
#: float64 cells, 64 MiB. Matrices up to this size are densified whole, so
#: the tables the project's figures come from (Adult, German credit) are
#: computed exactly as before; larger ones are read sparse, or predicted in
#: row blocks of at most this many cells.
MAX_DENSE_CELLS = 2**23


def is_sparse(x: object) -> bool:
    """Whether ``x`` is a scipy.sparse matrix."""
    return sp.issparse(x)


def as_matrix(x: object) -> Matrix:
    """``x`` as a float CSR matrix (when sparse) or a float array."""
    if sp.issparse(x):
        x = sp.csr_matrix(x)
        return x if x.dtype == np.float64 else x.astype(np.float64)
    return np.asarray(x, dtype=float)


def dense_column(x: Matrix, j: int) -> np.ndarray:
    """Column ``j`` as a 1-D float array (implicit zeros as 0.0)."""
    if sp.issparse(x):
        return np.asarray(x[:, [j]].toarray(), dtype=float).ravel()
    return np.asarray(x[:, j], dtype=float)


def row_sums(x: Matrix) -> np.ndarray:
    """Sum of each row, NaN read as 0, as a 1-D array."""
    if sp.issparse(x):
        x = x.copy()
        x.data = np.nan_to_num(x.data, nan=0.0)
        return np.asarray(x.sum(axis=1)).ravel()
    return np.nan_to_num(x, nan=0.0).sum(axis=1)


def split_blocks(
    x: Matrix, blocks: Sequence[tuple], numeric: Sequence[str] = ("numeric",)
) -> list[Matrix]:
    """Per attribute block ``(kind, start, stop)``: its columns.

    Blocks whose kind is in ``numeric`` come out as dense ``(n, width)``
    arrays; the others as CSR (or dense, when ``x`` is) with NaN read as 0
    (a membership block is never NaN but for a caller's own matrix).
    """
    if not sp.issparse(x):
        return [
            x[:, start:stop]
            if kind in numeric
            else np.nan_to_num(x[:, start:stop], nan=0.0)
            for kind, start, stop in blocks
        ]
    columns = x.tocsc()  # one conversion; column slices are then cheap
    out: list[Matrix] = []
    for kind, start, stop in blocks:
        part = columns[:, start:stop]
        if kind in numeric:
            out.append(np.asarray(part.toarray(), dtype=float))
        else:
            part = part.tocsr()
            part.data = np.nan_to_num(part.data, nan=0.0)
            part.eliminate_zeros()
            out.append(part)
    return out


def row_blocks(
    n_rows: int, n_columns: int, max_cells: int = MAX_DENSE_CELLS
) -> list[slice]:
    """Slices of at most ``max_cells`` cells (at least one row each)."""
    step = max(1, max_cells // max(n_columns, 1))
    return [slice(i, min(i + step, n_rows)) for i in range(0, n_rows, step)]


def n_features_varying(x: Matrix) -> int:
    """How many columns take two or more known (non-NaN) values."""
    if x.shape[1] == 0 or x.shape[0] == 0:
        return 0
    if not sp.issparse(x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column
            high = np.nanmax(x, axis=0)
            low = np.nanmin(x, axis=0)
    else:
        # min/max over each column, implicit zeros included, NaN skipped
        high = np.asarray(x.nanmax(axis=0).toarray()).ravel()
        low = np.asarray(x.nanmin(axis=0).toarray()).ravel()
    return int(np.count_nonzero(high > low))
