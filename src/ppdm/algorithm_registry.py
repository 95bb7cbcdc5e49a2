"""What the configuration and ``ppdm algorithms`` know of each algorithm.

One :class:`AlgorithmEntry` per algorithm: the module and class that
implement it, its summary, its parameters with their defaults and
constraints, and its capabilities (privacy models, target, hierarchies,
release kind, frequency table), plus the data-free requirement checks the
configuration runs at load. Validating a configuration and listing the
algorithms read these entries only, so neither imports an algorithm's body
(nor pandas, which those bodies need): this module and what it imports stay
pandas-free (``tests/test_layering.py`` checks the boundary).

The algorithm classes read the same entry when they are defined
(:meth:`ppdm.algorithms.base.Anonymizer.__init_subclass__`), so each fact is
written here once. A new algorithm is one module with one ``Anonymizer``
subclass plus one entry in :data:`DECLARED`.
"""

from __future__ import annotations

import importlib
import inspect
import math
import numbers
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ppdm.exceptions import InvalidParameterError, UnsupportedRequirementError
from ppdm.params import (
    Boolean,
    Interval,
    Options,
    PositiveNumbers,
    did_you_mean,
    validate_params,
)
from ppdm.privacy import (
    CLASS_MODELS,
    KAnonymityByContainment,
    PartitionAnonymity,
    Requirement,
    SetAnonymity,
)

__all__ = [
    "CAPABILITIES",
    "AlgorithmEntry",
    "DECLARED",
    "KeySpec",
    "capabilities_of",
    "eps_vector",
    "registered",
    "requirement_refusal",
]

#: approx-ac's phase-1 modes; the first is the default.
APPROX_AC_MODES = ("auto", "exact", "ball")
#: dmpd's classifiers per projection in the wrapper, and its search modes.
DMPD_INDUCERS = ("decision_tree", "naive_bayes")
DMPD_MODES = ("single", "pareto")
#: pbg-ea's objective sets (dash-separated quality indices), final-choice
#: policies and refinements.
PBG_OBJECTIVE_SETS = (
    "k-glm", "k-cm", "k-l-glm", "k-l-cm", "k-glm-cm", "k-l-glm-cm",
    "l-glm", "sk-glm", "sk-cm", "sk-sl-glm", "sk-glm-cm",
)  # fmt: skip
PBG_POLICIES = ("min-glm", "min-cm")
PBG_REFINEMENTS = ("none", "local")
#: safepub's score functions, and where its randomness comes from.
SAFEPUB_SCORES = ("classification", "loss")
SAFEPUB_RANDOMNESS = ("os", "keyed")
#: Models fs-anonymity's released features can be checked against.
FS_MODELS = frozenset({"k-anonymity", KAnonymityByContainment.name})


@dataclass(frozen=True)
class KeySpec:
    """A key specification ``<scheme>:<name>`` (``env:PPDM_AUDIT_KEY``)."""

    def describe(self) -> str:
        return "a key spec such as 'env:PPDM_AUDIT_KEY'"

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and re.fullmatch(r"[a-z-]+:.+", value) is not None


def eps_vector(eps: Any, n_objectives: int, owner: str) -> list[float]:
    """pbg-ea's box sides, one per objective (a single number serves them all)."""
    values = list(eps) if isinstance(eps, (list, tuple)) else [eps]
    ok = all(
        isinstance(v, numbers.Real)
        and not isinstance(v, bool)
        and v > 0
        and math.isfinite(v)
        for v in values
    )
    if not ok or len(values) not in (1, n_objectives):
        raise InvalidParameterError(
            f"{owner}: parameter 'eps' must be a positive number or a list of "
            f"{n_objectives} positive numbers (one per objective); got {eps!r}"
        )
    return [float(v) for v in values] * (n_objectives if len(values) == 1 else 1)


def _pbg_eps(owner: str, params: Mapping[str, Any]) -> None:
    # Options(PBG_OBJECTIVE_SETS) has passed: the objectives are valid names.
    eps_vector(params["eps"], len(params["objectives"].split("-")), owner)


