"""The index: tables, rows to records, and remembered reasons why a handle is gone."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from typing import Any

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
MIGRATIONS = (
    SCHEMA,
    # Format 2: CRC32s cover 4 MiB pieces instead of 64 KiB chunks. Older CRCs are dropped;
    # blobs without them are streamed with their per-chunk sha256 instead.
    "UPDATE blobs SET crcs = x'';",
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
