"""JSON paths over JSON text, read lazily: ``$.a.b[0]["k"]``, ``[*]``, ``.*``, ``[0:5]``.

Evaluation walks the text with the C decoder's ``raw_decode``, one member or item at a time,
so selecting ``$.items[3]`` from a 100 MB document never builds the other items at once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator
from dataclasses import dataclass
from typing import NoReturn

from contract import MAX_DEPTH, json_nests_within
from runtime._errors import ReadError
from runtime._threads import stop_if_requested
from runtime.boundary._scan import Items, Members, raw_decode, space

_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")
_INT = re.compile(r"-?\d+")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
EXAMPLES = '$.items[0].name, $["key with spaces"], $.items[*].id, $.items[0:5], $.*'


@dataclass(frozen=True, slots=True)
class Key:
    name: str


@dataclass(frozen=True, slots=True)
class Index:
    index: int


@dataclass(frozen=True, slots=True)
class Slice:
    start: int | None
    stop: int | None


@dataclass(frozen=True, slots=True)
class Wild:
    pass


Step = Key | Index | Slice | Wild


def parse(path: str) -> list[Step]:
    """Parse a path; a malformed one raises ReadError(bad_json_path) naming the position."""
    if not isinstance(path, str) or not path.startswith("$"):
        _bad(path, 0, "a path starts with $")
    steps: list[Step] = []
    i = 1
    while i < len(path):
        c = path[i]
        if c == ".":
            if path[i + 1 : i + 2] == "*":
                steps.append(Wild())
                i += 2
                continue
            match = _NAME.match(path, i + 1)
            if not match:
                _bad(path, i + 1, "expected a name after '.'")
            steps.append(Key(match.group(0)))
            i = match.end()
        elif c == "[":
            i = _bracket(path, i + 1, steps)
        else:
            _bad(path, i, "expected '.' or '['")
    return steps


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}


def _escape(path: str, i: int) -> tuple[str, int]:
    """The character a backslash escape at ``path[i]`` (after the backslash) stands for, and
    where the key goes on: JSON's escapes (``\\n``, ``\\u00e9``, a surrogate pair), so a key
    as :func:`child_path` writes it reads back; any other character stands for itself
    (``\\'``, ``\\"``, ``\\\\``)."""
    char = path[i]
    if char in _ESCAPES:
        return _ESCAPES[char], i + 1
    if char == "u" and _HEX4.fullmatch(path[i + 1 : i + 5]):
        code = int(path[i + 1 : i + 5], 16)
        low = path[i + 5 : i + 11]
        if 0xD800 <= code < 0xDC00 and low[:2] == "\\u" and _HEX4.fullmatch(low[2:]):
            second = int(low[2:], 16)
            if 0xDC00 <= second < 0xE000:
                return chr(0x10000 + ((code - 0xD800) << 10) + (second - 0xDC00)), i + 11
        return chr(code), i + 5
    return char, i + 1


def _bracket(path: str, i: int, steps: list[Step]) -> int:
    if path[i : i + 2] == "*]":
        steps.append(Wild())
        return i + 2
    if path[i : i + 1] in ('"', "'"):
        quote = path[i]
        end = i + 1
        chars: list[str] = []
        while end < len(path) and path[end] != quote:
            if path[end] == "\\" and end + 1 < len(path):
                char, end = _escape(path, end + 1)
                chars.append(char)
                continue
            chars.append(path[end])
            end += 1
        if path[end + 1 : end + 2] != "]":
            _bad(path, end, f"expected {quote}] to close the key")
        steps.append(Key("".join(chars)))
        return end + 2
    close = path.find("]", i)
    if close < 0:
        _bad(path, i, "expected ']'")
    inside = path[i:close].strip()
    if ":" in inside:
        parts = inside.split(":")
        if len(parts) != 2 or not all(p.strip() == "" or _INT.fullmatch(p.strip()) for p in parts):
            _bad(path, i, "a slice looks like [start:stop] with whole numbers")
        start, stop = (int(p) if p.strip() else None for p in parts)
        steps.append(Slice(start, stop))
    elif _INT.fullmatch(inside):
        steps.append(Index(int(inside)))
    else:
        _bad(path, i, "expected an index, a slice, '*' or a quoted key")
    return close + 1


def _bad(path: object, position: int, problem: str) -> NoReturn:
    raise ReadError(
        "bad_json_path",
        f"bad JSON path {str(path)!r} at position {position}: {problem}. Paths look like "
        f"{EXAMPLES}",
    )


MAX_STEPS = 64
PASSES = 8  # how many times the text may be decoded over: nested negative indexes re-read


def evaluate(text: str, steps: list[Step], limit: int) -> tuple[list[tuple[str, object]], int]:
    """Up to ``limit`` (path, value) matches and the total number of matches.

    The walk decodes each value it does not descend into once, so a path of positive steps
    costs one pass over the text; a negative index first counts its array's items, one more
    pass over that array. The work is capped at :data:`PASSES` passes over the whole text
    (``json_path_too_costly``), so no path makes a read run for minutes."""
    if len(steps) > MAX_STEPS:
        raise ReadError(
            "bad_json_path",
            f"the JSON path has {len(steps)} steps; at most {MAX_STEPS} are read. Select "
            "a nearer value first, then read into it",
        )
    walk = _Walk(text, PASSES * len(text) + (1 << 20))
    found: list[tuple[str, object]] = []
    total = 0
    try:
        for path, position in walk.value(space(text, 0), steps, "$", whole=False):
            total += 1
            if len(found) < limit:
                value, end = walk.decode(position)
                if not json_nests_within(text[position:end]):
                    raise ReadError(
                        "json_path_too_costly",
                        f"the value at {path} nests deeper than {MAX_DEPTH} levels, past what a "
                        "read hands back; select a value nearer its leaves, or read the text "
                        'with query="..." (matching lines) or offset=/length= (a byte range)',
                    )
                found.append((path, value))
    except (IndexError, json.JSONDecodeError) as exc:
        raise ReadError("not_json", f"the content is not valid JSON ({exc})") from None
    except RecursionError:
        raise ReadError(
            "json_path_too_costly",
            "the JSON nests deeper than a JSON path reads (about 900 levels); read it with "
            'query="..." (matching lines) or offset=/length= (a byte range)',
        ) from None
    return found, total


Matches = Generator[tuple[str, int], None, int]


class _Walk:
    """One evaluation: the text, and the decoding work left before it is refused."""

    def __init__(self, text: str, work: int) -> None:
        self.s = text
        self.work = work

    def decode(self, i: int) -> tuple[object, int]:
        stop_if_requested()
        value, end = raw_decode(self.s, i)
        self.work -= end - i
        if self.work < 0:
            raise ReadError(
                "json_path_too_costly",
                f"the JSON path re-reads the content more than {PASSES} times over (each "
                "negative index counts its array first); use positive indexes or slices, "
                "or select a nearer value first",
            )
        return value, end

    def value(self, i: int, steps: list[Step], path: str, *, whole: bool) -> Matches:
        """Yield the matches of ``steps`` in the value at ``i``; return the index just past
        it, or -1 when ``whole`` is false and the walk stopped once nothing more matches."""
        s = self.s
        if steps:
            step, rest = steps[0], steps[1:]
            if s[i] == "{" and isinstance(step, Key | Wild):
                return (yield from self._object(i, step, rest, path))
            if s[i] == "[" and not isinstance(step, Key):
                return (yield from self._array(i, step, rest, path, whole=whole))
        else:
            yield path, i
        return self.decode(i)[1] if whole else -1

    def _object(self, i: int, step: Key | Wild, rest: list[Step], path: str) -> Matches:
        walk = Members(self.s, i)
        for key, start in walk:
            stop_if_requested()
            if isinstance(step, Wild) or key == step.name:
                end = yield from self.value(start, rest, child_path(path, key), whole=True)
            else:
                end = self.decode(start)[1]
            walk.ended(end)
        return walk.end

    def _array(self, i: int, step: Step, rest: list[Step], path: str, *, whole: bool) -> Matches:
        if _needs_length(step):
            positions, after = self._items(i)
            for index in _select(step, len(positions)):
                yield from self.value(positions[index], rest, f"{path}[{index}]", whole=False)
            return after
        walk = Items(self.s, i)
        for index, start in enumerate(walk):
            stop_if_requested()
            if _matches(step, index):
                end = yield from self.value(start, rest, f"{path}[{index}]", whole=True)
            elif not whole and _past(step, index):
                return -1
            else:
                end = self.decode(start)[1]
            walk.ended(end)
        return walk.end

    def _items(self, i: int) -> tuple[list[int], int]:
        """The start of each item of the array at ``i``, and the index just past it."""
        walk = Items(self.s, i)
        positions: list[int] = []
        for start in walk:
            positions.append(start)
            walk.ended(self.decode(start)[1])
        return positions, walk.end


def _needs_length(step: Step) -> bool:
    if isinstance(step, Index):
        return step.index < 0
    if isinstance(step, Slice):
        return (step.start or 0) < 0 or (step.stop is not None and step.stop < 0)
    return False


def _select(step: Step, length: int) -> range:
    if isinstance(step, Index):
        index = step.index + length if step.index < 0 else step.index
        return range(index, index + 1) if 0 <= index < length else range(0)
    if isinstance(step, Slice):
        return range(*slice(step.start, step.stop).indices(length))
    return range(length)


def _past(step: Step, index: int) -> bool:
    if isinstance(step, Index):
        return index > step.index
    return isinstance(step, Slice) and step.stop is not None and index >= step.stop


def _matches(step: Step, index: int) -> bool:
    if isinstance(step, Wild):
        return True
    if isinstance(step, Index):
        return index == step.index
    if isinstance(step, Slice):
        start = step.start or 0
        return index >= start and (step.stop is None or index < step.stop)
    return False


def child_path(path: str, key: str) -> str:
    """``path`` and one key, as a JSON path reads it back (``$.a``, ``$[\"odd key\"]``)."""
    return (
        f"{path}.{key}"
        if _NAME.fullmatch(key)
        else f"{path}[{json.dumps(key, ensure_ascii=False)}]"
    )
