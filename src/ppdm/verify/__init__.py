"""The independent verifier of released files.

- :mod:`ppdm.verify.certificate`: checks released tables against the
  requirement's privacy models and builds the certificate
  (``verification.json``);
- :mod:`ppdm.verify.out_of_core`: the same checks on files larger than memory,
  with Dask;
- :mod:`ppdm.verify.release_check`: re-checks a published release directory
  against its manifest (``ppdm verify``).
"""

from __future__ import annotations

from ppdm.verify.certificate import (
    VERIFIER_NAME,
    Certificate,
    TableVerification,
    certificate_of,
    read_released_table,
    verify_files,
    verify_partition,
    verify_tables,
)

__all__ = [
    "VERIFIER_NAME",
    "Certificate",
    "TableVerification",
    "certificate_of",
    "read_released_table",
    "verify_files",
    "verify_partition",
    "verify_tables",
]
