"""Inputs of the approx-ac equality pin (``test_approx_ac.py``) and its digest.

The pin compares today's partitions with digests recorded from the
implementation before the neighbour search was rewritten (commit d258da3),
so a faster search cannot change a release. ``python -m`` on this module with
``--print`` prints the digests of the installed implementation.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

BREAST_CSV_SHA256 = "6ed32fbab327224ec749cacbc1e4750114aae622dc651d522043b6cf0d735b7e"


def digest(labels: np.ndarray, suppressed: np.ndarray, count: int) -> str:
    """First 16 hex digits of the sha256 of a partition and its stars."""
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(labels, dtype=np.int64).tobytes())
    h.update(np.ascontiguousarray(suppressed, dtype=bool).tobytes())
    h.update(str(int(count)).encode())
    return h.hexdigest()[:16]


def random_cases() -> Iterator[tuple[str, np.ndarray, int, str]]:
    """Seeded random code tables: (name, codes, k, mode)."""
    shapes = [
        # n, q, values per column, k, share of missing values, mode
        (40, 2, 3, 3, 0.0, "ball"),
        (60, 3, 2, 4, 0.0, "ball"),
        (80, 4, 3, 2, 0.1, "ball"),
        (120, 3, 4, 5, 0.0, "auto"),
        (150, 5, 3, 7, 0.0, "ball"),
        (200, 6, 2, 10, 0.05, "ball"),
        (250, 4, 5, 3, 0.0, "ball"),
        (300, 8, 3, 6, 0.0, "ball"),
        (300, 5, 4, 40, 0.0, "ball"),
        (400, 9, 10, 25, 0.0, "ball"),
        (400, 3, 3, 90, 0.0, "ball"),
        (500, 7, 6, 12, 0.02, "ball"),
        (30, 2, 2, 4, 0.0, "auto"),
        (12, 2, 3, 3, 0.0, "exact"),
    ]
    for seed, (n, q, card, k, missing, mode) in enumerate(shapes):
        rng = np.random.default_rng(seed)
        # Skewed values, so tables have both heavy rows and lone ones.
        weights = rng.dirichlet(np.full(card, 0.7), size=q)
        codes = np.column_stack(
            [rng.choice(card, size=n, p=weights[j]) for j in range(q)]
        ).astype(np.int64)
        codes[rng.random((n, q)) < missing] = -1
        yield f"random-{seed}-n{n}-q{q}-k{k}-{mode}", codes, k, mode


def breast_codes(csv: Path) -> np.ndarray:
    """The 683 complete rows of the breast table, V1..V9 as codes."""
    import pandas as pd

    raw = pd.read_csv(csv).dropna().reset_index(drop=True)
    return raw[[f"V{i}" for i in range(1, 10)]].to_numpy(dtype=np.int64)


def adult_codes(rows: int) -> np.ndarray:
    """The first ``rows`` rows of Adult, 8 quasi-identifiers, age in decades."""
    import pandas as pd

    from ppdm.prepare import datasets

    adult = datasets.load("adult").head(rows)
    table = pd.DataFrame({"age": (adult["age"] // 10).astype("int64")})
    for q in (
        "workclass",
        "education",
        "marital-status",
        "occupation",
        "race",
        "sex",
        "native-country",
    ):
        table[q] = adult[q]
    from ppdm.algorithms.approx_ac import encode_quasi_identifiers

    return encode_quasi_identifiers(table, list(table.columns))


ADULT_CASES = ((3000, 5), (3000, 10), (1500, 30))
BREAST_CASES = ((300, 5), (300, 40), (683, 4), (683, 25), (683, 125), (683, 175))


def print_digests(partition: Callable, breast: Path | None) -> None:
    """Print ``name: digest`` of every case (used to record the pins)."""
    for name, codes, k, mode in random_cases():
        p = partition(codes, k, mode=mode)
        print(f'    "{name}": "{digest(p.labels, p.suppressed, p.count)}",')
    for rows, k in ADULT_CASES:
        p = partition(adult_codes(rows), k)
        print(f'    "adult-{rows}-k{k}": "{digest(p.labels, p.suppressed, p.count)}",')
    if breast is not None:
        codes = breast_codes(breast)
        for rows, k in BREAST_CASES:
            p = partition(codes[:rows], k)
            print(
                f'    "breast-{rows}-k{k}": '
                f'"{digest(p.labels, p.suppressed, p.count)}",'
            )


if __name__ == "__main__":
    import importlib.util
    import sys

    path = Path(sys.argv[1])
    spec = importlib.util.spec_from_file_location("approx_ac_pinned", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["approx_ac_pinned"] = module
    spec.loader.exec_module(module)
    print_digests(
        module.approx_ac_partition, Path(sys.argv[2]) if len(sys.argv) > 2 else None
    )
