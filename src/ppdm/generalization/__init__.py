"""Generalization along hierarchies: the hierarchies, the lattice, Pareto fronts.

- :mod:`ppdm.generalization.hierarchies`: hierarchies as data (CSV / JSON),
  loaded and validated;
- :mod:`ppdm.generalization.lattice`: the full-domain generalization lattice
  and its fast node evaluator;
- :mod:`ppdm.generalization.suppression`: which classes of a generalization
  to suppress so that every privacy model accepts what is released;
- :mod:`ppdm.generalization.pareto`: dominance, epsilon boxes and front-quality
  measures of multi-objective searches.
"""
