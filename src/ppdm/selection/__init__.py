"""Feature selection under k-anonymity by containment (the fs-anonymity algorithm).

Private modules, re-exported here:

* ``_encoding``: a table as 0/1 features ``attribute=value`` and back;
* ``_bitsets``: supports and containment sizes on packed bit sets, the
  groups of identical projections a search keeps, a brute-force oracle;
* ``_objectives``: HamDist, DistCnt, the classification metric and their gains;
* ``_greedy``: Greedy under containment, ordinary k-anonymity or nothing;
* ``_maximal``: Maximal (exact depth-first or fpmax);
* ``_baselines``: the competing methods of the experiments;
* ``_generator``: a seeded sparse binary table;
* ``_paper_data``: the embedded Adult and German credit as the paper's
  binary tables.

References
----------
.. [1] Zhang, Y., Mohammed, N., Dave, M., Al Hasan, M.: Feature Selection for
   Classification under Anonymity Constraint. Transactions on Data Privacy
   10(1):1-25 (2017); arXiv:1512.07158.
"""

from __future__ import annotations

from ppdm.selection._baselines import (
    FlipResult,
    cm_greedy,
    kanonymity_greedy,
    nonprivate_greedy,
    randomization_flipping,
)
from ppdm.selection._bitsets import (
    Groups,
    achieved_containment,
    containment_brute_force,
    containment_sizes,
    pack_columns,
)
from ppdm.selection._encoding import (
    BinaryEncoding,
    binary_encode,
    decode_features,
    feature_name,
)
from ppdm.selection._generator import sparse_binary_table
from ppdm.selection._greedy import CONSTRAINTS, STOPPING, GreedyResult, greedy
from ppdm.selection._maximal import (
    MAXIMAL_MODES,
    MaximalResult,
    SearchBudgetExceeded,
    choose_maximal,
    maximal,
    maximal_sets_exact,
    maximal_sets_frequent,
)
from ppdm.selection._objectives import (
    OBJECTIVES,
    cm_errors,
    distcnt,
    hamdist,
    hamdist_weights,
    projection_groups,
)
from ppdm.selection._paper_data import PaperTable, paper_adult, paper_german

__all__ = [
    "BinaryEncoding",
    "CONSTRAINTS",
    "FlipResult",
    "Groups",
    "GreedyResult",
    "MAXIMAL_MODES",
    "MaximalResult",
    "OBJECTIVES",
    "PaperTable",
    "STOPPING",
    "SearchBudgetExceeded",
    "achieved_containment",
    "binary_encode",
    "choose_maximal",
    "cm_errors",
    "cm_greedy",
    "containment_brute_force",
    "containment_sizes",
    "decode_features",
    "distcnt",
    "feature_name",
    "greedy",
    "hamdist",
    "hamdist_weights",
    "kanonymity_greedy",
    "maximal",
    "maximal_sets_exact",
    "maximal_sets_frequent",
    "nonprivate_greedy",
    "pack_columns",
    "paper_adult",
    "paper_german",
    "projection_groups",
    "randomization_flipping",
    "sparse_binary_table",
]
