"""A refused configuration in one line: the key, the value and what is allowed.

pydantic's errors are rewritten in the YAML author's terms, e.g. ``config
adult.yaml: k = 0 is not allowed (...); allowed: an integer >= 1 and <=
1000000``, with the closest allowed key or value for a typo.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ValidationError

from ppdm.exceptions import InvalidParameterError
from ppdm.params import did_you_mean

__all__ = ["ConfigError"]


class ConfigError(InvalidParameterError):
    """A release configuration is unreadable, has unknown keys or bad values."""


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


def _format_errors(err: ValidationError, origin: str, model: type[BaseModel]) -> str:
    """One line naming each refused key of ``model``, for the file ``origin``."""
    lines = []
    for error in err.errors():
        loc = tuple(error["loc"])
        key = ".".join(str(p) for p in loc) or "(top level)"
        if error["type"] == "extra_forbidden":
            parent = loc[:-1]
            allowed = (
                _allowed(model, parent)
                if parent
                else ", ".join(
                    f.alias or name for name, f in model.model_fields.items()
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
            allowed = _allowed(model, loc)
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
