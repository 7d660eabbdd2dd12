"""The index: tables, rows to records, and remembered reasons why a handle is gone."""

from __future__ import annotations

import difflib
import json
import sqlite3
import zlib
from datetime import UTC, datetime
from typing import Any

from store._errors import NotFound
from store._models import Entry, Source

SCHEMA = """
CREATE TABLE blobs (
    sha256 TEXT PRIMARY KEY,
    bytes INTEGER NOT NULL,
    chunks BLOB NOT NULL,
    crcs BLOB NOT NULL
);
CREATE TABLE entries (
    handle TEXT PRIMARY KEY,
    key TEXT UNIQUE,
    tool TEXT NOT NULL,
    args TEXT NOT NULL,
    sha256 TEXT NOT NULL REFERENCES blobs (sha256),
    content_type TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    created INTEGER NOT NULL,
    accessed INTEGER NOT NULL,
    expires INTEGER NOT NULL
);
CREATE INDEX entries_sha256 ON entries (sha256);
CREATE INDEX entries_accessed ON entries (accessed);
CREATE INDEX entries_expires ON entries (expires);
CREATE INDEX entries_created ON entries (created);
CREATE TABLE gone (
    handle TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    at INTEGER NOT NULL,
    tool TEXT NOT NULL,
    args TEXT NOT NULL
);
CREATE INDEX gone_at ON gone (at);
CREATE TABLE totals (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    blobs INTEGER NOT NULL,
    bytes INTEGER NOT NULL
);
INSERT INTO totals VALUES (0, 0, 0);
CREATE TRIGGER blobs_added AFTER INSERT ON blobs BEGIN
    UPDATE totals SET blobs = blobs + 1, bytes = bytes + new.bytes;
END;
CREATE TRIGGER blobs_removed AFTER DELETE ON blobs BEGIN
    UPDATE totals SET blobs = blobs - 1, bytes = bytes - old.bytes;
END;
"""
PASSAGES = 4096
"""Passages a payload may have: passage ``n`` of document ``id`` is row ``id * PASSAGES + n``.
Part of format 3: changing it needs a migration."""
INFLATE = "search_inflate"
"""The SQL function that decompresses a passage's text (``inflate``): every connection to the
index has it, and one without it cannot delete a passage (its words could not be taken out
of the index), so it fails instead of leaving stale words behind."""


def inflate(z: bytes) -> str:
    return zlib.decompress(z).decode()


SEARCH = f"""
CREATE TABLE search_docs (
    id INTEGER PRIMARY KEY,
    sha256 TEXT NOT NULL UNIQUE REFERENCES blobs (sha256),
    indexed INTEGER NOT NULL
);
CREATE TABLE search_passages (
    id INTEGER PRIMARY KEY,
    z BLOB NOT NULL,
    start INTEGER NOT NULL,
    line INTEGER NOT NULL,
    line_start INTEGER NOT NULL
);
CREATE VIEW search_passage_text AS SELECT id, {INFLATE}(z) AS text FROM search_passages;
CREATE VIRTUAL TABLE search_text USING fts5 (
    text, content = 'search_passage_text', content_rowid = 'id', tokenize = 'unicode61'
);
CREATE TABLE search_queue (sha256 TEXT PRIMARY KEY);
CREATE TRIGGER search_passages_removed AFTER DELETE ON search_passages
    WHEN EXISTS (SELECT 1 FROM search_text_docsize WHERE id = old.id) BEGIN
    INSERT INTO search_text (search_text, rowid, text) VALUES ('delete', old.id, {INFLATE}(old.z));
END;
CREATE TRIGGER search_docs_removed AFTER DELETE ON search_docs BEGIN
    DELETE FROM search_passages
        WHERE id BETWEEN old.id * {PASSAGES} AND old.id * {PASSAGES} + {PASSAGES - 1};
END;
CREATE TRIGGER blobs_unsearchable AFTER DELETE ON blobs BEGIN
    DELETE FROM search_docs WHERE sha256 = old.sha256;
    DELETE FROM search_queue WHERE sha256 = old.sha256;
END;
INSERT INTO search_queue SELECT sha256 FROM blobs WHERE EXISTS (
    SELECT 1 FROM entries WHERE entries.sha256 = blobs.sha256 AND content_type != 'bytes'
);
"""
"""Format 3: the full-text index (see ``_fulltext``). A text blob is a ``search_docs`` row;
its passages are ``search_passages`` rows numbered ``id * PASSAGES + n``, their text kept
zlib-compressed, and ``search_text`` indexes their words, reading the text back through a view
when it needs it (``highlight()``). A blob's rows go with it, a passage's words with the
passage when the index holds them (``_docsize`` has a row for each passage it holds; after
``'delete-all'``, which ``clear`` uses, it holds none). Blobs stored before are queued, not
read: opening an older store only runs this SQL."""
MIGRATIONS = (
    SCHEMA,
    # Format 2: CRC32s cover 4 MiB pieces instead of 64 KiB chunks. Older CRCs are dropped;
    # blobs without them are streamed with their per-chunk sha256 instead.
    "UPDATE blobs SET crcs = x'';",
    SEARCH,
)
"""Format n to n + 1; the store's format is their number."""

