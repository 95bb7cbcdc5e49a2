"""Contract checks over the registries, after scikit-learn's ``estimator_checks``.

Every algorithm of :data:`ppdm.algorithms.ALGORITHMS` (plus the test-only
algorithms of ``tests/toy_algorithms.py``, registered for each test by the
``toy_algorithms`` fixture) and every privacy model of
:data:`ppdm.privacy.PRIVACY_MODELS` is checked here by being registered; no
check names an algorithm or a model.

Algorithms: the same seed gives byte-identical tables and evidence; the input
is never mutated; ``__init__`` stores its keyword-only parameters unchanged and
``get_params`` round-trips; ``capabilities()`` is well formed; infeasible and
unsupported requirements raise the project's errors; and the independent
verifier accepts every release made from random tables and random
requirements of the models the algorithm claims (or the algorithm raises
:class:`InfeasibleConstraintError`).

Privacy models: ``describe`` round-trips; ``check`` agrees with ``accepts``;
the pruning bounds are true lower bounds; ``decided_by_bounds`` and
``monotonic_under_generalization`` hold where declared; bad parameters raise
:class:`InvalidParameterError`.

Requirement: ``to_dict`` round-trips, and ``accepts_groups`` (codes of the
input) agrees with ``check`` on the materialized table, t-closeness's
whole-table reference included.

Random parameters of models are drawn by parameter name from the project's
vocabulary (``k``, ``l``, ``c``, ``t``, ``attribute``, ``ordered``); a model
registered with a parameter outside it fails :func:`test_model_parameters_are_in_the_vocabulary`
until a strategy is added here.
"""

from __future__ import annotations

import dataclasses
import inspect
import io
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from toy_algorithms import TOY_ALGORITHMS

from ppdm.algorithms import ALGORITHMS, Anonymizer, get_algorithm
from ppdm.algorithms.base import NUMERIC_INPUTS, RELEASE_KINDS
from ppdm.exceptions import (
    InfeasibleConstraintError,
    InvalidParameterError,
    UnsupportedRequirementError,
)
from ppdm.generalization.hierarchies import Hierarchy
from ppdm.model import AnonymizationSpec, AttributeKind, attribute_kind
from ppdm.prepare.discretize import discretize
from ppdm.privacy import (
    PRIVACY_MODELS,
    PrivacyModel,
    Requirement,
    TCloseness,
    model_from_description,
)
from ppdm.privacy.base import MAX_EXAMPLES
from ppdm.privacy.measures import ClassPartition
from ppdm.release.artifacts import canonical_json, table_to_csv_bytes
from ppdm.verify import verify_tables

#: Everything the algorithm checks run on: the package's registry and the toys.
CANDIDATES: dict[str, type[Anonymizer]] = {**ALGORITHMS, **TOY_ALGORITHMS}
ALGORITHM_NAMES = sorted(CANDIDATES)
MODEL_NAMES = sorted(PRIVACY_MODELS)
#: Models that judge equivalence classes (``accepts``, bounds); the others judge
#: the released tables together (:class:`ppdm.privacy.release_model.ReleaseModel`).
CLASS_MODEL_NAMES = [n for n in MODEL_NAMES if PRIVACY_MODELS[n].kind == "class"]
RELEASE_MODEL_NAMES = [n for n in MODEL_NAMES if PRIVACY_MODELS[n].kind == "release"]

SENSITIVE = "s"
TARGET = "y"
SEED = 20240517

#: Hypothesis settings of every property here: reproducible (derandomized, no
#: example database), bounded, no deadline (first calls compile caches). The
#: toy registration is a function-scoped fixture; it is idempotent, so sharing
#: it between examples is harmless.
CONTRACT = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=40,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
#: Examples per algorithm of the random-release property (each runs a search).
RELEASE_EXAMPLES = 100


@pytest.fixture(autouse=True)
def _toys_registered(toy_algorithms: dict) -> None:
    """Every check reads algorithms from the registry, the toys included."""


#: Where the checks keep the key of differentially private algorithms' keyed
#: randomness (set for every check by :func:`_contract_key`).
CONTRACT_KEY_VARIABLE = "PPDM_CONTRACT_RANDOMNESS_KEY"
#: Parameters of a differentially private algorithm (one whose
#: ``privacy_cost`` is not None) in these checks. Keyed randomness: by
#: default such an algorithm draws fresh operating-system randomness, which
#: no seed replays (that is its guarantee); keyed by a secret, the configured
#: seed gives byte-identical runs, so "same seed, same release" is checked
#: honestly on the keyed mode. A large delta and few search steps: the
#: tables here have 8-60 rows, and a delta an owner would choose (below
#: 1 / n) implies classes larger than the tables; these checks are about the
#: contract's mechanics, not the strength of the guarantee.
DP_CONTRACT_PARAMS = {
    "randomness": "keyed",
    "key": f"env:{CONTRACT_KEY_VARIABLE}",
    "epsilon": 2.0,
    "delta": 0.5,
    "steps": 3,
}


@pytest.fixture(autouse=True)
def _contract_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CONTRACT_KEY_VARIABLE, "contract-checks-key-0123456789abcdef")


def is_differentially_private(cls: type[Anonymizer]) -> bool:
    return cls().privacy_cost(100) is not None


