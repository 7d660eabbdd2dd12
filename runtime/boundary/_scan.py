"""The one lazy JSON scanner: the members of an object and the items of an array, one at a
time, strict about ``:`` and ``,``, for the JSON path walk (``_jsonpath``) and the previews'
shapes (``_shape``).

Each walker decides how to consume a value (descend into it, or skip it with the C decoder's
``raw_decode``) and hands back where it ended, so nothing is decoded twice::

    walk = Members(text, start)
    for key, value_start in walk:
        walk.ended(consume(text, value_start))
    after = walk.end
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import cast

raw_decode = json.JSONDecoder().raw_decode
scan_string = json.decoder.scanstring  # type: ignore[attr-defined]
_space = cast(Callable[[str, int], "re.Match[str]"], re.compile(r"[ \t\n\r]*").match)


def space(s: str, i: int) -> int:
    """The index of the first non-blank character at or after ``i``."""
    return _space(s, i).end()


def skip(s: str, i: int) -> int:
    """The index just past the value at ``i``."""
    return int(raw_decode(s, i)[1])


class _Walk:
    """Members or items of one container; the consumer reports where each value ended."""

    __slots__ = ("_close", "_next", "_s", "end")

    def __init__(self, s: str, start: int, close: str) -> None:
        self._s, self._close = s, close
        self._next: int | None = space(s, start + 1)
        self.end = -1
        """The index just past the container, once every value was consumed."""
        if s[self._next] == close:
            self.end, self._next = self._next + 1, None

    def ended(self, i: int) -> None:
        """The value last handed out ends just before ``i``."""
        s = self._s
        i = space(s, i)
        if s[i] == self._close:
            self.end, self._next = i + 1, None
        elif s[i] == ",":
            self._next = space(s, i + 1)
        else:
            raise json.JSONDecodeError(f"Expecting ',' delimiter or {self._close!r}", s, i)


class Members(_Walk):
    """``(key, start of its value)`` for each member of the object at ``start``."""

    def __init__(self, s: str, start: int) -> None:
        super().__init__(s, start, "}")

    def __iter__(self) -> Iterator[tuple[str, int]]:
        s = self._s
        while self._next is not None:
            i, self._next = self._next, None
            if s[i] != '"':
                raise json.JSONDecodeError(
                    "Expecting property name enclosed in double quotes", s, i
                )
            key, i = scan_string(s, i + 1)
            i = space(s, i)
            if s[i] != ":":
                raise json.JSONDecodeError("Expecting ':' delimiter", s, i)
            yield key, space(s, i + 1)
            if self._next is None and self.end < 0:
                raise RuntimeError("a member's value was not consumed (call ended())")


class Items(_Walk):
    """The start of each item of the array at ``start``."""

    def __init__(self, s: str, start: int) -> None:
        super().__init__(s, start, "]")

    def __iter__(self) -> Iterator[int]:
        while self._next is not None:
            i, self._next = self._next, None
            yield i
            if self._next is None and self.end < 0:
                raise RuntimeError("an item was not consumed (call ended())")