COLUMNS = "handle, key, tool, args, sha256, content_type, bytes, tokens, created, accessed, expires"
GONE_KEPT = 10_000
"""Reasons remembered for this many removed handles, so their errors can say what happened."""


def to_entry(row: sqlite3.Row | tuple[Any, ...]) -> Entry:
    handle, key, tool, args, sha, ctype, size, tokens, created, accessed, expires = row
    return Entry(
        handle=handle,
        key=key,
        source=Source(tool=tool, args=json.loads(args)),
        sha256=sha,
        content_type=ctype,
        bytes=size,
        tokens=tokens,
        created=to_datetime(created),
        accessed=to_datetime(accessed),
        expires=to_datetime(expires),
    )


def to_datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def bury(conn: sqlite3.Connection, handles: list[str], reason: str, now_ms: int) -> None:
    """Remember why ``handles`` went away, then delete their rows."""
    for start in range(0, len(handles), 500):
        batch = handles[start : start + 500]
        marks = ",".join("?" * len(batch))
        conn.execute(
            f"INSERT OR REPLACE INTO gone SELECT handle, ?, ?, tool, args FROM entries "
            f"WHERE handle IN ({marks})",
            (reason, now_ms, *batch),
        )
        conn.execute(f"DELETE FROM entries WHERE handle IN ({marks})", batch)


def unreferenced(conn: sqlite3.Connection, shas: set[str]) -> list[tuple[str, int]]:
    """Of ``shas``, the blobs no entry references any more, with their sizes."""
    found: list[tuple[str, int]] = []
    ordered = sorted(shas)
    for start in range(0, len(ordered), 500):
        batch = ordered[start : start + 500]
        marks = ",".join("?" * len(batch))
        found += conn.execute(
            f"SELECT sha256, bytes FROM blobs WHERE sha256 IN ({marks}) AND NOT EXISTS "
            "(SELECT 1 FROM entries WHERE entries.sha256 = blobs.sha256)",
            batch,
        ).fetchall()
    return found


def trim_gone(conn: sqlite3.Connection) -> None:
    conn.execute(
        "DELETE FROM gone WHERE handle IN (SELECT handle FROM gone ORDER BY at DESC LIMIT -1 "
        "OFFSET ?)",
        (GONE_KEPT,),
    )


def not_found(conn: sqlite3.Connection, ref: str, *, ttl_ms: int, max_bytes: int) -> NotFound:
    """The error for ``ref``: why it went and how to make it again, when the index remembers
    it went; else that it is unknown, with the nearest live handle."""
    row = conn.execute("SELECT reason, at, tool, args FROM gone WHERE handle = ?", (ref,))
    gone = row.fetchone()
    if gone is not None:
        reason, at, tool, args = gone
        source = str(Source(tool=tool, args=json.loads(args)))
        when = to_datetime(at).strftime("%Y-%m-%d %H:%M UTC")
        why = {
            "expired": f"expired on {when} (entries live {ttl_ms // 3_600_000} hours)",
            "evicted": f"was evicted on {when} to keep the store under {max_bytes} bytes",
            "deleted": f"was deleted on {when}",
            "cleared": f"was removed when the store was cleared on {when}",
            "corrupt": f"was removed on {when} because its bytes were corrupt on disk",
            "missing": f"lost its data on {when} (the file was removed outside Fabric)",
        }.get(reason, f"is gone ({reason})")
        return NotFound(
            f"{ref} {why}. To get the data again, run {source} again.",
            ref=ref,
            reason=reason,
            source=source,
        )
    recent = conn.execute("SELECT handle FROM entries ORDER BY accessed DESC LIMIT 2000")
    close = difflib.get_close_matches(ref, [h for (h,) in recent], n=1, cutoff=0.75)
    hint = f" Did you mean {close[0]}?" if close else ""
    return NotFound(
        f"no entry {ref} in this store.{hint} List live handles with `fabric store list`; "
        "if the data was never stored here, run the call that produces it.",
        ref=ref,
        reason="unknown",
    )
