"""The page file: updates append delta lines, snapshots replace the file, torn lines are cut."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from store import ContextBank, ContextWindow, IntegrityError, LorebookEntry, StorageMode


def page_file(workspace: Path) -> Path:
    return workspace / ".fabric" / "bank" / "p.bank.json"


def lines(workspace: Path) -> list[bytes]:
    return page_file(workspace).read_bytes().splitlines()


def add(key: str, value: str = "v"):  # type: ignore[no-untyped-def]
    return lambda w: w.add(LorebookEntry(key=key, value=value)) and None


@pytest.mark.parametrize("mode", [StorageMode.MEMORY_AND_DISK, StorageMode.DISK_ONLY])
def test_an_update_appends_a_delta_line(tmp_path: Path, mode: StorageMode) -> None:
    """Setting entries and appending elements adds one line; the file is not replaced."""
    bank = ContextBank(tmp_path)
    bank.emplace("p", ContextWindow(context=["a"]), mode)
    inode = page_file(tmp_path).stat().st_ino
    bank.update("p", add("k1"))
    bank.update("p", lambda w: w.context.append("b"))
    bank.update("p", lambda w: w.context.insert(0, "first"))
    assert page_file(tmp_path).stat().st_ino == inode
    assert lines(tmp_path)[1:] == [
        b'{"set":{"k1":{"key":"k1","value":"v","weight":0,"alias_keys":[],"linked_keys":[],'
        b'"required_keys":[]}}}',
        b'{"append":["b"]}',
        b'{"context":["first","a","b"]}',
    ]
    other = ContextBank(tmp_path).get("p")
    assert other.context == ["first", "a", "b"] and list(other.lorebook) == ["k1"]


def test_an_update_that_changes_nothing_writes_nothing(tmp_path: Path) -> None:
    bank = ContextBank(tmp_path)
    bank.emplace("p", ContextWindow(context=["a"]))
    before = page_file(tmp_path).read_bytes()
    bank.update("p", lambda w: None)
    assert page_file(tmp_path).read_bytes() == before


def test_removing_an_entry_writes_a_snapshot(tmp_path: Path) -> None:
    bank = ContextBank(tmp_path)
    bank.emplace("p", ContextWindow.of(entries=[LorebookEntry(key="a"), LorebookEntry(key="b")]))
    bank.update("p", add("c"))
    bank.update("p", lambda w: w.lorebook.pop("a") and None)
    assert len(lines(tmp_path)) == 1
    assert list(ContextBank(tmp_path).get("p").lorebook) == ["b", "c"]


def test_a_grown_file_is_compacted(tmp_path: Path) -> None:
    """Once the deltas outgrow the snapshot (plus 64 KB), the next update writes a snapshot."""
    bank = ContextBank(tmp_path)
    bank.emplace("p", ContextWindow())
    for i in range(400):
        bank.update("p", add(f"k{i}", "x" * 300))
        assert page_file(tmp_path).stat().st_size < 2 * 400 * 400 + 200 * 1024
    assert len(lines(tmp_path)) < 400
    assert len(ContextBank(tmp_path).get("p").lorebook) == 400


def test_another_bank_reads_only_what_was_appended(tmp_path: Path) -> None:
    """A bank holding the page applies the lines another process appended since."""
    reader, writer = ContextBank(tmp_path), ContextBank(tmp_path)
    writer.emplace("p", ContextWindow())
    assert reader.get("p") == ContextWindow()
    for i in range(3):
        writer.update("p", add(f"k{i}"))
        assert list(reader.get("p").lorebook) == [f"k{n}" for n in range(i + 1)]
    reader.update("p", add("from-reader"))
    assert list(writer.get("p").lorebook) == ["k0", "k1", "k2", "from-reader"]


def test_a_torn_line_is_ignored_and_cut_by_the_next_writer(tmp_path: Path) -> None:
    """A line without its newline (a write under way, or cut by a crash) does not count."""
    bank = ContextBank(tmp_path)
    bank.emplace("p", ContextWindow(context=["a"]))
    with open(page_file(tmp_path), "ab") as f:
        f.write(b'{"append":["half')
    assert ContextBank(tmp_path).get("p").context == ["a"]
    ContextBank(tmp_path).update("p", lambda w: w.context.append("b"))
    assert lines(tmp_path)[1:] == [b'{"append":["b"]}']
    assert ContextBank(tmp_path).get("p").context == ["a", "b"]


@pytest.mark.parametrize(
    "line",
    [b"not json\n", b'{"set":{"a":{"key":"b"}}}\n', b'{"unknown":1}\n', b'{"append":"x"}\n'],
)
def test_a_corrupt_delta_is_never_served(tmp_path: Path, line: bytes) -> None:
    bank = ContextBank(tmp_path)
    bank.emplace("p", ContextWindow(context=["a"]))
    with open(page_file(tmp_path), "ab") as f:
        f.write(line)
    with pytest.raises(IntegrityError, match="unreadable"):
        ContextBank(tmp_path).get("p")
    with pytest.raises(IntegrityError):
        bank.get("p")  # the holder notices the change and reads the file whole


def test_a_page_file_without_a_newline_still_reads(tmp_path: Path) -> None:
    """A snapshot written without its newline is read, and the next update rewrites it."""
    bank = ContextBank(tmp_path)
    bank.emplace("p", ContextWindow(context=["a"]))
    path = page_file(tmp_path)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    fresh = ContextBank(tmp_path)
    assert fresh.get("p").context == ["a"]
    fresh.update("p", lambda w: w.context.append("b"))
    assert path.read_bytes().endswith(b"}\n") and ContextBank(tmp_path).get("p").context == [
        "a",
        "b",
    ]
    assert os.path.getsize(path) > 0
