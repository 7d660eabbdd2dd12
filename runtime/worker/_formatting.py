"""``str.format`` and ``str.format_map`` whose field walks go through the snippet's guards.

The real methods resolve ``{0.attr[key]}`` paths in C, past every guard; they are the classic
way out of a Python jail (with the attribute error that carries what the walk reached). A
snippet never holds them: whichever route leads to one (``"...".format``, ``str.format``,
``super().format`` in a ``str`` subclass...), the value check hands out a :class:`BoundFormat`
or one of :class:`Formats`' functions instead, which parse the template with the same
``_string`` helpers and resolve each step with the guarded ``getattr`` and ``getitem``.
"""

from __future__ import annotations

import _string  # type: ignore[import-not-found]  # the C helpers behind string.Formatter
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Getter = Callable[[Any, Any], Any]


class SafeFormatter(string.Formatter):
    """A ``string.Formatter`` whose attribute and item steps are the snippet's guards."""

    def __init__(self, getattr_: Getter, getitem_: Getter) -> None:
        self._getattr = getattr_
        self._getitem = getitem_

    def get_field(self, field_name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        first, rest = _string.formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, key in rest:
            obj = self._getattr(obj, key) if is_attr else self._getitem(obj, key)
        return obj, first


class BoundFormat:
    """``template.format`` or ``template.format_map``, guarded."""

    __slots__ = ("_formatter", "_mapping", "_template")

    def __init__(self, formatter: SafeFormatter, template: str, mapping: bool) -> None:
        self._formatter = formatter
        self._template = template
        self._mapping = mapping

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        if self._mapping:
            if len(args) != 1 or kwargs:
                raise TypeError("format_map() takes exactly one argument, a mapping")
            return self._formatter.vformat(self._template, (), args[0])
        return self._formatter.vformat(self._template, args, kwargs)

    def __repr__(self) -> str:
        method = "format_map" if self._mapping else "format"
        return f"<built-in method {method} of str object>"


class Formats:
    """The guarded replacements, for one worker's guards."""

    def __init__(self, getattr_: Getter, getitem_: Getter) -> None:
        formatter = self.formatter = SafeFormatter(getattr_, getitem_)

        def format(template: str, /, *args: Any, **kwargs: Any) -> str:
            """str.format(template, *args, **kwargs), with guarded field walks."""
            return formatter.vformat(str(template), args, kwargs)

        def format_map(template: str, mapping: Any, /) -> str:
            """str.format_map(template, mapping), with guarded field walks."""
            return formatter.vformat(str(template), (), mapping)

        self.unbound = {"format": format, "format_map": format_map}
        for name, method in self.unbound.items():  # named as the methods they stand for
            method.__code__ = method.__code__.replace(co_name=name, co_qualname=f"str.{name}")
            method.__qualname__, method.__module__ = f"str.{name}", "builtins"

    def bound(self, template: str, method: str) -> BoundFormat:
        return BoundFormat(self.formatter, template, method == "format_map")


BoundFormat.__module__ = "builtins"  # 'x'.format.__module__, as CPython's bound method has it
