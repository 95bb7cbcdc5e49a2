"""ppdm: verified, audited anonymized releases of person-level data for data mining."""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
