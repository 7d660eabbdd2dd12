"""ContextBank: page keys, storage modes, copies, read-modify-write without lost updates."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from store import (
    KEY_LIMIT,
    ContextBank,
    ContextWindow,
    IntegrityError,
    InvalidName,
    InvalidRequest,
    LocalDiskBackend,
    LorebookEntry,
    NotFound,
    ResourceKind,
    StorageMode,
    TodoList,
    TodoStatus,
    TokenBudget,
)

REPO = Path(__file__).resolve().parents[2]


def window(*facts: str) -> ContextWindow:
    return ContextWindow.of(facts, [LorebookEntry(key=f, value=f"about {f}") for f in facts])


def bank_dir(workspace: Path) -> Path:
    return workspace / ".fabric" / "bank"


@pytest.mark.parametrize(
    ("key", "rule"),
    [
        ("a/b", "path separator"),
        ("a\\b", "path separator"),
        ("a\x00b", "NUL"),
        ("a..b", "'..'"),
        ("", "empty"),
        ("k" * (KEY_LIMIT + 1), f"at most {KEY_LIMIT}"),
        ("__banked_context", "other than letters"),
        (".hidden", "other than letters"),
    ],
)
def test_a_bad_page_key_is_refused_naming_the_rule(tmp_path: Path, key: str, rule: str) -> None:
    bank = ContextBank(tmp_path)
    with pytest.raises(InvalidName, match=rule.replace(".", r"\.").replace("(", r"\(")):
        bank.emplace(key, window())
    assert os.listdir(bank_dir(tmp_path)) == []


def test_get_returns_a_copy(tmp_path: Path) -> None:
    """Changing what get returns, or what was emplaced, never changes the page."""
    bank = ContextBank(tmp_path)
    original = window("a")
    bank.emplace("p", original)
    original.context.append("changed after emplace")
    copy = bank.get("p")
    copy.context.append("changed after get")
    copy.add(LorebookEntry(key="new"))
    assert bank.get("p") == window("a")


def test_pages_persist_across_banks_and_processes(tmp_path: Path) -> None:
    """MEMORY_AND_DISK and DISK_ONLY pages are read back by another bank on the workspace."""
    bank = ContextBank(tmp_path)
    bank.emplace("both", window("a"), StorageMode.MEMORY_AND_DISK)
    bank.emplace("disk", window("b"), StorageMode.DISK_ONLY)
    bank.emplace("mem", window("c"), StorageMode.MEMORY_ONLY)
    other = ContextBank(tmp_path)
    assert other.get("both") == window("a")
    assert other.get("disk") == window("b")
    with pytest.raises(NotFound):
        other.get("mem")
    assert bank.keys() == ["both", "disk", "mem"]
    assert other.keys() == ["both", "disk"]


def test_disk_only_pages_are_not_kept_in_memory(tmp_path: Path) -> None:
    """A DISK_ONLY page is read on demand: a change on disk is seen at once, and there is no
    object in memory to hand out."""
    bank = ContextBank(tmp_path)
    bank.emplace("disk", window("a"), StorageMode.DISK_ONLY)
    ContextBank(tmp_path).emplace("disk", window("b"))  # keeps the page's mode
    assert bank.get("disk") == window("b")
    with pytest.raises(InvalidRequest, match="DISK_ONLY"):
        bank.get_reference("disk")


def test_memory_and_disk_pages_see_writes_of_other_processes(tmp_path: Path) -> None:
    bank = ContextBank(tmp_path)
    bank.emplace("p", window("a"))
    assert bank.get("p") == window("a")
    ContextBank(tmp_path).update("p", lambda w: w.merge(window("b")))
    assert bank.get("p").context == ["a", "b"]


def test_a_bank_without_a_workspace_is_memory_only(tmp_path: Path) -> None:
    bank = ContextBank()
    bank.emplace("p", window("a"))
    assert bank.get("p") == window("a")
    with pytest.raises(InvalidRequest, match="needs a bank with a disk"):
        bank.emplace("q", window(), StorageMode.DISK_ONLY)


def test_files_are_private_and_written_whole(tmp_path: Path) -> None:
    """Folders are 0700, files 0600, no temporary file is left behind, and a page file is one
    JSON document naming its format, kind and mode."""
    bank = ContextBank(tmp_path)
    bank.emplace("p", window("a"))
    bank.update("p", lambda w: w.merge(window("b")))
    folder = bank_dir(tmp_path)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for path in folder.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert sorted(p.name for p in folder.iterdir()) == ["p.bank.json", "p.bank.lock"]
    assert (
        (folder / "p.bank.json")
        .read_bytes()
        .startswith(b'{"format":1,"kind":"CONTEXT_WINDOW","mode":"MEMORY_AND_DISK","page":')
    )


def test_a_symlinked_page_is_not_followed(tmp_path: Path) -> None:
    bank = ContextBank(tmp_path)
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    (bank_dir(tmp_path) / "p.bank.json").symlink_to(outside)
    with pytest.raises(Exception, match="cannot read"):
        bank.get("p")


def test_a_corrupt_page_is_never_served(tmp_path: Path) -> None:
    bank = ContextBank(tmp_path)
    bank.emplace("p", window("a"), StorageMode.DISK_ONLY)
    (bank_dir(tmp_path) / "p.bank.json").write_bytes(b'{"format":1,"kind":"CONTEX')
    with pytest.raises(IntegrityError, match="unreadable"):
        bank.get("p")


def test_update_changes_in_place_or_replaces(tmp_path: Path) -> None:
    bank = ContextBank(tmp_path)
    bank.update("p", lambda w: w.merge(window("a")))  # a new page
    bank.update("p", lambda w: w.context.append("b"))
    assert bank.get("p").context == ["a", "b"]
    bank.update("p", lambda w: window("z"))
    assert bank.get("p") == window("z")
    with pytest.raises(InvalidRequest, match="must be a ContextWindow"):
        bank.update("p", lambda w: "text")  # type: ignore[arg-type, return-value]
    assert bank.get("p") == window("z")


@pytest.mark.parametrize("mode", list(StorageMode))
def test_an_update_that_raises_writes_nothing(tmp_path: Path, mode: StorageMode) -> None:
    """A function that fails half way leaves the page as it was, in memory and on disk."""
    bank = ContextBank(tmp_path)
    bank.emplace("p", window("a"), mode)

    def half(w: ContextWindow) -> None:
        w.context.append("half")
        w.add(LorebookEntry(key="half"))
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        bank.update("p", half)
    assert bank.get("p") == window("a")
    if mode is not StorageMode.MEMORY_ONLY:
        assert ContextBank(tmp_path).get("p") == window("a")


def test_get_reference_is_the_page_itself(tmp_path: Path) -> None:
    bank = ContextBank(tmp_path)
    bank.emplace("p", window("a"), StorageMode.MEMORY_ONLY)
    bank.get_reference("p").context.append("b")
    assert bank.get("p").context == ["a", "b"]


def test_delete_and_keys(tmp_path: Path) -> None:
    bank = ContextBank(tmp_path)
    bank.emplace("a", window())
    bank.emplace("b", window(), StorageMode.MEMORY_ONLY)
    assert bank.delete("a") and bank.delete("b")
    assert not bank.delete("a")
    assert bank.keys() == []
    with pytest.raises(NotFound, match="no context page 'a'"):
        bank.get("a")


def test_emplace_as_memory_only_moves_the_page_off_disk(tmp_path: Path) -> None:
    bank = ContextBank(tmp_path)
    bank.emplace("p", window("a"))
    bank.emplace("p", window("b"), StorageMode.MEMORY_ONLY)
    assert not (bank_dir(tmp_path) / "p.bank.json").exists()
    assert bank.get("p") == window("b")


def test_get_data_is_plain(tmp_path: Path) -> None:
    bank = ContextBank(tmp_path)
    bank.emplace("p", window("a"))
    assert bank.get_data("p") == {
        "key": "p",
        "context": ["a"],
        "lorebook": {
            "a": {
                "value": "about a",
                "weight": 0,
                "alias_keys": [],
                "linked_keys": [],
                "required_keys": [],
            }
        },
    }


def test_select_on_a_page_uses_the_banks_count(tmp_path: Path) -> None:
    calls: list[str] = []

    def count(text: str) -> int:
        calls.append(text)
        return 1

    bank = ContextBank(tmp_path, count=count)
    bank.emplace("p", window("alpha", "beta"))
    selection = bank.select("p", "alpha", TokenBudget(5))
    assert [e.key for e in selection.entries] == ["alpha"] and selection.tokens == 1
    assert calls == ["alpha: about alpha"]


def test_todo_pages_are_their_own_kind(tmp_path: Path) -> None:
    """Todo lists live beside context pages under the same key without clashing."""
    bank = ContextBank(tmp_path)
    todo = TodoList()
    todo.add("write tests")
    bank.emplace_todo("p", todo)
    bank.emplace("p", window("a"))
    bank.update_todo("p", lambda t: t.set_status("1", "done") and None)
    other = ContextBank(tmp_path)
    assert other.get_todo("p").get("1").status is TodoStatus.DONE
    assert other.get_todo_data("p") == {
        "key": "p",
        "items": [{"id": "1", "text": "write tests", "status": "done"}],
    }
    assert other.todo_keys() == ["p"] and other.keys() == ["p"]
    assert other.delete_todo("p") and other.get("p") == window("a")


def test_todo_list_rules() -> None:
    todo = TodoList()
    assert [todo.add("a").id, todo.add("b").id] == ["1", "2"]
    with pytest.raises(InvalidRequest, match="already has an item '1'"):
        todo.add("c", id="1")
    with pytest.raises(InvalidRequest, match="pending, in_progress or done"):
        todo.set_status("1", "finished")
    with pytest.raises(NotFound, match="no todo item '9'"):
        todo.get("9")
    todo.remove("1")
    assert todo.add("c").id == "3"


def add_fact(name: str):  # type: ignore[no-untyped-def]
    return lambda w: w.merge(ContextWindow.of(entries=[LorebookEntry(key=name, value=name)]))


def test_sixteen_tasks_lose_no_update(tmp_path: Path) -> None:
    """16 asyncio tasks, each applying 100 merges in threads, leave all 1,600 on the page."""
    bank = ContextBank(tmp_path)

    async def writer(n: int) -> None:
        for i in range(100):
            await asyncio.to_thread(bank.update, "p", add_fact(f"t{n}-{i}"))

    async def main() -> None:
        await asyncio.gather(*(writer(n) for n in range(16)))

    asyncio.run(main())
    assert len(ContextBank(tmp_path).get("p").lorebook) == 1600


def test_the_page_lock_holds_across_threads(tmp_path: Path) -> None:
    """While one update runs, another on the same page waits: the second cannot start before
    the first lets it (this would deadlock if the two ran at once the other way round)."""
    bank = ContextBank(tmp_path)
    inside, release = threading.Event(), threading.Event()
    order: list[str] = []

    def slow(w: ContextWindow) -> None:
        inside.set()
        assert release.wait(10)
        order.append("first")

    first = threading.Thread(target=bank.update, args=("p", slow))
    first.start()
    assert inside.wait(10)
    second = threading.Thread(target=bank.update, args=("p", lambda w: order.append("second")))
    second.start()
    second.join(0.2)
    assert second.is_alive() and order == []
    release.set()
    first.join(10)
    second.join(10)
    assert order == ["first", "second"]


WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {repo!r})
    from store import ContextBank, ContextWindow, LorebookEntry
    bank = ContextBank({workspace!r})
    n = int(sys.argv[1])
    for i in range(100):
        entry = LorebookEntry(key=f"p{{n}}-{{i}}", value="x")
        bank.update("p", lambda w: w.merge(ContextWindow.of(entries=[entry])))
    """
)


