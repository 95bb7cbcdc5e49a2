"""The release steps, one module each: a settings model (the step's slice of the
configuration, its cache key) and a step function over the artifact store.

``ingest -> validate -> discretize -> anonymize -> republication -> verify ->
utility report -> publish``. :mod:`ppdm.steps.plan` makes every step's settings
from one configuration; :mod:`ppdm.pipeline` is the one place that puts the steps
in order. The flow's tasks and :func:`ppdm.pipeline.run_release` call the same
step functions.
"""
