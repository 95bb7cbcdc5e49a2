"""The sections of a release configuration: one pydantic model each.

The source, discretization, validation, pass-through, republication, privacy
budget and utility settings, and the column roles; :class:`ReleaseConfig`
(:mod:`ppdm.config.release_config`) holds one of each.
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

__all__ = [
    "DEFAULT_MAX_REJECTED_FRACTION",
    "DEFAULT_TEST_SIZE",
    "ROLES",
    "DiscretizeConfig",
    "PassthroughLimits",
    "PrivacyBudgetConfig",
    "RepublicationConfig",
    "Role",
    "SourceConfig",
    "UtilityConfig",
    "ValidationLimits",
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

#: The utility report's test share, by default (``utility.test_size``).
DEFAULT_TEST_SIZE = 0.3
#: The share of rows validation may quarantine, by default
#: (``validation.max_rejected_fraction``).
DEFAULT_MAX_REJECTED_FRACTION = 0.05


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
