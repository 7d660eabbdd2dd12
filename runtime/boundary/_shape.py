"""The shape of JSON data: types, sizes, first and last items, without holding it all.

``skim`` reads JSON text one member or item at a time with the C decoder's ``raw_decode``,
keeping only a summary, so a 50 MB array of records is summarised in about the time
``json.loads`` takes and in a fraction of its memory. ``shape_of`` summarises a value that is
already in memory (a snippet's result) the same way.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from runtime.boundary._scan import Items, Members, raw_decode, skip, space

MAX_MEMBERS = 200
"""Members of one object that are described one by one; the rest are counted."""
MAX_DEPTH = 48
_BIG_ITEM = 256 * 1024
_SAMPLE = 100
_STRING_KEEP = 240


def kind_of(value: Any) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"


@dataclass(slots=True)
class Shape:
    """A summary of one JSON value."""

    kind: str
    size: int = 0
    """Keys of an object, items of an array, characters of a string."""
    span: int = 0
    """Characters of its JSON text, when known."""
    value: Any = None
    """A scalar's value; strings cut to a few hundred characters (see ``cut``)."""
    cut: bool = False
    members: dict[str, Shape] = field(default_factory=dict)
    """The first ``MAX_MEMBERS`` members of an object."""
    item_kinds: Counter[str] = field(default_factory=Counter)
    item_keys: Counter[str] = field(default_factory=Counter)
    """For arrays of objects: how many items have each key."""
    first: Shape | None = None
    last: Shape | None = None
    first_value: Any = None
    """The first item itself when it is small (and ``has_first_value``)."""
    last_value: Any = None
    has_first_value: bool = False
    has_last_value: bool = False
    sampled: bool = False
    """Item kinds and keys come from a sample of the items, not all of them."""


def skim(text: str) -> Shape:
    """The shape of the JSON document ``text``; raises ValueError when it is not JSON."""
    start = space(text, 0)
    try:
        shape, end = _skim(text, start, 0)
    except (IndexError, json.JSONDecodeError) as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    if space(text, end) != len(text):
        raise ValueError("not valid JSON: extra data after the document")
    return shape


def _skim(s: str, i: int, depth: int) -> tuple[Shape, int]:
    c = s[i]
    if depth >= MAX_DEPTH and c in "[{":
        value, end = raw_decode(s, i)
        shape = shape_of(value, depth)
        shape.span = end - i
        return shape, end
    if c == "{":
        return _skim_object(s, i, depth)
    if c == "[":
        return _skim_array(s, i, depth)
    value, end = raw_decode(s, i)
    shape = _scalar(value)
    shape.span = end - i
    return shape, end


def _skim_object(s: str, start: int, depth: int) -> tuple[Shape, int]:
    shape = Shape("object")
    walk = Members(s, start)
    for key, i in walk:
        if shape.size < MAX_MEMBERS:
            member, end = _skim(s, i, depth + 1)
            shape.members[key] = member
        else:
            end = skip(s, i)  # members past MAX_MEMBERS are decoded and dropped
        shape.size += 1
        walk.ended(end)
    shape.span = walk.end - start
    return shape, walk.end


def _skim_array(s: str, start: int, depth: int) -> tuple[Shape, int]:
    shape = Shape("array")
    big = False
    kinds = shape.item_kinds
    keys = shape.item_keys
    walk = Items(s, start)
    for item_start in walk:
        if big or (shape.size == 0 and s[item_start] in "[{"):
            item, end = _skim(s, item_start, depth + 1)
            big = big or end - item_start > _BIG_ITEM
            kinds[item.kind] += 1
            keys.update(item.members.keys())
            if shape.size == 0:
                shape.first = item
            shape.last = item
            shape.has_last_value = False
            if shape.size == 0 and not big:
                shape.first_value, _ = raw_decode(s, item_start)
                shape.has_first_value = True
        else:
            value, end = raw_decode(s, item_start)
            kinds[kind_of(value)] += 1
            if type(value) is dict:
                keys.update(value.keys())
            if shape.size == 0:
                shape.first_value, shape.has_first_value = value, True
            shape.last_value, shape.has_last_value = value, True
            shape.last = None
        shape.size += 1
        walk.ended(end)
    shape.span = walk.end - start
    nodes = _Nodes()
    if shape.first is None and shape.has_first_value:
        shape.first = shape_of(shape.first_value, depth + 1, nodes)
    if shape.last is None and shape.has_last_value:
        same = shape.last_value is shape.first_value
        shape.last = shape.first if same else shape_of(shape.last_value, depth + 1, nodes)
    return shape, walk.end


def _scalar(value: Any) -> Shape:
    if isinstance(value, str):
        cut = len(value) > _STRING_KEEP
        return Shape(
            "string", size=len(value), value=value[:_STRING_KEEP] if cut else value, cut=cut
        )
    return Shape(kind_of(value), value=value)


MAX_NODES = 10_000
"""Shapes one summary builds at most: a value nested deep, or wide at every level, is outlined
down to where the budget ends."""


class _Nodes:
    def __init__(self) -> None:
        self.left = MAX_NODES

    def take(self) -> bool:
        self.left -= 1
        return self.left >= 0


def shape_of(value: Any, depth: int = 0, nodes: _Nodes | None = None) -> Shape:
    """The shape of a value already in memory (sampling the items of long arrays, and never
    more than ``MAX_NODES`` shapes in all)."""
    nodes = nodes or _Nodes()
    if not nodes.take():
        return Shape(
            kind_of(value), size=len(value) if isinstance(value, dict | list | tuple) else 0
        )
    if isinstance(value, dict):
        shape = Shape("object", size=len(value))
        if depth < MAX_DEPTH:
            for n, (key, member) in enumerate(value.items()):
                if n >= MAX_MEMBERS:
                    break
                shape.members[str(key)] = shape_of(member, depth + 1, nodes)
        return shape
    if isinstance(value, list | tuple):
        items = list(value)
        shape = Shape("array", size=len(items))
        if not items:
            return shape
        sample = items if len(items) <= 2 * _SAMPLE else items[:_SAMPLE] + items[-_SAMPLE:]
        shape.sampled = len(sample) < len(items)
        for item in sample:
            shape.item_kinds[kind_of(item)] += 1
            if isinstance(item, dict):
                shape.item_keys.update(str(k) for k in item)
        shape.first_value, shape.has_first_value = items[0], True
        shape.last_value, shape.has_last_value = items[-1], True
        if depth < MAX_DEPTH:
            shape.first = shape_of(items[0], depth + 1, nodes)
            same = items[-1] is items[0]  # one item, or the same object twice: shaped once
            shape.last = shape.first if same else shape_of(items[-1], depth + 1, nodes)
        return shape
    return _scalar(value)
