"""Reading byte ranges of an entry, and scanning stored payloads for a literal text."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import InvalidRequest, Store

_FIXTURE = [HealthCheck.function_scoped_fixture]
CHUNK = 64 * 1024


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, str, bytes]:
    payload = bytes(range(256)) * (3 * CHUNK // 256 + 77)
    store = Store(tmp_path_factory.mktemp("ranges"))
    return store, store.put(payload).handle, payload


@settings(max_examples=150, deadline=None, suppress_health_check=_FIXTURE)
@given(data=st.data())
def test_a_range_is_exactly_that_slice(big: tuple[Store, str, bytes], data: st.DataObject) -> None:
    """read_range(offset, length) equals payload[offset:offset+length], across chunk edges."""
    store, handle, payload = big
    offset = data.draw(st.integers(0, len(payload)))
    length = data.draw(st.integers(0, 3 * CHUNK))
    chunk = store.read_range(handle, offset, length)
    assert chunk.data == payload[offset : offset + length]
    assert chunk.total == len(payload)
    end = min(len(payload), offset + length)
    assert chunk.next_offset == (end if end < len(payload) else None)


def test_reading_on_by_next_offset_gives_the_whole(big: tuple[Store, str, bytes]) -> None:
    """Following next_offset from 0 reassembles the payload."""
    store, handle, payload = big
    parts, offset = [], 0
    while offset is not None:
        chunk = store.read_range(handle, offset, 50_000)
        parts.append(chunk.data)
        offset = chunk.next_offset
    assert b"".join(parts) == payload


def test_bad_ranges_are_refused_with_the_size(big: tuple[Store, str, bytes]) -> None:
    """A negative number or an offset past the end is a clear error."""
    store, handle, payload = big
    with pytest.raises(InvalidRequest, match=f"{len(payload)} bytes"):
        store.read_range(handle, len(payload) + 1, 10)
    with pytest.raises(InvalidRequest):
        store.read_range(handle, -1, 10)


def test_text_of_a_range_replaces_a_cut_character(store: Store) -> None:
    """Chunk.text decodes UTF-8 and shows a character cut at an edge as U+FFFD."""
    handle = store.put("héllo").handle
    assert store.read_range(handle, 0, 2).text == "h\ufffd"


def test_a_scan_finds_handle_line_and_window(store: Store) -> None:
    """A hit names the handle, the 1-based line and column, and a short window."""
    log = "\n".join(f"line {i} ok" for i in range(1, 500)) + "\nline 500 ERROR disk full\n"
    entry = store.put(log, tool="tools.read", args={"path": "app.log"})
    store.put({"status": "fine"}, tool="tools.status")
    found = store.scan("error")
    assert found.complete and found.entries_scanned == 2
    [hit] = found.hits
    assert (hit.handle, hit.line, hit.column) == (entry.handle, 500, 10)
    assert hit.text == "line 500 ERROR disk full"


def test_a_scan_windows_long_lines(store: Store) -> None:
    """A match deep in a long line shows a cut window around it, marked with '...'."""
    store.put("x" * 10_000 + "NEEDLE" + "y" * 10_000)
    [hit] = store.scan("needle", window=60).hits
    assert hit.text.startswith("...") and hit.text.endswith("...")
    assert "NEEDLE" in hit.text and len(hit.text) <= 66


def test_a_scan_joins_lines_cut_between_chunks(store: Store) -> None:
    """A line that straddles pieces of the scan is found whole, with the right number."""
    head = "a" * (4 * 1024 * 1024 - 3) + "\n"
    entry = store.put(head + "split-marker here\n")
    [hit] = store.scan("split-marker").hits
    assert (hit.handle, hit.line) == (entry.handle, 2)


def test_a_scan_respects_its_budgets(store: Store) -> None:
    """max_hits stops the scan and says it is incomplete; one handle can be searched alone."""
    a = store.put("\n".join(["match"] * 50))
    b = store.put("match once")
    found = store.scan("match", max_hits=5)
    assert len(found.hits) == 5 and not found.complete
    only = store.scan("match", handle=b.handle)
    assert [h.handle for h in only.hits] == [b.handle] and only.complete
    assert a.handle != b.handle


def test_a_scan_skips_binary_payloads(store: Store) -> None:
    """Entries stored as bytes are not scanned."""
    store.put(b"\xff\xfematch")
    assert store.scan("match").hits == []


@settings(max_examples=100, deadline=None, suppress_health_check=_FIXTURE)
@given(query=st.text(min_size=1, max_size=50).filter(str.strip))
def test_any_text_is_scanned_literally(store: Store, query: str) -> None:
    """Regex metacharacters and odd Unicode are matched literally and never crash."""
    entry = store.put(f"before {query} after", tool="t", args={"q": query})
    found = store.scan(query, handle=entry.handle)
    if query.lower() in f"before {query} after".lower() and "\n" not in query:
        assert found.hits, query


def test_bad_scan_texts_are_refused(store: Store) -> None:
    with pytest.raises(InvalidRequest):
        store.scan("   ")
    with pytest.raises(InvalidRequest):
        store.scan("x" * 1001)