def requirement_refusal(
    info: Any,
    requirement: Any,
    *,
    target: str | None,
    hierarchy_attributes: Any = None,
) -> None:
    """Refuse a requirement or set-up ``info`` (an algorithm) does not support.

    ``info`` is an :class:`AlgorithmEntry` or an algorithm class: anything
    with ``name``, ``supported_models``, ``needs_target`` and
    ``uses_hierarchies``. Data-free; see
    :meth:`ppdm.algorithms.base.Anonymizer.check_requirement`.
    """
    unsupported = [
        m.name for m in requirement.models if m.name not in info.supported_models
    ]
    if unsupported:
        hint = ""
        if any("diversity" in name for name in unsupported):
            hint = (
                "; to release without l-diversity ask for l = 1 (`l: 1` in the "
                "configuration, or --l 1)"
            )
        raise UnsupportedRequirementError(
            f"algorithm {info.name!r} does not support privacy model(s) "
            f"{', '.join(unsupported)}; it supports: "
            f"{', '.join(sorted(info.supported_models))}{hint}"
        )
    if info.needs_target and target is None:
        raise UnsupportedRequirementError(
            f"algorithm {info.name!r} needs a target attribute; none was given"
        )
    if info.uses_hierarchies and hierarchy_attributes is not None:
        missing = [
            q for q in requirement.quasi_identifiers if q not in hierarchy_attributes
        ]
        if missing:
            raise UnsupportedRequirementError(
                f"algorithm {info.name!r} generalizes along hierarchies, and "
                f"quasi-identifier(s) {missing} have none; hierarchies exist "
                f"for: {', '.join(sorted(hierarchy_attributes)) or 'none'}"
            )


def _feature_release_refusal(
    info: Any,
    requirement: Any,
    *,
    target: str | None,
    hierarchy_attributes: Any = None,
) -> None:
    # fs-anonymity releases 0/1 features and the target only: say so.
    unsupported = [m.name for m in requirement.models if m.name not in FS_MODELS]
    if unsupported:
        raise UnsupportedRequirementError(
            f"algorithm {info.name!r} does not support privacy model(s) "
            f"{', '.join(unsupported)}: it releases 0/1 features of the "
            "quasi-identifiers and the target, and no sensitive attribute; it "
            f"supports: {', '.join(sorted(FS_MODELS))} (with l-diversity in the "
            "configuration, ask for l = 1)"
        )
    requirement_refusal(
        info, requirement, target=target, hierarchy_attributes=hierarchy_attributes
    )


def _with_join_anonymity(
    requirement: Any, target: str | None, params: Mapping[str, Any]
) -> Any:
    """dmpd: add set anonymity (joins of two projections) at the requirement's k.

    Per-projection anonymity (PAL) is the requirement's own k-anonymity,
    checked per released table; what no table shows alone is the join, so
    :class:`~ppdm.privacy.SetAnonymity` joins the requirement unless a set-
    or partition-anonymity model is there already.
    """
    if target is None or any(
        m.name in (SetAnonymity.name, PartitionAnonymity.name)
        for m in requirement.models
    ):
        return requirement
    return Requirement(
        requirement.quasi_identifiers,
        (*requirement.models, SetAnonymity(int(requirement.k))),
        requirement.suppression_marker,
    )


def _containment_criterion(
    requirement: Any, target: str | None, params: Mapping[str, Any]
) -> Any:
    """fs-anonymity: with ``criterion="containment"``, k-anonymity becomes containment.

    That release is k-anonymous by containment, not (in general) plainly
    k-anonymous; the manifest, certificate and verifier state and check
    that. The default criterion keeps the requirement as it is. Other models
    are kept, so that the requirement check refuses those the release cannot
    honour.
    """
    if params["criterion"] != "containment":
        return requirement
    models: list[Any] = []
    for model in requirement.models:
        if model.name == "k-anonymity":
            model = KAnonymityByContainment(int(model.k))
        if model not in models:
            models.append(model)
    return Requirement(
        requirement.quasi_identifiers, tuple(models), requirement.suppression_marker
    )


#: The capability attributes an entry and its class share.
CAPABILITIES = (
    "supported_models",
    "needs_target",
    "uses_hierarchies",
    "numeric_input",
    "releases",
    "frequency_table",
)


def capabilities_of(info: Any, parameters: list[str]) -> dict[str, Any]:
    """What an algorithm (entry or class) supports, needs and releases (JSON-safe)."""
    flags = {name: getattr(info, name) for name in CAPABILITIES[1:]}
    return {"models": sorted(info.supported_models), **flags, "parameters": parameters}


