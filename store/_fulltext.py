"""The full-text index: what of a payload is searchable, and how the index keeps up.

Each distinct text payload (a blob that a text, JSON or YAML entry points to) is indexed once,
by its sha256, however many entries share it; a search joins the index to the live entries,
so an entry that is gone is never found, and one of two entries sharing a blob going away
leaves the other findable. The index's rows of a blob are deleted with the blob (a trigger).

- **What is searchable**: the first ``INDEXED_BYTES`` (1 MiB) of each payload, cut at a
  character, so a huge payload costs the index about 1.2 MiB at most (on log text): its
  postings (about half the text's size) and its text, compressed (``highlight()`` needs it).
  The rest is still read by ``Store.scan`` and by ``ctx_read``'s queries.
- **Passages**: the head is split into passages of at most ``PASSAGE_BYTES`` (4,000), at line
  ends where it can, else after a space or punctuation, so no word is cut; each passage keeps
  its byte offset and line number. A hit is located within one passage, which keeps locating
  cheap however often a word occurs in a payload.
- **Byte for byte**: the indexed text has exactly the payload's bytes: a byte that is not
  UTF-8 becomes ``?`` and the control characters NUL, SOH and STX (word separators either
  way, and STX/SOH mark matches) become spaces, one byte for one byte, so an offset found in
  the index is the offset in the payload.
- **Keeping up**: ``put`` indexes its payload in its own transaction (it holds the bytes).
  Blobs stored before the index existed were queued by the migration, which reads no blob; each
  search indexes up to ``BACKFILL_BYTES`` of them first and says how many are still waiting,
  and ``gc`` indexes them all.
"""

from __future__ import annotations

import re
import sqlite3
import zlib
from collections.abc import Iterator
from typing import NamedTuple

from store._blobs import CHUNK, BlobFiles
from store._errors import StoreError
from store._schema import PASSAGES

INDEXED_BYTES = 1024 * 1024
"""Bytes at the head of each payload that are searchable."""
PASSAGE_BYTES = 4000
"""The most bytes of one passage (a row of the index)."""
BACKFILL_BYTES = 4 * 1024 * 1024
"""The most bytes of queued payloads one search indexes before it answers."""
_SEPARATORS = tuple(bytes([c]) for c in b" \t\r,;:\"')]}>")
_ESCAPED = re.compile("[\udc80-\udcff]")
_CONTROLS = {0: " ", 1: " ", 2: " "}


class Passage(NamedTuple):
    text: str
    start: int
    """Byte offset of the passage in the payload."""
    line: int
    """1-based number of the line the passage starts in."""
    line_start: int
    """Byte offset of that line (before ``start`` when the passage starts mid-line)."""


def index(conn: sqlite3.Connection, sha256: str, payload: bytes) -> None:
    """Make the blob ``sha256`` (whose bytes start with ``payload``) searchable, once."""
    conn.execute("DELETE FROM search_queue WHERE sha256 = ?", (sha256,))
    if conn.execute("SELECT 1 FROM search_docs WHERE sha256 = ?", (sha256,)).fetchone():
        return
    parts = list(passages(payload[: head_size(payload)]))
    indexed = parts[-1].start + len(parts[-1].text.encode()) if parts else 0
    doc = conn.execute(
        "INSERT INTO search_docs (sha256, indexed) VALUES (?, ?)", (sha256, indexed)
    ).lastrowid
    assert doc is not None
    rows = [(doc * PASSAGES + n, passage) for n, passage in enumerate(parts)]
    conn.executemany(
        "INSERT INTO search_passages (id, z, start, line, line_start) VALUES (?, ?, ?, ?, ?)",
        ((i, zlib.compress(p.text.encode(), 1), p.start, p.line, p.line_start) for i, p in rows),
    )
    conn.executemany(
        "INSERT INTO search_text (rowid, text) VALUES (?, ?)", ((i, p.text) for i, p in rows)
    )


def head_size(payload: bytes) -> int:
    """How many of ``payload``'s first bytes are indexed: up to INDEXED_BYTES, not cutting a
    character."""
    end = min(len(payload), INDEXED_BYTES)
    for _ in range(3):
        if end < len(payload) and 0x80 <= payload[end] < 0xC0:
            end -= 1
    return end


