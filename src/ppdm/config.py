"""The one configuration object of a release, read from YAML.

Unknown keys and out-of-range values are errors that name the key and the
allowed values, e.g. ``config adult.yaml: k = 0 is out of range; allowed: an
integer >= 1 and <= 1000000``.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    model_validator,
)

from ppdm import resources
from ppdm.algorithms import ALGORITHMS, Anonymizer, get_algorithm
from ppdm.exceptions import InvalidParameterError, UnknownDatasetError
from ppdm.privacy import Requirement, model_from_description

__all__ = [
    "check_source_columns",
    "ReleaseConfig",
    "SourceConfig",
    "DiscretizeConfig",
    "ValidationLimits",
    "VerificationConfig",
    "UtilityConfig",
    "ConfigError",
    "load_config",
    "parse_config",
    "default_config",
    "STORE_DIR",
]


#: The artifact store's directory under ``output_dir`` when ``work_dir`` is not set.
STORE_DIR = ".artifacts"


class ConfigError(InvalidParameterError):
    """A release configuration is unreadable, has unknown keys or bad values."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SourceConfig(_Strict):
    """Where the input table comes from."""

    kind: Literal["embedded", "csv", "parquet", "sql"] = "embedded"
    name: str | None = Field(None, description="embedded dataset name")
    path: str | None = Field(None, description="CSV or Parquet file")
    url: str | None = Field(None, description="SQLAlchemy database URL")
    query: str | None = Field(None, description="SQL query returning the table")

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
        return self


class DiscretizeConfig(_Strict):
    """How numeric quasi-identifiers become intervals before anonymization."""

    method: Literal["mdl", "equal-frequency", "none"] = "mdl"
    n_bins: int = Field(5, ge=2, le=100)
    columns: list[str] | None = Field(
        None, description="numeric QIs to bin; default: every numeric QI"
    )


class ValidationLimits(_Strict):
    """Limits of the schema-validation step."""

    max_rejected_fraction: float = Field(0.05, ge=0.0, le=1.0)


class VerificationConfig(_Strict):
    """How the independent verifier reads the release candidate."""

    engine: Literal["auto", "pandas", "dask"] = Field(
        "auto",
        description="pandas: in memory; dask: out of core; auto: dask above "
        "size_threshold_mb of candidate files",
    )
    size_threshold_mb: float = Field(256.0, gt=0.0)
    memory_limit: str = Field("2GB", pattern=r"^[0-9.]+\s*[KMGT]i?B$")


class UtilityConfig(_Strict):
    """The utility report's hold-out protocol."""

    test_size: float = Field(0.3, gt=0.0, lt=1.0)


