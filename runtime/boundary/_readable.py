"""What ``ctx_read`` reads (stored entries, files) and the records it returns."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from store import Entry, Store

Mode = Literal["range", "query", "json_path"]


class Readable(Protocol):
    """Something ``read`` can read: a stored entry or a file."""

    name: str
    content_type: str
    size: int

    def read(self, offset: int, length: int) -> bytes: ...

    def pieces(self) -> Iterator[bytes]: ...


class BytesReadable:
    """In-memory content (a workspace file's bytes, say)."""

    def __init__(self, name: str, data: bytes, content_type: str = "text") -> None:
        self.name, self.data, self.content_type, self.size = name, data, content_type, len(data)

    def read(self, offset: int, length: int) -> bytes:
        return self.data[offset : offset + length]

    def pieces(self) -> Iterator[bytes]:
        step = 4 * 1024 * 1024
        for start in range(0, len(self.data), step):
            yield self.data[start : start + step]


class StoredReadable:
    """A live entry of the store."""

    def __init__(self, store: Store, entry: Entry) -> None:
        self.store, self.entry = store, entry
        self.name, self.size = entry.handle, entry.bytes
        self.content_type: str = entry.content_type

    def read(self, offset: int, length: int) -> bytes:
        return self.store.read_range(self.entry.handle, offset, length).data

    def pieces(self) -> Iterator[bytes]:
        return self.store.iter_bytes(self.entry.handle)


class Line(BaseModel):
    model_config = ConfigDict(frozen=True)

    number: int
    """1-based line number."""
    text: str
    """The line without the display gutter; a line longer than 240 characters is cut around
    the match, the cuts marked ``…(+N)`` with how many characters they hide."""
    hit: bool
    """Whether the query matches on this line."""
    path: str | None = None
    """For JSON: the ``$`` path of the item this row shows (``number`` is where it starts)."""


class Window(BaseModel):
    model_config = ConfigDict(frozen=True)

    line: int
    """1-based line of the window's first match."""
    column: int
    """1-based character column of that match in its line."""
    text: str
    """The numbered lines around the matches (for display); matched lines are marked '>'.
    Matches whose context lines touch or overlap are one window."""
    lines: list[Line] = []
    """The same lines as data: number, text without the gutter, and whether it matched."""
    matches: int = 1
    """How many matches the window holds."""
    path: str | None = None
    """For JSON: the ``$`` path of the matching item (its value starts at ``line``)."""


class Sample(BaseModel):
    model_config = ConfigDict(frozen=True)

    offset: int
    """Byte offset of the matched line (read around it with offset=...)."""
    line: str


class PathValue(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    value: Any


class ReadResult(BaseModel):
    """What a read found; ``text`` is what the model sees, within the read's budget."""

    model_config = ConfigDict(frozen=True)

    handle: str
    mode: Mode
    content_type: str
    total_bytes: int
    text: str
    offset: int | None = None
    next_offset: int | None = None
    content: str | None = None
    query: str | None = None
    total_matches: int | None = None
    windows: list[Window] = []
    samples: list[Sample] = []
    json_path: str | None = None
    values: list[PathValue] = []
    total_values: int | None = None
