"""``persistVariables``: the top-level variables a snippet leaves, sent back for the next one.

After a snippet returns, :func:`collect` takes the names it bound at its top level and keeps
those holding plain data (``str``, ``bytes``, ``int``, ``float``, ``bool``, ``None``, and
lists, tuples and dicts with string keys of them; tuples come back as lists) within a byte
budget of JSON. The others are dropped with a note naming each and why: not plain data, or
too large. Imported modules and provider namespaces are left out without a note (``import``
again), as are names starting with ``_``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from contract import NAMESPACES
from runtime.worker import _wire
from runtime.worker._exact import exact_copy

_SCALARS = frozenset({str, bytes, int, float, bool, type(None)})
_SHOWN = 10


def _not_plain(value: Any, budget: int) -> str | None:
    """Why ``value`` is not plain data (or too large to hold in ``budget`` bytes), or None."""
    pending = [value]
    items = 0
    seen: set[int] = set()
    while pending:
        item = pending.pop()
        kind = type(item)
        items += 1
        if items > budget:  # every item takes at least a byte of JSON
            return "too large"
        if kind in _SCALARS:
            if kind is float and not math.isfinite(item):
                return "NaN or Infinity, which JSON lacks"
            continue
        if id(item) in seen:  # shared, or holding itself: the encoder tells which
            continue
        seen.add(id(item))
        if kind is list or kind is tuple:
            pending.extend(item)
        elif kind is dict:
            for key in item:
                if type(key) is not str:
                    return f"a dict key that is a {type(key).__name__}, not a str"
            pending.extend(item.values())
        else:
            return f"a {kind.__name__}, not plain data"
    return None


def size_of(variables: Mapping[str, Any]) -> int:
    """Bytes ``variables`` take as the JSON object they cross in: what :func:`collect`
    charged for them, exactly."""
    if not variables:
        return 0
    return len(_wire.encode_json(dict(variables))) - _wire.HEADER.size


def collect(
    scope: Mapping[str, Any], max_bytes: int, skip: tuple[type, ...]
) -> tuple[dict[str, Any], int, str | None]:
    """The variables to keep from ``scope`` (the snippet's top-level names), the bytes of their
    JSON, and a note naming those dropped (None when none were). ``skip`` are the types left out
    without a note (module facades, provider namespaces)."""
    kept: dict[str, Any] = {}
    used = 0
    dropped: list[str] = []
    for name, value in scope.items():
        if name.startswith("_") or name in NAMESPACES or issubclass(type(value), skip):
            continue  # type(): never a __class__ of the snippet's
        why = _not_plain(value, max_bytes - used)
        size = 0
        if why is None:
            # What is kept (and encoded) is a private copy: code the snippet runs later (a
            # __getattribute__, a generator's finally in collected garbage) cannot change it.
            copied, value = exact_copy(value)
            if not copied:
                why = "nested too deeply"
        if why is None:
            try:
                body = len(_wire.encode_json(value)) - _wire.HEADER.size
                # "name": ..., (the braces of the object pay for the last separator)
                size = body + len(name.encode("utf-8", "surrogatepass")) + 6
            except ValueError as exc:
                circular = "Circular reference" in str(exc)
                why = "a container that holds itself" if circular else f"not JSON ({exc})"
            except (TypeError, RecursionError, MemoryError) as exc:
                why = f"{type(exc).__name__}: not JSON"
            else:
                if used + size > max_bytes:
                    why = "too large"
        if why == "too large":
            why = _too_large(size, used, max_bytes)
        if why is not None:
            dropped.append(f"{name} ({why})")
            continue
        kept[name] = value
        used += size
    return kept, used, _note(dropped)


def _too_large(size: int, used: int, max_bytes: int) -> str:
    cap = f"persistVariablesMaxBytes ({max_bytes:,})"
    if not size:  # more items than bytes left: not encoded at all
        return f"more than the {max_bytes - used:,} bytes left of {cap}"
    if size > max_bytes:
        return f"{size:,} bytes, above {cap}"
    return f"{size:,} bytes, past {cap} with the variables kept before it"


def _note(dropped: list[str]) -> str | None:
    if not dropped:
        return None
    shown = "; ".join(dropped[:_SHOWN])
    more = f"; and {len(dropped) - _SHOWN} more" if len(dropped) > _SHOWN else ""
    return (
        f"persistVariables: not kept for the next execution: {shown}{more}. Keep plain data "
        "(str, bytes, numbers, bool, None, lists and dicts of them) in top-level variables, "
        "or return what you need"
    )
