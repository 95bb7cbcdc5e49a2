"""fs-anonymity: feature selection for classification under an anonymity constraint.

The quasi-identifiers become 0/1 features ``attribute=value``
(:func:`ppdm.selection.binary_encode`; numeric ones are binned by the
pipeline first, one feature per interval). The algorithm selects a subset S
of the features so that the projection on S is k-anonymous (by default
ordinary k-anonymity of the feature vectors; opt-in, k-anonymity by
containment: every row's features are contained in those of at least k
rows, :class:`ppdm.privacy.KAnonymityByContainment`) and a classifier
trained on it stays good, and releases that projection plus the target. No cell is
changed: columns are dropped, nothing else. Sensitive and insensitive
columns are not released.

Methods (Zhang, Mohammed, Dave and Al Hasan; see
``/work/shared/algorithms/feature-selection-anonymity.md`` for the
decisions taken where the paper is silent):

* ``method="greedy"`` (default): add the feature of largest positive gain of
  ``objective`` (``"distcnt"``: positive/negative pairs told apart;
  ``"hamdist"``: their summed Hamming distance) that keeps the constraint;
  ``stopping`` ``"filtered"`` (default) or ``"literal"``
  (:func:`ppdm.selection.greedy`).
* ``method="maximal"``: the maximal feasible sets (``maximal_mode``
  ``"exact"`` depth-first search within ``budget`` nodes, else, under
  containment only, the maximal frequent itemsets of ``"frequent"`` mode),
  the ``r`` largest, the best
  HamDist among them (:func:`ppdm.selection.maximal`).

The guarantee (``criterion``): by default ordinary k-anonymity of the
released feature vectors, every class of identical released rows at least k
rows: an attacker who knows a person's quasi-identifiers knows every
feature of theirs, the zeros too, so that is the class they find. With
``criterion="containment"`` the selection is k-anonymous by containment, the
paper's notion: it holds against an attacker who knows only which features
a person has, keeps more features, and
:meth:`FsAnonymity.adapt_requirement` then replaces the configuration's
``k-anonymity`` by ``k-anonymity-by-containment`` with the same k; the
certificate states that attacker next to the exact classes of the same
columns. Greedy and Maximal work under both. The verifier checks the
released file either way. l-diversity and t-closeness are refused: no
sensitive attribute is released.

The target must have at most two classes (the objectives count pairs of a
positive and a negative row; with one class no feature has a gain).

References
----------
.. [1] Zhang, Y., Mohammed, N., Dave, M., Al Hasan, M.: Feature Selection for
   Classification under Anonymity Constraint. Transactions on Data Privacy
   10(1):1-25 (2017); arXiv:1512.07158.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ppdm.algorithms.base import Anonymizer
from ppdm.exceptions import (
    InfeasibleConstraintError,
    InvalidParameterError,
    UnsupportedRequirementError,
)
from ppdm.model import AnonymizationSpec, Release
from ppdm.privacy._containment import KAnonymityByContainment
from ppdm.selection import (
    binary_encode,
    containment_sizes,
    decode_features,
    greedy,
    maximal,
)

__all__ = ["FsAnonymity"]


@dataclass(eq=False, repr=False, kw_only=True)
class FsAnonymity(Anonymizer):
    """Feature selection under k-anonymity or containment (Maximal, Greedy).

    Parameters
    ----------
    method : {"greedy", "maximal"}, default="greedy"
    objective : {"distcnt", "hamdist"}, default="distcnt"
        Greedy's objective (Maximal ranks its candidates by HamDist).
    stopping : {"filtered", "literal"}, default="filtered"
        Greedy's stopping rule.
    maximal_mode : {"exact", "frequent"}, default="exact"
    r : int, default=10
        Maximal: candidates kept by size.
    criterion : {"k-anonymity", "containment"}, default="k-anonymity"
        What the released features must meet at the requirement's k:
        ordinary k-anonymity of the feature vectors, or (opt-in, the paper's
        notion) k-anonymity by containment, which protects only against an
        attacker who knows which features a person has.
    budget : int, default=20000
        Maximal, exact mode: most search nodes before falling back to the
        frequent mode under containment, to the maximal sets found so far
        under k-anonymity (recorded in the evidence).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from ppdm.model import AnonymizationSpec
    >>> t = pd.DataFrame({"sex": list("FFFMMM"), "job": list("aabbab"),
    ...                   "y": list("ppnnpn")})
    >>> spec = AnonymizationSpec.of(("sex", "job"), None, "y", k=3)
    >>> release = FsAnonymity().anonymize(t, spec, np.random.default_rng(0))
    >>> list(release.table.columns)
    ['job=a', 'y']
    """

    name: ClassVar[str] = "fs-anonymity"

    method: str = "greedy"
    objective: str = "distcnt"
    stopping: str = "filtered"
    maximal_mode: str = "exact"
    r: int = 10
    budget: int = 20_000
    criterion: str = "k-anonymity"

    def training_views(self, release: Release) -> list[pd.DataFrame]:
        """The released features read back as cells of the quasi-identifiers.

        A row with ``a=v`` set has value ``v`` of ``a``; a row with none of
        the released features of ``a`` has the set of ``a``'s other values
        (the domains are in the evidence). The learners of the utility report
        read those cells on the original schema.
        """
        domains = release.evidence.get("encoding", {})
        return [
            decode_features(
                release.tables[name], domains, marker=release.suppression_marker
            )
            for name in sorted(release.tables)
        ]

    def _anonymize(
        self, table: pd.DataFrame, spec: AnonymizationSpec, rng: np.random.Generator
    ) -> Release:
        requirement = spec.requirement
        target = spec.target
        assert target is not None  # check_requirement: needs_target
        plain = max(
            (int(m.k) for m in requirement.models if m.name == "k-anonymity"),
            default=1,
        )
        contained = max(
            (
                int(m.k)
                for m in requirement.models
                if m.name == KAnonymityByContainment.name
            ),
            default=0,
        )
        # Containment only when the requirement asks for nothing more of the
        # exact classes (1-anonymity holds always); otherwise the exact
        # classes must reach the larger k, which implies containment too.
        k = max(plain, contained)
        constraint = "containment" if contained > 1 >= plain else "k-anonymity"
        n = len(table)
        if k > n:
            raise InfeasibleConstraintError(
                f"{requirement} needs at least {k} rows; the table has {n}"
            )
        labels = table[target]
        if labels.isna().any():
            raise InvalidParameterError(
                f"{self.name}: target {target!r} has missing values; drop those rows first"
            )
        classes = sorted(labels.astype(str).unique())
        if len(classes) > 2:
            raise InvalidParameterError(
                f"{self.name}: the target must have two classes (the objectives count "
                f"pairs of a positive and a negative row); {target!r} has "
                f"{len(classes)}: {classes[:10]}"
            )
        positive = classes[-1]
        y = (labels.astype(str) == positive).to_numpy()
        encoding = binary_encode(table, spec.quasi_identifiers)
        evidence: dict[str, Any] = {
            "method": self.method,
            "constraint": constraint,
            "k": k,
            "positive_class": positive,
            "classes": classes,
            "n_features": encoding.n_features,
        }
        if self.method == "greedy":
            result = greedy(
                encoding.matrix,
                y,
                k,
                objective=self.objective,
                constraint=constraint,
                stopping=self.stopping,
            )
            selected = list(result.selected)
            evidence.update(
                {
                    "objective": self.objective,
                    "stopping": self.stopping,
                    "stopped": result.stopped,
                    "rejected_feature": (
                        encoding.names[result.rejected]
                        if result.rejected is not None
                        else None
                    ),
                    "rounds": result.rounds,
                    "objective_trace": list(result.trace),
                    "gains": list(result.gains),
                    "ac_trace": list(result.ac_trace),
                }
            )
        else:
            if constraint == "k-anonymity" and self.maximal_mode == "frequent":
                raise UnsupportedRequirementError(
                    f"{self.name}: maximal_mode 'frequent' mines sets that are "
                    "k-anonymous by containment only; for ordinary k-anonymity use "
                    "maximal_mode 'exact' (or criterion 'containment')"
                )
            found = maximal(
                encoding.matrix,
                y,
                k,
                r=self.r,
                mode=self.maximal_mode,
                budget=self.budget,
                constraint=constraint,
            )
            selected = list(found.selected)
            weights = np.asarray(
                [int(w) for w in _weights(encoding.matrix, y)], dtype=np.int64
            )
            evidence.update(
                {
                    "maximal_mode": found.mode,
                    "fallback": found.fallback,
                    "search_nodes": found.nodes,
                    "n_maximal_sets": found.n_maximal,
                    "top_candidates": [
                        [encoding.names[j] for j in s] for s in found.top
                    ],
                    "objective": "hamdist",
                    "objective_trace": [int(v) for v in np.cumsum(weights[selected])],
                }
            )
        released = encoding.frame(selected)
        chosen = encoding.matrix[:, selected]
        achieved = int(containment_sizes(chosen).min()) if n else 0
        exact = _smallest_class(chosen)
        reached = exact if constraint == "k-anonymity" else achieved
        if reached < k:  # a bug, never a release
            raise InfeasibleConstraintError(
                f"{self.name}: the selection reaches {constraint} {reached} < k={k}"
            )
        released[target] = labels.to_numpy()
        evidence.update(
            {
                "selected_features": [encoding.names[j] for j in selected],
                "selection": [
                    {
                        "order": i + 1,
                        "feature": encoding.names[j],
                        "attribute": encoding.features[j][0],
                        "value": encoding.features[j][1],
                    }
                    for i, j in enumerate(selected)
                ],
                "achieved_containment": achieved,
                "achieved_k": exact,
                "encoding": {a: list(v) for a, v in encoding.domains.items()},
            }
        )
        return self._release(released, spec, table, evidence)


def _smallest_class(chosen: np.ndarray) -> int:
    """Smallest class of identical rows over the chosen 0/1 columns (0: no rows)."""
    if len(chosen) == 0:
        return 0
    if chosen.shape[1] == 0:
        return len(chosen)
    _, counts = np.unique(np.packbits(chosen, axis=1), axis=0, return_counts=True)
    return int(counts.min())


def _weights(matrix: np.ndarray, y: np.ndarray) -> np.ndarray:
    from ppdm.selection import hamdist_weights

    return hamdist_weights(matrix, y)
