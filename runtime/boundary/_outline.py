"""The outline of source code: its definitions (classes, functions, methods, types), each
with the lines it spans and the byte range that one ``ctx_read(offset=, length=)`` turns into
the definition itself.

Lines are counted at ``\\n``, as ``ctx_read`` counts them; byte offsets are those of the
text as UTF-8, as the store keeps it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

MAX_DEFINITIONS = 20_000
"""Definitions an outline describes one by one; past these it only counts them."""
INDEXED_CHARS = 32 * 1024 * 1024
"""Characters of a text whose lines an outline indexes at most."""
_NAME = re.compile(r"[\w$#~:.]+")


@dataclass(frozen=True, slots=True)
class Definition:
    """One class, function, method or type of an outline."""

    kind: str
    """The keyword as written: ``class``, ``def``, ``async def``, ``fn``, ``func``, ``struct``..."""
    name: str
    line: int
    """1-based line of the keyword."""
    end: int
    """1-based last line."""
    first: int
    """1-based first line: the first decorator's, if any, else ``line``."""
    depth: int
    """0 at the top level, 1 inside a class, and so on."""
    parent: str | None
    """The class (or type, or Go receiver) it belongs to."""
    signature: str = ""
    """What follows the name (``(self, job) -> bool``), from ``ast``; empty for heuristics."""
    source: str = ""
    """The source line it was found on (heuristic outlines), shown instead of a signature."""
    doc: str = ""
    """The first line of its docstring."""
    private: bool = False
    offset: int = 0
    """Byte offset of the start of line ``first`` (see ``with_bytes``)."""
    length: int = 0
    """Bytes from ``offset`` to the end of line ``end``."""

    @property
    def group(self) -> str:
        return group_of(self.kind, self.parent)

    @property
    def tier(self) -> int:
        """Shown first when the budget is short: 0 public top-level, 1 public members,
        2 private."""
        if self.private:
            return 2
        return 0 if self.depth == 0 and not self.parent else 1


_FUNCTIONS = frozenset(("def", "async def", "function", "fn", "func", "method"))
GROUPS = ("classes", "types", "functions", "methods")


def group_of(kind: str, parent: str | None) -> str:
    """What a definition is counted as: classes, types (structs, interfaces, traits...),
    functions or methods."""
    if kind == "class":
        return "classes"
    if kind in _FUNCTIONS:
        return "methods" if parent else "functions"
    return "types"


@dataclass(frozen=True, slots=True)
class Outline:
    """The definitions of one text of code, and how they were found."""

    language: str
    how: str
    """How it was made, as the model reads it: ``outline by ast``, ``outline by line
    heuristics, not parsed: syntax error at line 40``..."""
    lines: int
    size: int
    """Bytes of the text as UTF-8."""
    definitions: tuple[Definition, ...]
    more: Mapping[str, int] = field(default_factory=dict)
    """Definitions past ``MAX_DEFINITIONS``, counted by group and not described."""
    imports: str = ""
    """Imports folded to a count: ``34 statements (L3-60)``."""
    doc: str = ""
    """The first line of the module's docstring."""
    list_query: str | None = None
    """A query whose matches are the definition lines (``def ``), for those not shown."""

    @property
    def total(self) -> int:
        return len(self.definitions) + sum(self.more.values())

    @property
    def symbol(self) -> str | None:
        """The name of the largest top-level definition, public ones first: a query that
        finds where the main class or function is defined and used."""
        top = [d for d in self.definitions if d.depth == 0 and _NAME.fullmatch(d.name)]
        if not top:
            return None
        return max(top, key=lambda d: (not d.private, d.end - d.line)).name


def with_bytes(table: LineTable, found: list[Definition]) -> tuple[Definition, ...]:
    """``found`` with the byte range of each: from the start of its first line to the end of
    its last."""
    spans = [(table.start(d.first), table.stop(d.end)) for d in found]
    at = table.bytes_at(c for span in spans for c in span)
    return tuple(
        replace(d, offset=at[begin], length=at[stop] - at[begin])
        for d, (begin, stop) in zip(found, spans, strict=True)
    )


def counted(lines: list[int], unit: str) -> str:
    """``34 statements (L3-60)``: how many there are and the lines they span; "" for none."""
    if not lines:
        return ""
    first, last = min(lines), max(lines)
    span = f"L{first}-{last}" if last > first else f"L{first}"
    return f"{len(lines)} {unit}{'s' if len(lines) != 1 else ''} ({span})"


class LineTable:
    """Where each line of a text starts, in characters and in UTF-8 bytes, over its first
    ``INDEXED_CHARS`` characters (the parsed prefix and the part looked through for
    definition lines lie within)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        limit = min(len(text), INDEXED_CHARS)
        find, at = text.find, text.find("\n", 0, limit)
        while at >= 0:
            self.starts.append(at + 1)
            at = find("\n", at + 1, limit)
        self.lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        self._ascii = text.isascii()

    @property
    def size(self) -> int:
        """Bytes of the whole text as UTF-8."""
        return len(self.text) if self._ascii else self.bytes_at([len(self.text)])[len(self.text)]

    def line_of(self, char: int) -> int:
        """The 1-based line holding character ``char``."""
        return bisect.bisect_right(self.starts, char)

    def start(self, line: int) -> int:
        return self.starts[line - 1]

    def stop(self, line: int) -> int:
        """The character just past ``line`` and its newline."""
        if line < len(self.starts):
            return self.starts[line]
        end = self.text.find("\n", self.starts[line - 1])
        return end + 1 if end >= 0 else len(self.text)

    def bytes_at(self, chars: Iterable[int]) -> dict[int, int]:
        """The byte offset of each character offset in ``chars``."""
        wanted = sorted(set(chars))
        if self._ascii:
            return {c: c for c in wanted}
        found: dict[int, int] = {}
        done, total = 0, 0
        for char in wanted:
            total += len(self.text[done:char].encode("utf-8", "surrogatepass"))
            found[char], done = total, char
        return found
