"""The fuzz folder: its outcome counts, written where PPDM_FUZZ_COUNTS says."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fuzz_cases import COUNTS, EXAMPLES, counts_file, write_counts


@pytest.fixture(scope="session", autouse=True)
def fuzz_counts() -> Iterator[None]:
    yield
    target = counts_file()
    if target:
        write_counts(target)
    total = sum(COUNTS.values())
    print(f"\nfuzz cases judged: {total}")
    for key, n in sorted(COUNTS.items()):
        print(f"  {n:4d}  {' | '.join(key)}")
        if key in EXAMPLES:
            print(f"        {EXAMPLES[key][:300]}")
