"""Prefect tasks: one thin wrapper per release step over :mod:`ppdm.pipeline`."""
