"""A release configuration read from a YAML file, and the shipped defaults.

The file is read once: a key given twice, text that is not UTF-8 or not YAML
is refused in one line naming the file (and the lines of a repeated key).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ppdm import resources
from ppdm.config.errors import ConfigError
from ppdm.config.release_config import ReleaseConfig, apply_overrides, parse_config
from ppdm.exceptions import UnknownDatasetError

__all__ = ["default_config", "load_config"]


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


def load_config(
    path: Path | str, overrides: dict[str, Any] | None = None
) -> ReleaseConfig:
    """Read and validate a YAML release configuration, once.

    ``overrides`` replaces top-level keys of the file (``None`` values are
    ignored; :func:`~ppdm.config.apply_overrides`) before the one
    validation, e.g. the flags of ``ppdm run``; a value it refuses is named
    as the file's.

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
    if overrides:
        data = apply_overrides(data, overrides)
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


def default_config(
    dataset: str = "adult", overrides: dict[str, Any] | None = None
) -> ReleaseConfig:
    """The documented default release of an embedded dataset.

    It is the shipped configuration ``configs/<dataset>.yaml``
    (:func:`ppdm.resources.config_file`), the one source of the defaults,
    with ``overrides`` applied as :func:`load_config` applies them.

    Raises
    ------
    ConfigError
        No shipped configuration releases ``dataset``; the message lists the
        datasets that have one.
    """
    try:
        config = load_config(resources.config_file(dataset), overrides)
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
