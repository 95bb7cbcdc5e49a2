"""Pareto fronts of multi-objective searches: dominance and front quality.

Used by PBG-EA (Dewri et al. [1]_) and its benchmark: which nodes no other
dominates, the epsilon-boxes an archive keeps, and the two measures the paper
reports, the convergence error and the representation ratio.

References
----------
.. [1] Dewri, R., Ray, I., Ray, I., Whitley, D.: On the Identification of
   Property Based Generalizations in Microdata Anonymization. In: Data and
   Applications Security and Privacy XXIV (DBSec 2010), LNCS 6166, Springer
   (2010) 81-96.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "convergence_error",
    "nondominated_boxes",
    "pareto_mask",
    "representation_ratio",
]


def _oriented(values: np.ndarray, senses: Sequence[int]) -> np.ndarray:
    return np.asarray(values, dtype=float) * np.asarray(senses, dtype=float)


def pareto_mask(values: np.ndarray, senses: Sequence[int]) -> np.ndarray:
    """Rows of ``values`` that no other row dominates (``senses``: +1 max, -1 min)."""
    oriented = _oriented(values, senses)
    n = len(oriented)
    order = np.lexsort(oriented.T[::-1])[::-1]  # best first on the first index
    front: list[int] = []
    keep = np.zeros(n, dtype=bool)
    for row in order:  # the front is small: one vector test per row
        if front:
            members = oriented[front]
            geq = (members >= oriented[row]).all(axis=1)
            gt = (members > oriented[row]).any(axis=1)
            if (geq & gt).any():
                continue
        front.append(int(row))
        keep[row] = True
    return keep


def _boxes(values: np.ndarray, senses: Sequence[int], eps: np.ndarray) -> np.ndarray:
    return np.floor(np.asarray(values, dtype=float) / eps) * np.asarray(senses)


def nondominated_boxes(
    values: np.ndarray, senses: Sequence[int], eps: Sequence[float]
) -> set[tuple[float, ...]]:
    """Boxes (``floor(value / eps)``, oriented) of ``values`` no other box dominates."""
    boxes = np.unique(_boxes(values, senses, np.asarray(eps, dtype=float)), axis=0)
    keep = pareto_mask(boxes, [1] * boxes.shape[1])
    return {tuple(b) for b in boxes[keep]}


def convergence_error(archive: np.ndarray, front: np.ndarray) -> float:
    """Sum over archive members of the distance to the nearest front member.

    Indices are normalised by their largest absolute value on the front
    (Dewri et al., section 7).
    """
    archive = np.asarray(archive, dtype=float)
    front = np.asarray(front, dtype=float)
    scale = np.abs(front).max(axis=0)
    scale[scale == 0] = 1.0
    a, f = archive / scale, front / scale
    distances = np.sqrt(((a[:, None, :] - f[None, :, :]) ** 2).sum(axis=2))
    return float(distances.min(axis=1).sum())


def representation_ratio(
    archive: np.ndarray, front: np.ndarray, senses: Sequence[int], eps: Sequence[float]
) -> float:
    """Fraction of the front's non-dominated boxes holding an archive member."""
    eps_array = np.asarray(eps, dtype=float)
    marked = nondominated_boxes(front, senses, eps_array)
    occupied = {tuple(b) for b in _boxes(archive, senses, eps_array)}
    return len(marked & occupied) / len(marked) if marked else 1.0