def build(cls: type[Anonymizer], **params: Any) -> Anonymizer:
    """The algorithm as the checks run it: its defaults, or for a differentially
    private one :data:`DP_CONTRACT_PARAMS` (those it has), then ``params``."""
    if is_differentially_private(cls):
        names = cls._param_names()
        params = {
            **{p: v for p, v in DP_CONTRACT_PARAMS.items() if p in names},
            **params,
        }
    return cls(**params)


def algorithm_class(name: str) -> type[Anonymizer]:
    """The class registered under ``name`` (toys are registered by the fixture)."""
    return ALGORITHMS[name]


# ---------------------------------------------------------------------------
# Model parameters by the project's vocabulary
# ---------------------------------------------------------------------------
def init_fields(cls: type[PrivacyModel]) -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(cls) if f.init]


def is_integer(field: dataclasses.Field) -> bool:
    return field.type in ("int", int)


#: Values of a valid model, used where one fixed model is needed.
FRIENDLY = {"k": 3, "l": 2, "c": 3.0, "t": 0.6, "ordered": None}

#: Bad values by parameter name: each must raise InvalidParameterError.
BAD_VALUES: dict[str, list[Any]] = {
    "k": [0, -2, 2.5, True, "3", None],
    "l": [0, 0.5, -1, True, "2", None],
    "c": [0, -1.0, math.inf, True, "2", None],
    "t": [-0.1, 1.5, True, "0.3", None],
    "attribute": ["", None, 3],
    "ordered": ["yes", 1.5],
}


def parameter_strategy(
    field: dataclasses.Field, ranges: str
) -> st.SearchStrategy[Any] | None:
    """Values of one model parameter; ``ranges`` is "model" (full) or "release".

    ``release`` follows the algorithm contract: k in 2..5, l in 2..3, t in
    [0.3, 0.9]. Returns None for a name outside the vocabulary.
    """
    name, integer = field.name, is_integer(field)
    wide = ranges == "model"
    if name == "attribute":
        return st.just(SENSITIVE)
    if name == "k":
        return st.integers(1, 6) if wide else st.integers(2, 5)
    if name == "l":
        if integer:
            return st.integers(1, 4) if wide else st.integers(2, 3)
        low, high = (1.0, 4.0) if wide else (2.0, 3.0)
        return st.floats(low, high, allow_nan=False).map(lambda v: round(v, 3))
    if name == "c":
        return st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0] if wide else [1.5, 2.0, 3.0])
    if name == "t":
        low, high = (0.0, 1.0) if wide else (0.3, 0.9)
        return st.floats(low, high, allow_nan=False).map(lambda v: round(v, 3))
    if name == "ordered":
        # Ordered EMD needs ordered values; the random sensitive attributes
        # are text as often as numbers, so the test leaves it to the data.
        return st.sampled_from([None, False])
    return None


def model_strategy(
    name: str, ranges: str = "model", attribute: str = SENSITIVE
) -> st.SearchStrategy[PrivacyModel]:
    """Random valid instances of the registered model ``name``."""
    cls = PRIVACY_MODELS[name]
    parts: dict[str, st.SearchStrategy[Any]] = {}
    for field in init_fields(cls):
        strategy = parameter_strategy(field, ranges)
        assert strategy is not None, (
            f"model {name!r}: no strategy for parameter {field.name!r}; add one to "
            "parameter_strategy in tests/test_contracts.py"
        )
        parts[field.name] = (
            st.just(attribute) if field.name == "attribute" else strategy
        )
    return st.fixed_dictionaries(parts).map(
        lambda params: model_from_description({"model": name, **params})
    )


def friendly_model(name: str, attribute: str = SENSITIVE, **values: Any) -> Any:
    """A fixed valid model from :data:`FRIENDLY` (and ``values``)."""
    cls = PRIVACY_MODELS[name]
    chosen = {**FRIENDLY, "attribute": attribute, **values}
    params: dict[str, Any] = {}
    for field in init_fields(cls):
        value = chosen[field.name]
        if field.name == "l" and not is_integer(field):
            value = float(value)
        params[field.name] = value
    return model_from_description({"model": name, **params})


def has_field(name: str, field_name: str) -> bool:
    return any(f.name == field_name for f in init_fields(PRIVACY_MODELS[name]))


# ---------------------------------------------------------------------------
# Tables, hierarchies, specs
# ---------------------------------------------------------------------------
@st.composite
def person_tables(draw: st.DrawFn) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """A small table: 2-4 numeric or nominal QIs, a sensitive attribute, a target."""
    n = draw(st.integers(8, 36), label="rows")
    columns: dict[str, Any] = {}
    for i in range(draw(st.integers(2, 4), label="quasi-identifiers")):
        if draw(st.booleans(), label=f"q{i} numeric"):
            low = draw(st.integers(0, 60))
            span = draw(st.integers(1, 24))
            values = draw(
                st.lists(st.integers(low, low + span), min_size=n, max_size=n)
            )
            columns[f"q{i}"] = pd.array(values, dtype="int64")
        else:
            card = draw(st.integers(1, 5))
            codes = draw(st.lists(st.integers(0, card - 1), min_size=n, max_size=n))
            columns[f"q{i}"] = pd.array([f"v{i}.{c}" for c in codes], dtype="string")
    card = draw(st.integers(1, 4), label="sensitive values")
    codes = draw(st.lists(st.integers(0, card - 1), min_size=n, max_size=n))
    if draw(st.booleans(), label="numeric sensitive"):
        columns[SENSITIVE] = pd.array([10 * c for c in codes], dtype="int64")
    else:
        columns[SENSITIVE] = pd.array([f"s{c}" for c in codes], dtype="string")
    labels = draw(st.lists(st.sampled_from("pn"), min_size=n, max_size=n))
    columns[TARGET] = pd.array(labels, dtype="string")
    table = pd.DataFrame(columns)
    qis = tuple(c for c in table.columns if c.startswith("q"))
    return table, qis


