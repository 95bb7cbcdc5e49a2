"""How a source's problems are told: its header's names, an exception's first line."""

from __future__ import annotations

import json

from ppdm.exceptions import SourceError


def _check_header(names: list[str], source: str, delimiter: str | None = None) -> None:
    """Refuse repeated column names and a header that is one run-together name."""
    seen: dict[str, int] = {}
    for position, column in enumerate(names, start=1):
        if column in seen:
            raise SourceError(
                f"source {source}: column name {column!r} appears twice in the "
                f"header (columns {seen[column]} and {position}); every column "
                "needs a name of its own"
            )
        seen[column] = position
    if len(names) == 1:
        for separator, label in (
            (",", "commas"),
            (";", "';'"),
            ("\t", "tabs"),
            ("|", "'|'"),
        ):
            if separator != (delimiter or ",") and separator in names[0]:
                raise SourceError(
                    f"source {source}: the header is one column "
                    f"({_shorten(repr(names[0]))}); the file looks separated by "
                    f"{label}: write `delimiter: {json.dumps(separator)}` under "
                    "`source:` in the configuration"
                )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _shorten(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
