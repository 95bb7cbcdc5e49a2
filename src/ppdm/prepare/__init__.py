"""Preparing the input: embedded datasets, ingest, validation, discretization.

- :mod:`ppdm.prepare.datasets`: the embedded UCI Adult and German credit data;
- :mod:`ppdm.prepare.ingest`: CSV, Parquet and SQL sources, fingerprints;
- :mod:`ppdm.prepare.validation`: pandera and Great Expectations, quarantine;
- :mod:`ppdm.prepare.discretize`: supervised (MDL) and equal-frequency binning.
"""
