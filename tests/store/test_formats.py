"""Index formats: an older store is upgraded in place, every handle still reads and what it
held becomes searchable without opening it waiting on its payloads; a store from a newer
Fabric is refused without touching it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from store import Store, StoreUnavailable


def index(root: Path) -> Path:
    return root / ".fabric" / "store" / "index.db"


def to_format_2(root: Path) -> None:
    """Take a store back to format 2, the index as it was before full-text search."""
    conn = sqlite3.connect(index(root))
    with conn:
        conn.execute("DROP TRIGGER blobs_unsearchable")
        conn.execute("DROP VIEW search_passage_text")
        for table in ("search_text", "search_passages", "search_docs", "search_queue"):
            conn.execute(f"DROP TABLE {table}")
        conn.execute("PRAGMA user_version = 2")
    tables = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    assert tables == {"blobs", "entries", "gone", "totals"}


def test_a_format_1_store_is_upgraded_and_still_streams(tmp_path: Path) -> None:
    """Format 1 kept a CRC per 64 KiB chunk; after the upgrade those are gone and streaming
    checks each chunk's sha256 instead: the data reads back whole, never flagged corrupt."""
    payload = bytes(range(256)) * (9 * 1024 * 1024 // 256)
    with Store(tmp_path) as store:
        handle = store.put(payload, tool="tools.read", args={"path": "big"}).handle
    to_format_2(tmp_path)
    with sqlite3.connect(index(tmp_path)) as conn:
        pieces = len(payload) // (64 * 1024)
        conn.execute("UPDATE blobs SET crcs = ?", (b"\x00\x00\x00\x01" * pieces,))
        conn.execute("PRAGMA user_version = 1")
    with Store(tmp_path) as store:
        assert b"".join(store.iter_bytes(handle)) == payload
        assert store.scan("zzz-not-there").hits == []
        assert store.check(verify=True).ok
    with sqlite3.connect(index(tmp_path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 3


def test_a_store_from_a_newer_fabric_is_refused_untouched(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store.put("kept")
    with sqlite3.connect(index(tmp_path)) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(StoreUnavailable, match="newer Fabric"):
        Store(tmp_path)
    with sqlite3.connect(index(tmp_path)) as conn:
        assert conn.execute("SELECT count(*) FROM entries").fetchone()[0] == 1


def kept(store: Store) -> dict[str, tuple[dict[str, object], bytes]]:
    """Every entry (but when it was last read, which reading it changes) and its bytes."""
    return {
        e.handle: (e.model_dump(exclude={"accessed"}), store.get(e.handle)) for e in store.list()
    }


def test_a_format_2_store_keeps_its_data_and_its_payloads_become_searchable(
    tmp_path: Path,
) -> None:
    """Upgraded in place: every entry and byte is as it was, and what was stored before the
    index existed is found (entries sharing a blob each), the binary entry not."""
    with Store(tmp_path) as store:
        log = store.put("booting\nERROR lost the lease\n", tool="tools.read", args={"path": "a"})
        copy = store.put("booting\nERROR lost the lease\n", key="copy")
        rows = store.put({"owner": "ops", "lease": 7}, key="rows")
        store.put(b"\xff\x00 lease", key="binary")
        before = kept(store)
    to_format_2(tmp_path)
    with Store(tmp_path) as store:
        assert kept(store) == before
        found = store.search("lease")
        assert {h.handle for h in found.hits} == {log.handle, copy.handle, rows.handle}
        assert found.pending == 0
        for hit in found.hits:
            assert store.get(hit.handle)[hit.offset : hit.offset + hit.length] == b"lease"
    with sqlite3.connect(index(tmp_path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 3


def older_store(root: Path, count: int) -> None:
    """A format-2 store of ``count`` payloads of 650 KB each: more than one search indexes."""
    with Store(root) as store:
        for i in range(count):
            store.put(f"payload {i} " + "filler words " * 50_000, key=f"p{i}")
    to_format_2(root)


def test_opening_an_older_store_reads_no_payload(tmp_path: Path) -> None:
    """The upgrade only queues what is to be indexed, so opening a big store does not wait on
    its payloads: here they are not even on disk while it opens."""
    older_store(tmp_path, 3)
    blobs = tmp_path / ".fabric" / "store" / "blobs"
    blobs.rename(blobs.with_name("away"))
    Store(tmp_path).close()
    with sqlite3.connect(index(tmp_path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 3
        assert conn.execute("SELECT count(*) FROM search_queue").fetchone()[0] == 3
        assert conn.execute("SELECT count(*) FROM search_docs").fetchone()[0] == 0
    blobs.rmdir()
    blobs.with_name("away").rename(blobs)
    with Store(tmp_path) as store:
        assert store.search("filler").total == 3


def test_an_older_store_is_indexed_a_batch_per_search(tmp_path: Path) -> None:
    """Each search indexes a bounded batch first and says how many payloads still wait; none
    is lost on the way, and the backlog ends."""
    older_store(tmp_path, 12)
    seen = []
    with Store(tmp_path) as store:
        while not seen or seen[-1][0]:
            found = store.search("filler", limit=20)
            seen.append((found.pending, found.total))
            assert len(seen) <= 12
    assert len(seen) > 1 and all(pending + total == 12 for pending, total in seen)
    assert [p for p, _ in seen] == sorted({p for p, _ in seen}, reverse=True)


def test_gc_indexes_the_whole_backlog(tmp_path: Path) -> None:
    older_store(tmp_path, 12)
    with Store(tmp_path) as store:
        assert store.gc().indexed == 12
        found = store.search("filler", limit=20)
        assert (found.pending, found.total) == (0, 12)
