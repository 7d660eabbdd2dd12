"""How deeply a value may nest to cross between a snippet and the world.

Everything that crosses is JSON-like data, and each reader on the way has a recursion limit of
its own: pydantic's serializer (a result's ``--json``, MCP's structured content), an MCP
client's parser (about 200 levels), CPython's JSON decoder (about 1,000). A value deeper than
:data:`MAX_DEPTH` is refused where it would cross, with an error that says so, never left to
fail in one of them.
"""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 100
"""The deepest nesting of lists, tuples and dicts a value may have to cross (a result, a
provider call's arguments, a value read by a JSON path)."""


def nests_within(value: Any, depth: int = MAX_DEPTH) -> bool:
    """Whether ``value``'s lists, tuples and dicts nest at most ``depth`` levels (exact types
    only: what crosses is plain data; a cycle nests without end). Iterative; a container
    shared by several parents is looked into again only when met deeper than before."""
    pending: list[tuple[Any, int]] = [(value, 0)]
    deepest: dict[int, int] = {}
    while pending:
        item, level = pending.pop()
        kind = type(item)
        if kind is dict:
            children: Any = item.values()
        elif kind is list or kind is tuple:
            children = item
        else:
            continue
        if level >= depth:
            return False
        if deepest.get(id(item), -1) >= level:
            continue
        deepest[id(item)] = level
        pending.extend((child, level + 1) for child in children)
    return True
