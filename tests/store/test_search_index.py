"""The full-text index follows the entries: however an entry goes (deleted, expired, evicted,
found dangling or corrupt, cleared), it is never found again and its rows leave the index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from store import IntegrityError, NotFound, Store

from .conftest import Clock

WORD = "kookaburra"


def index_rows(root: Path) -> tuple[int, int, int]:
    """(documents, passages, passages whose words hold WORD) in the index, the last as FTS5's
    own vocabulary of it counts them: what a removal must leave behind."""
    conn = sqlite3.connect(root / ".fabric" / "store" / "index.db")
    try:
        docs = conn.execute("SELECT count(*) FROM search_docs").fetchone()[0]
        passages = conn.execute("SELECT count(*) FROM search_passages").fetchone()[0]
        conn.execute("CREATE VIRTUAL TABLE temp.words USING fts5vocab(main, search_text, row)")
        row = conn.execute("SELECT doc FROM temp.words WHERE term = ?", (WORD,)).fetchone()
    finally:
        conn.close()
    return docs, passages, row[0] if row else 0


def test_a_deleted_entry_is_never_found(store: Store, tmp_path: Path) -> None:
    entry = store.put(f"a {WORD} calls")
    assert store.search(WORD).total == 1 and index_rows(tmp_path) == (1, 1, 1)
    store.delete(entry.handle)
    assert store.search(WORD).total == 0 and index_rows(tmp_path) == (0, 0, 0)
    assert store.check(verify=True).ok


def test_an_expired_entry_is_never_found(tmp_path: Path, clock: Clock) -> None:
    with Store(tmp_path, ttl_ms=60_000, clock=clock) as store:
        store.put(f"a {WORD} calls")
        clock.advance(61)
        found = store.search(WORD)
        assert found.hits == [] and found.total == 0 and index_rows(tmp_path) == (0, 0, 0)
        assert store.check(verify=True).ok


def test_an_evicted_entry_is_never_found(tmp_path: Path) -> None:
    with Store(tmp_path, max_bytes=100) as store:
        store.put(f"an old {WORD} entry")
        newer = store.put("n" * 90)
        assert store.search(WORD).total == 0 and index_rows(tmp_path) == (1, 1, 0)
        assert [h.handle for h in store.search("n" * 90).hits] == [newer.handle]
        assert store.check(verify=True).ok


def test_an_entry_whose_file_vanished_is_never_found(store: Store, tmp_path: Path) -> None:
    """The search checks its hits' files, like a listing: one removed outside Fabric is buried
    as missing and left out, and the search answers with the others."""
    gone = store.put(f"first {WORD}")
    kept = store.put(f"second {WORD}")
    store.blob_path(gone.handle).unlink()
    found = store.search(WORD)
    assert [h.handle for h in found.hits] == [kept.handle] and found.total == 1
    with pytest.raises(NotFound) as caught:
        store.stat(gone.handle)
    assert caught.value.reason == "missing" and index_rows(tmp_path) == (1, 1, 1)


def test_gc_drops_a_dangling_entry_from_the_index(store: Store, tmp_path: Path) -> None:
    entry = store.put(f"a {WORD} calls")
    store.blob_path(entry.handle).unlink()
    assert store.gc().dangling == 1
    assert index_rows(tmp_path) == (0, 0, 0) and store.search(WORD).total == 0
    assert store.check(verify=True).ok


def test_a_corrupt_payload_leaves_the_index(store: Store) -> None:
    entry = store.put(f"a {WORD} calls")
    path = store.blob_path(entry.handle)
    path.write_bytes(b"b" + path.read_bytes()[1:])
    with pytest.raises(IntegrityError):
        store.get(entry.handle)
    assert store.search(WORD).total == 0 and store.check(verify=True).ok


def test_clear_empties_the_index(store: Store, tmp_path: Path) -> None:
    """At once (FTS5's delete-all), not passage by passage; the index then works afresh."""
    for i in range(50):
        store.put(f"entry {i} about a {WORD}")
    assert store.search(WORD).total == 50
    assert store.clear() == 50
    assert store.search(WORD).total == 0 and index_rows(tmp_path) == (0, 0, 0)
    assert store.check(verify=True).ok
    again = store.put(f"after the clear, a {WORD}")
    assert [h.handle for h in store.search(WORD).hits] == [again.handle]
    assert store.check(verify=True).ok


def test_a_payload_stored_again_is_found_again(store: Store) -> None:
    """Its rows went with its blob; putting the same bytes again indexes them again."""
    first = store.put(f"a {WORD} calls", key="bird")
    store.delete("bird")
    again = store.put(f"a {WORD} calls", key="bird")
    assert first.sha256 == again.sha256
    assert [h.key for h in store.search(WORD).hits] == ["bird"]


def test_bytes_stored_again_as_text_become_searchable(store: Store) -> None:
    """The same bytes as a binary entry and a text entry: indexed once the text one exists,
    and only the text entry is a hit."""
    store.put(f"a {WORD} calls".encode(), content_type="bytes", key="raw")
    assert store.search(WORD).total == 0
    store.put(f"a {WORD} calls", key="text")
    assert [h.key for h in store.search(WORD).hits] == ["text"]


def test_check_finds_words_left_behind_by_a_passage_removed_outside_fabric(
    store: Store, tmp_path: Path
) -> None:
    """check(verify=True) compares the index with what it indexes: a passage deleted without
    its words taken out (its trigger dropped by hand) makes it report the index inconsistent."""
    store.put(f"a {WORD} calls")
    assert store.check(verify=True).search_index_ok
    with sqlite3.connect(tmp_path / ".fabric" / "store" / "index.db") as conn:
        conn.execute("DROP TRIGGER search_passages_removed")
        conn.execute("DELETE FROM search_passages")
    report = store.check(verify=True)
    assert not report.search_index_ok and not report.ok
    assert store.check().ok  # without verify the index is not read
