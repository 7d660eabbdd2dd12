"""A Python signature from a JSON schema: ``mcp.git.git_log(repo_path: str, max_count: int =
10)``, what the model needs to call a tool whose arguments a schema describes.

Parameters come in the order of the schema's ``properties``, the order positional arguments
fill them. Types are the Python spelling of the schema's: ``string`` is ``str``, an ``enum`` a
``Literal``, ``anyOf`` a union, an array of strings ``list[str]``; what has no short spelling
is ``Any``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_SIMPLE = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
    "object": "dict",
    "array": "list",
}
_DEPTH = 4
_MAX_LITERALS = 8
_MAX_DEFAULT_CHARS = 40


def python_type(schema: Any, depth: int = 0) -> str:
    """The Python spelling of one schema's type."""
    if not isinstance(schema, Mapping) or depth > _DEPTH:
        return "Any"
    if "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
        values = schema["enum"][:_MAX_LITERALS]
        more = ", ..." if len(schema["enum"]) > _MAX_LITERALS else ""
        return f"Literal[{', '.join(repr(v) for v in values)}{more}]"
    if "const" in schema:
        return f"Literal[{schema['const']!r}]"
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return _union([python_type(o, depth + 1) for o in options])
    if isinstance(schema.get("$ref"), str):
        return "dict"
    kind = schema.get("type")
    if isinstance(kind, list):
        return _union([python_type({**schema, "type": k}, depth + 1) for k in kind])
    if kind == "array":
        items = schema.get("items")
        return f"list[{python_type(items, depth + 1)}]" if isinstance(items, Mapping) else "list"
    if kind == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping) and not schema.get("properties"):
            return f"dict[str, {python_type(extra, depth + 1)}]"
        return "dict"
    return _SIMPLE.get(kind, "Any") if isinstance(kind, str) else "Any"


def _union(parts: list[str]) -> str:
    unique = list(dict.fromkeys(parts))
    if "Any" in unique:
        return "Any"
    return " | ".join(unique)


def parameter_list(schema: Mapping[str, Any] | None) -> str:
    """``a: int, b: str = 'x'``: a schema's properties as Python parameters."""
    schema = schema or {}
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return ""
    required = schema.get("required")
    required = set(required) if isinstance(required, list) else set()
    parts = []
    for name, prop in properties.items():
        part = f"{name}: {python_type(prop)}"
        if name not in required:
            default = prop.get("default") if isinstance(prop, Mapping) else None
            shown = repr(default)
            if len(shown) > _MAX_DEFAULT_CHARS:
                shown = "..."
            part += f" = {shown}"
        parts.append(part)
    return ", ".join(parts)


def schema_signature(qualified: str, schema: Mapping[str, Any] | None) -> str:
    """``mcp.git.git_log(repo_path: str, max_count: int = 10)``."""
    return f"{qualified}({parameter_list(schema)})"
