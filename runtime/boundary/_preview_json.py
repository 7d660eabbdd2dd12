"""A structural preview of JSON: the shape first, the fields that usually hold the answer
first, never a cut JSON string pretending to be valid.

Every line is a path with its type and size, or a short value::

    JSON object, 3 keys: ok, total, items (partial view: paths, types and sizes)
    $.ok = true
    $.total = 420000
    $.items = array of 420000 objects; keys: id, name, tags, score, active, bio
      $.items[0] = {"id": 0, "name": "user 0", "tags": ["a", "b"], "score": 0.0}
      $.items[419999] = {"id": 419999, "name": "user 419999", … +4 keys}

Lines are chosen breadth first (every top-level path before any nested one) until the budget
is spent, then printed in document order; what did not fit is counted at the end.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from runtime.boundary._fit import fit
from runtime.boundary._fit import size as _size
from runtime.boundary._jsonpath import child_path
from runtime.boundary._shape import Shape, kind_of
from store import json_default

STATUS_KEYS = (
    "ok",
    "success",
    "status",
    "state",
    "error",
    "errors",
    "code",
    "exit_code",
    "exitCode",
    "returncode",
    "message",
    "msg",
    "total",
    "count",
    "total_count",
    "has_more",
)
_STATUS_RANK = {key: n for n, key in enumerate(STATUS_KEYS)}
_LINE = 200
_SHORT = 80
_MAX_NODES = 4000


@dataclass(slots=True)
class _Node:
    order: tuple[int, ...]
    text: str


def preview_json(shape: Shape, budget: int, *, size_bytes: int | None = None) -> str:
    """At most ``budget`` bytes describing ``shape``."""
    head = _headline(shape, size_bytes, max(300, budget // 2))
    nodes: list[_Node] = []
    if shape.kind in ("object", "array"):
        _walk(shape, "$", (), 0, nodes)
    else:
        nodes.append(_Node((0,), f"$ = {_scalar_text(shape)}"))
    chosen: list[_Node] = []
    used = _size(head) + 1
    reserve = 80  # room for the closing "N more paths" line
    for node in sorted(nodes, key=lambda n: (len(n.order), n.order)):
        cost = _size(node.text) + 1
        if used + cost > budget - reserve:
            continue
        chosen.append(node)
        used += cost
    lines = [head] + [n.text for n in sorted(chosen, key=lambda n: n.order)]
    left = len(nodes) - len(chosen)
    if left:
        lines.append(f"… {left} more paths not shown; read them with json_path")
    return fit("\n".join(lines), budget)


def _headline(shape: Shape, size_bytes: int | None, room: int) -> str:
    size = f", {_human(size_bytes)}" if size_bytes is not None else ""
    if shape.kind == "object":
        names = ", ".join(shape.members)
        if len(names) > room:
            names = names[:room].rsplit(", ", 1)[0] + ", …"
        more = (
            f" (+{shape.size - len(shape.members)} more)" if shape.size > len(shape.members) else ""
        )
        keys = f": {names}{more}" if shape.members else ""
        count = _plural(shape.size, "key")
        return f"JSON object, {count}{keys}{size} (partial view: paths, types, sizes)"
    if shape.kind == "array":
        return f"JSON array of {_items(shape)}{size} (partial view: paths, types, sizes)"
    return f"JSON {shape.kind}{size}"


def _walk(shape: Shape, path: str, order: tuple[int, ...], depth: int, out: list[_Node]) -> None:
    if len(out) >= _MAX_NODES:
        return
    indent = "  " * depth
    if shape.kind == "object":
        numbered = sorted(enumerate(shape.members.items()), key=lambda p: (_rank(*p[1]), p[0]))
        for position, (_, (key, member)) in enumerate(numbered):
            child = child_path(path, key)
            place = (*order, position)
            out.append(_Node(place, f"{indent}{child} = {_describe(member)}"))
            _expand(member, child, place, depth + 1, out)
        return
    if shape.kind == "array":
        _expand(shape, path, order, depth, out)


def _expand(shape: Shape, path: str, order: tuple[int, ...], depth: int, out: list[_Node]) -> None:
    """Children of a container's line: an object's members, an array's first and last item."""
    if shape.kind == "object" and shape.members and not _fits_inline(shape):
        _walk(shape, path, order, depth, out)
    elif shape.kind == "array" and shape.size:
        indent = "  " * depth
        ends = [(0, shape.first, shape.first_value, shape.has_first_value)]
        if shape.size > 1:
            ends.append((shape.size - 1, shape.last, shape.last_value, shape.has_last_value))
        for position, (index, item, value, has_value) in enumerate(ends):
            child = f"{path}[{index}]"
            place = (*order, position)
            if has_value:
                text = _compact(value, _LINE - len(indent) - len(child))
            elif item is not None:
                text = _describe(item)
            else:
                continue
            out.append(_Node(place, f"{indent}{child} = {text}"))
            if item is not None and item.kind in ("object", "array") and "…" in text:
                _expand(item, child, place, depth + 1, out)


