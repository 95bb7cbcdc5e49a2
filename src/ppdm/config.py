"""The one configuration object of a release, read from YAML.

Unknown keys and out-of-range values are errors that name the key and the
allowed values, e.g. ``config adult.yaml: k = 0 is out of range; allowed: an
integer >= 1 and <= 1000000``.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    model_serializer,
    model_validator,
)

from ppdm import resources
from ppdm.algorithms import ALGORITHMS, Anonymizer, get_algorithm
from ppdm.compute_config import LEGACY_SECTIONS, ComputeConfig, fold_legacy_sections
from ppdm.exceptions import InvalidParameterError, UnknownDatasetError
from ppdm.identifiers import identifier_name
from ppdm.params import did_you_mean
from ppdm.prepare.target_check import DEFAULT_MAX_REJECTED_FRACTION, DEFAULT_TEST_SIZE
from ppdm.privacy import Requirement, model_from_description

__all__ = [
    "check_source_columns",
    "ROLES",
    "Role",
    "PassthroughLimits",
    "ReleaseConfig",
    "SourceConfig",
    "DiscretizeConfig",
    "ValidationLimits",
    "UtilityConfig",
    "ConfigError",
    "load_config",
    "parse_config",
    "default_config",
    "default_work_dir",
]

#: The role of a column: how it leaves the building (ARX's four attribute
#: kinds, plus what an analyst needs). ``identifying``: never released as is
#: (dropped, or a keyed pseudonym with ``pseudonymize: true``);
#: ``quasi_identifier``: generalized or suppressed by the algorithm;
#: ``sensitive``: released as is, protected by the privacy models;
#: ``insensitive``: released as is on purpose, checked by the verifier's
#: pass-through check; ``target``: the class an analyst predicts, released as
#: is; ``weight``: a survey weight, dropped unless named in ``keep_weights``;
#: ``drop``: never released.
Role = Literal[
    "identifying",
    "quasi_identifier",
    "sensitive",
    "insensitive",
    "target",
    "weight",
    "drop",
]
ROLES: tuple[str, ...] = get_args(Role)


def default_work_dir() -> Path:
    """Where intermediate artifacts (raw snapshot, clean table) live by default.

    ``$PPDM_WORK_DIR``, else ``$XDG_CACHE_HOME/ppdm/work`` (``~/.cache/ppdm/work``):
    never inside an output directory, which holds only what may be shared.
    """
    if os.environ.get("PPDM_WORK_DIR"):
        return Path(os.environ["PPDM_WORK_DIR"]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "ppdm" / "work"


class ConfigError(InvalidParameterError):
    """A release configuration is unreadable, has unknown keys or bad values."""


#: A number key: strictly a number (an integer is one; a boolean, a quoted
#: string, NaN and infinity are not). Integer keys are ``strict=True``: no
#: boolean (YAML's ``k: true`` would be k = 1), no string, no 2.0.
_NUMBER: dict[str, Any] = {"strict": True, "allow_inf_nan": False}


#: ``//user:password@`` in a URL (the user may be empty).
_URL_PASSWORD = re.compile(r"//[^:/@]*:[^@/]*@")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SourceConfig(_Strict):
    """Where the input table comes from."""

    kind: Literal["embedded", "csv", "parquet", "sql"] = "embedded"
    name: str | None = Field(None, description="embedded dataset name")
    path: str | None = Field(None, description="CSV or Parquet file")
    url: str | None = Field(None, description="SQLAlchemy database URL")
    query: str | None = Field(None, description="SQL query returning the table")
    delimiter: Literal[",", ";", "\t", "|"] | None = Field(
        None,
        description="field separator of a CSV file (default: a comma); ppdm init "
        "writes the one it finds",
    )
    password: str | None = Field(
        None,
        pattern=r"^[a-z-]+:.+$",
        description="where the database password is, for a URL without one: "
        "env:<VARIABLE> or prefect-secret:<block name>",
    )

    @property
    def location(self) -> str | None:
        """The file path (csv, parquet) or the database URL (sql); None when embedded."""
        return self.path or self.url

    def reader_options(self) -> dict[str, str | None]:
        """The keyword arguments every reader of :mod:`ppdm.prepare.ingest` takes.

        One place hands a source's settings to the readers, so a new key
        reaches the ingest step, pre-flight, ``ppdm compare`` and the attack
        harness alike.
        """
        return {
            "query": self.query,
            "embedded": self.name,
            "delimiter": self.delimiter,
            "password": self.password,
        }

    @model_serializer(mode="wrap")
    def _without_unset_password(self, handler: Any) -> dict[str, Any]:
        # Absent unless set: a configuration without one serialises (and so
        # hashes into its release id) exactly as before the key existed.
        data = handler(self)
        if self.password is None:
            data.pop("password", None)
        return data

    @model_validator(mode="after")
    def _needs(self) -> SourceConfig:
        needed = {
            "embedded": ["name"],
            "csv": ["path"],
            "parquet": ["path"],
            "sql": ["url", "query"],
        }[self.kind]
        missing = [key for key in needed if getattr(self, key) is None]
        if missing:
            raise ValueError(
                f"source kind {self.kind!r} needs key(s) {missing} under 'source'"
            )
        if self.delimiter is not None and self.kind != "csv":
            raise ValueError(
                f"source.delimiter is for CSV files; the source is of kind "
                f"{self.kind!r}"
            )
        if self.password is not None:
            if self.kind != "sql":
                raise ValueError(
                    f"source password is for a database (kind sql); kind is "
                    f"{self.kind!r}"
                )
            if _URL_PASSWORD.search(str(self.url)):
                raise ValueError(
                    "source url holds a password and source password names "
                    "another: keep the URL without one (user@host)"
                )
        return self


class DiscretizeConfig(_Strict):
    """How numeric quasi-identifiers become intervals before anonymization."""

    method: Literal["mdl", "equal-frequency", "none"] = "mdl"
    n_bins: int = Field(5, ge=2, le=100, strict=True)
    columns: list[str] | None = Field(
        None, description="numeric QIs to bin; default: every numeric QI"
    )


class ValidationLimits(_Strict):
    """Limits of the schema-validation step."""

    max_rejected_fraction: float = Field(
        DEFAULT_MAX_REJECTED_FRACTION, ge=0.0, le=1.0, **_NUMBER
    )


class PassthroughLimits(_Strict):
    """How much a column released as is may add to what singles people out.

    For each column released as is (role ``insensitive``, or a kept weight)
    the verifier adds it to the quasi-identifiers and measures the share of
    rows in classes below k, and how often it pins a quasi-identifier's raw
    value that the release generalized (a proxy, such as education-num for
    education).
    """

    max_below_k_share: float = Field(0.0, ge=0.0, le=1.0, **_NUMBER)
    max_proxy_share: float = Field(0.01, ge=0.0, le=1.0, **_NUMBER)


class RepublicationConfig(_Strict):
    """How a release is made safe next to the earlier releases of the same dataset.

    The earlier releases are those the output directory's audit log records
    for the dataset. ``hold-back`` (default): a class whose rows changed since
    an earlier release by a group the requirement would refuse (a differencing
    leak) is released as it was in the latest earlier release that holds it:
    its newcomers are held back until enough arrive, its departed rows stay.
    ``refuse``: publish nothing and name the leaking classes. ``off``: publish
    anyway; the certificate and the audit entry record the accepted risk.
    ``record_key``: a column of role ``identifying`` (never released) that
    follows each person from release to release, for the composition check.
    ``consistent``: rows are recoded into the latest earlier release's classes
    (the algorithm anonymizes those no class contains), then held back; for
    algorithms that release one table.
    """

    policy: Literal["hold-back", "consistent", "refuse", "off"] = "hold-back"
    against: Literal["all", "last"] = Field(
        "all", description="check against every earlier release or the last one"
    )
    record_key: str | None = Field(
        None,
        min_length=1,
        description="column of role 'identifying' that follows each person across "
        "releases (composition check); kept in the work directory, never released",
    )


class PrivacyBudgetConfig(_Strict):
    """A dataset's differential privacy budget across its release series.

    The differentially private releases of the dataset that the output
    directory's audit log records, composed (``basic``: epsilons and deltas
    add up; ``advanced``: Dwork, Rothblum and Vadhan 2010, with its slack
    ``delta_prime``), plus this release's cost must stay within ``epsilon``
    and ``delta`` (see :mod:`ppdm.release.budget`).
    """

    epsilon: float = Field(..., gt=0.0, **_NUMBER)
    delta: float = Field(0.0, ge=0.0, lt=1.0, **_NUMBER)
    composition: Literal["basic", "advanced"] = "basic"
    delta_prime: float | None = Field(
        None,
        gt=0.0,
        lt=1.0,
        description="advanced composition's slack delta', part of the composed "
        "delta (required for it)",
        **_NUMBER,
    )

    @model_validator(mode="after")
    def _slack(self) -> PrivacyBudgetConfig:
        if self.composition == "advanced":
            if self.delta_prime is None:
                raise ValueError(
                    "privacy_budget.composition 'advanced' needs delta_prime (the "
                    "slack delta' of Dwork, Rothblum and Vadhan's bound), e.g. 1e-6"
                )
            if self.delta_prime > self.delta:
                raise ValueError(
                    f"privacy_budget.delta_prime = {self.delta_prime:g} is above "
                    f"privacy_budget.delta = {self.delta:g}: the composed delta "
                    "includes delta_prime, so no release would fit"
                )
        elif self.delta_prime is not None:
            raise ValueError(
                "privacy_budget.delta_prime is for composition 'advanced'; "
                "composition is 'basic'"
            )
        return self


class UtilityConfig(_Strict):
    """The utility report's hold-out protocol."""

    test_size: float = Field(DEFAULT_TEST_SIZE, gt=0.0, lt=1.0, **_NUMBER)