def test_four_processes_and_sixteen_tasks_lose_no_update(tmp_path: Path) -> None:
    """4 processes (100 merges each) and 16 tasks (100 each) on one disk page: all 2,000."""
    script = WRITER.format(repo=str(REPO), workspace=str(tmp_path))
    bank = ContextBank(tmp_path)
    bank.emplace("p", ContextWindow())
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(n)], stderr=subprocess.PIPE)
        for n in range(4)
    ]

    async def writer(n: int) -> None:
        for i in range(100):
            await asyncio.to_thread(bank.update, "p", add_fact(f"t{n}-{i}"))

    async def main() -> None:
        await asyncio.gather(*(writer(n) for n in range(16)))

    asyncio.run(main())
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    lorebook = ContextBank(tmp_path).get("p").lorebook
    assert len(lorebook) == 2000
    assert {f"p{n}-{i}" for n in range(4) for i in range(100)} <= set(lorebook)


def test_the_local_backend_is_a_replaceable_part(tmp_path: Path) -> None:
    """A bank built on an explicit backend behaves like one built on the workspace."""
    backend = LocalDiskBackend(tmp_path / "elsewhere")
    bank = ContextBank(backend=backend)
    bank.emplace("p", window("a"))
    assert backend.keys(ResourceKind.CONTEXT_WINDOW) == ["p"]
    assert ContextBank(backend=LocalDiskBackend(tmp_path / "elsewhere")).get("p") == window("a")


