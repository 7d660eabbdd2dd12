"""Index formats: an older store is upgraded in place and every handle still reads; a store
from a newer Fabric is refused without touching it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from store import Store, StoreUnavailable


def index(root: Path) -> Path:
    return root / ".fabric" / "store" / "index.db"


def test_a_format_1_store_is_upgraded_and_still_streams(tmp_path: Path) -> None:
    """Format 1 kept a CRC per 64 KiB chunk; after the upgrade those are gone and streaming
    checks each chunk's sha256 instead: the data reads back whole, never flagged corrupt."""
    payload = bytes(range(256)) * (9 * 1024 * 1024 // 256)
    with Store(tmp_path) as store:
        handle = store.put(payload, tool="tools.read", args={"path": "big"}).handle
    with sqlite3.connect(index(tmp_path)) as conn:
        pieces = len(payload) // (64 * 1024)
        conn.execute("UPDATE blobs SET crcs = ?", (b"\x00\x00\x00\x01" * pieces,))
        conn.execute("PRAGMA user_version = 1")
    with Store(tmp_path) as store:
        assert b"".join(store.iter_bytes(handle)) == payload
        assert store.scan("zzz-not-there").hits == []
        assert store.check(verify=True).ok
    with sqlite3.connect(index(tmp_path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2


def test_a_store_from_a_newer_fabric_is_refused_untouched(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store.put("kept")
    with sqlite3.connect(index(tmp_path)) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(StoreUnavailable, match="newer Fabric"):
        Store(tmp_path)
    with sqlite3.connect(index(tmp_path)) as conn:
        assert conn.execute("SELECT count(*) FROM entries").fetchone()[0] == 1