class ReleaseConfig(_Strict):
    """Everything a release run needs; the flow's only parameter."""

    dataset: str = Field(..., min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    source: SourceConfig
    schema_name: str | None = Field(
        None,
        alias="schema",
        description="dataset folder (schema.yaml, suite.json; a relative path is "
        "read from the config file's folder) or the name of a shipped one; "
        "default: dataset",
    )
    columns: dict[str, Role] = Field(
        default_factory=dict,
        description="the role of every column of the source; quasi_identifiers, "
        "sensitive_attribute and target are derived from it when not given",
    )
    quasi_identifiers: list[str] = Field(..., min_length=1)
    sensitive_attribute: str | None = None
    target: str
    pseudonymize: bool = Field(
        False,
        strict=True,
        description="release identifying columns as keyed HMAC-SHA256 pseudonyms "
        "instead of dropping them",
    )
    pseudonym_key: str = Field(
        "env:PPDM_PSEUDONYM_KEY",
        pattern=r"^[a-z-]+:.+$",
        description="where the pseudonym key is: env:<VARIABLE> or "
        "prefect-secret:<block name>",
    )
    audit_key: str = Field(
        "env:PPDM_AUDIT_KEY",
        pattern=r"^[a-z-]+:.+$",
        description="the key that signs the audit log: env:<VARIABLE> or "
        "prefect-secret:<block name>",
    )
    keep_weights: list[str] = Field(
        default_factory=list, description="weight columns released as is"
    )
    accept_passthrough: list[str] = Field(
        default_factory=list,
        description="columns released as is although the pass-through check "
        "flags them (the report says so)",
    )
    acknowledge_identifier_passthrough: dict[str, str] = Field(
        default_factory=dict,
        description="columns of accept_passthrough that look like a direct "
        "identifier (named or valued like one, or more than 50% distinct), each "
        "with the data owner's own words on why releasing it as is is safe; "
        "without it such a column is refused",
    )
    passthrough: PassthroughLimits = PassthroughLimits()
    k: int = Field(10, ge=1, le=1_000_000, strict=True)
    l: int = Field(1, ge=1, le=1000, strict=True)  # noqa: E741 - the literature's name
    l_variant: Literal["distinct", "entropy", "recursive"] = "distinct"
    c: float | None = Field(
        None, gt=0.0, description="c of recursive (c,l)-diversity", **_NUMBER
    )
    t: float | None = Field(
        None, gt=0.0, le=1.0, description="t-closeness threshold", **_NUMBER
    )
    models: list[dict[str, Any]] = Field(
        default_factory=list,
        description="further privacy models, each {model: <registry name>, ...}",
    )
    suppression_limit: float = Field(0.01, ge=0.0, le=1.0, **_NUMBER)
    algorithm: str = "mondrian"
    params: dict[str, Any] = Field(default_factory=dict)
    discretize: DiscretizeConfig = DiscretizeConfig()
    validation: ValidationLimits = ValidationLimits()
    compute: ComputeConfig = Field(
        ComputeConfig(),
        description="where the work runs: the task runner, the in-memory or "
        "out-of-core engine, the verifier's engine and the one Dask cluster",
    )
    utility: UtilityConfig = UtilityConfig()
    republication: RepublicationConfig = RepublicationConfig()
    privacy_budget: PrivacyBudgetConfig | None = Field(
        None,
        description="the dataset's differential privacy budget {epsilon, delta, "
        "composition}: a differentially private release that would exceed it is "
        "refused before any step runs",
    )
    hierarchies: str | None = Field(
        None,
        description="directory of the dataset's generalization hierarchies, one "
        "file per attribute; default: the hierarchies shipped for the dataset",
    )
    seed: int = Field(0, ge=0, le=2**32 - 1, strict=True)
    output_dir: str = "releases"
    work_dir: str | None = Field(
        None,
        description="artifact store of the intermediate artifacts (raw data: keep "
        "it private); default: $PPDM_WORK_DIR or ~/.cache/ppdm/work",
    )

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    _requirement: Requirement = PrivateAttr()
    _deprecations: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _fold_legacy_compute(cls, data: Any, handler: Any) -> Any:
        # Configurations written before 'compute:' keep loading, and the run
        # they ask for is the same; the notes say which keys replace theirs.
        if not isinstance(data, dict):  # a ReleaseConfig already: keep its notes
            return handler(data)
        data, notes, origins = fold_legacy_sections(data)
        try:
            config = handler(data)
        except ValidationError as err:
            if not origins:
                raise
            # A bad value of an old section is named as the file names it.
            raise ValidationError.from_exception_data(
                err.title, [_old_location(e, origins) for e in err.errors()]
            ) from None
        config._deprecations = tuple(notes)
        return config

    @property
    def deprecations(self) -> tuple[str, ...]:
        """One line per old section the file used, naming the keys that replace it."""
        return self._deprecations

    @model_validator(mode="before")
    @classmethod
    def _derive_roles(cls, data: Any, info: ValidationInfo) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        base_dir = (info.context or {}).get("base_dir")
        if base_dir is not None:
            data = _resolve_folder_paths(data, Path(base_dir))
        columns = data.get("columns")
        if columns is None:
            columns = {}
        if not isinstance(columns, dict):
            return data  # the field's own validation names the problem
        columns = dict(columns)
        for key, role in (
            ("quasi_identifiers", "quasi_identifier"),
            ("target", "target"),
            ("sensitive_attribute", "sensitive"),
        ):
            columns, data = _merge_role(key, role, columns, data)
        data["columns"] = columns
        return data

    @model_validator(mode="after")
    def _consistent(self) -> ReleaseConfig:
        self._check_roles()
        if self.algorithm not in ALGORITHMS:
            hint = did_you_mean(self.algorithm, ALGORITHMS)
            raise ValueError(
                f"algorithm {self.algorithm!r} is not registered"
                + (f" ({hint})" if hint else "")
                + f"; allowed: {', '.join(sorted(ALGORITHMS))}"
            )
        if self.target in self.quasi_identifiers:
            raise ValueError(f"target {self.target!r} is also a quasi-identifier")
        try:
            # The requirement is built here once; every reader gets this object.
            self._requirement = Requirement.of(
                self.quasi_identifiers,
                self.sensitive_attribute,
                k=self.k,
                l=self.l,
                l_variant=self.l_variant,
                c=self.c,
                t=self.t,
                extra=[model_from_description(m) for m in self.models],
            )
            algorithm = get_algorithm(self.algorithm, **self.params)
            algorithm.check_params()
            self._requirement = algorithm.adapt_requirement(
                self._requirement, target=self.target
            )
            type(algorithm).check_requirement(
                self._requirement,
                target=self.target,
                hierarchy_attributes=self._hierarchy_attributes(type(algorithm)),
            )
        except InvalidParameterError as err:
            raise ValueError(str(err)) from None
        for attribute in self._requirement.sensitive_attributes:
            if self.columns.get(attribute) != "sensitive":
                raise ValueError(
                    f"{attribute!r} is protected by a privacy model, so its role "
                    f"must be 'sensitive' (columns: has {self.columns.get(attribute)!r})"
                )
        return self

    def _check_roles(self) -> None:
        for key, names, role in (
            ("keep_weights", self.keep_weights, "weight"),
            ("accept_passthrough", self.accept_passthrough, None),
        ):
            for name in names:
                have = self.columns.get(name)
                if have is None or (role is not None and have != role):
                    want = f"a column of role {role!r}" if role else "a column"
                    raise ValueError(
                        f"{key} names {name!r}, which is not {want} under 'columns'"
                        + (f" (its role is {have!r})" if have else "")
                    )
        for name in self.accept_passthrough:
            word = identifier_name(name)
            if word is not None and name not in self.acknowledge_identifier_passthrough:
                raise ValueError(
                    f"accept_passthrough names {name!r}, which is named like a direct "
                    f'identifier ("{word}"): it is not released as is; give it the '
                    "role identifying or drop"
                )
        for name, why in self.acknowledge_identifier_passthrough.items():
            if name not in self.accept_passthrough:
                raise ValueError(
                    f"acknowledge_identifier_passthrough names {name!r}, which is "
                    "not listed in accept_passthrough"
                )
            if len(why.split()) < 3:
                raise ValueError(
                    f"acknowledge_identifier_passthrough[{name!r}] must say in the "
                    f"data owner's words why releasing it as is is safe; got {why!r}"
                )
        if self.pseudonymize and "identifying" not in self.columns.values():
            raise ValueError(
                "pseudonymize: true, but no column has the role 'identifying'"
            )
        if self.republication.policy == "consistent" and (
            self.algorithm in ALGORITHMS
            and ALGORITHMS[self.algorithm].releases != "table"
        ):
            raise ValueError(
                f"republication.policy 'consistent' recodes rows into the classes of "
                f"one released table; {self.algorithm!r} releases "
                f"{ALGORITHMS[self.algorithm].releases} (use hold-back)"
            )
        self._check_engine()
        key = self.republication.record_key
        if key is not None and (
            self.columns.get(key) != "identifying" or self.pseudonymize
        ):
            have = self.columns.get(key)
            raise ValueError(
                f"republication.record_key names {key!r}, which must be a column of "
                "role 'identifying' under 'columns' (never released)"
                + (f"; its role is {have!r}" if have else "; no such column")
                + ("; pseudonymize: true would release it" if self.pseudonymize else "")
            )

    def _check_engine(self) -> None:
        if self.compute.engine != "dask" or self.algorithm not in ALGORITHMS:
            return
        if not ALGORITHMS[self.algorithm].frequency_table:
            able = sorted(n for n, a in ALGORITHMS.items() if a.frequency_table)
            raise ValueError(
                f"engine 'dask' runs the anonymization on the frequency table of "
                f"distinct quasi-identifier combinations; {self.algorithm!r} needs "
                f"the table's rows. Use compute: {{engine: pandas}}, or one of: {', '.join(able)}"
            )
        if self.republication.policy == "consistent" or (
            self.republication.record_key is not None
        ):
            raise ValueError(
                "engine 'dask' does not run republication.policy 'consistent' or "
                "republication.record_key (they need every row in memory); use "
                "compute: {engine: pandas}"
            )

    @property
    def roles(self) -> dict[str, str]:
        """Column -> role, for every column the configuration names."""
        return dict(self.columns)

    @property
    def released_as_is(self) -> list[str]:
        """Columns released unchanged that the pass-through check judges.

        Role ``insensitive``, and weights kept with ``keep_weights``.
        """
        return [
            c
            for c, role in self.columns.items()
            if role == "insensitive" or (role == "weight" and c in self.keep_weights)
        ]

    @property
    def pseudonymized(self) -> list[str]:
        """Identifying columns released as keyed pseudonyms (none unless asked)."""
        if not self.pseudonymize:
            return []
        return [c for c, role in self.columns.items() if role == "identifying"]

    @property
    def released_columns(self) -> list[str]:
        """Every column that leaves the building, in the order of ``columns``."""
        kept = {"quasi_identifier", "sensitive", "target", "insensitive"}
        return [
            c
            for c, role in self.columns.items()
            if role in kept
            or (role == "weight" and c in self.keep_weights)
            or (role == "identifying" and self.pseudonymize)
        ]

    def _hierarchy_attributes(self, algorithm: type[Anonymizer]) -> list[str] | None:
        """Attributes with a hierarchy file, for an algorithm that needs them.

        Only the file names are listed; the files are read by the steps.
        """
        directory = self.hierarchy_dir
        if self.hierarchies is not None and not directory.is_dir():
            raise InvalidParameterError(
                f"hierarchies: directory {self.hierarchies!r} not found (a relative "
                "path is read from the working directory)"
            )
        if not algorithm.uses_hierarchies:
            return None
        if directory is None:
            raise InvalidParameterError(
                f"algorithm {algorithm.name!r} generalizes along hierarchies, and none "
                f"ship for dataset {self.dataset!r}; name a directory of hierarchy "
                "files (one <attribute>.csv or .json each) with the key 'hierarchies'"
            )
        return list(resources.hierarchy_files(directory))

    @property
    def requirement(self) -> Requirement:
        """The privacy requirement: quasi-identifiers and privacy models."""
        return self._requirement

    def build_algorithm(self) -> Anonymizer:
        """A fresh instance of the configured algorithm with its parameters."""
        return get_algorithm(self.algorithm, **self.params)

    @property
    def schema(self) -> str:
        """The ``schema`` key: a dataset folder or a shipped name (default: dataset)."""
        return self.schema_name or self.dataset

    @property
    def schema_dir(self) -> Path:
        """The dataset folder with ``schema.yaml`` and ``suite.json``.

        Raises
        ------
        UnknownDatasetError
            No such folder, and no shipped dataset of that name.
        """
        from ppdm.prepare.dataset_folder import resolve_schema_dir

        return resolve_schema_dir(self.schema)

    @property
    def hierarchy_dir(self) -> Path | None:
        """The generalization hierarchies' directory, or None when there are none.

        The ``hierarchies`` key when given, else the ``hierarchies/`` folder
        of the dataset folder, else the hierarchies that ship for the dataset
        (:func:`ppdm.resources.hierarchies_dir`).
        """
        if self.hierarchies is not None:
            return Path(self.hierarchies)
        if self.schema_name is not None and Path(self.schema_name).is_dir():
            beside = Path(self.schema_name) / "hierarchies"
            if beside.is_dir():
                return beside
        return resources.hierarchies_dir(self.dataset)

    @property
    def store_dir(self) -> Path:
        """The artifact store's directory: ``work_dir`` or :func:`default_work_dir`."""
        if self.work_dir is not None:
            return Path(self.work_dir)
        return default_work_dir()

    def with_overrides(self, **overrides: Any) -> ReleaseConfig:
        """A copy with top-level keys replaced (``None`` values are ignored).

        Replacing ``quasi_identifiers`` or ``target`` moves the roles with
        them: a column that loses the role becomes ``drop`` (never released
        as is by accident).
        """
        data = self.model_dump(by_alias=True)
        given = {key: value for key, value in overrides.items() if value is not None}
        columns = dict(data["columns"])
        for key, role in (
            ("quasi_identifiers", "quasi_identifier"),
            ("target", "target"),
            ("sensitive_attribute", "sensitive"),
        ):
            if key not in given:
                continue
            new = given[key] if isinstance(given[key], list) else [given[key]]
            for column in new:
                columns.pop(column, None)
            if role != "sensitive":
                for column, had in list(columns.items()):
                    if had == role:
                        columns[column] = "drop"
            data.pop(key, None)
        data["columns"] = columns
        for section, keys in LEGACY_SECTIONS.items():
            if section in given and isinstance(data.get("compute"), dict):
                # An old section given here replaces its keys of 'compute'.
                data["compute"] = {
                    k: v for k, v in data["compute"].items() if k not in keys.values()
                }
        data.update(given)
        return parse_config(data, origin="overrides")


def _allowed(model: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """Describe the allowed values of the field at ``loc`` from the JSON schema."""
    schema = model.model_json_schema(by_alias=True)
    node: dict[str, Any] = schema
    for part in loc:
        if not isinstance(part, str):
            continue
        props = node.get("properties", {})
        if part not in props:
            return ""
        node = props[part]
        ref = node.get("$ref") or next(
            (a["$ref"] for a in node.get("anyOf", []) if "$ref" in a), None
        )
        if ref:
            node = schema["$defs"][ref.rsplit("/", 1)[-1]]
    options = node.get("anyOf", [node])
    parts = []
    for option in options:
        if "enum" in option:
            parts.append("one of " + ", ".join(map(repr, option["enum"])))
        elif "const" in option:
            parts.append(repr(option["const"]))
        elif option.get("type") in ("integer", "number"):
            name = "an integer" if option["type"] == "integer" else "a number"
            bounds = []
            for key, sign in (
                ("minimum", ">="),
                ("exclusiveMinimum", ">"),
                ("maximum", "<="),
                ("exclusiveMaximum", "<"),
            ):
                if key in option:
                    bounds.append(f"{sign} {option[key]}")
            parts.append(name + (" " + " and ".join(bounds) if bounds else ""))
        elif option.get("type") == "null":
            parts.append("null")
        elif option.get("type"):
            parts.append(f"a {option['type']}")
    if node.get("properties"):
        parts.append("keys: " + ", ".join(node["properties"]))
    return " or ".join(parts)


def _old_location(error: Any, origins: dict[str, str]) -> Any:
    """``error`` of a ``compute`` key set from an old section, at the old key."""
    loc = tuple(error["loc"])
    if len(loc) >= 2 and loc[0] == "compute" and loc[1] in origins:
        loc = (*origins[str(loc[1])].split("."), *loc[2:])
    details = {"type": error["type"], "loc": loc, "input": error["input"]}
    if error.get("ctx"):
        details["ctx"] = error["ctx"]
    return details


def _resolve_folder_paths(data: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    """Read relative ``schema`` and ``hierarchies`` paths from the config's folder.

    A dataset folder travels with its configuration (``ppdm init`` writes
    ``schema: .`` and ``hierarchies: hierarchies``), so these two keys are
    resolved against the configuration file's folder and stored absolute; a
    shipped schema name stays a name. Source paths, ``output_dir`` and
    ``work_dir`` are read from the working directory.
    """
    from ppdm.prepare.dataset_folder import SCHEMA_FILE

    schema = data.get("schema")
    if isinstance(schema, str) and not Path(schema).is_absolute():
        folder = base_dir / schema
        if (folder / SCHEMA_FILE).is_file():
            data["schema"] = str(folder.resolve())
    hierarchies = data.get("hierarchies")
    if (
        isinstance(hierarchies, str)
        and not Path(hierarchies).expanduser().is_absolute()
    ):
        data["hierarchies"] = str((base_dir / hierarchies).resolve())
    return data


def _merge_role(
    key: str, role: str, columns: dict[str, Any], data: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Make the shorthand key and the ``columns`` roles one consistent answer.

    The key, when given, wins only if ``columns`` agrees; when absent it is
    derived from ``columns`` (in their order).
    """
    having = [c for c, r in columns.items() if r == role]
    given = data.get(key)
    if given is None:
        if key == "quasi_identifiers":
            if having:
                data[key] = having
        elif len(having) == 1 or (role == "target" and having):
            if len(having) > 1:
                raise ValueError(
                    f"columns: several columns have the role 'target' "
                    f"({', '.join(having)}); a release predicts one"
                )
            data[key] = having[0]
        return columns, data
    names = given if isinstance(given, list) else [given]
    if not all(isinstance(n, str) for n in names):
        return columns, data  # the field's own validation names the problem
    for name in names:
        have = columns.get(name, role)
        if have != role:
            raise ValueError(
                f"{key} names {name!r}, whose role under 'columns' is {have!r}"
            )
        columns[name] = role
    if role != "sensitive":
        stray = [c for c in having if c not in names]
        if stray:
            raise ValueError(
                f"columns: {', '.join(map(repr, stray))} ha"
                + ("s" if len(stray) == 1 else "ve")
                + f" the role {role!r} but {'is' if len(stray) == 1 else 'are'} "
                f"not in {key}"
            )
    return columns, data


def _format_errors(err: ValidationError, origin: str) -> str:
    lines = []
    for error in err.errors():
        loc = tuple(error["loc"])
        key = ".".join(str(p) for p in loc) or "(top level)"
        if error["type"] == "extra_forbidden":
            parent = loc[:-1]
            allowed = (
                _allowed(ReleaseConfig, parent)
                if parent
                else ", ".join(
                    f.alias or name for name, f in ReleaseConfig.model_fields.items()
                )
            )
            allowed = allowed.split("keys: ", 1)[-1]
            hint = did_you_mean(loc[-1], allowed.split(", "))
            lines.append(
                f"unknown key {key!r}"
                + (f" ({hint})" if hint else "")
                + f"; allowed keys: {allowed}"
            )
        elif error["type"] == "missing":
            role = _ROLE_OF_KEY.get(key)
            lines.append(
                f"required key {key!r} is missing"
                + (
                    f" (or give a column the role {role!r} under 'columns')"
                    if role
                    else ""
                )
            )
        elif error["type"] == "value_error":
            message = str(error.get("ctx", {}).get("error", error["msg"]))
            lines.append(message if not loc else f"{key}: {message}")
        else:
            allowed = _allowed(ReleaseConfig, loc)
            got = error.get("input")
            why = _wrong_type(error["type"], got, key) or error["msg"]
            hint = ""
            if error["type"] in ("literal_error", "enum"):
                expected = str(error.get("ctx", {}).get("expected", ""))
                hint = did_you_mean(got, re.findall(r"'([^']*)'", expected))
            lines.append(
                f"{key} = {got!r} is not allowed ({why}"
                + (f"; {hint})" if hint else ")")
                + (f"; allowed: {allowed}" if allowed else "")
            )
    return f"config {origin}: " + "; ".join(lines)


#: Required keys that ``columns`` can stand for, and the role that does.
_ROLE_OF_KEY = {"quasi_identifiers": "quasi_identifier", "target": "target"}

#: pydantic's error types for a value of the wrong type, and what was wanted.
_WANTED = {
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "finite_number": "a finite number",
}


def _wrong_type(kind: str, got: Any, key: str) -> str | None:
    """Why a value of the wrong type is refused, in the YAML author's terms.

    Numbers and booleans are strict: YAML's ``k: true`` is a boolean (it
    would count as 1) and ``k: "10"`` is text, and neither is taken for the
    number it resembles.
    """
    wanted = _WANTED.get(kind)
    if wanted is None:
        return None
    if isinstance(got, bool):
        return f"true/false is a boolean, not {wanted}"
    if isinstance(got, str):
        looks_numeric = _is_number_text(got)
        hint = (
            f"; write {key.rsplit('.', 1)[-1]}: {got.strip()}" if looks_numeric else ""
        )
        return f"a quoted string is text, not {wanted}{hint}"
    if isinstance(got, float):  # 1.5 for an integer, nan or inf for a number
        return f"{got!r} is not {wanted}"
    kinds = {"int": "an integer", "list": "a list", "dict": "a mapping"}
    kind_of = kinds.get(type(got).__name__, f"a {type(got).__name__}")
    return f"{kind_of} is not {wanted}"


def _is_number_text(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def parse_config(
    data: Any, *, origin: str = "<dict>", base_dir: Path | str | None = None
) -> ReleaseConfig:
    """Validate a mapping into a :class:`ReleaseConfig` or raise :class:`ConfigError`.

    ``base_dir`` is the configuration file's folder: relative ``schema`` and
    ``hierarchies`` paths are read from there.
    """
    if not isinstance(data, dict):
        got = "an empty document" if data is None else f"a {type(data).__name__}"
        raise ConfigError(f"config {origin}: expected a mapping of keys, got {got}")
    context = {"base_dir": str(base_dir)} if base_dir is not None else None
    try:
        return ReleaseConfig.model_validate(data, context=context)
    except ValidationError as err:
        raise ConfigError(_format_errors(err, origin)) from None


def check_source_columns(config: ReleaseConfig) -> list[str] | None:
    """Refuse a configuration that does not fit its source's columns, before any step.

    Reads the source's header only. Every column the configuration names
    must exist (the message names the key, the column, the closest existing
    names and the source), and every column of the source must have a role.

    Returns
    -------
    list of str or None
        The source's columns, or None when they cannot be known cheaply.

    Raises
    ------
    ConfigError
    """
    from ppdm.prepare import ingest

    source = config.source
    columns = ingest.source_columns(
        source.kind, source.location, **source.reader_options()
    )
    if columns is None:
        return None
    named: list[tuple[str, str]] = [
        ("quasi_identifiers", q) for q in config.quasi_identifiers
    ]
    named += [("target", config.target)]
    named += [
        ("sensitive attribute", a) for a in config.requirement.sensitive_attributes
    ]
    named += [("discretize.columns", c) for c in config.discretize.columns or ()]
    named += [
        ("columns", c)
        for c in config.columns
        if c not in config.quasi_identifiers and c != config.target
    ]
    problems = []
    seen = set()
    for key, column in named:
        if column not in columns and (key, column) not in seen:
            seen.add((key, column))
            close = difflib.get_close_matches(column, columns, n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            problems.append(f"{key} names {column!r}, not a column of the source{hint}")
    unroled = [c for c in columns if c not in config.columns]
    if unroled:
        problems.append(
            f"column{'s' if len(unroled) > 1 else ''} "
            f"{', '.join(map(repr, unroled))} of the source "
            f"{'have' if len(unroled) > 1 else 'has'} no role; give each one under "
            f"'columns:' ({' | '.join(ROLES)}), e.g. {unroled[0]!r}: drop"
        )
    if problems:
        raise ConfigError(
            f"config for {config.dataset}: "
            + "; ".join(problems)
            + f" (the source has columns: {', '.join(columns)})"
        )
    return columns


class _DuplicateKeyError(yaml.YAMLError):
    """A mapping of a YAML document gives one key twice."""


_MERGE_TAG = "tag:yaml.org,2002:merge"


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader that refuses a key given twice in one mapping.

    PyYAML keeps the last value of a repeated key without a word; in a
    release configuration that silently changes k, the quasi-identifiers or
    a column's role. Keys brought in by a merge (``<<: *defaults``) may be
    overridden, as YAML intends.
    """

    def construct_document(self, node: yaml.Node) -> Any:
        _check_unique_keys(node)
        return super().construct_document(node)


def _check_unique_keys(root: yaml.Node) -> None:
    """Raise :class:`_DuplicateKeyError` naming the first repeated key and its lines."""
    seen: set[int] = set()
    todo: list[tuple[yaml.Node, tuple[str, ...]]] = [(root, ())]
    while todo:
        node, path = todo.pop()
        if id(node) in seen:  # an alias: checked where it was anchored
            continue
        seen.add(id(node))
        children: list[tuple[yaml.Node, tuple[str, ...]]] = []
        if isinstance(node, yaml.MappingNode):
            first: dict[tuple[str, str], int] = {}
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE_TAG or not isinstance(
                    key_node, yaml.ScalarNode
                ):
                    children.append((value_node, path))
                    continue
                line = key_node.start_mark.line + 1
                name = (key_node.tag, key_node.value)
                if name in first:
                    key = ".".join((*path, key_node.value))
                    raise _DuplicateKeyError(
                        f"key {key!r} is given twice (lines {first[name]} and "
                        f"{line}); YAML would keep the last one silently: give it once"
                    )
                first[name] = line
                children.append((value_node, (*path, key_node.value)))
        elif isinstance(node, yaml.SequenceNode):
            children = [(item, path) for item in node.value]
        todo.extend(reversed(children))  # depth first, in document order


def load_config(path: Path | str) -> ReleaseConfig:
    """Read and validate a YAML release configuration.

    Raises
    ------
    ConfigError
        The file is missing, a directory, unreadable, not UTF-8, not YAML,
        gives a key twice, or its content is not a valid configuration; the
        message names the file and the key (with its line numbers for a key
        given twice).
    """
    path = Path(path)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader
    except FileNotFoundError:
        raise ConfigError(f"config {path}: file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"config {path}: is a directory, not a YAML file") from None
    except PermissionError:
        raise ConfigError(f"config {path}: not readable (permission denied)") from None
    except UnicodeDecodeError as err:
        raise ConfigError(
            f"config {path}: not UTF-8 text (byte {err.start}: {err.reason}); save "
            "it as UTF-8"
        ) from None
    except _DuplicateKeyError as err:
        raise ConfigError(f"config {path}: {err}") from None
    except yaml.YAMLError as err:
        raise ConfigError(
            f"config {path}: not valid YAML: {_yaml_problem(err)}"
        ) from None
    return parse_config(data, origin=str(path), base_dir=path.parent)


def _yaml_problem(err: yaml.YAMLError) -> str:
    """A YAML error on one line: where, what, and what it was inside of."""
    problem = getattr(err, "problem", None)
    if problem is None:
        return " ".join(str(err).split())
    mark = getattr(err, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    context = getattr(err, "context", None)
    context_mark = getattr(err, "context_mark", None)
    inside = ""
    if context:
        inside = f" ({context}" + (
            f" that starts on line {context_mark.line + 1})" if context_mark else ")"
        )
    return f"{where}{problem}{inside}"


def default_config(dataset: str = "adult") -> ReleaseConfig:
    """The documented default release of an embedded dataset.

    It is the shipped configuration ``configs/<dataset>.yaml``
    (:func:`ppdm.resources.config_file`), the one source of the defaults.

    Raises
    ------
    ConfigError
        No shipped configuration releases ``dataset``; the message lists the
        datasets that have one.
    """
    try:
        config = load_config(resources.config_file(dataset))
    except UnknownDatasetError:
        config = None
    if config is None or config.dataset != dataset:
        raise ConfigError(
            f"no default configuration for dataset {dataset!r}; defaults ship for: "
            f"{', '.join(_default_datasets())}"
        )
    return config


def _default_datasets() -> list[str]:
    """Datasets with a default: shipped ``<name>.yaml`` files releasing ``name``."""
    names = []
    for name in resources.config_names():
        data = yaml.safe_load(resources.config_file(name).read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("dataset") == name:
            names.append(name)
    return names