def passages(head: bytes) -> Iterator[Passage]:
    """``head`` in passages of at most PASSAGE_BYTES that cut no word (nor a character), at
    most PASSAGES of them (a short passage is followed by a long one, so 1 MiB takes fewer
    than 800)."""
    start, line, line_start = 0, 1, 0
    for _ in range(PASSAGES):
        if start >= len(head):
            return
        end = _cut(head, start)
        yield Passage(_text(head[start:end]), start, line, line_start)
        line += head.count(b"\n", start, end)
        if head[end - 1] == 0x0A:
            line_start = end
        start = end


def _cut(head: bytes, start: int) -> int:
    end = start + PASSAGE_BYTES
    if end >= len(head):
        return len(head)
    newline = head.rfind(b"\n", start, end)
    if newline >= start:
        return newline + 1
    separator = max(head.rfind(s, start, end) for s in _SEPARATORS)
    if separator >= start:
        return separator + 1
    for _ in range(3):  # one long word: cut it, but not inside a character
        if 0x80 <= head[end] < 0xC0:
            end -= 1
    return end


def _text(piece: bytes) -> str:
    """``piece`` as text of the same UTF-8 length (see the module's docstring)."""
    try:
        text = piece.decode("utf-8")
    except UnicodeDecodeError:  # each byte that is not UTF-8 escapes to one surrogate: "?"
        text = _ESCAPED.sub("?", piece.decode("utf-8", "surrogateescape"))
    if b"\x00" in piece or b"\x01" in piece or b"\x02" in piece:
        text = text.translate(_CONTROLS)
    return text


def backfill(conn: sqlite3.Connection, blobs: BlobFiles, budget: int | None) -> int:
    """Index queued blobs, about ``budget`` bytes of their heads (all with None); return how
    many were indexed. A blob that cannot be read is dropped from the queue unindexed: the
    reads that meet it say why."""
    done = spent = 0
    while budget is None or spent < budget:
        rows = conn.execute(f"SELECT q.sha256, b.bytes, b.chunks {_QUEUED} LIMIT 64").fetchall()
        if not rows:
            break
        for sha, size, chunks in rows:
            head = min(size, INDEXED_BYTES)
            try:
                data = blobs.read_chunks(sha, size, 0, max(0, head - 1) // CHUNK, chunks, sha)
            except (OSError, StoreError):
                conn.execute("DELETE FROM search_queue WHERE sha256 = ?", (sha,))
            else:
                index(conn, sha, data)
                done += 1
            spent += head
            if budget is not None and spent >= budget:
                break
    return done


_QUEUED = "FROM search_queue AS q CROSS JOIN blobs AS b ON b.sha256 = q.sha256"
"""Queued blobs that still exist, walked from the queue (CROSS JOIN keeps that order; the
planner, with no statistics, would walk every blob to probe an empty queue)."""


def pending(conn: sqlite3.Connection) -> int:
    """Payloads queued and not searchable yet."""
    return int(conn.execute(f"SELECT count(*) {_QUEUED}").fetchone()[0])


def queued(conn: sqlite3.Connection) -> bool:
    """Whether any payload waits to be indexed (cheaper than counting them)."""
    return conn.execute(f"SELECT 1 {_QUEUED} LIMIT 1").fetchone() is not None


_STRAYS = (
    # words of passages that are gone, passages whose words are not in the index
    "SELECT 1 FROM search_text_docsize WHERE id NOT IN (SELECT id FROM search_passages)",
    "SELECT 1 FROM search_passages WHERE id NOT IN (SELECT id FROM search_text_docsize)",
    # passages of no document, documents of no blob
    f"SELECT 1 FROM search_passages WHERE id / {PASSAGES} NOT IN (SELECT id FROM search_docs)",
    "SELECT 1 FROM search_docs WHERE sha256 NOT IN (SELECT sha256 FROM blobs)",
)


def consistent(conn: sqlite3.Connection) -> bool:
    """Whether the full-text index holds the words of exactly the passages there are, each of
    a document, each of a blob (``_docsize`` has a row for each passage FTS5 holds), and FTS5
    finds its own structure sound."""
    try:
        conn.execute("INSERT INTO search_text (search_text) VALUES ('integrity-check')")
    except sqlite3.DatabaseError as exc:
        if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_CORRUPT:
            raise
        return False
    return not any(conn.execute(f"{query} LIMIT 1").fetchone() for query in _STRAYS)
