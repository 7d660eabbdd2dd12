"""Corrupt or truncated blobs are detected by their hash, reported, and never served."""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from store import IntegrityError, NotFound, Store

CHUNK = 64 * 1024


def blob_path(root: Path, sha: str) -> Path:
    return root / ".fabric" / "store" / "blobs" / sha[:2] / sha


def flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def test_a_flipped_bit_is_detected_by_get(store: Store, tmp_path: Path) -> None:
    """get() re-hashes; a single flipped bit raises IntegrityError instead of serving."""
    entry = store.put("important numbers: 1234567890")
    flip(blob_path(tmp_path, entry.sha256), 5)
    with pytest.raises(IntegrityError) as caught:
        store.get(entry.handle)
    assert caught.value.sha256 == entry.sha256
    assert "Run the producing call again" in str(caught.value)


def test_a_range_read_checks_the_chunks_it_touches(store: Store, tmp_path: Path) -> None:
    """A flip in chunk 2 fails a range that touches chunk 2."""
    payload = b"z" * (3 * CHUNK)
    entry = store.put(payload)
    flip(blob_path(tmp_path, entry.sha256), 2 * CHUNK + 10)
    with pytest.raises(IntegrityError):
        store.read_range(entry.handle, 2 * CHUNK, 100)


def test_a_truncated_blob_is_detected(store: Store, tmp_path: Path) -> None:
    """A blob shorter than recorded is refused for any read."""
    entry = store.put(b"q" * 1000)
    path = blob_path(tmp_path, entry.sha256)
    path.write_bytes(path.read_bytes()[:500])
    with pytest.raises(IntegrityError, match="500 bytes on disk"):
        store.read_range(entry.handle, 0, 10)


def test_a_corrupt_blob_is_moved_aside_and_a_new_put_heals(store: Store, tmp_path: Path) -> None:
    """After detection the entry is gone (reason: corrupt); putting the bytes again works."""
    entry = store.put("heal me", tool="tools.read", args={"path": "h"})
    flip(blob_path(tmp_path, entry.sha256), 0)
    with pytest.raises(IntegrityError):
        store.get(entry.handle)
    with pytest.raises(NotFound) as caught:
        store.get(entry.handle)
    assert caught.value.reason == "corrupt"
    assert (tmp_path / ".fabric" / "store" / "quarantine" / entry.sha256).exists()
    again = store.put("heal me", tool="tools.read", args={"path": "h"})
    assert again.handle == entry.handle and store.get(again.handle) == b"heal me"
    assert store.check(verify=True).ok


def test_check_and_gc_verify_find_silent_corruption(store: Store, tmp_path: Path) -> None:
    """check(verify=True) reports a corrupt blob; gc(verify=True) removes its entries."""
    good = store.put("good")
    bad = store.put("bad!")
    flip(blob_path(tmp_path, bad.sha256), 1)
    assert store.check().ok  # sizes match: only hashing finds it
    assert store.check(verify=True).corrupt == [bad.sha256]
    assert store.gc(verify=True).corrupt == 1
    assert store.get(good.handle) == b"good"
    with pytest.raises(NotFound):
        store.get(bad.handle)
    assert store.check(verify=True).ok


def test_a_scan_skips_and_reports_a_corrupt_entry(store: Store, tmp_path: Path) -> None:
    """A corrupt payload is listed as unreadable; the others are still searched."""
    ok = store.put("needle in good")
    bad = store.put("needle in bad")
    flip(blob_path(tmp_path, bad.sha256), 0)
    found = store.scan("needle")
    assert [h.handle for h in found.hits] == [ok.handle]
    assert found.unreadable == [bad.handle]


def test_streaming_checks_every_chunk_and_stops_at_the_bad_one(
    store: Store, tmp_path: Path
) -> None:
    """iter_bytes serves the intact pieces before a flipped bit, then raises IntegrityError."""
    piece = 4 * 1024 * 1024
    payload = bytes(range(256)) * (3 * piece // 256)
    entry = store.put(payload)
    flip(blob_path(tmp_path, entry.sha256), 2 * piece + 5)
    served = []
    with pytest.raises(IntegrityError, match="CRC32"):
        for part in store.iter_bytes(entry.handle):
            served.append(part)
    assert b"".join(served) == payload[: 2 * piece]


def test_a_stream_abandoned_early_leaves_no_thread(store: Store) -> None:
    """Stopping after the first piece stops the read-ahead thread too."""
    entry = store.put(b"y" * (12 * 1024 * 1024))
    before = threading.active_count()
    stream = store.iter_bytes(entry.handle)
    assert len(next(stream)) == 4 * 1024 * 1024
    stream.close()
    assert threading.active_count() == before


def test_the_private_folder_keeps_itself_out_of_git(tmp_path: Path) -> None:
    """``.fabric/`` gets a .gitignore that ignores all of it; one the user edited stays."""
    Store(tmp_path).close()
    ignore = tmp_path / ".fabric" / ".gitignore"
    assert ignore.read_text().splitlines()[-1] == "*"
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
        (tmp_path / "mine.txt").write_text("x")
        listed = subprocess.run(
            ["git", "-C", str(tmp_path), "status", "--porcelain", "--untracked-files=all"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert listed.split() == ["??", "mine.txt"]
    ignore.write_text("# mine\n")
    Store(tmp_path).close()
    assert ignore.read_text() == "# mine\n"
