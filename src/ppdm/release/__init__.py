"""What leaves the building, and the record of it.

- :mod:`ppdm.release.artifacts`: the content-addressed artifact store and
  atomic writes;
- :mod:`ppdm.release.audit`: the hash-chained, crash-consistent audit log;
- :mod:`ppdm.release.provenance`: code and library versions for manifests.
"""