#: (owner, every parameter with defaults filled in) -> None, or raise.
ParameterCheck = Callable[[str, Mapping[str, Any]], None]
#: (requirement, target, every parameter) -> the requirement releases are checked against.
RequirementAdapter = Callable[[Any, "str | None", Mapping[str, Any]], Any]


@dataclass(frozen=True)
class AlgorithmEntry:
    """One algorithm, as the configuration and the listing see it.

    The capability fields mean what the same-named attributes of
    :class:`ppdm.algorithms.base.Anonymizer` mean.
    """

    name: str
    #: ``"package.module:Class"``, imported when an instance is built.
    location: str
    summary: str
    #: Constructor (keyword-only) parameters -> defaults, in signature order.
    parameters: Mapping[str, Any]
    constraints: Mapping[str, Any] = field(default_factory=dict)
    supported_models: frozenset[str] = frozenset({"k-anonymity"})
    needs_target: bool = False
    uses_hierarchies: bool = False
    numeric_input: str = "either"
    releases: str = "table"
    frequency_table: bool = False
    #: A check across parameters that the constraints cannot state alone.
    parameter_check: ParameterCheck | None = None
    adapt: RequirementAdapter | None = None
    refusal: Callable[..., None] = requirement_refusal
    #: The class itself, for algorithms registered at run time (not imported
    #: by ``location``: a test's class need not be importable by name).
    defined_by: type | None = field(default=None, compare=False, repr=False)

    def load(self) -> type:
        """The algorithm's class (imports its module)."""
        if self.defined_by is not None:
            return self.defined_by
        module, _, name = self.location.partition(":")
        return getattr(importlib.import_module(module), name)

    def capabilities(self) -> dict[str, Any]:
        return capabilities_of(self, list(self.parameters))

    def check_parameter_names(self, params: Mapping[str, Any]) -> None:
        """Refuse parameters the algorithm does not take, with near misses named."""
        unknown = set(params) - set(self.parameters)
        if unknown:
            hints = [
                f"{p!r}: {hint}"
                for p in sorted(unknown)
                if (hint := did_you_mean(p, self.parameters))
            ]
            raise InvalidParameterError(
                f"{self.name}: unknown parameter(s) {sorted(unknown)}"
                + (f" ({'; '.join(hints)})" if hints else "")
                + f"; allowed: {sorted(self.parameters)}"
            )

    def check_parameters(self, params: Mapping[str, Any]) -> None:
        """Refuse unknown or out-of-range parameters, as building the algorithm would."""
        self.check_parameter_names(params)
        given = {**self.parameters, **params}
        validate_params(self.name, given, self.constraints)
        if self.parameter_check is not None:
            self.parameter_check(self.name, given)

    def adapt_requirement(
        self, requirement: Any, *, target: str | None, params: Mapping[str, Any]
    ) -> Any:
        """The requirement this algorithm's releases are checked against."""
        if self.adapt is None:
            return requirement
        return self.adapt(requirement, target, {**self.parameters, **params})

    def check_requirement(
        self, requirement: Any, *, target: str | None, hierarchy_attributes: Any = None
    ) -> None:
        self.refusal(
            self,
            requirement,
            target=target,
            hierarchy_attributes=hierarchy_attributes,
        )


def _entry_of_class(cls: type) -> AlgorithmEntry:
    # An algorithm registered at run time (a plugin, a test) states its
    # capabilities as class attributes; its requirement hooks are its methods.
    signature = inspect.signature(cls.__init__)
    parameters = {
        p.name: p.default
        for p in signature.parameters.values()
        if p.name != "self" and p.kind == p.KEYWORD_ONLY
    }

    def adapt(requirement: Any, target: str | None, params: Mapping[str, Any]) -> Any:
        return cls(**params).adapt_requirement(requirement, target=target)

    def refusal(info: Any, requirement: Any, **where: Any) -> None:
        cls.check_requirement(requirement, **where)

    def parameter_check(owner: str, params: Mapping[str, Any]) -> None:
        cls(**params).check_params()

    return AlgorithmEntry(
        name=cls.name,
        location=f"{cls.__module__}:{cls.__qualname__}",
        summary=cls.summary,
        parameters=parameters,
        constraints=dict(cls._parameter_constraints),
        parameter_check=parameter_check,
        adapt=adapt,
        refusal=refusal,
        defined_by=cls,
        **{name: getattr(cls, name) for name in CAPABILITIES},
    )


