"""JSON paths over JSON text, read lazily: ``$.a.b[0]["k"]``, ``[*]``, ``.*``, ``[0:5]``.

Evaluation walks the text with the C decoder's ``raw_decode``, one member or item at a time,
so selecting ``$.items[3]`` from a 100 MB document never builds the other items at once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NoReturn, cast

from runtime._errors import ReadError
from runtime._threads import stop_if_requested

_raw_decode = json.JSONDecoder().raw_decode
_scan_string = json.decoder.scanstring  # type: ignore[attr-defined]
_space = cast(Callable[[str, int], "re.Match[str]"], re.compile(r"[ \t\n\r]*").match)
_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")
_INT = re.compile(r"-?\d+")
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


def _bracket(path: str, i: int, steps: list[Step]) -> int:
    if path[i : i + 2] == "*]":
        steps.append(Wild())
        return i + 2
    if path[i : i + 1] in ('"', "'"):
        quote = path[i]
        end = i + 1
        name = ""
        while end < len(path) and path[end] != quote:
            if path[end] == "\\" and end + 1 < len(path):
                end += 1
            name += path[end]
            end += 1
        if path[end + 1 : end + 2] != "]":
            _bad(path, end, f"expected {quote}] to close the key")
        steps.append(Key(name))
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


def evaluate(text: str, steps: list[Step], limit: int) -> tuple[list[tuple[str, object]], int]:
    """Up to ``limit`` (path, value) matches and the total number of matches."""
    start = _space(text, 0).end()
    found: list[tuple[str, object]] = []
    total = 0
    try:
        for path, position in _walk(text, start, steps, "$"):
            total += 1
            if len(found) < limit:
                value, _ = _raw_decode(text, position)
                found.append((path, value))
    except (IndexError, json.JSONDecodeError) as exc:
        raise ReadError("not_json", f"the content is not valid JSON ({exc})") from None
    return found, total


def _walk(s: str, i: int, steps: list[Step], path: str) -> Iterator[tuple[str, int]]:
    if not steps:
        yield path, i
        return
    step, rest = steps[0], steps[1:]
    c = s[i]
    if c == "{" and isinstance(step, Key | Wild):
        for key, position in _members(s, i):
            if isinstance(step, Wild) or key == step.name:
                yield from _walk(s, position, rest, _child(path, key))
    elif c == "[" and not isinstance(step, Key):
        positions = list(_items(s, i)) if _needs_length(step) else None
        if positions is not None:
            chosen = _select(step, len(positions))
            for index in chosen:
                yield from _walk(s, positions[index], rest, f"{path}[{index}]")
            return
        for index, position in enumerate(_items(s, i)):
            if _matches(step, index):
                yield from _walk(s, position, rest, f"{path}[{index}]")
            elif _past(step, index):
                return


def _members(s: str, i: int) -> Iterator[tuple[str, int]]:
    i = _space(s, i + 1).end()
    if s[i] == "}":
        return
    while True:
        stop_if_requested()
        key, i = _scan_string(s, i + 1)
        i = _space(s, _space(s, i).end() + 1).end()
        yield key, i
        i = _space(s, _raw_decode(s, i)[1]).end()
        if s[i] == "}":
            return
        i = _space(s, i + 1).end()


def _items(s: str, i: int) -> Iterator[int]:
    i = _space(s, i + 1).end()
    if s[i] == "]":
        return
    while True:
        stop_if_requested()
        yield i
        i = _space(s, _raw_decode(s, i)[1]).end()
        if s[i] == "]":
            return
        i = _space(s, i + 1).end()


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


def _child(path: str, key: str) -> str:
    return (
        f"{path}.{key}"
        if _NAME.fullmatch(key)
        else f"{path}[{json.dumps(key, ensure_ascii=False)}]"
    )
