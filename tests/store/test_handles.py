"""Handles and keys: malformed or unsafe names are refused, nothing escapes the store, and a
handle that is gone says why and how to get the data again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import InvalidName, NotFound, Store, StoreError

from .conftest import Clock

_FIXTURE = [HealthCheck.function_scoped_fixture]
HOSTILE = [
    "../../etc/passwd",
    "..",
    "a/b",
    "a\\b",
    "x\x00y",
    "read-app-log-3fa2b1c9/../../x",
    "é-3fa2b1c9",
    "名前",
    "a" * 300,
    "",
    " read-app-log-3fa2b1c9",
]


@pytest.mark.parametrize("ref", HOSTILE)
def test_malformed_handles_are_refused_with_the_accepted_form(store: Store, ref: str) -> None:
    """Path separators, '..', NUL, non-ASCII and overlong names never reach the disk."""
    with pytest.raises(InvalidName) as caught:
        store.get(ref)
    assert "handles look like" in str(caught.value)


@pytest.mark.parametrize("key", HOSTILE)
def test_unsafe_keys_are_refused_with_a_safe_suggestion(store: Store, key: str) -> None:
    """A key must be ASCII letters, digits, '.', '_' or '-'; the error proposes one."""
    with pytest.raises(InvalidName) as caught:
        store.put("x", key=key)
    assert "e.g." in str(caught.value)
    assert store.usage().entries == 0


@settings(max_examples=200, deadline=None, suppress_health_check=_FIXTURE)
@given(ref=st.text(max_size=120))
def test_any_text_as_a_handle_is_a_clean_error(store: Store, tmp_path: Path, ref: str) -> None:
    """Arbitrary text never crashes a lookup and never touches a path outside the store."""
    before = set(os.listdir(tmp_path))
    with pytest.raises((InvalidName, NotFound)):
        store.get(ref)
    assert set(os.listdir(tmp_path)) == before


@settings(max_examples=100, deadline=None, suppress_health_check=_FIXTURE)
@given(tool=st.text(min_size=1, max_size=60), arg=st.text(max_size=200))
def test_any_source_gives_a_valid_handle(store: Store, tool: str, arg: str) -> None:
    """Sources with any characters are slugged into a handle that resolves."""
    entry = store.put("payload", tool=tool, args={"path": arg})
    assert entry.handle.isascii() and "/" not in entry.handle and len(entry.handle) <= 60
    assert store.get(entry.handle) == b"payload"


def test_a_handle_resolves_only_to_its_own_content(store: Store) -> None:
    """Changing the hex digits of a live handle does not reach the entry."""
    entry = store.put("mine", tool="tools.read", args={"path": "a"})
    forged = entry.handle[:-8] + ("0" * 8 if not entry.handle.endswith("0" * 8) else "1" * 8)
    with pytest.raises(NotFound):
        store.get(forged)


def test_unknown_handle_suggests_a_close_live_one(store: Store) -> None:
    """A typo in a live handle gets a 'did you mean'."""
    entry = store.put("data", tool="tools.read", args={"path": "app.log"})
    typo = entry.handle.replace("read", "raed")
    with pytest.raises(NotFound) as caught:
        store.get(typo)
    assert caught.value.reason == "unknown"
    assert f"Did you mean {entry.handle}?" in str(caught.value)


def test_deleted_handle_says_how_to_get_the_data_again(store: Store) -> None:
    """The error of a deleted handle names the producing call."""
    entry = store.put("data", tool="tools.read", args={"path": "app.log"})
    store.delete(entry.handle)
    with pytest.raises(NotFound) as caught:
        store.get(entry.handle)
    assert caught.value.reason == "deleted"
    assert 'run tools.read(path="app.log") again' in str(caught.value)


def test_expired_handle_says_it_expired(tmp_path: Path, clock: Clock) -> None:
    """After the TTL an entry is gone, and the error says so with its source."""
    with Store(tmp_path, ttl_ms=60_000, clock=clock) as store:
        entry = store.put("data", tool="tools.grep", args={"pattern": "TODO"})
        clock.advance(61)
        with pytest.raises(NotFound) as caught:
            store.stat(entry.handle)
    assert caught.value.reason == "expired" and "tools.grep" in str(caught.value)


def test_every_store_error_is_a_store_error(store: Store) -> None:
    """One exception tree: callers can catch StoreError."""
    with pytest.raises(StoreError):
        store.get("nothing-here-00000000")


def test_a_symlinked_store_folder_is_refused(tmp_path: Path) -> None:
    """A workspace whose .fabric points elsewhere (e.g. a hostile repository) is not followed."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    workspace = tmp_path / "repo"
    workspace.mkdir()
    (workspace / ".fabric").symlink_to(elsewhere)
    with pytest.raises(StoreError, match="symlink"):
        Store(workspace)
    assert list(elsewhere.iterdir()) == []
