"""Budgets: entries expire after the TTL, the total stays under max_bytes by evicting the least
recently used first (never the newest), and a blob a live entry uses is never deleted."""

from __future__ import annotations

from pathlib import Path

import pytest

from store import MAX_BYTES, BudgetExceeded, InvalidRequest, NotFound, Store

from .conftest import Clock


def test_max_bytes_defaults_to_and_never_exceeds_500_mb(tmp_path: Path) -> None:
    """The cap is 500 MB; asking for more is refused."""
    with Store(tmp_path) as store:
        assert store.max_bytes == MAX_BYTES == 500_000_000
    with pytest.raises(InvalidRequest, match="500 MB"):
        Store(tmp_path, max_bytes=MAX_BYTES + 1)


def test_a_payload_larger_than_the_budget_is_refused(tmp_path: Path) -> None:
    """Nothing is written, and the error gives both sizes."""
    with Store(tmp_path, max_bytes=1000) as store:
        kept = store.put("k" * 10)
        with pytest.raises(BudgetExceeded) as caught:
            store.put("x" * 1001)
        assert (caught.value.size, caught.value.limit) == (1001, 1000)
        assert store.get(kept.handle) == b"k" * 10 and store.usage().entries == 1


def test_least_recently_used_entries_are_evicted_first(tmp_path: Path, clock: Clock) -> None:
    """Over budget, the entry read longest ago goes first; the one just read stays."""
    with Store(tmp_path, max_bytes=300, clock=clock) as store:
        a = store.put("a" * 100)
        clock.advance(1)
        b = store.put("b" * 100)
        clock.advance(1)
        c = store.put("c" * 100)
        clock.advance(1)
        store.get(a.handle)  # a is now more recent than b
        clock.advance(1)
        d = store.put("d" * 100)
        live = {e.handle for e in store.list()}
        assert live == {a.handle, c.handle, d.handle}
        with pytest.raises(NotFound) as caught:
            store.get(b.handle)
        assert caught.value.reason == "evicted"
        assert store.usage().bytes <= 300


def test_the_newest_entry_is_never_evicted(tmp_path: Path, clock: Clock) -> None:
    """A put that fills the budget alone evicts everything else, not itself."""
    with Store(tmp_path, max_bytes=1000, clock=clock) as store:
        for i in range(5):
            store.put(str(i) * 150)
            clock.advance(1)
        newest = store.put("n" * 1000)
        assert [e.handle for e in store.list()] == [newest.handle]
        assert store.get(newest.handle) == b"n" * 1000


def test_a_shared_blob_stays_while_any_entry_uses_it(tmp_path: Path, clock: Clock) -> None:
    """Deleting or evicting one of two entries with the same bytes keeps the blob."""
    with Store(tmp_path, clock=clock) as store:
        a = store.put("shared", tool="tools.read", args={"path": "a"})
        b = store.put("shared", tool="tools.read", args={"path": "b"})
        store.delete(a.handle)
        assert store.get(b.handle) == b"shared"
        assert store.usage().blobs == 1
        store.delete(b.handle)
        assert store.usage().blobs == 0
        assert store.check().ok


def test_eviction_counts_shared_blobs_once(tmp_path: Path, clock: Clock) -> None:
    """Evicting one of two entries that share a blob frees nothing, so eviction goes on to
    the next entry instead of stopping early."""
    with Store(tmp_path, max_bytes=250, clock=clock) as store:
        a1 = store.put("s" * 100, tool="t", args={"n": 1})
        clock.advance(1)
        b = store.put("b" * 100)
        clock.advance(1)
        a2 = store.put("s" * 100, tool="t", args={"n": 2})
        clock.advance(1)
        store.put("z" * 100)
        assert store.usage().bytes <= 250
        live = {e.handle for e in store.list()}
        assert b.handle not in live and a1.handle not in live
        assert a2.handle in live and store.get(a2.handle) == b"s" * 100


def test_expired_entries_are_pruned_by_listings_and_puts(tmp_path: Path, clock: Clock) -> None:
    """No daemon: listing or putting removes what has expired, blobs included."""
    with Store(tmp_path, ttl_ms=1000, clock=clock) as store:
        store.put("old one")
        clock.advance(2)
        assert store.list() == []
        assert store.usage().blobs == 0
        store.put("older", ttl_ms=500)
        clock.advance(1)
        store.put("fresh")
        assert store.usage().entries == 1


def test_a_per_put_ttl_overrides_the_default(tmp_path: Path, clock: Clock) -> None:
    """ttl_ms on put sets that entry's life."""
    with Store(tmp_path, ttl_ms=10_000, clock=clock) as store:
        short = store.put("short", ttl_ms=1000)
        long = store.put("long")
        clock.advance(5)
        assert [e.handle for e in store.list()] == [long.handle]
        with pytest.raises(NotFound):
            store.get(short.handle)


def test_putting_again_renews_the_expiry(tmp_path: Path, clock: Clock) -> None:
    """The same source and bytes put again live a full TTL from then."""
    with Store(tmp_path, ttl_ms=10_000, clock=clock) as store:
        first = store.put("again", tool="t")
        clock.advance(8)
        store.put("again", tool="t")
        clock.advance(8)
        assert store.get(first.handle) == b"again"


def test_reads_prune_an_entry_whose_blob_vanished(store: Store, tmp_path: Path) -> None:
    """A blob deleted outside Fabric makes its entry a clear NotFound, and list drops it."""
    entry = store.put("vanishing")
    next((tmp_path / ".fabric" / "store" / "blobs").rglob(entry.sha256)).unlink()
    assert store.list() == []
    with pytest.raises(NotFound) as caught:
        store.get(entry.handle)
    assert caught.value.reason == "missing"


def test_gc_reports_what_it_removed(tmp_path: Path, clock: Clock) -> None:
    """gc expires, and removes orphan blobs and stale temporary files."""
    with Store(tmp_path, ttl_ms=1000, clock=clock) as store:
        store.put("expiring")
        kept = store.put("kept", ttl_ms=10_000)
        clock.advance(2)
        blobs = tmp_path / ".fabric" / "store" / "blobs"
        (blobs / "ab").mkdir(mode=0o700, exist_ok=True)
        (blobs / "ab" / ("ab" + "0" * 62)).write_bytes(b"orphan")
        (blobs / "ab" / ".tmp-deadbeef").write_bytes(b"half a write")
        report = store.gc(temp_grace_s=0)
        assert (report.expired, report.orphan_blobs, report.temp_files) == (1, 1, 1)
        assert report.bytes_freed >= len("orphan")
        assert store.check().ok and store.get(kept.handle) == b"kept"


def test_clear_removes_everything_and_says_so_later(store: Store) -> None:
    """clear() empties the store; old handles then report that the store was cleared."""
    entry = store.put("x")
    assert store.clear() == 1
    assert store.usage().entries == store.usage().blobs == 0
    with pytest.raises(NotFound) as caught:
        store.get(entry.handle)
    assert caught.value.reason == "cleared"