def _rank(key: str, shape: Shape) -> int:
    """Status-like fields first, then short scalars, containers, then long strings."""
    if key in _STATUS_RANK and shape.kind not in ("object", "array"):
        return 0
    if shape.kind in ("object", "array"):
        return 2
    if shape.kind == "string" and shape.size > _SHORT:
        return 3
    return 1


def _describe(shape: Shape) -> str:
    if shape.kind == "object":
        if _fits_inline(shape):
            return _compact(_rebuild(shape), _LINE)
        return f"object, {_plural(shape.size, 'key')}"
    if shape.kind == "array":
        return f"array of {_items(shape)}"
    return _scalar_text(shape)


def _fits_inline(shape: Shape) -> bool:
    return (
        shape.size <= 6
        and len(shape.members) == shape.size
        and all(m.kind not in ("object", "array") and not m.cut for m in shape.members.values())
        and sum(len(str(m.value)) for m in shape.members.values()) < _SHORT
    )


def _rebuild(shape: Shape) -> dict[str, Any]:
    return {key: member.value for key, member in shape.members.items()}


def _items(shape: Shape) -> str:
    if not shape.size:
        return "0 items"
    kinds = shape.item_kinds
    if len(kinds) == 1:
        (kind,) = kinds
        text = _plural(shape.size, kind)
    else:
        mix = ", ".join(f"{k} {n}" for k, n in kinds.most_common())
        text = f"{shape.size} items ({mix}{' in a sample' if shape.sampled else ''})"
    if shape.item_keys:
        total = sum(kinds.values())
        names = [k if n == total else f"{k} ({n})" for k, n in shape.item_keys.most_common(12)]
        more = len(shape.item_keys) - len(names)
        text += "; keys: " + ", ".join(names) + (f", +{more} more" if more > 0 else "")
    return text


def _scalar_text(shape: Shape) -> str:
    if shape.kind == "string":
        shown = json.dumps(shape.value, ensure_ascii=False)
        if shape.cut or len(shown) > _SHORT:
            return f"string of {shape.size} chars: {shown[: _SHORT - 1]}…"
        return shown
    return json.dumps(shape.value)


def _compact(value: Any, limit: int) -> str:
    """JSON if it fits in ``limit`` characters, else an explicitly partial rendering."""
    limit = max(limit, 40)
    try:
        text = json.dumps(value, ensure_ascii=False, default=json_default)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    if len(text) <= limit:
        return text
    if isinstance(value, dict):
        parts: list[str] = []
        used = 2
        for n, (key, member) in enumerate(value.items()):
            piece = f"{json.dumps(str(key), ensure_ascii=False)}: {_brief(member)}"
            if used + len(piece) + 14 > limit:
                parts.append(f"… +{len(value) - n} keys")
                break
            parts.append(piece)
            used += len(piece) + 2
        return "{" + ", ".join(parts) + "}"
    if isinstance(value, list):
        parts = []
        used = 2
        for n, item in enumerate(value):
            piece = _brief(item)
            if used + len(piece) + 14 > limit:
                parts.append(f"… +{len(value) - n} items")
                break
            parts.append(piece)
            used += len(piece) + 2
        return "[" + ", ".join(parts) + "]"
    return _cut(text, limit)


def _brief(value: Any) -> str:
    kind = kind_of(value)
    if kind == "object":
        return f"{{… {len(value)} keys}}" if value else "{}"
    if kind == "array":
        return f"[… {len(value)} items]" if value else "[]"
    text = json.dumps(value, ensure_ascii=False, default=json_default)
    return _cut(text, 60)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + f"… (+{len(text) - limit + 1} chars)"


def _human(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{size} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"
