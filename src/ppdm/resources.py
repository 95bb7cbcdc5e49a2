"""Data files that ship with ppdm: schemas, hierarchies and release configurations.

Their home is the repository's top-level ``schemas/<dataset>/``,
``hierarchies/<dataset>/`` and ``configs/`` folders. A wheel carries copies
inside the package, under ``ppdm/_data/schemas``, ``ppdm/_data/hierarchies``
and ``ppdm/_data/configs`` (hatch's
``force-include`` in ``pyproject.toml``), so an installed ppdm finds them
without a checkout. :func:`data_dir` looks for the packaged copy first, then,
in a source checkout (an editable install), for the repository folder two
levels above this package.

Nothing here depends on the working directory.

Examples
--------
>>> sorted(hierarchy_files(hierarchies_dir("german")))[:3]
['age', 'checking-status', 'credit-amount']
>>> config_file("adult").name
'adult.yaml'
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Literal

from ppdm.exceptions import UnknownDatasetError

__all__ = [
    "HIERARCHY_SUFFIXES",
    "config_file",
    "config_names",
    "data_dir",
    "hierarchies_dir",
    "hierarchy_files",
    "hierarchy_fingerprint",
    "schema_dir",
    "schema_names",
]

_PACKAGE = Path(__file__).resolve().parent
#: Where a wheel puts the data files (see ``[tool.hatch.build...force-include]``).
PACKAGED = _PACKAGE / "_data"
#: The repository root when ppdm runs from a checkout (``src/ppdm`` -> root).
CHECKOUT = _PACKAGE.parents[1]

#: Hierarchy file types read by :func:`ppdm.generalization.hierarchies.load_hierarchy`.
HIERARCHY_SUFFIXES = (".csv", ".json")

Kind = Literal["hierarchies", "configs", "schemas"]


def data_dir(kind: Kind, *, roots: tuple[Path, ...] = (PACKAGED, CHECKOUT)) -> Path:
    """The directory of shipped ``kind`` files: packaged copy, else the checkout's.

    Parameters
    ----------
    kind : {"hierarchies", "configs", "schemas"}
    roots : tuple of Path, default=(PACKAGED, CHECKOUT)
        Places searched in order, each for a ``kind`` sub-directory.

    Raises
    ------
    UnknownDatasetError
        Neither place has the directory (a broken installation).
    """
    if kind not in ("hierarchies", "configs", "schemas"):
        raise ValueError(
            f"kind must be 'hierarchies', 'configs' or 'schemas'; got {kind!r}"
        )
    for root in roots:
        candidate = root / kind
        if candidate.is_dir():
            return candidate
    raise UnknownDatasetError(
        f"no shipped {kind} directory; looked in "
        + ", ".join(str(root / kind) for root in roots)
    )


def hierarchies_dir(dataset: str) -> Path | None:
    """The shipped hierarchy directory of ``dataset``, or None when none ships."""
    try:
        directory = data_dir("hierarchies") / dataset
    except UnknownDatasetError:  # an installation without hierarchies
        return None
    return directory if directory.is_dir() else None


def hierarchy_files(directory: Path | str) -> dict[str, Path]:
    """``{attribute: file}`` of the hierarchy files in ``directory``, unread.

    Listing names is enough to tell which quasi-identifiers have a hierarchy;
    the files are parsed (and validated) only when a step loads them.
    """
    directory = Path(directory)
    return {
        path.stem: path
        for path in sorted(directory.iterdir())
        if path.suffix in HIERARCHY_SUFFIXES and path.is_file()
    }


def hierarchy_fingerprint(directory: Path | str) -> str:
    """sha256 over the names and bytes of the hierarchy files in ``directory``.

    Equal for equal hierarchies wherever they live, so it identifies the
    hierarchies a step used (in cache keys and the manifest) without a path.
    """
    digest = hashlib.sha256()
    for attribute, path in hierarchy_files(directory).items():
        data = path.read_bytes()
        name = f"{attribute}{path.suffix}".encode()
        digest.update(len(name).to_bytes(8, "big") + name)
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def config_names() -> list[str]:
    """Names (file stems) of the shipped release configurations."""
    return sorted(path.stem for path in data_dir("configs").glob("*.yaml"))


def config_file(name: str) -> Path:
    """The shipped configuration ``configs/<name>.yaml``.

    Raises
    ------
    UnknownDatasetError
        No such configuration ships; the message lists those that do.
    """
    path = data_dir("configs") / f"{name}.yaml"
    if not path.is_file():
        raise UnknownDatasetError(
            f"no shipped configuration {name!r}; shipped: {', '.join(config_names())}"
        )
    return path


def schema_names() -> list[str]:
    """Names of the shipped dataset schemas (folders with a ``schema.yaml``)."""
    return sorted(
        path.parent.name for path in data_dir("schemas").glob("*/schema.yaml")
    )


def schema_dir(name: str) -> Path:
    """The shipped dataset folder ``schemas/<name>/`` (schema.yaml, suite.json).

    Raises
    ------
    UnknownDatasetError
        No schema ships under ``name``; the message lists those that do.
    """
    directory = data_dir("schemas") / name
    if not (directory / "schema.yaml").is_file():
        raise UnknownDatasetError(
            f"no shipped schema {name!r}; shipped: {', '.join(schema_names())}"
        )
    return directory
