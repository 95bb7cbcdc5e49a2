"""Experiments over algorithms and k, as the papers run them.

- :mod:`ppdm.experiments.compare`: every algorithm and k under the same
  5 x 2 cross-validation (``ppdm compare``; for a paper's column set,
  :func:`~ppdm.experiments.compare.sweep_config`);
- :mod:`ppdm.experiments.significance`: the combined 5x2cv F test.
"""
