"""Small computations of the rules: slice lengths, constant folding, bounds from arguments."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from analyzer._effects import EffectRow
from analyzer._models import Options
from analyzer._tables import BOUNDING_KEYWORDS
from analyzer._values import CLEAN, NO_CONST, Cls, V, combine, constant


def select(cls: Cls) -> Cls:
    """A selection of data: SELECTED, unless it already was something better."""
    return Cls.SELECTED if cls >= Cls.SELECTED else cls


def slice_length(lower: V | None, upper: V | None) -> int | None:
    low = limit(lower) if lower is not None else 0
    high = limit(upper) if upper is not None else None
    if lower is None and high is not None and high >= 0:
        return high
    if low is not None and low < 0 and upper is None:
        return -low
    if low is not None and low >= 0 and high is not None and high >= 0:
        return max(0, high - low)
    return None


def slice_call(args: list[V], name: str) -> V:
    data = args[0] if args else CLEAN
    bounds = [limit(a) for a in args[1:3]]
    count = None
    if len(bounds) == 1 and bounds[0] is not None:
        count = bounds[0]
    elif len(bounds) == 2 and None not in bounds:
        count = max(0, (bounds[1] or 0) - (bounds[0] or 0))
    if count is None:
        return data.retag(select(data.cls), data.bounded).step(name)
    return data.retag(select(data.cls), True, (count, "items")).step(f"{name} ({count} items)")


def limit(value: V | None) -> int | None:
    if value is None:
        return None
    if isinstance(value.const, int) and not isinstance(value.const, bool):
        return value.const
    return value.at_most


def const_int(value: V | None) -> int | None:
    if value is None:
        return None
    return (
        value.const if isinstance(value.const, int) and not isinstance(value.const, bool) else None
    )


def fold_min(args: list[V]) -> Any:
    if all(isinstance(a.const, int) for a in args):
        return min(a.const for a in args)
    return NO_CONST


def bound_from(row: EffectRow, kwargs: dict[str, V], options: Options) -> int | None:
    keyword = row.bound_keyword
    if keyword is not None and keyword in kwargs:
        return limit(kwargs[keyword])
    for name in row.bounded_when:
        if name in kwargs:
            return options.read_bytes
    if keyword is None and not row.bounded_when:
        for name in BOUNDING_KEYWORDS:
            if name in kwargs:
                return limit(kwargs[name])
    return row.default_bound


def stringy(value: V) -> bool:
    return (
        isinstance(value.const, str) or value.cls is Cls.ENCODED or "f-string" in value.trail[-1:]
    )


def repeat(left: V, right: V) -> V:
    times = const_int(right) if const_int(right) is not None else const_int(left)
    data = left if const_int(right) is not None else right
    if isinstance(left.const, str) and times is not None:
        return (
            constant(left.const * min(times, 1))
            if times <= 0
            else replace(
                constant(""), bound=(len(left.const.encode()) * times, "bytes"), const=NO_CONST
            )
        )
    result = combine([left, right])
    if times is not None and data.bound is not None and result.bounded:
        return replace(result, bound=(data.bound[0] * max(times, 0), data.bound[1]))
    return result


def fold(kind: str, left: int, right: int) -> int | None:
    try:
        if kind == "Add":
            return left + right
        if kind == "Subtract":
            return left - right
        if kind == "Multiply" and abs(left * right) < 10**12:
            return left * right
        if kind == "FloorDivide" and right:
            return left // right
    except (OverflowError, ValueError):
        return None
    return None


def parse_int(text: str) -> int:
    try:
        return int(text.replace("_", ""), 0)
    except ValueError:
        return 0


def show(value: V | None) -> str:
    if value is None:
        return ""
    if isinstance(value.const, int):
        return str(value.const)
    return "n"
