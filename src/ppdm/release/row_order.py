"""Released rows never keep the input order: no positional linkage to the source."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["shuffled_rows"]


def shuffled_rows(frame: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """The rows of a released table in a random order (no positional linkage)."""
    return frame.iloc[rng.permutation(len(frame))].reset_index(drop=True)
