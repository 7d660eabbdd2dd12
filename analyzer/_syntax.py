"""Small helpers over libcst nodes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import libcst as cst

from contract import literal_eval


def dotted(node: Any) -> str | None:
    """``a.b.c`` for a Name or a chain of Attributes, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base is not None else None
    return None


def string_value(node: cst.SimpleString | cst.ConcatenatedString) -> str | bytes | None:
    """The text of a string literal, or None for one that mixes str and bytes. Not libcst's
    own evaluation of the node: that parses with ``ast`` outside the host's AST lock."""
    if isinstance(node, cst.SimpleString):
        value = literal_eval(node.value)
        return value if isinstance(value, str | bytes) else None
    if not isinstance(node.left, cst.SimpleString | cst.ConcatenatedString) or not isinstance(
        node.right, cst.SimpleString | cst.ConcatenatedString
    ):
        return None  # an f-string part: not a constant
    left, right = string_value(node.left), string_value(node.right)
    if isinstance(left, str) and isinstance(right, str):
        return left + right
    if isinstance(left, bytes) and isinstance(right, bytes):
        return left + right
    return None


def root_name(node: Any) -> str | None:
    """The variable at the bottom of ``x.a["b"][0]``."""
    while isinstance(node, cst.Subscript | cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def constant_key(node: Any) -> str | None:
    """The constant key of ``x.key`` or ``x["key"]``."""
    if isinstance(node, cst.Attribute):
        return str(node.attr.value)
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        index = node.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            value = string_value(index.value)
            return value if isinstance(value, str) else None
    return None


def capture_names(pattern: Any) -> Iterator[str]:
    """Names a ``case`` pattern binds."""
    if isinstance(pattern, cst.MatchAs) and pattern.name is not None:
        yield pattern.name.value
    if isinstance(pattern, cst.MatchStar) and pattern.name is not None:
        yield pattern.name.value
    for child in getattr(pattern, "children", ()):
        yield from capture_names(child)
