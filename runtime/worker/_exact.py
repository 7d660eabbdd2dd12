"""Values rebuilt of exact plain types before the C JSON encoder reads them.

CPython 3.11's C encoder keeps borrowed pointers into the containers it walks while it calls
code of theirs (a ``list`` subclass's ``__iter__``, a ``dict`` subclass's ``items``), and that
code can free them: a snippet reached the real builtins that way. So whatever the worker
encodes of a snippet's (its return value, a provider call's arguments) is first rebuilt here
of exact ``dict``, ``list``, ``str``, ``int``, ``float`` and ``bytes``, through the base
types' own C methods, which call nothing of the snippet's.
"""

from __future__ import annotations

import marshal
from typing import Any

from runtime.worker import _audit

_TYPE_NAME = vars(type)["__name__"].__get__
"""A class's own name, never a metaclass's ``__name__`` property."""


def type_name(value: object) -> str:
    """The name of ``value``'s class, read without any hook of the snippet's."""
    return str(_TYPE_NAME(type(value)))


def exact_copy(value: Any) -> tuple[bool, Any]:
    """``(True, a private copy of value)`` when ``value`` is made of types ``marshal`` writes
    (it writes exact types and buffers, calling nothing of the snippet's), else ``(False,
    None)``. The copy is read back from marshal's bytes, so it shares nothing with the
    snippet: a buffer of the snippet's class comes back as exact ``bytes``, and nothing the
    snippet runs later (a hook the encoder calls) can change what the encoder reads."""
    try:
        with _audit.trusted():
            return True, marshal.loads(marshal.dumps(value))
    except ValueError:  # a subclass, an object of the snippet's, or nested too deeply
        return False, None


_EXACT = frozenset({str, int, float, bool, type(None)})
_KEYS = "keys must be str, int, float, bool or None"


def exact(value: Any) -> Any:
    """``value`` rebuilt of exact plain types: subclasses of ``str``, ``int``, ``float``,
    ``dict``, ``list``, ``tuple``, ``set`` and the bytes-likes read through the base type's own
    methods (never a snippet's override), bytes-likes as ``bytes`` (and, when marshal cannot
    copy the value, tuples and sets as lists).
    Raises TypeError for anything else (a ``... is not plain data`` message), ValueError for a
    container that holds itself, RecursionError for one nested too deeply.

    Whatever it returns is a copy: most values are made of marshal's types, and those are
    copied through marshal at C speed (:func:`exact_copy`)."""
    copied, copy = exact_copy(value)
    return copy if copied else _exact(value, set())


def _exact(value: Any, path: set[int]) -> Any:
    kind = type(value)
    if kind in _EXACT:
        return value
    if issubclass(kind, dict | list | tuple | set | frozenset):  # exact types: no hooks
        if id(value) in path:
            raise ValueError("Circular reference detected")
        path.add(id(value))
        try:
            if issubclass(kind, dict):
                return {
                    k if type(k) in _EXACT else _key(k): v if type(v) in _EXACT else _exact(v, path)
                    for k, v in dict.items(value)
                }
            items = (
                list.__iter__(value)
                if issubclass(kind, list)
                else tuple.__iter__(value)
                if issubclass(kind, tuple)
                else set.__iter__(value)
                if issubclass(kind, set)
                else frozenset.__iter__(value)
            )
            return [v if type(v) in _EXACT else _exact(v, path) for v in items]
        finally:
            path.discard(id(value))
    if issubclass(kind, bytes | bytearray | memoryview):
        with memoryview(value) as view:
            return view.tobytes()
    return _scalar(value, f"a {_TYPE_NAME(kind)} object is not plain data")


def _key(key: Any) -> Any:
    return _scalar(key, f"{_KEYS}, not {_TYPE_NAME(type(key))}")


def _scalar(value: Any, refusal: str) -> Any:
    kind = type(value)
    if issubclass(kind, str):
        return str.__str__(value)
    if issubclass(kind, float):
        return float.__float__(value)
    if issubclass(kind, int):
        return int.__int__(value)
    raise TypeError(refusal)
