"""Frozen records the store hands out."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from store._json import json_default

ContentType = Literal["json", "text", "yaml", "bytes"]
CONTENT_TYPES: tuple[ContentType, ...] = ("json", "text", "yaml", "bytes")

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class Source(BaseModel):
    """How stored data was made: the producing call, so the model can tell entries apart and
    knows what to run again once an entry is gone."""

    model_config = _FROZEN

    tool: str = "put"
    """Dotted name of the producing call, e.g. ``tools.read``."""
    args: dict[str, Any] = Field(default_factory=dict)
    """Its keyword arguments (JSON values)."""

    def __str__(self) -> str:
        parts = []
        for name, value in self.args.items():
            text = json.dumps(value, ensure_ascii=False, default=json_default)
            parts.append(f"{name}={text if len(text) <= 80 else text[:77] + '...'}")
        return f"{self.tool}({', '.join(parts)})"


class Entry(BaseModel):
    """One live handle in the index."""

    model_config = _FROZEN

    handle: str
    """Short, stable name: a slug of the source plus the first hex digits of the hash."""
    key: str | None
    """Optional name the caller chose; unique among live entries."""
    source: Source
    sha256: str
    """Hex sha256 of the exact stored bytes."""
    content_type: ContentType
    bytes: int
    tokens: int
    """Estimated tokens of the content (counted by the caller, or about bytes / 4)."""
    created: datetime
    accessed: datetime
    """Last read; eviction removes the least recently accessed entries first."""
    expires: datetime


class Chunk(BaseModel):
    """A byte range of an entry."""

    model_config = _FROZEN

    handle: str
    offset: int
    data: bytes
    total: int
    """Size of the whole entry in bytes."""
    next_offset: int | None
    """Where the next range starts, or None at the end."""

    @property
    def text(self) -> str:
        """The range decoded as UTF-8; a character cut at either edge shows as U+FFFD."""
        return self.data.decode("utf-8", errors="replace")


class ScanHit(BaseModel):
    """A line of a stored payload that contains the scanned text."""

    model_config = _FROZEN

    handle: str
    line: int
    """1-based line number in the payload."""
    column: int
    """1-based character column of the first match in that line."""
    text: str
    """A short window of the line around the match; ``...`` marks cuts."""


class ScanResult(BaseModel):
    """Hits of a literal scan and how much of the store it covered."""

    model_config = _FROZEN

    query: str
    hits: list[ScanHit]
    entries_scanned: int
    bytes_scanned: int
    complete: bool
    """False when the hit or byte budget stopped the scan before every live entry was read."""
    unreadable: list[str] = Field(default_factory=list)
    """Handles skipped because their blob failed its hash check (now removed)."""


SearchMatch = Literal["all", "any", "fts5"]
"""How a search query is read: ``all`` its words and "quoted phrases" must be in one passage,
``any`` of them may be, or ``fts5``: SQLite FTS5 query syntax as it stands."""
SEARCH_MATCHES: tuple[SearchMatch, ...] = ("all", "any", "fts5")


class SearchHit(BaseModel):
    """A live entry whose indexed text matches a search, and where: its best passage's first
    match."""

    model_config = _FROZEN

    handle: str
    key: str | None
    offset: int
    """Byte offset of the match in the payload (``get(handle)[offset:offset + length]`` is
    ``match``, byte for byte)."""
    length: int
    """Bytes of the match."""
    match: str
    """The matched text as it is stored (``Disk`` for the query ``disk``)."""
    line: int
    """1-based number of the line the match is in."""
    line_offset: int
    """Byte offset of the start of that line."""
    text: str
    """That line, cut to about 200 bytes around the match; ``...`` marks a cut."""
    score: float
    """BM25 relevance of the passage: higher is better; comparable within one search."""
    bytes: int
    """Size of the payload."""
    indexed: int
    """Bytes of the payload that are searchable (all of it, or its first 1 MiB)."""


class SearchResult(BaseModel):
    """The best hits of a full-text search, and how many there were."""

    model_config = _FROZEN

    query: str
    match: SearchMatch
    hits: list[SearchHit]
    """Best first; at most the search's ``limit``."""
    total: int
    """Live entries that match, including those past the limit."""
    pending: int
    """Payloads stored before the index existed and not searchable yet (each search indexes
    some; ``gc`` indexes all)."""


class Usage(BaseModel):
    """Size of the store against its budget."""

    model_config = _FROZEN

    entries: int
    blobs: int
    bytes: int
    """Bytes on disk: each distinct payload counted once."""
    max_bytes: int
    ttl_ms: int


class GcReport(BaseModel):
    """What one garbage collection removed."""

    model_config = _FROZEN

    expired: int = 0
    """Entries past their expiry."""
    evicted: int = 0
    """Entries removed, least recently used first, to get under ``max_bytes``."""
    dangling: int = 0
    """Entries whose blob had vanished from disk."""
    corrupt: int = 0
    """Blobs that failed their hash check (only with ``verify=True``), moved to quarantine."""
    orphan_blobs: int = 0
    """Blob files no entry referenced."""
    temp_files: int = 0
    """Leftovers of writes that were interrupted."""
    bytes_freed: int = 0
    indexed: int = 0
    """Payloads stored before the full-text index existed, made searchable."""


class CheckReport(BaseModel):
    """Consistency of index and blobs, as found (nothing is changed)."""

    model_config = _FROZEN

    entries: int
    blobs: int
    rows_without_blob: list[str]
    """Handles whose blob file is missing."""
    orphan_blobs: list[str]
    """sha256 of blob files the index does not know."""
    unreferenced: list[str]
    """sha256 of indexed blobs that no entry references."""
    temp_files: int
    corrupt: list[str]
    """sha256 of blobs whose bytes fail their hash (checked only with ``verify=True``)."""
    search_index_ok: bool = True
    """Whether the full-text index holds exactly the words of what it indexes (checked only
    with ``verify=True``)."""

    @property
    def ok(self) -> bool:
        return self.search_index_ok and not (
            self.rows_without_blob or self.orphan_blobs or self.unreferenced or self.corrupt
        )


class Fact(BaseModel):
    """A remembered project fact."""

    model_config = _FROZEN

    name: str
    text: str
    created: datetime
    updated: datetime
    tokens: int
    evicted: list[str] = []
    """When it was just remembered: the facts forgotten, oldest first, to make room for it
    within the facts' budget."""


class Recall(BaseModel):
    """Facts matching a query, best first, within a token budget."""

    model_config = _FROZEN

    query: str
    facts: list[Fact]
    matches: int
    """How many facts matched, including those the budget left out."""
    tokens: int
    """Tokens of the facts returned."""
    truncated: bool
    """True when the budget left matching facts out or cut the last one short."""
