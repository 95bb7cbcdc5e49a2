"""The independent verifier of released files.

- :mod:`ppdm.verify.certificate`: checks released tables against the
  requirement's privacy models and builds the certificate
  (``verification.json``);
- :mod:`ppdm.verify.passthrough`: the pass-through check of columns released
  as is (below k once added to the quasi-identifiers; proxies of a
  quasi-identifier);
- :mod:`ppdm.verify.out_of_core`: the same checks on files larger than memory,
  with Dask;
- :mod:`ppdm.verify.release_check`: re-checks a published release directory
  against its manifest (``ppdm verify``);
- :mod:`ppdm.verify.differential`: the differential privacy entry;
- the series checks against earlier releases of a dataset:
  :mod:`ppdm.verify.differencing` (classes of both releases),
  :mod:`ppdm.verify.same_rows` (two releases of the same rows),
  :mod:`ppdm.verify.composition` (one person's values across releases), over
  :mod:`ppdm.verify.regions` (which released cells contain which).

Each check is registered in :data:`ppdm.privacy.PRIVACY_CHECKS`; its results
state their own figures and summary (:class:`ppdm.privacy.base.CheckResult`).
"""

from __future__ import annotations

from ppdm.verify.certificate import (
    VERIFIER_NAME,
    Certificate,
    TableVerification,
    VerifyOptions,
    certificate_of,
    read_released_table,
    verify_files,
    verify_partition,
    verify_tables,
)
from ppdm.verify.passthrough import (
    PassthroughPolicy,
    PassthroughResult,
    check_passthrough,
)

__all__ = [
    "VERIFIER_NAME",
    "Certificate",
    "PassthroughPolicy",
    "PassthroughResult",
    "TableVerification",
    "VerifyOptions",
    "certificate_of",
    "check_passthrough",
    "read_released_table",
    "verify_files",
    "verify_partition",
    "verify_tables",
]
