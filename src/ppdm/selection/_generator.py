"""A seeded generator of sparse high-dimensional two-class binary tables.

:func:`sparse_binary_table` stands in for the paper's Spam email data (24,604
word features, very sparse), which is not shipped: it has the same shape of
problem (many rare features, few informative ones) and is reproducible from
its seed.

Model: feature j is set with probability ``p_j`` proportional to
``(j + 1) ** -zipf`` (a few popular features, a long tail of rare ones),
scaled so that the mean density is ``density`` and no ``p_j`` exceeds 0.5.
The label is drawn from a logistic model on ``n_informative`` features chosen
among the 200 most popular, with weights of random sign and magnitude in
[1, 3] and an intercept that centres the classes.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sparse_binary_table"]


def sparse_binary_table(
    n_rows: int,
    n_features: int,
    *,
    density: float = 0.01,
    n_informative: int = 20,
    zipf: float = 1.0,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """A (n_rows, n_features) boolean matrix and a boolean label.

    Parameters
    ----------
    n_rows, n_features : int
    density : float, default=0.01
        Mean share of set cells.
    n_informative : int, default=20
        Features the label depends on.
    zipf : float, default=1.0
        Exponent of the feature popularity.
    seed : int, default=0

    Returns
    -------
    (matrix, y)

    Examples
    --------
    >>> x, y = sparse_binary_table(200, 50, density=0.05, seed=1)
    >>> x.shape, x.dtype, y.dtype
    ((200, 50), dtype('bool'), dtype('bool'))
    """
    rng = np.random.default_rng(seed)
    raw = (np.arange(n_features) + 1.0) ** -zipf
    p = np.minimum(raw * density * n_features / raw.sum(), 0.5)
    x = rng.random((n_rows, n_features)) < p[None, :]
    popular = min(n_features, 200)
    informative = rng.choice(popular, size=min(n_informative, popular), replace=False)
    w = rng.uniform(1.0, 3.0, len(informative)) * rng.choice(
        [-1.0, 1.0], len(informative)
    )
    score = x[:, informative].astype(float) @ w
    score -= np.median(score) if n_rows else 0.0
    y = rng.random(n_rows) < 1.0 / (1.0 + np.exp(-score))
    return x, y
