"""Experiments over algorithms and k, as the papers run them.

- :mod:`ppdm.experiments.accuracy`: accuracy against k under 5 x 2
  cross-validation (``python -m ppdm.experiments.accuracy``);
- :mod:`ppdm.experiments.significance`: the combined 5x2cv F test.
"""
