"""``ctx_read`` by query over stored JSON: matches are counted in the text as for any payload,
and each window is the items around a match, labelled with their ``$`` paths.

A match inside a scalar is that scalar's; one in a member's key (or in the punctuation before
an item) is that member's or item's. The context of an item is its siblings, ``context`` on
each side, so a window never mixes two containers; matches whose context touches share a
window. The walk skips every value that holds no match with the C decoder and descends only
where one is, and it stops once the windows are full.
"""

from __future__ import annotations

from collections import deque
from typing import Protocol

from runtime._threads import stop_if_requested
from runtime.boundary._jsonpath import child_path
from runtime.boundary._readable import Line, Window
from runtime.boundary._scan import Items, Members, skip, space

MAX_JSON_QUERY_BYTES = 16 * 1024 * 1024
"""Larger JSON is queried line by line (its windows have no paths)."""
MAX_DEPTH = 8
"""Containers nested deeper are shown as one item each (each level decodes its part again)."""
MAX_ITEMS = 200_000
"""A walk that visits more items than this gives up, and the JSON is queried by line."""
_ITEM = 240
_WINDOW_ITEMS = 12
"""A window grows by joining matches until it holds this many items (and the context)."""


class _Item:
    __slots__ = ("end", "hit", "path", "start")

    def __init__(self, path: str, start: int, end: int, hit: int | None) -> None:
        self.path, self.start, self.end, self.hit = path, start, end, hit


class _Building:
    """A window being built: a run of siblings by index, and the matches among them."""

    def __init__(self, parent: str) -> None:
        self.parent = parent
        self.items: dict[int, _Item] = {}
        self.matches = 0
        self.after = 0
        """Siblings still to add as its context after the last match."""


class Finder(Protocol):
    """How the walk finds matches in the text (``Matcher`` is one)."""

    def find_from(self, text: str, position: int) -> tuple[int, int] | None:
        """The (start, end) of the first match at or after ``position``."""
        ...

    def count_from(self, text: str, position: int, before: int) -> tuple[int, int]:
        """How many matches from ``position`` start before ``before``, and where the last
        of them ends (``position`` if none)."""
        ...


class _Hits:
    """The next match, found as the walk asks; the matches inside one item are counted at
    once, never one by one (a 16 MB string of the query letter holds 16 million)."""

    def __init__(self, text: str, finder: Finder) -> None:
        self._text, self._finder = text, finder
        self._next = finder.find_from(text, 0)

    def __bool__(self) -> bool:
        return self._next is not None

    def before(self, end: int) -> bool:
        """Whether the next match starts before ``end``."""
        return self._next is not None and self._next[0] < end

    def pop(self) -> int:
        if self._next is None:
            raise IndexError("no more matches")
        start, end = self._next
        self._next = self._finder.find_from(self._text, end if end > start else start + 1)
        return start

    def drop_before(self, end: int) -> int:
        """Pass over the matches that start before ``end``; how many there were."""
        if not self.before(end):
            return 0
        assert self._next is not None
        count, last = self._finder.count_from(self._text, self._next[0], end)
        self._next = self._finder.find_from(self._text, last)
        return count


class TooCostly(Exception):
    """The document is too large or too deep to walk item by item; query it by line."""


def json_windows(text: str, finder: Finder, context: int, wanted: int) -> list[Window]:
    """Up to ``wanted`` windows for the matches ``finder`` finds in the JSON ``text``.
    Raises ValueError (from the scanner) if ``text`` is not JSON, TooCostly past the walk's
    bounds."""
    walk = _Walk(text, finder, context, wanted)
    start = space(text, 0)
    end = skip(text, start)
    if text[start] in "{[":
        walk.container(start, end, "$")
    elif walk.hits:
        walk.item(None, "$", 0, _Item("$", start, end, walk.hits.pop()), deque())
    return _windows(text, walk.windows)


