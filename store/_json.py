"""How Fabric writes values JSON cannot hold, declared once for every package: bytes as
``{"bytes": <length>, "base64": "..."}``, sets and tuples as lists, anything else by its repr."""

from __future__ import annotations

import base64


def json_default(value: object) -> object:
    """The ``default=`` of every ``json.dumps`` that writes a value for a person or a model."""
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        return {"bytes": len(raw), "base64": base64.b64encode(raw).decode("ascii")}
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return repr(value)
