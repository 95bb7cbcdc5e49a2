"""The one configuration object of a release, read from YAML.

Unknown keys and out-of-range values are errors that name the key and the
allowed values, e.g. ``config adult.yaml: k = 0 is out of range; allowed: an
integer >= 1 and <= 1000000``.

- :mod:`~ppdm.config.sections`: one model per section (source, discretize,
  validation, pass-through, republication, privacy budget, utility) and the
  column roles;
- :mod:`~ppdm.config.release_config`: :class:`ReleaseConfig`, the whole
  release checked at once, :func:`parse_config` and the overrides;
- :mod:`~ppdm.config.yaml_file`: :func:`load_config` (the YAML file) and the
  shipped defaults;
- :mod:`~ppdm.config.errors`: :class:`ConfigError` and its one-line messages;
- :mod:`~ppdm.config.source_check`: the configuration against its source's
  header.
"""

from ppdm.config.errors import ConfigError
from ppdm.config.release_config import (
    ReleaseConfig,
    apply_overrides,
    default_work_dir,
    parse_config,
)
from ppdm.config.sections import (
    ROLES,
    DiscretizeConfig,
    PassthroughLimits,
    PrivacyBudgetConfig,
    RepublicationConfig,
    Role,
    SourceConfig,
    UtilityConfig,
    ValidationLimits,
)
from ppdm.config.source_check import check_source_columns
from ppdm.config.yaml_file import default_config, load_config

__all__ = [
    "check_source_columns",
    "ROLES",
    "Role",
    "PassthroughLimits",
    "PrivacyBudgetConfig",
    "ReleaseConfig",
    "RepublicationConfig",
    "SourceConfig",
    "DiscretizeConfig",
    "ValidationLimits",
    "UtilityConfig",
    "ConfigError",
    "apply_overrides",
    "load_config",
    "parse_config",
    "default_config",
    "default_work_dir",
]
