"""Random small binary tables for the feature-selection properties."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

#: Reproducible, bounded properties.
PROPERTY = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def binary_tables(
    draw: st.DrawFn, max_rows: int = 24, max_features: int = 7
) -> tuple[np.ndarray, np.ndarray]:
    """A 0/1 matrix (some rows repeated, some columns rare) and a two-class label."""
    n = draw(st.integers(1, max_rows), label="rows")
    d = draw(st.integers(0, max_features), label="features")
    density = draw(st.sampled_from([0.1, 0.3, 0.5, 0.8]), label="density")
    seed = draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    x = rng.random((n, d)) < density
    if n > 2 and draw(st.booleans(), label="repeat rows"):
        x[: n // 2] = x[rng.integers(0, n, n // 2)]
    y = rng.random(n) < 0.5
    return x, y
