"""One read of a source file: its sha256, and whether a field may be a code with leading zeros.

The out-of-core ingest (:mod:`ppdm.scale.ingest_parts`) records the file's
sha256 as the in-memory ingest does, and needs to know whether the
whole-file reader's rule for codes with leading zeros (zip ``01001`` kept as
text) can apply before it reads any column's text. Both come from one read of
the file's bytes, on a worker while the driver parses the file.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from ppdm.exceptions import SourceError

__all__ = ["SCAN_BLOCK", "scan_file", "scan_on"]

#: Bytes read at a time.
SCAN_BLOCK = 8 << 20


def scan_on(map_parts: Any, job: dict[str, str]) -> tuple[str, bool]:
    """:func:`scan_file` of ``job`` through ``map_parts`` (or here, without one)."""
    mapper = map_parts if map_parts is not None else map
    (found,) = list(mapper(_scan_job, [job]))
    return found


def _scan_job(job: dict[str, str]) -> tuple[str, bool]:
    return scan_file(job["path"], job["delimiter"])


def scan_file(path: str, delimiter: str) -> tuple[str, bool]:
    """The sha256 of a file's bytes, and whether some field may start with 0 and a digit.

    The second answer is a cheap superset of what the whole-file reader's rule
    for codes with leading zeros (zip ``01001``) looks for: a ``0`` followed
    by a digit, just after a delimiter, a line break, a space or a quote. When
    no byte pair of the file qualifies, no column can hold such a code and
    its text need not be read. It runs on a worker beside the parser: its
    numpy passes hold the GIL often enough to slow a parser in the same process.
    """
    digits = np.zeros(256, dtype=bool)
    digits[ord("0") : ord("9") + 1] = True
    before = np.zeros(256, dtype=bool)
    for byte in (delimiter.encode("utf-8")[:1] or b",") + b'\n\r \t"':
        before[byte] = True
    digest = hashlib.sha256()
    found = False
    previous = b"\n"  # the file's start counts as a line start
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(SCAN_BLOCK), b""):
                digest.update(block)
                if not found:
                    window = np.frombuffer(previous + block, dtype=np.uint8)
                    zeros = np.flatnonzero(window[1:-1] == ord("0")) + 1
                    found = bool(
                        (digits[window[zeros + 1]] & before[window[zeros - 1]]).any()
                    )
                    previous = block[-2:]
    except OSError as exc:
        raise SourceError(f"source {path}: cannot be read ({exc.strerror})") from exc
    return digest.hexdigest(), found