_FULL_DOMAIN = {
    "uses_hierarchies": True,
    "numeric_input": "raw",
    "supported_models": CLASS_MODELS,
    "frequency_table": True,
}

#: The shipped algorithms, by registry name.
DECLARED: dict[str, AlgorithmEntry] = {
    entry.name: entry
    for entry in (
        AlgorithmEntry(
            name="mondrian",
            location="ppdm.algorithms.mondrian:Mondrian",
            summary=(
                "Mondrian (LeFevre et al. 2006): strict multidimensional median "
                "partitioning; generalizes every record, suppresses none"
            ),
            parameters={"split": "median"},
            constraints={"split": Options({"median"})},
            supported_models=CLASS_MODELS,
            frequency_table=True,
        ),
        AlgorithmEntry(
            name="kactus",
            location="ppdm.algorithms.kactus:Kactus",
            summary=(
                "kACTUS: classification-tree-guided multi-dimensional suppression "
                "(Kisilevich et al., TKDE 2010)"
            ),
            parameters={
                "inducer": "c45",
                "lending": "random",
                "generalize_small_siblings": False,
                "pruning_confidence": 0.25,
                "numeric_release": "mean",
            },
            constraints={
                "inducer": Options({"c45", "sklearn"}),
                "lending": Options({"random", "greedy"}),
                "generalize_small_siblings": Boolean(),
                "pruning_confidence": (
                    Interval(numbers.Real, 0.0, 0.5, closed="right"),
                    None,
                ),
                "numeric_release": Options({"mean", "interval"}),
            },
            supported_models=CLASS_MODELS,
            needs_target=True,
            numeric_input="binned",
        ),
        AlgorithmEntry(
            name="pbg-ea",
            location="ppdm.algorithms.pbg_ea:PbgEa",
            summary=(
                "Evolutionary search of the generalization lattice for the Pareto "
                "front of privacy vs loss (Dewri et al. 2010)"
            ),
            parameters={
                "objectives": "k-glm",
                "population": 25,
                "generations": None,
                "p_cross": 0.8,
                "p_mut": None,
                "eps": 1.0,
                "policy": "min-glm",
                "selection": "union",
                "refine": "local",
                "budget": None,
            },
            constraints={
                "objectives": Options(PBG_OBJECTIVE_SETS),
                "population": Interval(numbers.Integral, 2, None),
                "generations": (Interval(numbers.Integral, 0, None), None),
                "p_cross": Interval(numbers.Real, 0.0, 1.0),
                "p_mut": (Interval(numbers.Real, 0.0, 1.0), None),
                "policy": Options(PBG_POLICIES),
                "selection": Options(("union", "archive")),
                "refine": Options(PBG_REFINEMENTS),
                "budget": (Interval(numbers.Integral, 1, None), None),
                "eps": PositiveNumbers(),
            },
            parameter_check=_pbg_eps,
            **_FULL_DOMAIN,
        ),
        AlgorithmEntry(
            name="lattice-optimal",
            location="ppdm.algorithms.lattice_optimal:LatticeOptimal",
            summary=(
                "Exact least-loss full-domain generalization meeting every privacy "
                "model and the suppression limit (pruned lattice search)"
            ),
            parameters={"loss": "glm"},
            constraints={"loss": Options(("glm", "cm"))},
            **_FULL_DOMAIN,
        ),
        AlgorithmEntry(
            name="approx-ac",
            location="ppdm.algorithms.approx_ac:ApproxAC",
            summary=(
                "k-anonymity by cell suppression for associative classification: "
                "greedy set cover (O(k log k)-approximation of the number of stars), "
                "reduction to a partition, suppression of non-constant cells"
            ),
            parameters={"mode": "auto", "exact_limit": 200_000, "minsup": 0.3},
            constraints={
                "mode": Options(APPROX_AC_MODES),
                "exact_limit": Interval(numbers.Integral, 1, None),
                "minsup": Interval(numbers.Real, 0.0, 1.0, closed="right"),
            },
            needs_target=True,
            numeric_input="binned",
        ),
        AlgorithmEntry(
            name="dmpd",
            location="ppdm.algorithms.dmpd:Dmpd",
            summary=(
                "Projections of disjoint feature groups, each and each join of two "
                "k-anonymous, chosen by a genetic search (Matatov et al. 2010)"
            ),
            parameters={
                "generations": 100,
                "population": 50,
                "p_cross": 0.8,
                "p_mut": 0.1,
                "n_folds": 3,
                "inducer": "decision_tree",
                "mode": "single",
            },
            constraints={
                "generations": Interval(numbers.Integral, 0, None),
                "population": Interval(numbers.Integral, 2, None),
                "p_cross": Interval(numbers.Real, 0.0, 1.0),
                "p_mut": Interval(numbers.Real, 0.0, 1.0),
                "n_folds": Interval(numbers.Integral, 2, 20),
                "inducer": Options(DMPD_INDUCERS),
                "mode": Options(DMPD_MODES),
            },
            supported_models=CLASS_MODELS
            | {SetAnonymity.name, PartitionAnonymity.name},
            needs_target=True,
            numeric_input="binned",
            releases="projections",
            adapt=_with_join_anonymity,
        ),
        AlgorithmEntry(
            name="fs-anonymity",
            location="ppdm.algorithms.fs_anonymity:FsAnonymity",
            summary=(
                "Feature selection: the quasi-identifiers' 0/1 features whose "
                "projection is k-anonymous (or, opt-in, by containment), chosen by "
                "Greedy (DistCnt, HamDist) or Maximal"
            ),
            parameters={
                "method": "greedy",
                "objective": "distcnt",
                "stopping": "filtered",
                "maximal_mode": "exact",
                "r": 10,
                "budget": 20_000,
                "criterion": "k-anonymity",
            },
            constraints={
                "method": Options({"greedy", "maximal"}),
                "objective": Options({"distcnt", "hamdist"}),
                "stopping": Options({"filtered", "literal"}),
                "maximal_mode": Options({"exact", "frequent"}),
                "r": Interval(numbers.Integral, 1, None),
                "budget": Interval(numbers.Integral, 1, None),
                "criterion": Options({"k-anonymity", "containment"}),
            },
            supported_models=FS_MODELS,
            needs_target=True,
            numeric_input="binned",
            releases="columns",
            adapt=_containment_criterion,
            refusal=_feature_release_refusal,
        ),
        AlgorithmEntry(
            name="safepub",
            location="ppdm.algorithms.safepub:SafePub",
            summary=(
                "Differentially private (epsilon, delta) release: random sampling, a "
                "full-domain generalization chosen by the exponential mechanism, "
                "suppression of classes below the derived k (Bild et al. 2018)"
            ),
            parameters={
                "epsilon": 1.0,
                "delta": None,
                "search_fraction": 0.1,
                "steps": 300,
                "score": "classification",
                "randomness": "os",
                "key": "env:PPDM_AUDIT_KEY",
            },
            constraints={
                "epsilon": Interval(numbers.Real, 0, 5, "right"),
                "delta": (Interval(numbers.Real, 0, 1, "neither"), None),
                "search_fraction": Interval(numbers.Real, 0, 1, "neither"),
                "steps": Interval(numbers.Integral, 0, 100_000, "both"),
                "score": Options(SAFEPUB_SCORES),
                "randomness": Options(SAFEPUB_RANDOMNESS),
                "key": KeySpec(),
            },
            uses_hierarchies=True,
            needs_target=True,
            numeric_input="raw",
        ),
    )
}


def registered() -> dict[str, AlgorithmEntry]:
    """Every algorithm a configuration may name, by registry name.

    The declared ones, plus any class registered at run time in
    :data:`ppdm.algorithms.ALGORITHMS` (a plugin, a test). Such a class is
    already imported, so reading it imports nothing; when the algorithm
    package is not loaded, nothing was registered at run time.
    """
    entries = dict(DECLARED)
    package = sys.modules.get("ppdm.algorithms")
    classes = getattr(package, "ALGORITHMS", None) or {}
    for name, cls in classes.items():
        declared = DECLARED.get(name)
        if declared is None or declared.load() is not cls:
            entries[name] = _entry_of_class(cls)
    return entries