def test_a_reader_never_sees_half_an_update(tmp_path: Path) -> None:
    """An update changes the page in place under its lock: a get in another thread waits
    for the update to finish and then sees all of it."""
    bank = ContextBank(tmp_path)
    bank.emplace("p", ContextWindow())
    inside, release = threading.Event(), threading.Event()

    def two_steps(w: ContextWindow) -> None:
        w.add(LorebookEntry(key="first"))
        inside.set()
        assert release.wait(10)
        w.add(LorebookEntry(key="second"))

    writer = threading.Thread(target=bank.update, args=("p", two_steps))
    writer.start()
    assert inside.wait(10)
    seen: list[list[str]] = []
    reader = threading.Thread(target=lambda: seen.append(list(bank.get("p").lorebook)))
    reader.start()
    reader.join(0.2)
    assert reader.is_alive() and seen == []
    release.set()
    writer.join(10)
    reader.join(10)
    assert seen == [["first", "second"]]


def test_keys_forget_a_page_another_process_deleted(tmp_path: Path) -> None:
    bank = ContextBank(tmp_path)
    bank.emplace("p", window("a"))
    assert ContextBank(tmp_path).delete("p")
    assert bank.keys() == []
    with pytest.raises(NotFound):
        bank.get("p")


def test_a_selection_as_plain_data(tmp_path: Path) -> None:
    bank = ContextBank(tmp_path)
    bank.emplace("p", window("alpha", "beta"))
    data = bank.select("p", "beta", TokenBudget(50)).to_data()
    assert list(data["entries"]) == ["beta"] and data["limit"] == 50 and data["omitted"] == []
    assert data["entries"]["beta"]["value"] == "about beta"


def test_leftovers_of_interrupted_writes_are_swept(tmp_path: Path) -> None:
    """A temporary file older than ten minutes is removed when a bank opens; a fresh one (a
    write under way elsewhere) is left alone."""
    ContextBank(tmp_path)
    old, fresh = bank_dir(tmp_path) / ".tmp-old", bank_dir(tmp_path) / ".tmp-fresh"
    old.write_text("x")
    fresh.write_text("y")
    os.utime(old, (1, 1))
    ContextBank(tmp_path)
    assert not old.exists() and fresh.exists()