def fixed_table(n: int = 60) -> pd.DataFrame:
    """A 60-row table where 3-anonymity and 2-diversity are easily met.

    The sensitive attribute is uniform over four values, so the fully
    generalized table meets every friendly model (:data:`FRIENDLY`).
    """
    rng = np.random.default_rng(7)
    return pd.DataFrame(
        {
            "age": pd.array(rng.integers(18, 70, n), dtype="int64"),
            "zip": pd.array(
                rng.choice(["130", "148", "149", "150"], n), dtype="string"
            ),
            "sex": pd.array(rng.choice(["F", "M"], n), dtype="string"),
            SENSITIVE: pd.array(np.tile(["flu", "cold", "hiv", "ulcer"], n // 4)),
            TARGET: pd.array(rng.choice(["p", "n"], n), dtype="string"),
        }
    ).astype({SENSITIVE: "string"})


FIXED_QIS = ("age", "zip", "sex")


def hierarchies_for(
    table: pd.DataFrame, quasi_identifiers: tuple[str, ...]
) -> dict[str, Hierarchy]:
    """Hierarchies built from the table's own values.

    Numbers: nested intervals of widths 3, 6, 12, ... from the column's
    minimum, then ``*``. Other values: value -> pair of values -> ``*`` (or
    value -> ``*`` for two values or fewer).
    """
    out: dict[str, Hierarchy] = {}
    for q in quasi_identifiers:
        column = table[q]
        if attribute_kind(column) is AttributeKind.NUMERIC:
            low, high = int(column.min()), int(column.max())
            widths = [w for w in (3, 6, 12, 24, 48) if w <= high - low + 1]
            out[q] = Hierarchy.from_intervals(
                q, minimum=low, maximum=high, widths=widths, origin=low, source=q
            )
            continue
        values = sorted({str(v) for v in column.dropna()})
        if len(values) > 2:
            rows = [[v, f"{q}-group-{i // 2}", "*"] for i, v in enumerate(values)]
        else:
            rows = [[v, "*"] for v in values]
        out[q] = Hierarchy.from_rows(q, rows, source=q)
    return out


def prepare_input(
    cls: type[Anonymizer],
    table: pd.DataFrame,
    quasi_identifiers: tuple[str, ...],
    *,
    bin_numeric: bool,
) -> tuple[pd.DataFrame, dict[str, Hierarchy] | None]:
    """The table as the pipeline hands it to ``cls``, with hierarchies if used.

    ``numeric_input == "binned"`` bins numeric QIs (equal frequency, 3 bins);
    ``"raw"`` never does; ``"either"`` bins when ``bin_numeric``.
    """
    binned = cls.numeric_input == "binned" or (
        cls.numeric_input == "either" and bin_numeric
    )
    numeric = [
        q
        for q in quasi_identifiers
        if attribute_kind(table[q]) is AttributeKind.NUMERIC
    ]
    if binned and numeric:
        table = discretize(
            table, numeric, None, method="equal-frequency", n_bins=3
        ).table
    hierarchies = (
        hierarchies_for(table, quasi_identifiers) if cls.uses_hierarchies else None
    )
    return table, hierarchies


def spec_for(
    cls: type[Anonymizer],
    requirement: Requirement,
    hierarchies: Mapping[str, Hierarchy] | None,
    *,
    target: str | None = TARGET,
    suppression_limit: float = 0.0,
) -> AnonymizationSpec:
    if cls.needs_target:
        target = TARGET
    return AnonymizationSpec(requirement, target, suppression_limit, hierarchies)


def fixed_requirement(cls: type[Anonymizer], *names: str, k: int = 3) -> Requirement:
    """k-anonymity (when supported) plus the friendly models ``names``."""
    models = []
    if "k-anonymity" in cls.supported_models:
        models.append(friendly_model("k-anonymity", k=k))
    models.extend(friendly_model(n) for n in names if n != "k-anonymity")
    return Requirement(FIXED_QIS, tuple(models))


def published(tables: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The tables as the verifier reads published CSVs: every cell text."""
    return {
        name: pd.read_csv(
            io.BytesIO(table_to_csv_bytes(frame)),
            dtype=str,
            keep_default_na=False,
            na_filter=False,
        )
        for name, frame in tables.items()
    }


def assert_unchanged(after: pd.DataFrame, before: pd.DataFrame) -> None:
    """Deep equality: values, dtypes, categories, index and column order."""
    assert list(after.columns) == list(before.columns)
    assert after.dtypes.equals(before.dtypes), (after.dtypes, before.dtypes)
    pd.testing.assert_frame_equal(
        after, before, check_exact=True, check_categorical=True, check_flags=True
    )


def assert_release_verified(
    cls: type[Anonymizer], release: Any, requirement: Requirement
) -> None:
    """The release has the declared shape and the verifier accepts it."""
    tables = dict(release.tables)
    assert tables, "the release holds no table"
    if cls.releases == "table":
        assert len(tables) == 1, sorted(tables)
    if cls.releases in ("table", "columns"):
        (frame,) = tables.values()
        missing = [q for q in requirement.quasi_identifiers if q not in frame.columns]
        assert cls.releases == "columns" or not missing, missing
    if cls.releases == "projections":  # one projection is a partitioning too
        assert len(tables) >= 1, sorted(tables)
    certificate = verify_tables(tables, requirement)
    assert certificate.passed, certificate.summary()
    as_published = verify_tables(published(tables), requirement)
    assert as_published.passed, as_published.summary()


# ---------------------------------------------------------------------------
# Parametrisations, from the registries
# ---------------------------------------------------------------------------
def _pairs(select) -> list[Any]:
    return [
        pytest.param(a, m, id=f"{a}-{m}")
        for a in ALGORITHM_NAMES
        for m in MODEL_NAMES
        if select(CANDIDATES[a], m)
    ]


SUPPORTED = _pairs(lambda cls, m: m in cls.supported_models)
UNSUPPORTED = _pairs(lambda cls, m: m not in cls.supported_models)
#: Supported models with an ``l`` (a distinct-values bound to exceed).
SUPPORTED_L = _pairs(lambda cls, m: m in cls.supported_models and has_field(m, "l"))
NEEDS_TARGET = [a for a in ALGORITHM_NAMES if CANDIDATES[a].needs_target]
CONSTRAINED_PARAMS = [
    pytest.param(a, p, id=f"{a}-{p}")
    for a in ALGORITHM_NAMES
    for p in sorted(CANDIDATES[a]._parameter_constraints)
]


# ---------------------------------------------------------------------------
# Algorithms
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "model"), SUPPORTED)
def test_same_seed_gives_identical_release(name: str, model: str) -> None:
    cls = algorithm_class(name)
    requirement = fixed_requirement(cls, model)
    table, hierarchies = prepare_input(cls, fixed_table(), FIXED_QIS, bin_numeric=False)
    spec = spec_for(cls, requirement, hierarchies, suppression_limit=0.1)

    runs = []
    for _ in range(2):
        algorithm = build(cls)
        params = algorithm.get_params()
        release = algorithm.anonymize(table, spec, np.random.default_rng(SEED))
        assert algorithm.get_params() == params, "anonymize changed a parameter"
        assert release.algorithm == name
        assert dict(release.params) == params
        runs.append(
            (
                {n: table_to_csv_bytes(t) for n, t in sorted(release.tables.items())},
                canonical_json(dict(release.evidence)),
            )
        )
    (tables_1, evidence_1), (tables_2, evidence_2) = runs
    assert sorted(tables_1) == sorted(tables_2)
    for table_name in tables_1:
        assert tables_1[table_name] == tables_2[table_name], table_name
    assert evidence_1 == evidence_2
    # The evidence is JSON without falling back to str() for unknown objects.
    json.dumps(dict(release.evidence), allow_nan=False)
    assert_release_verified(cls, release, requirement)


@pytest.mark.parametrize("name", ALGORITHM_NAMES)
@pytest.mark.parametrize("bin_numeric", [False, True], ids=["raw", "binned"])
def test_input_table_is_not_mutated(name: str, bin_numeric: bool) -> None:
    cls = algorithm_class(name)
    table, hierarchies = prepare_input(
        cls, fixed_table(), FIXED_QIS, bin_numeric=bin_numeric
    )
    # An index that is not 0..n-1 catches code that assumes it.
    table = table.set_axis(np.arange(len(table))[::-1] * 3 + 5)
    before = table.copy(deep=True)
    spec = spec_for(cls, fixed_requirement(cls), hierarchies, suppression_limit=0.1)
    release = build(cls).anonymize(table, spec, np.random.default_rng(SEED))
    assert_unchanged(table, before)
    for frame in release.tables.values():
        assert frame is not table


@pytest.mark.parametrize("name", ALGORITHM_NAMES)
def test_params_are_keyword_only_stored_unchanged_and_round_trip(name: str) -> None:
    cls = algorithm_class(name)
    signature = inspect.signature(cls.__init__)
    for parameter in list(signature.parameters.values())[1:]:
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, parameter
        assert parameter.default is not inspect.Parameter.empty, parameter

    algorithm = cls()
    params = algorithm.get_params()
    assert list(params) == cls.capabilities()["parameters"]
    assert type(algorithm)(**params).get_params() == params
    assert get_algorithm(name, **params).get_params() == params
    algorithm.check_params()  # the defaults are valid

    # __init__ stores what it is given, unvalidated, and sets nothing else.
    sentinels = {p: object() for p in params}
    stored = cls(**sentinels)
    for p, sentinel in sentinels.items():
        assert stored.get_params()[p] is sentinel, p
    assert set(vars(stored)) == set(params)


@pytest.mark.parametrize("name", ALGORITHM_NAMES)
def test_every_algorithm_parameter_has_a_constraint(name: str) -> None:
    """As scikit-learn's check_param_validation: a configuration's value of any
    parameter is checked when the configuration is loaded, never first inside
    the anonymize step."""
    cls = algorithm_class(name)
    assert sorted(cls._param_names()) == sorted(cls._parameter_constraints)


@pytest.mark.parametrize(("name", "parameter"), CONSTRAINED_PARAMS)
def test_bad_algorithm_parameter_raises_naming_it(name: str, parameter: str) -> None:
    cls = algorithm_class(name)
    assert parameter in cls._param_names(), "constraint on an unknown parameter"
    algorithm = cls(**{parameter: object()})
    with pytest.raises(InvalidParameterError, match=repr(parameter)):
        algorithm.check_params()
    table, hierarchies = prepare_input(cls, fixed_table(), FIXED_QIS, bin_numeric=False)
    spec = spec_for(cls, fixed_requirement(cls), hierarchies)
    with pytest.raises(InvalidParameterError, match=repr(parameter)):
        algorithm.anonymize(table, spec, np.random.default_rng(SEED))


@pytest.mark.parametrize("name", ALGORITHM_NAMES)
def test_capabilities_are_well_formed(name: str) -> None:
    cls = algorithm_class(name)
    assert cls.name == name
    assert isinstance(cls.summary, str) and cls.summary.strip()
    caps = cls.capabilities()
    assert set(caps) == {
        "models",
        "needs_target",
        "uses_hierarchies",
        "numeric_input",
        "releases",
        "frequency_table",
        "parameters",
    }
    assert caps["models"] == sorted(set(caps["models"])) and caps["models"]
    assert set(caps["models"]) <= set(PRIVACY_MODELS), caps["models"]
    assert isinstance(caps["needs_target"], bool)
    assert isinstance(caps["uses_hierarchies"], bool)
    assert caps["numeric_input"] in NUMERIC_INPUTS
    assert caps["releases"] in RELEASE_KINDS
    assert caps["parameters"] == list(inspect.signature(cls.__init__).parameters)[1:]
    assert json.loads(json.dumps(caps)) == caps


@pytest.mark.parametrize("name", ALGORITHM_NAMES)
def test_k_above_rows_is_infeasible(name: str) -> None:
    cls = algorithm_class(name)
    table, hierarchies = prepare_input(cls, fixed_table(), FIXED_QIS, bin_numeric=False)
    before = table.copy(deep=True)
    spec = spec_for(cls, fixed_requirement(cls, k=len(table) + 1), hierarchies)
    with pytest.raises(InfeasibleConstraintError, match=str(len(table))):
        build(cls).anonymize(table, spec, np.random.default_rng(SEED))
    assert_unchanged(table, before)


@pytest.mark.parametrize(("name", "model"), SUPPORTED_L)
def test_l_above_distinct_values_is_infeasible(name: str, model: str) -> None:
    cls = algorithm_class(name)
    table, hierarchies = prepare_input(cls, fixed_table(), FIXED_QIS, bin_numeric=False)
    present = table[SENSITIVE].nunique()
    requirement = Requirement(
        FIXED_QIS,
        (
            *fixed_requirement(cls).models,
            friendly_model(model, l=present + 1),
        ),
    )
    spec = spec_for(cls, requirement, hierarchies)
    with pytest.raises(InfeasibleConstraintError, match=repr(SENSITIVE)):
        build(cls).anonymize(table, spec, np.random.default_rng(SEED))


@pytest.mark.parametrize(("name", "model"), UNSUPPORTED)
def test_unsupported_model_is_refused(name: str, model: str) -> None:
    cls = algorithm_class(name)
    table, hierarchies = prepare_input(cls, fixed_table(), FIXED_QIS, bin_numeric=False)
    requirement = Requirement(
        FIXED_QIS,
        (
            *(m for m in fixed_requirement(cls).models if m.name != model),
            friendly_model(model),
        ),
    )
    with pytest.raises(UnsupportedRequirementError, match=model):
        cls.check_requirement(requirement, target=TARGET)
    spec = spec_for(cls, requirement, hierarchies)
    with pytest.raises(UnsupportedRequirementError, match=model):
        build(cls).anonymize(table, spec, np.random.default_rng(SEED))


@pytest.mark.parametrize("name", NEEDS_TARGET)
def test_missing_target_is_refused(name: str) -> None:
    cls = algorithm_class(name)
    table, hierarchies = prepare_input(cls, fixed_table(), FIXED_QIS, bin_numeric=False)
    spec = AnonymizationSpec(fixed_requirement(cls), None, 0.0, hierarchies)
    with pytest.raises(UnsupportedRequirementError, match="target"):
        build(cls).anonymize(table, spec, np.random.default_rng(SEED))


@pytest.mark.parametrize(("name", "model"), SUPPORTED)
def test_releases_when_full_generalization_would_do(name: str, model: str) -> None:
    """Not vacuous: where the fully generalized table meets a supported model
    (and 3-anonymity), the algorithm releases, and the verifier accepts."""
    cls = algorithm_class(name)
    table, hierarchies = prepare_input(cls, fixed_table(), FIXED_QIS, bin_numeric=False)
    requirement = fixed_requirement(cls, model)
    everything = table.assign(**{q: "*" for q in FIXED_QIS})
    assert all(r.passed for r in requirement.check(everything))  # the premise
    spec = spec_for(cls, requirement, hierarchies)
    # A differentially private search may rightly choose a node that releases
    # nothing; with no search step its only candidate is the top node.
    algorithm = build(cls, steps=0) if is_differentially_private(cls) else build(cls)
    release = algorithm.anonymize(table, spec, np.random.default_rng(SEED))
    assert_release_verified(cls, release, requirement)


@st.composite
def release_requirements(
    draw: st.DrawFn, cls: type[Anonymizer], quasi_identifiers: tuple[str, ...]
) -> Requirement:
    """k-anonymity (when supported) and any other models ``cls`` claims."""
    names = sorted(cls.supported_models)
    chosen = [n for n in names if n == "k-anonymity" or draw(st.booleans(), label=n)]
    if not chosen:
        chosen = [draw(st.sampled_from(names))]
    models = tuple(draw(model_strategy(n, "release"), label=n) for n in chosen)
    return Requirement(quasi_identifiers, models)


@pytest.mark.parametrize("name", ALGORITHM_NAMES)
@settings(CONTRACT, max_examples=RELEASE_EXAMPLES)
@given(data=st.data())
def test_verifier_accepts_releases_of_random_tables(
    name: str, data: st.DataObject
) -> None:
    """Random table and requirement: InfeasibleConstraintError, or a verified release."""
    cls = algorithm_class(name)
    table, qis = data.draw(person_tables(), label="table")
    requirement = data.draw(release_requirements(cls, qis), label="requirement")
    bin_numeric = data.draw(st.booleans(), label="bin numeric")
    target = data.draw(st.sampled_from([TARGET, None]), label="target")
    limit = data.draw(st.sampled_from([0.0, 0.1, 0.3]), label="suppression limit")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    table, hierarchies = prepare_input(cls, table, qis, bin_numeric=bin_numeric)
    spec = spec_for(
        cls, requirement, hierarchies, target=target, suppression_limit=limit
    )
    before = table.copy(deep=True)
    try:
        release = build(cls).anonymize(table, spec, np.random.default_rng(seed))
    except InfeasibleConstraintError:
        event("infeasible")
        assert_unchanged(table, before)
        return
    event("released")
    assert_unchanged(table, before)
    assert_release_verified(cls, release, requirement)


# ---------------------------------------------------------------------------
# Privacy models
# ---------------------------------------------------------------------------
@st.composite
def partitions(
    draw: st.DrawFn, max_rows: int = 40
) -> tuple[np.ndarray, int, pd.Series]:
    """Group ids 0..n_groups-1 (all used) and a sensitive column of the rows."""
    n = draw(st.integers(1, max_rows))
    raw = np.array(draw(st.lists(st.integers(0, 7), min_size=n, max_size=n)))
    _, ids = np.unique(raw, return_inverse=True)
    card = draw(st.integers(1, 5))
    codes = draw(st.lists(st.integers(0, card - 1), min_size=n, max_size=n))
    if draw(st.booleans()):
        values = pd.Series(pd.array([3 * c for c in codes], dtype="int64"))
    else:
        values = pd.Series(pd.array([f"s{c}" for c in codes], dtype="string"))
    return ids.astype(np.int64), int(ids.max()) + 1, values.rename(SENSITIVE)


def group_table(ids: np.ndarray, sensitive: pd.Series) -> pd.DataFrame:
    """Materialized release whose classes over ("g1", "g2") are the groups, in order."""
    return pd.DataFrame(
        {
            "g1": ids // 3,
            "g2": pd.array([f"x{v}" for v in ids % 3], dtype="string"),
            SENSITIVE: sensitive.to_numpy(),
        }
    ).astype({SENSITIVE: sensitive.dtype})


GROUP_QIS = ("g1", "g2")


def sizes_and_distinct(
    ids: np.ndarray, n_groups: int, sensitive: pd.Series
) -> tuple[np.ndarray, np.ndarray]:
    """Rows and distinct sensitive values per group, by plain pandas."""
    frame = pd.DataFrame({"g": ids, "v": sensitive.astype(str).to_numpy()})
    grouped = frame.groupby("g")["v"]
    sizes = grouped.size().reindex(range(n_groups)).to_numpy()
    distinct = grouped.nunique().reindex(range(n_groups)).to_numpy()
    return sizes, distinct


def accepted_by(
    model: PrivacyModel, ids: np.ndarray, n_groups: int, sensitive: pd.Series
) -> np.ndarray:
    partition = ClassPartition.of(group_table(ids, sensitive), GROUP_QIS)
    assert partition.n_classes == n_groups
    return model.accepts(partition)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_model_parameters_are_in_the_vocabulary(name: str) -> None:
    cls = PRIVACY_MODELS[name]
    assert cls.name == name
    fields = init_fields(cls)
    assert [f.name for f in fields] == list(inspect.signature(cls).parameters)
    for field in fields:
        assert parameter_strategy(field, "model") is not None, field.name
        assert field.name in BAD_VALUES, field.name
    assert cls.uses_sensitive_attribute == any(f.name == "attribute" for f in fields)


@pytest.mark.parametrize("name", MODEL_NAMES)
@CONTRACT
@given(data=st.data())
def test_model_describe_round_trips(name: str, data: st.DataObject) -> None:
    model = data.draw(model_strategy(name), label="model")
    description = model.describe()
    assert description["model"] == name
    assert json.loads(json.dumps(description)) == description
    assert type(model).from_description(description) == model
    assert model_from_description(description) == model
    assert model_from_description(json.loads(json.dumps(description))) == model
    assert isinstance(str(model), str) and str(model).strip()
    assert hash(model) == hash(model_from_description(description))


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_model_description_with_unknown_parameter_is_refused(name: str) -> None:
    description = friendly_model(name).describe()
    with pytest.raises(InvalidParameterError, match="unknown parameter"):
        model_from_description({**description, "colour": "blue"})
    with pytest.raises(InvalidParameterError, match="unknown privacy model"):
        model_from_description({**description, "model": name + "-x"})


@pytest.mark.parametrize(
    ("name", "parameter", "value"),
    [
        pytest.param(n, f.name, v, id=f"{n}-{f.name}={v!r}")
        for n in MODEL_NAMES
        for f in init_fields(PRIVACY_MODELS[n])
        for v in BAD_VALUES.get(f.name, [])
    ],
)
def test_model_bad_parameter_raises(name: str, parameter: str, value: Any) -> None:
    description = {**friendly_model(name).describe(), parameter: value}
    with pytest.raises(InvalidParameterError, match=parameter):
        model_from_description(description)
    params = {k: v for k, v in description.items() if k != "model"}
    with pytest.raises(InvalidParameterError):
        PRIVACY_MODELS[name](**params)


@pytest.mark.parametrize("name", CLASS_MODEL_NAMES)
@CONTRACT
@given(data=st.data())
def test_model_check_agrees_with_accepts(name: str, data: st.DataObject) -> None:
    model = data.draw(model_strategy(name), label="model")
    ids, n_groups, sensitive = data.draw(partitions(), label="partition")
    table = group_table(ids, sensitive)
    accepted = accepted_by(model, ids, n_groups, sensitive)
    result = model.check(table, GROUP_QIS)
    sizes, _ = sizes_and_distinct(ids, n_groups, sensitive)
    assert result.passed == bool(accepted.all())
    assert result.n_classes == n_groups
    assert result.n_violating_classes == int((~accepted).sum())
    assert result.n_violating_rows == int(sizes[~accepted].sum())
    # Examples are violating classes, each with its QI values.
    failing = {(int(g // 3), f"x{g % 3}") for g in np.flatnonzero(~accepted)}
    for example in result.examples:
        assert (example["g1"], example["g2"]) in failing
    assert len(result.examples) == min(len(failing), MAX_EXAMPLES)


@pytest.mark.parametrize("name", CLASS_MODEL_NAMES)
@CONTRACT
@given(data=st.data())
def test_model_bounds_are_lower_bounds(name: str, data: st.DataObject) -> None:
    model = data.draw(model_strategy(name), label="model")
    ids, n_groups, sensitive = data.draw(partitions(), label="partition")
    accepted = accepted_by(model, ids, n_groups, sensitive)
    sizes, distinct = sizes_and_distinct(ids, n_groups, sensitive)
    assert (sizes[accepted] >= model.minimal_class_size).all()
    if model.uses_sensitive_attribute:
        assert (distinct[accepted] >= model.minimal_distinct_values).all()
    else:
        assert model.minimal_distinct_values == 1


@pytest.mark.parametrize("name", RELEASE_MODEL_NAMES)
@CONTRACT
@given(data=st.data())
def test_release_model_ignores_row_and_table_order(
    name: str, data: st.DataObject
) -> None:
    """A release model's verdict reads the released values, never their order."""
    model = data.draw(model_strategy(name), label="model")
    n = data.draw(st.integers(4, 30), label="rows")
    q1 = data.draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n))
    q2 = data.draw(st.lists(st.sampled_from("de"), min_size=n, max_size=n))
    y = data.draw(st.lists(st.sampled_from("01"), min_size=n, max_size=n))
    first = pd.DataFrame({"q1": q1, TARGET: y})
    second = pd.DataFrame(
        {"q2=d": [int(v == "d") for v in q2], "q2=e": [int(v == "e") for v in q2]}
    ).astype(str)
    second[TARGET] = y
    tables = {"projection-1": first.astype(str), "projection-2": second}
    qis = ("q1", "q2")
    result = model.check_release(tables, qis)
    order = data.draw(st.permutations(range(n)), label="row order")
    shuffled = {
        name: t.iloc[list(order)].reset_index(drop=True)
        for name, t in reversed(tables.items())
    }
    again = model.check_release(shuffled, qis)
    assert (again.passed, again.achieved) == (result.passed, result.achieved)
    json.dumps(result.to_dict())


DECIDED_BY_BOUNDS = [
    n for n in CLASS_MODEL_NAMES if PRIVACY_MODELS[n].decided_by_bounds
]
MONOTONIC = [
    n for n in CLASS_MODEL_NAMES if PRIVACY_MODELS[n].monotonic_under_generalization
]


@pytest.mark.parametrize("name", DECIDED_BY_BOUNDS)
@CONTRACT
@given(data=st.data())
def test_decided_by_bounds_means_the_bounds_decide(
    name: str, data: st.DataObject
) -> None:
    model = data.draw(model_strategy(name), label="model")
    ids, n_groups, sensitive = data.draw(partitions(), label="partition")
    accepted = accepted_by(model, ids, n_groups, sensitive)
    sizes, distinct = sizes_and_distinct(ids, n_groups, sensitive)
    by_bounds = (sizes >= model.minimal_class_size) & (
        distinct >= model.minimal_distinct_values
    )
    np.testing.assert_array_equal(accepted, by_bounds)


@pytest.mark.parametrize("name", MONOTONIC)
@CONTRACT
@given(data=st.data())
def test_merging_accepted_classes_is_accepted(name: str, data: st.DataObject) -> None:
    model = data.draw(model_strategy(name), label="model")
    ids, n_groups, sensitive = data.draw(partitions(), label="partition")
    accepted = np.flatnonzero(accepted_by(model, ids, n_groups, sensitive))
    for i, a in enumerate(accepted):
        for b in accepted[i + 1 :]:
            merged = np.where(ids == b, a, ids)
            _, compact = np.unique(merged, return_inverse=True)
            after = accepted_by(model, compact, n_groups - 1, sensitive)
            assert after[compact[np.flatnonzero(ids == a)[0]]], (a, b)


# ---------------------------------------------------------------------------
# Requirement
# ---------------------------------------------------------------------------
@st.composite
def requirements(
    draw: st.DrawFn,
    quasi_identifiers: tuple[str, ...] = GROUP_QIS,
    names: Sequence[str] = tuple(CLASS_MODEL_NAMES),
) -> Requirement:
    """Registered models, at most one per (name, attribute), on "s" and "s2".

    Class models by default (the checks that ask models about groups); the
    round trip draws every registered model.
    """
    models: list[PrivacyModel] = []
    for name in names:
        if has_field(name, "attribute"):
            for attribute in (SENSITIVE, "s2"):
                if draw(st.booleans(), label=f"{name} on {attribute}"):
                    models.append(draw(model_strategy(name, "model", attribute)))
        elif draw(st.booleans(), label=name):
            models.append(draw(model_strategy(name)))
    if not models:
        models.append(draw(model_strategy(draw(st.sampled_from(list(names))))))
    marker = draw(st.sampled_from(["*", "?", "SUPPRESSED"]))
    return Requirement(quasi_identifiers, tuple(models), marker)


@CONTRACT
@given(requirement=requirements(("age", "zip", "sex"), tuple(MODEL_NAMES)))
def test_requirement_dict_round_trips(requirement: Requirement) -> None:
    d = requirement.to_dict()
    assert Requirement.from_dict(d) == requirement
    assert Requirement.from_dict(json.loads(json.dumps(d))) == requirement
    assert list(d) == ["quasi_identifiers", "models", "suppression_marker"]
    assert d["models"] == [m.describe() for m in requirement.models]
    with pytest.raises(InvalidParameterError):
        Requirement.from_dict({**d, "unknown": 1})


@CONTRACT
@given(data=st.data())
def test_accepts_groups_agrees_with_check_on_materialized_table(
    data: st.DataObject,
) -> None:
    """Two computations of one answer: codes of the input vs the released table."""
    requirement = data.draw(requirements(), label="requirement")
    ids, n_groups, sensitive = data.draw(partitions(), label="partition")
    second = data.draw(partitions(max_rows=len(ids)), label="second attribute")[2]
    table = group_table(ids, sensitive)
    table["s2"] = np.resize(second.to_numpy(), len(ids))
    table = table.astype({"s2": second.dtype})
    encoded = requirement.encode(table)
    sizes, _ = sizes_and_distinct(ids, n_groups, sensitive)

    results = requirement.check(table)
    every = np.ones(n_groups, dtype=bool)
    for model, result in zip(requirement.models, results, strict=True):
        single = Requirement(GROUP_QIS, (model,))
        accepted = single.accepts_groups(ids, n_groups, encoded)
        assert result.passed == bool(accepted.all()), model
        assert result.n_violating_classes == int((~accepted).sum()), model
        assert result.n_violating_rows == int(sizes[~accepted].sum()), model
        every &= accepted
    np.testing.assert_array_equal(
        requirement.accepts_groups(ids, n_groups, encoded), every
    )


@CONTRACT
@given(data=st.data())
def test_accepts_groups_on_a_subset_compares_with_the_whole_table(
    data: st.DataObject,
) -> None:
    """Groups of some rows only: t-closeness's reference is still the whole table.

    The materialized table labels the considered rows by their group and the
    others by one extra class; the partition of that table computes each
    class's verdict from the released values, with the whole table's
    distribution.
    """
    requirement = data.draw(requirements(), label="requirement")
    _, _, sensitive = data.draw(partitions(), label="sensitive")
    n = len(sensitive)
    order = data.draw(st.permutations(range(n)), label="order")
    m = data.draw(st.integers(1, n), label="considered rows")
    rows = np.asarray(order[:m], dtype=np.int64)
    raw = np.array(data.draw(st.lists(st.integers(0, 5), min_size=m, max_size=m)))
    _, ids = np.unique(raw, return_inverse=True)
    n_groups = int(ids.max()) + 1
    labels = np.full(n, n_groups, dtype=np.int64)  # the rest: one more class
    labels[rows] = ids
    table = group_table(labels, sensitive)
    table["s2"] = table[SENSITIVE].iloc[::-1].to_numpy()
    encoded = requirement.encode(table)

    got = requirement.accepts_groups(ids, n_groups, encoded, rows=rows)
    partition = ClassPartition.of(table, GROUP_QIS)
    expected = requirement.accepts(partition)[:n_groups]
    np.testing.assert_array_equal(got, expected)


def test_t_closeness_of_a_subset_uses_the_whole_distribution() -> None:
    """Known answer: rows {0, 1} hold only "a" of a table half "a", half "b"."""
    table = pd.DataFrame({"g1": [0, 0, 0, 0], SENSITIVE: ["a", "a", "b", "b"]})
    requirement = Requirement(("g1",), (TCloseness(SENSITIVE, 0.4),))
    encoded = requirement.encode(table)
    rows = np.array([0, 1])
    # EMD to the whole table (0.5) exceeds 0.4; to the two rows' own
    # distribution it would be 0.
    assert not requirement.accepts_groups(np.zeros(2, int), 1, encoded, rows)[0]
    loose = Requirement(("g1",), (TCloseness(SENSITIVE, 0.5),))
    assert loose.accepts_groups(np.zeros(2, int), 1, loose.encode(table), rows)[0]
