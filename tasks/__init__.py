"""Prefect tasks: one thin wrapper per release step over :mod:`ppdm.pipeline`."""

from ppdm.tasks import keys as keys  # registers the key scheme "prefect-secret"