class ReleaseConfig(_Strict):
    """Everything a release run needs; the flow's only parameter."""

    dataset: str = Field(..., min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    source: SourceConfig
    schema_name: str | None = Field(
        None, alias="schema", description="schema to validate with; default: dataset"
    )
    quasi_identifiers: list[str] = Field(..., min_length=1)
    sensitive_attribute: str | None = None
    target: str
    k: int = Field(10, ge=1, le=1_000_000)
    l: int = Field(1, ge=1, le=1000)  # noqa: E741 - the literature's name
    l_variant: Literal["distinct", "entropy", "recursive"] = "distinct"
    c: float | None = Field(None, gt=0.0, description="c of recursive (c,l)-diversity")
    t: float | None = Field(None, gt=0.0, le=1.0, description="t-closeness threshold")
    models: list[dict[str, Any]] = Field(
        default_factory=list,
        description="further privacy models, each {model: <registry name>, ...}",
    )
    suppression_limit: float = Field(0.01, ge=0.0, le=1.0)
    algorithm: str = "mondrian"
    params: dict[str, Any] = Field(default_factory=dict)
    discretize: DiscretizeConfig = DiscretizeConfig()
    validation: ValidationLimits = ValidationLimits()
    verification: VerificationConfig = VerificationConfig()
    utility: UtilityConfig = UtilityConfig()
    hierarchies: str | None = Field(
        None,
        description="directory of the dataset's generalization hierarchies, one "
        "file per attribute; default: the hierarchies shipped for the dataset",
    )
    seed: int = Field(0, ge=0, le=2**32 - 1)
    output_dir: str = "releases"
    work_dir: str | None = Field(
        None,
        description="artifact store of the intermediate artifacts; default: "
        "<output_dir>/.artifacts",
    )

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    _requirement: Requirement = PrivateAttr()

    @model_validator(mode="after")
    def _consistent(self) -> ReleaseConfig:
        if self.algorithm not in ALGORITHMS:
            raise ValueError(
                f"algorithm {self.algorithm!r} is not registered; "
                f"allowed: {', '.join(sorted(ALGORITHMS))}"
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
            type(algorithm).check_requirement(
                self._requirement,
                target=self.target,
                hierarchy_attributes=self._hierarchy_attributes(type(algorithm)),
            )
        except InvalidParameterError as err:
            raise ValueError(str(err)) from None
        return self

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
        """Name of the validation schema: ``schema``, or the dataset's name."""
        return self.schema_name or self.dataset

    @property
    def hierarchy_dir(self) -> Path | None:
        """The generalization hierarchies' directory, or None when there are none.

        The ``hierarchies`` key when given, otherwise the hierarchies that ship
        for the dataset (:func:`ppdm.resources.hierarchies_dir`).
        """
        if self.hierarchies is not None:
            return Path(self.hierarchies)
        return resources.hierarchies_dir(self.dataset)

    @property
    def store_dir(self) -> Path:
        """The artifact store's directory: ``work_dir`` or ``<output_dir>/.artifacts``."""
        if self.work_dir is not None:
            return Path(self.work_dir)
        return Path(self.output_dir) / STORE_DIR

    def with_overrides(self, **overrides: Any) -> ReleaseConfig:
        """A copy with top-level keys replaced (``None`` values are ignored)."""
        data = self.model_dump(by_alias=True)
        data.update(
            {key: value for key, value in overrides.items() if value is not None}
        )
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
            lines.append(f"unknown key {key!r}; allowed keys: {allowed}")
        elif error["type"] == "missing":
            lines.append(f"required key {key!r} is missing")
        elif error["type"] == "value_error":
            message = str(error.get("ctx", {}).get("error", error["msg"]))
            lines.append(message if not loc else f"{key}: {message}")
        else:
            allowed = _allowed(ReleaseConfig, loc)
            got = error.get("input")
            lines.append(
                f"{key} = {got!r} is not allowed ({error['msg']})"
                + (f"; allowed: {allowed}" if allowed else "")
            )
    return f"config {origin}: " + "; ".join(lines)


def parse_config(data: Any, *, origin: str = "<dict>") -> ReleaseConfig:
    """Validate a mapping into a :class:`ReleaseConfig` or raise :class:`ConfigError`."""
    if not isinstance(data, dict):
        raise ConfigError(
            f"config {origin}: expected a mapping of keys, got {type(data).__name__}"
        )
    try:
        return ReleaseConfig.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_errors(err, origin)) from None


def check_source_columns(config: ReleaseConfig) -> None:
    """Refuse a configuration naming a column its source lacks, before any step.

    Reads the source's header only. The message names the key, the column,
    the closest existing names and the source.

    Raises
    ------
    ConfigError
    """
    from ppdm.prepare import ingest

    source = config.source
    columns = ingest.source_columns(
        source.kind, source.path or source.url, query=source.query, embedded=source.name
    )
    if columns is None:
        return
    named: list[tuple[str, str]] = [
        ("quasi_identifiers", q) for q in config.quasi_identifiers
    ]
    named += [("target", config.target)]
    named += [
        ("sensitive attribute", a) for a in config.requirement.sensitive_attributes
    ]
    named += [("discretize.columns", c) for c in config.discretize.columns or ()]
    problems = []
    for key, column in named:
        if column not in columns:
            close = difflib.get_close_matches(column, columns, n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            problems.append(f"{key} names {column!r}, not a column of the source{hint}")
    if problems:
        raise ConfigError(
            f"config for {config.dataset}: "
            + "; ".join(problems)
            + f" (the source has columns: {', '.join(columns)})"
        )


def load_config(path: Path | str) -> ReleaseConfig:
    """Read and validate a YAML release configuration."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
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
    except yaml.YAMLError as err:
        raise ConfigError(f"config {path}: not valid YAML ({err})") from None
    return parse_config(data, origin=str(path))


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
