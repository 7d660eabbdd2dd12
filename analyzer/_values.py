"""Abstract values: what the analyzer knows of a value at one point of a snippet."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import IntEnum
from typing import Any

from analyzer._models import Classification


class Cls(IntEnum):
    """Classes ordered from best to worst, so that a join is ``max``."""

    NONE = 0
    OFFLOADED = 1
    COMPRESSED = 2
    AGGREGATED = 3
    PROJECTED = 4
    SELECTED = 5
    UNKNOWN = 6
    ENCODED = 7
    RAW = 8

    def public(self) -> Classification:
        return Classification(self.name)


NO_CONST: Any = object()


@dataclass(frozen=True, slots=True)
class Src:
    namespace: str
    name: str
    line: int | None
    column: int | None


@dataclass(frozen=True, slots=True)
class Func:
    """A function or lambda the snippet defines, analysed at each call."""

    node: Any
    """The libcst FunctionDef or Lambda."""
    closure: Any
    """The environment it was defined in."""
    scope: int = 0
    """Where its calls are in the text: its own body's scope for a def, the scope it was
    made in for a lambda (``Positions``)."""


@dataclass(frozen=True, slots=True)
class V:
    cls: Cls = Cls.NONE
    bounded: bool = True
    bound: tuple[int, str] | None = None
    """(amount, unit) when a number is known; unit is bytes, tokens or items."""
    sources: frozenset[Src] = frozenset()
    trail: tuple[str, ...] = ()
    reason: str | None = None
    """Why the value is UNKNOWN."""
    parts: tuple[V, ...] | None = None
    """Positions of a tuple or list whose shape is known (literals, gather)."""
    fields: tuple[tuple[str, V], ...] | None = None
    """Constant-key members of a dict literal."""
    func: Func | None = None
    module: str | None = None
    """A module (``json``) or a dotted name inside one (``json.dumps``)."""
    const: Any = field(default=NO_CONST)
    """A known constant (an int or a short str) for bounds and folding."""
    at_most: int | None = None
    """A known upper limit of a number (``min(n, 50)``)."""
    tag: str | None = None
    """What made it, when a later method depends on it (``Counter`` for most_common)."""
    item_bytes: int | None = None
    """The estimated size of one item of the source data it carries (a line of a file, a row
    of a query), from the effects table: a bound in items times this is its size."""
    text: bool = False
    """Known to be a string: a slice of it counts characters, not items."""

    @property
    def tainted(self) -> bool:
        return self.cls is not Cls.NONE

    def step(self, label: str) -> V:
        if not self.tainted or self.trail[-1:] == (label,):
            return self
        return replace(self, trail=(*self.trail, label))

    def retag(self, cls: Cls, bounded: bool, bound: tuple[int, str] | None = None) -> V:
        """The same data under another class and bound (keeps sources and trail)."""
        if not self.tainted:
            return self
        return V(
            cls=cls,
            bounded=bounded,
            bound=bound if bounded else None,
            sources=self.sources,
            trail=self.trail,
            reason=self.reason,
            item_bytes=self.item_bytes,
            text=self.text,
        )

    def field(self, key: str) -> V | None:
        for name, value in self.fields or ():
            if name == key:
                return value
        return None


CLEAN = V()
BOTTOM = V(bound=(0, "bytes"))
"""Nothing yet: what a recursive function is assumed to return before its first walk; a join
leaves it out."""


def constant(value: Any) -> V:
    size = len(value.encode("utf-8", "surrogatepass")) if isinstance(value, str) else 24
    keep = (
        value
        if isinstance(value, int | float | bool)
        or (isinstance(value, str) and len(value) <= 10_000)
        else NO_CONST
    )
    return V(bound=(size, "bytes"), const=keep)


LINES = "<lines>"
"""The tag of a list of the lines (or pieces) of a text: each item is text."""
SEVERAL_FUNCTIONS = "<functions>"
"""The tag of a value that is one of several functions (a join of two defs): a call of it is
not followed, and fails closed."""


def join(*values: V) -> V:
    """Either of the values (branches, ``or``, several returns): the worst class, bounded
    only if all are, the larger bound."""
    return _join(tuple(v for v in values if v is not None and v is not BOTTOM), {})


def _join(values: tuple[V, ...], memo: dict[tuple[int, ...], V]) -> V:
    """``join``, each combination of values joined once (``memo``): nested tuples that share
    their parts (``b = (b, b)``) cost their size, not two to the power of their depth."""
    if not values:
        return CLEAN
    first = values[0]
    if all(v is first for v in values):
        return first
    key = tuple(id(v) for v in values)
    known = memo.get(key)
    if known is not None:
        return known
    worst = max(values, key=lambda v: (v.cls, not v.bounded))
    bounded = all(v.bounded for v in values)
    bound = _max_bound([v.bound for v in values]) if bounded else None
    parts = None
    lengths = {len(v.parts) if v.parts is not None else -1 for v in values}
    if len(lengths) == 1 and -1 not in lengths:
        parts = tuple(
            _join(column, memo) for column in zip(*(v.parts or () for v in values), strict=True)
        )
    consts = {repr(v.const) for v in values}
    same_func = all(v.func == worst.func for v in values)
    several = not same_func and any(v.func is not None for v in values)
    joined = V(
        cls=worst.cls,
        bounded=bounded,
        bound=bound,
        sources=frozenset().union(*(v.sources for v in values)),
        trail=worst.trail,
        reason=worst.reason,
        parts=parts,
        func=worst.func if same_func else None,
        module=worst.module if all(v.module == worst.module for v in values) else None,
        const=values[0].const if len(consts) == 1 else NO_CONST,
        tag=SEVERAL_FUNCTIONS if several else None,
        item_bytes=_largest_item(values),
        text=all(v.text for v in values if v.tainted),
    )
    memo[key] = joined
    return joined


def combine(values: list[V] | tuple[V, ...], *, keep_parts: bool = False) -> V:
    """All of the values together (a container, a concatenation): bounds add up."""
    if not values:
        return V(bound=(2, "bytes"), parts=() if keep_parts else None)
    worst = max(values, key=lambda v: (v.cls, not v.bounded))
    bounded = all(v.bounded for v in values)
    bound = _sum_bound([v.bound for v in values]) if bounded else None
    return V(
        cls=worst.cls,
        bounded=bounded,
        bound=bound,
        sources=frozenset().union(*(v.sources for v in values)),
        trail=worst.trail,
        reason=worst.reason,
        parts=tuple(values) if keep_parts else None,
        item_bytes=_largest_item(values),
    )


def element(value: V) -> V:
    """One item of a container or iterable: a character of a string; an item of a list of
    the lines (or pieces) of a text is text itself."""
    if value.parts is not None:
        return join(*value.parts) if value.parts else CLEAN
    if not value.tainted:
        return CLEAN
    return V(
        cls=value.cls,
        bounded=value.bounded,
        bound=(4, "bytes") if value.text else None,
        sources=value.sources,
        trail=value.trail,
        reason=value.reason,
        item_bytes=value.item_bytes,
        text=value.text or value.tag == LINES,
    )


def gave_up(reason: str, *inputs: V) -> V:
    """Fail closed whatever the inputs: UNKNOWN and unbounded, with every source they carry
    (for an analysis that stopped following: a loop or recursion that did not settle)."""
    return V(
        cls=Cls.UNKNOWN,
        bounded=False,
        sources=frozenset().union(*(v.sources for v in inputs)),
        trail=(reason,),
        reason=reason,
    )


def unknown(reason: str, *inputs: V) -> V:
    """Fail closed: tainted inputs through something not modelled."""
    tainted = [v for v in inputs if v.tainted]
    if not tainted:
        return CLEAN
    return V(
        cls=Cls.UNKNOWN,
        bounded=False,
        sources=frozenset().union(*(v.sources for v in tainted)),
        trail=(*max(tainted, key=lambda v: v.cls).trail, reason),
        reason=reason,
    )


def encode(value: V, label: str) -> V:
    """Text made of the value: RAW becomes ENCODED; a bound counted in items no longer
    counts the text's size, so only the fact that it is bounded survives."""
    if value.cls is Cls.RAW:
        value = replace(value, cls=Cls.ENCODED, parts=None, fields=None)
    if value.bound is not None and value.bound[1] == "items":
        value = replace(value, bound=None)
    return replace(value, text=True).step(label) if value.tainted else value.step(label)


def _largest_item(values: tuple[V, ...] | list[V]) -> int | None:
    sizes = [v.item_bytes for v in values if v.item_bytes is not None]
    return max(sizes) if sizes else None


def _max_bound(bounds: list[tuple[int, str] | None]) -> tuple[int, str] | None:
    if any(b is None for b in bounds) or len({b[1] for b in bounds if b}) != 1:
        return None
    return max(bounds, key=lambda b: b[0] if b else 0)


def _sum_bound(bounds: list[tuple[int, str] | None]) -> tuple[int, str] | None:
    if any(b is None for b in bounds) or len({b[1] for b in bounds if b}) != 1:
        return None
    return sum(b[0] for b in bounds if b), bounds[0][1] if bounds[0] else "bytes"
