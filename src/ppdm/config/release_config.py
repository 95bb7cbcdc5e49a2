"""The one configuration object of a release, validated from a mapping.

:class:`ReleaseConfig` checks the whole release at once: the column roles,
the algorithm and its parameters, the privacy requirement (built here, once),
the engine and the republication policy. :func:`parse_config` validates a
mapping into one; :func:`apply_overrides` is the one place top-level keys are
replaced (the command line's flags, a comparison's candidates).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from ppdm import resources
from ppdm.algorithm_registry import AlgorithmEntry, registered
from ppdm.compute_config import LEGACY_SECTIONS, ComputeConfig, fold_legacy_sections
from ppdm.config import sections
from ppdm.config.errors import ConfigError, _format_errors, _old_location
from ppdm.exceptions import InvalidParameterError
from ppdm.identifier_names import identifier_name
from ppdm.params import did_you_mean
from ppdm.privacy import Requirement, model_from_description

if TYPE_CHECKING:
    from ppdm.algorithms import Anonymizer

__all__ = [
    "ReleaseConfig",
    "apply_overrides",
    "default_work_dir",
    "parse_config",
]


def default_work_dir() -> Path:
    """Where intermediate artifacts (raw snapshot, clean table) live by default.

    ``$PPDM_WORK_DIR``, else ``$XDG_CACHE_HOME/ppdm/work`` (``~/.cache/ppdm/work``):
    never inside an output directory, which holds only what may be shared.
    """
    if os.environ.get("PPDM_WORK_DIR"):
        return Path(os.environ["PPDM_WORK_DIR"]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "ppdm" / "work"


class ReleaseConfig(sections._Strict):
    """Everything a release run needs; the flow's only parameter."""

    dataset: str = Field(..., min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    source: sections.SourceConfig
    schema_name: str | None = Field(
        None,
        alias="schema",
        description="dataset folder (schema.yaml, suite.json; a relative path is "
        "read from the config file's folder) or the name of a shipped one; "
        "default: dataset",
    )
    columns: dict[str, sections.Role] = Field(
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
    passthrough: sections.PassthroughLimits = sections.PassthroughLimits()
    k: int = Field(10, ge=1, le=1_000_000, strict=True)
    l: int = Field(1, ge=1, le=1000, strict=True)  # noqa: E741 - the literature's name
    l_variant: Literal["distinct", "entropy", "recursive"] = "distinct"
    c: float | None = Field(
        None, gt=0.0, description="c of recursive (c,l)-diversity", **sections._NUMBER
    )
    t: float | None = Field(
        None, gt=0.0, le=1.0, description="t-closeness threshold", **sections._NUMBER
    )
    models: list[dict[str, Any]] = Field(
        default_factory=list,
        description="further privacy models, each {model: <registry name>, ...}",
    )
    suppression_limit: float = Field(0.01, ge=0.0, le=1.0, **sections._NUMBER)
    algorithm: str = "mondrian"
    params: dict[str, Any] = Field(default_factory=dict)
    discretize: sections.DiscretizeConfig = sections.DiscretizeConfig()
    validation: sections.ValidationLimits = sections.ValidationLimits()
    compute: ComputeConfig = Field(
        ComputeConfig(),
        description="where the work runs: the task runner, the in-memory or "
        "out-of-core engine, the verifier's engine and the one Dask cluster",
    )
    utility: sections.UtilityConfig = sections.UtilityConfig()
    republication: sections.RepublicationConfig = sections.RepublicationConfig()
    privacy_budget: sections.PrivacyBudgetConfig | None = Field(
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
        for key, role in _ROLE_KEYS:
            columns, data = _merge_role(key, role, columns, data)
        data["columns"] = columns
        return data

    @model_validator(mode="after")
    def _consistent(self) -> ReleaseConfig:
        self._check_roles()
        algorithms = registered()
        if self.algorithm not in algorithms:
            hint = did_you_mean(self.algorithm, algorithms)
            raise ValueError(
                f"algorithm {self.algorithm!r} is not registered"
                + (f" ({hint})" if hint else "")
                + f"; allowed: {', '.join(sorted(algorithms))}"
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
            # The registry entry answers without importing the algorithm.
            algorithm = algorithms[self.algorithm]
            algorithm.check_parameters(self.params)
            self._requirement = algorithm.adapt_requirement(
                self._requirement, target=self.target, params=self.params
            )
            algorithm.check_requirement(
                self._requirement,
                target=self.target,
                hierarchy_attributes=self._hierarchy_attributes(algorithm),
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

    @model_validator(mode="wrap")
    @classmethod
    def _checked_once(cls, data: Any, handler: Any) -> Any:
        # Defined last, so it wraps every other check: a configuration is
        # validated when it is built and is frozen, so one given again (the
        # flow's parameter, a field holding one) is taken as it is.
        if isinstance(data, cls):
            return data
        return handler(data)

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
        algorithm = registered().get(self.algorithm)
        if (
            self.republication.policy == "consistent"
            and algorithm is not None
            and algorithm.releases != "table"
        ):
            raise ValueError(
                f"republication.policy 'consistent' recodes rows into the classes of "
                f"one released table; {self.algorithm!r} releases "
                f"{algorithm.releases} (use hold-back)"
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
        algorithms = registered()
        if self.compute.engine != "dask" or self.algorithm not in algorithms:
            return
        if not algorithms[self.algorithm].frequency_table:
            able = sorted(n for n, a in algorithms.items() if a.frequency_table)
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

    def _hierarchy_attributes(self, algorithm: AlgorithmEntry) -> list[str] | None:
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
        # Here, not at the top: validating a configuration needs only the
        # registry, and the algorithms' modules import pandas.
        from ppdm.algorithms import get_algorithm

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
        as is by accident). See :func:`apply_overrides`.
        """
        if all(value is None for value in overrides.values()):
            return self  # frozen: the copy would be equal
        data = apply_overrides(self.model_dump(by_alias=True), overrides)
        return parse_config(data, origin="overrides")


#: The keys that stand for a role under ``columns``, and that role.
_ROLE_KEYS = (
    ("quasi_identifiers", "quasi_identifier"),
    ("target", "target"),
    ("sensitive_attribute", "sensitive"),
)


def apply_overrides(data: Any, overrides: dict[str, Any]) -> Any:
    """A configuration mapping with top-level keys replaced (``None`` values ignored).

    The one place overrides are applied: to a YAML file's mapping before it
    is validated (:func:`ppdm.config.load_config`'s ``overrides``, the
    command line's flags), and to a configuration's dump
    (:meth:`ReleaseConfig.with_overrides`). Replacing ``quasi_identifiers``
    or ``target`` moves the roles with them: a column that loses the role
    becomes ``drop``. An old section (``parallel``, ...) replaces its keys of
    ``compute``. Anything else is left for validation to judge.
    """
    given = {key: value for key, value in overrides.items() if value is not None}
    if not given or not isinstance(data, dict):
        return data
    data = dict(data)
    columns = data.get("columns")
    moved = [(key, role) for key, role in _ROLE_KEYS if key in given]
    if moved and isinstance(columns, dict | None):
        columns = dict(columns or {})
        for key, role in moved:
            # A role given by its key alone (no 'columns' entry) is written
            # out first, so that the column leaving it keeps a role.
            old = data.pop(key, None)
            for column in old if isinstance(old, list) else [old]:
                if isinstance(column, str):
                    columns.setdefault(column, role)
            new = given[key] if isinstance(given[key], list) else [given[key]]
            for column in new:
                columns.pop(column, None)
            if role != "sensitive":
                for column, had in list(columns.items()):
                    if had == role:
                        columns[column] = "drop"
        data["columns"] = columns
    for section, keys in LEGACY_SECTIONS.items():
        if section in given and isinstance(data.get("compute"), dict):
            # An old section given here replaces its keys of 'compute'.
            data["compute"] = {
                k: v for k, v in data["compute"].items() if k not in keys.values()
            }
    data.update(given)
    return data


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
        raise ConfigError(_format_errors(err, origin, ReleaseConfig)) from None