class _Walk:
    def __init__(self, text: str, finder: Finder, context: int, wanted: int) -> None:
        self.s = text
        self.hits = _Hits(text, finder)
        self.visited = 0
        self.context, self.wanted = context, wanted
        self.windows: list[_Building] = []
        self.full = False

    def container(self, start: int, end: int, path: str, depth: int = 1) -> None:
        s = self.s
        recent: deque[tuple[int, _Item]] = deque(maxlen=self.context)
        mine: _Building | None = None
        walk: Members | Items = Members(s, start) if s[start] == "{" else Items(s, start)
        for index, entry in enumerate(walk):
            stop_if_requested()
            self.visited += 1
            if self.visited > MAX_ITEMS:
                raise TooCostly(f"more than {MAX_ITEMS} items walked")
            key, at = entry if isinstance(entry, tuple) else (None, entry)
            item_path = child_path(path, key) if key is not None else f"{path}[{index}]"
            item_end = skip(s, at)
            own = self.hits.pop() if self.hits.before(at) else None
            inside = own is None and self.hits.before(item_end) and s[at] in "{["
            if inside and depth < MAX_DEPTH:  # deeper than that, a container is one item
                self.container(at, item_end, item_path, depth + 1)
                if self.full:
                    return
            if own is None and self.hits.before(item_end):
                own = self.hits.pop()
            item = _Item(item_path, at, item_end, own)
            if own is not None:
                mine = self.item(mine, path, index, item, recent)
                if self.full:
                    return
            elif mine is not None and mine.after:
                mine.items[index] = item
                mine.after -= 1
            recent.append((index, item))
            walk.ended(item_end)
            if not self.hits and not (mine and mine.after):
                return

    def item(
        self,
        mine: _Building | None,
        parent: str,
        index: int,
        item: _Item,
        recent: deque[tuple[int, _Item]],
    ) -> _Building | None:
        """Place the matched ``item`` in this container's last window ``mine``, or in a new
        one with the siblings before it; the window it is in, None once the windows are full."""
        extra = self.hits.drop_before(item.end)  # more matches in the same item
        shown = max(mine.items) if mine is not None else -1
        joins = mine is not None and (
            index <= shown
            or (len(mine.items) < _WINDOW_ITEMS and index - self.context <= shown + 1)
        )
        if mine is None or not joins:
            if len(self.windows) >= self.wanted:
                self.full = True
                return None
            mine = _Building(parent)
            self.windows.append(mine)
            for before, sibling in recent:
                if before > shown:
                    mine.items[before] = sibling
        mine.items[index] = item
        mine.matches += 1 + extra
        mine.after = self.context
        return mine


def _windows(text: str, windows: list[_Building]) -> list[Window]:
    """The windows as the model reads them, with true line numbers and columns."""
    starts = sorted({at for w in windows for i in w.items.values() for at in _points(i)})
    lines: dict[int, int] = {}
    line, counted = 1, 0
    for at in starts:
        line += text.count("\n", counted, at)
        lines[at], counted = line, at
    out: list[Window] = []
    for building in windows:
        items = [building.items[index] for index in sorted(building.items)]
        first = next(item for item in items if item.hit is not None)
        assert first.hit is not None
        rows = [
            Line(number=lines[i.start], text=_shown(text, i), hit=i.hit is not None, path=i.path)
            for i in items
        ]
        out.append(
            Window(
                line=lines[first.hit],
                column=first.hit - text.rfind("\n", 0, first.hit),
                text="\n".join(f"{'>' if r.hit else ' '} {r.path} = {r.text}" for r in rows),
                lines=rows,
                matches=building.matches,
                path=first.path,
            )
        )
    return out


def _points(item: _Item) -> tuple[int, ...]:
    return (item.start,) if item.hit is None else (item.start, item.hit)


def _shown(text: str, item: _Item) -> str:
    """The item's JSON text, cut around its match when long."""
    raw = text[item.start : item.end]
    if len(raw) <= _ITEM:
        return raw
    at = max(0, item.hit - item.start) if item.hit is not None else 0
    left = max(0, min(at - _ITEM // 2, len(raw) - _ITEM))
    right = left + _ITEM
    before = f"…(+{left}) " if left else ""
    after = f" …(+{len(raw) - right})" if right < len(raw) else ""
    return before + raw[left:right] + after
