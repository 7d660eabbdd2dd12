"""Putting payloads and getting the exact bytes back, stored once, privately, atomically."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import Store, StoreUnavailable

from .conftest import Clock

_FIXTURE = [HealthCheck.function_scoped_fixture]


@settings(max_examples=60, deadline=None, suppress_health_check=_FIXTURE)
@given(payload=st.binary(max_size=200_000))
def test_bytes_round_trip_exactly(store: Store, payload: bytes) -> None:
    """Whatever bytes go in come back identical, and the entry records their size and hash."""
    entry = store.put(payload, tool="tools.fetch")
    assert store.get(entry.handle) == payload
    assert entry.bytes == len(payload)


@settings(max_examples=60, deadline=None, suppress_health_check=_FIXTURE)
@given(text=st.text(max_size=5000))
def test_text_round_trips_as_utf8(store: Store, text: str) -> None:
    """Text is stored as its UTF-8 encoding (lone surrogates included) and decodes back."""
    entry = store.put(text)
    assert store.get(entry.handle) == text.encode("utf-8", errors="surrogatepass")
    if entry.content_type != "bytes":
        assert entry.content_type in ("text", "json")


def test_json_values_are_stored_as_compact_json(store: Store) -> None:
    """A dict or list is serialized; its content type is json."""
    entry = store.put({"users": [{"id": 1}], "ok": True}, tool="tools.users")
    assert entry.content_type == "json"
    assert store.get(entry.handle) == b'{"users":[{"id":1}],"ok":true}'


def test_content_type_is_sniffed_or_declared(store: Store) -> None:
    """JSON text is recognised, other text is text, undecodable bytes are bytes."""
    assert store.put('{"a": 1}').content_type == "json"
    assert store.put("{not json").content_type == "text"
    assert store.put(b"\xff\xfe\x00").content_type == "bytes"
    assert store.put("a: 1\nb: 2\n", content_type="yaml").content_type == "yaml"


def test_identical_payloads_are_stored_once(store: Store) -> None:
    """Two sources with the same bytes get two handles and share one blob."""
    a = store.put("same bytes", tool="tools.read", args={"path": "a.txt"})
    b = store.put("same bytes", tool="tools.read", args={"path": "b.txt"})
    assert a.handle != b.handle and a.sha256 == b.sha256
    usage = store.usage()
    assert (usage.entries, usage.blobs, usage.bytes) == (2, 1, len("same bytes"))


def test_handles_are_readable_and_stable(store: Store) -> None:
    """A handle is a slug of the source plus the hash's first 8 hex digits; re-putting the same
    source and bytes gives the same handle."""
    first = store.put("log line\n", tool="tools.read", args={"path": "logs/app.log"})
    again = store.put("log line\n", tool="tools.read", args={"path": "logs/app.log"})
    assert first.handle == again.handle == f"read-logs-app-log-{first.sha256[:8]}"
    assert store.usage().entries == 1


def test_changed_content_gets_a_new_handle(store: Store) -> None:
    """The same source with other bytes is another handle; the old one keeps its content."""
    old = store.put("v1", tool="tools.read", args={"path": "x"})
    new = store.put("v2", tool="tools.read", args={"path": "x"})
    assert old.handle != new.handle
    assert store.get(old.handle) == b"v1" and store.get(new.handle) == b"v2"


def test_a_key_names_the_entry_and_moves_to_the_newest(store: Store) -> None:
    """A key can be used instead of the handle; putting the key again rebinds it."""
    first = store.put([1, 2], key="users")
    assert first.handle.startswith("users-") and store.get("users") == b"[1,2]"
    second = store.put([3], key="users")
    assert store.get("users") == b"[3]"
    assert store.stat(first.handle).key is None and second.key == "users"


def test_the_source_is_recorded(store: Store) -> None:
    """Entries keep the producing call; long argument values are shortened."""
    entry = store.put("x", tool="mcp.github.search", args={"q": "fabric", "body": "y" * 1000})
    assert entry.source.tool == "mcp.github.search"
    assert entry.source.args["q"] == "fabric"
    assert len(entry.source.args["body"]) <= 200
    assert str(entry.source).startswith('mcp.github.search(q="fabric", body=')


def test_tokens_are_estimated_unless_counted(store: Store) -> None:
    """About four bytes per token by default; a caller's own count is kept."""
    assert store.put("a" * 400).tokens == 100
    assert store.put("b" * 400, tokens=7).tokens == 7


def test_entries_survive_reopening(tmp_path: Path) -> None:
    """Handles resolve across processes and restarts: the index is on disk."""
    with Store(tmp_path) as first:
        handle = first.put("persisted").handle
    with Store(tmp_path) as second:
        assert second.get(handle) == b"persisted"


def test_folders_and_files_are_private(store: Store, tmp_path: Path) -> None:
    """Directories are 0700 and files 0600, whatever the umask."""
    old = os.umask(0)
    try:
        store.put("secret payload", tool="tools.env")
    finally:
        os.umask(old)
    root = tmp_path / ".fabric"
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), path


def test_blobs_live_in_sharded_folders_and_no_temporary_file_remains(
    store: Store, tmp_path: Path
) -> None:
    """A blob is at blobs/<2 hex>/<sha256>; nothing else is left behind by a put."""
    entry = store.put("sharded")
    blobs = tmp_path / ".fabric" / "store" / "blobs"
    assert [p.relative_to(blobs).as_posix() for p in blobs.rglob("*") if p.is_file()] == [
        f"{entry.sha256[:2]}/{entry.sha256}"
    ]


def test_list_orders_and_pages(tmp_path: Path, clock: Clock) -> None:
    """list() shows recently used entries first; largest and created orders exist too."""
    with Store(tmp_path, clock=clock) as store:
        small = store.put("s")
        clock.advance(1)
        big = store.put("b" * 100)
        assert [e.handle for e in store.list(order="largest")] == [big.handle, small.handle]
        assert [e.handle for e in store.list(order="created")] == [big.handle, small.handle]
        clock.advance(1)
        store.get(small.handle)
        assert store.list(limit=1)[0].handle == small.handle
        assert store.list(limit=1, offset=1)[0].handle == big.handle


def test_a_closed_store_says_so(tmp_path: Path) -> None:
    """Using a Store after close() is a clear error, not a sqlite3 traceback."""
    store = Store(tmp_path)
    store.close()
    with pytest.raises(StoreUnavailable, match="was closed"):
        store.put("x")


def test_bytes_inside_a_value_are_written_one_way_everywhere(store: Store) -> None:
    """Bytes in a JSON value (a payload, a call's arguments) are written as the model sees
    them: ``{"bytes": n, "base64": ...}``, never as a Python repr."""
    entry = store.put({"blob": b"\x00\x01"}, tool="tools.x", args={"data": b"\xff"})
    assert json.loads(store.get(entry.handle)) == {"blob": {"bytes": 2, "base64": "AAE="}}
    assert entry.source.args == {"data": {"bytes": 1, "base64": "/w=="}}
    assert str(entry.source) == 'tools.x(data={"bytes": 1, "base64": "/w=="})'
