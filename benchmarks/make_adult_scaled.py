"""Write Adult scaled up (x100, x1000, ...) as a CSV file, seeded, for out-of-core benchmarks.

Run from the repository root:

    uv run python benchmarks/make_adult_scaled.py --times 1000 --out /tmp/adult-x1000.csv

Each copy of the 48,842 Adult rows is written with ``age`` moved by a seeded
offset in -2..2 (kept within 17..90) and ``fnlwgt`` by a seeded factor in
0.9..1.1, so the copies are not identical and the table's distinct
quasi-identifier combinations grow with it, as a real larger population's
would. Copies are written one block at a time (never the whole table in
memory). The same ``--seed`` gives the same bytes. Not committed: x1000 is
about 5 GB.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from ppdm.prepare.datasets import load


def write_scaled(out: Path, times: int, seed: int, block: int = 20) -> int:
    """Write ``times`` perturbed copies of Adult to ``out``; return the rows written."""
    adult = load("adult")
    rng = np.random.default_rng(seed)
    tmp = out.with_name(out.name + ".part")
    rows = 0
    with tmp.open("w", encoding="utf-8", newline="") as handle:
        for first in range(0, times, block):
            copies = min(block, times - first)
            frame = adult.loc[np.tile(adult.index.to_numpy(), copies)].reset_index(
                drop=True
            )
            n = len(frame)
            age = frame["age"].to_numpy(dtype=np.int64)
            frame["age"] = np.clip(age + rng.integers(-2, 3, size=n), 17, 90)
            weight = frame["fnlwgt"].to_numpy(dtype=float)
            factor = rng.uniform(0.9, 1.1, size=n)
            frame["fnlwgt"] = np.round(weight * factor).astype(np.int64)
            frame.to_csv(handle, index=False, header=first == 0, lineterminator="\n")
            rows += n
    tmp.replace(out)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--times", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    start = time.perf_counter()
    rows = write_scaled(args.out, args.times, args.seed)
    size = args.out.stat().st_size / 2**20
    took = time.perf_counter() - start
    print(f"{args.out}: {rows:,} rows, {size:,.0f} MB in {took:.0f} s")


if __name__ == "__main__":
    main()
