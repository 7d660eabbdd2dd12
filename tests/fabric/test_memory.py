"""``memory.*``: ContextBank pages from snippets, Python and MCP, each call under the session's
ContextAccess scope; persistence across sessions and processes; the MiniBank."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from analyzer import analyze
from fabric import Fabric
from fabric.mcp import build_server
from runtime import ProviderCallError
from runtime.boundary import TokenCounter
from store import (
    BANK_KEY,
    AccessMode,
    AccessRights,
    ContextBank,
    ContextWindow,
    ExecutionPrincipal,
    LorebookEntry,
    Resource,
    ResourceKind,
    TodoList,
    issue_root_scope,
)

SECURE = {
    "secure_listPageKeys",
    "secure_getLorebookEntry",
    "secure_getLorebook",
    "secure_queryLorebook",
    "secure_simulateLorebookTrigger",
    "secure_searchMemory",
    "secure_updateLorebookEntry",
    "secure_deleteLorebookEntry",
    "secure_getTodoList",
    "secure_updateTodoList",
}
ALL = ("read", "write", "create", "delete", "enumerate")


def enroll(root: Path) -> None:
    """As a trusted host: page ``notes`` (resource r17 in boundary ws3), todo ``plan`` (r18),
    page ``secret`` (r99) and the bank itself (resource ``bank``)."""
    bank = ContextBank(root)
    window = ContextWindow.of(["kickoff"], [LorebookEntry(key="Alice", value="a cat")])
    bank.create_context_window("notes", window, resource_id="r17", boundary_ids=["ws3"])
    bank.create_context_window(
        "secret", ContextWindow.of(["x"]), resource_id="r99", boundary_ids=["vault"]
    )
    todo = TodoList()
    todo.add("write tests")
    bank.create_todo_list("plan", todo, resource_id="r18")
    bank.register_metadata(ResourceKind.BANKED_CONTEXT, BANK_KEY, resource_id="bank")


def rights(**granted: list[str]) -> dict[str, Any]:
    """Config-shaped rights: each operation's resource ids."""
    return {op: [{"resource": r} for r in granted.get(op, [])] for op in ALL}


FULL = rights(
    read=["r17", "r18", "bank"],
    write=["r17", "r18"],
    create=["r17"],
    delete=["r17"],
    enumerate=["bank"],
)


def scope(data: dict[str, Any], mode: str = "LEGACY_COMPATIBLE") -> dict[str, Any]:
    return {"principal": "agent-1", "mode": mode, "rights": data}


async def code_of(fab: Fabric, call: str) -> str | None:
    """The ToolError code a snippet's call raises, None when it succeeds."""
    done = await fab.exec(
        f"try:\n    await {call}\nexcept ToolError as e:\n    return e.code\nreturn None"
    )
    assert done.ok, done.text
    return done.value  # type: ignore[no-any-return]


CALLS = {  # every operation, on the enrolled pages
    "get": 'memory.get("notes")',
    "put": 'memory.put("notes", context=["new"])',
    "update": 'memory.update("notes", entries=[{"key": "Bob", "value": "a dog"}])',
    "remove": 'memory.remove("notes", ["Alice"])',
    "keys": "memory.keys()",
    "select": 'memory.select("Alice said", 100, key="notes")',
    "find": 'memory.find("alice", page="notes")',
    "search": 'memory.search("notes", "cat")',
    "search_all": 'memory.search_all("cat")',
    "todo_get": 'memory.todo_get("plan")',
    "todo_update": 'memory.todo_update("plan", add=["ship"])',
    "delete": 'memory.delete("notes")',
}


async def value_of(fab: Fabric, *lines: str) -> Any:
    """What a snippet of these lines returns (it must succeed)."""
    done = await fab.exec("\n".join(lines))
    assert done.ok, done.text
    return done.value


async def test_get_returns_the_page_as_plain_data(tmp_path: Path) -> None:
    async with Fabric(tmp_path, spares=0) as fab:
        alice = '{"key": "Alice", "value": "a cat", "alias_keys": ["Al"], "weight": 3}'
        got = await value_of(
            fab,
            f'await memory.update("notes", entries=[{alice}], context=["met Alice"])',
            'await memory.update("notes", entries=[{"key": "Alice", "value": "likes fish"}])',
            'return await memory.get("notes")',
        )
        assert got == {
            "key": "notes",
            "context": ["met Alice"],
            "lorebook": {
                "Alice": {
                    "value": "a cat\nlikes fish",
                    "weight": 3,
                    "alias_keys": ["Al"],
                    "linked_keys": [],
                    "required_keys": [],
                }
            },
        }
        missing = await code_of(fab, 'memory.get("nope")')
        assert missing == "not_found"


async def test_memory_holds_what_a_model_reads_not_data(tmp_path: Path) -> None:
    """A context element, an entry's value or a selecting text past 1 MiB of characters, and
    more than 10,000 elements in one call, are refused naming the field (60 pages of 15 MB
    each once held the host at a gigabyte and more); the call is shown without pydantic's
    jargon."""
    async with Fabric(tmp_path, spares=0) as fab:
        done = await fab.exec(
            "out = []\nfor call in (lambda: memory.put('p', context=['n' * 2_000_000]),\n"
            "             lambda: memory.put('p', context=['x'] * 10_001),\n"
            "             lambda: memory.select('w ' * 600_000)):\n"
            "    try:\n        await call()\n    except ToolError as e:\n"
            "        out.append([e.code, str(e)])\nreturn out"
        )
        assert done.ok, done.text
        (big, many, text) = done.value
        assert big[0] == "bad_arguments"
        assert "context.0 is 2000000 characters, more than the 1048576 it takes" in big[1]
        assert (
            "memory.put(key: str, context: list[str] = [], entries: list[EntryArgs] = []" in big[1]
        )
        assert "context holds 10001 items, more than the 10000 it takes" in many[1]
        assert "text is 1200000 characters, more than the 1048576 it takes" in text[1]


@pytest.mark.parametrize("source", ["api", "config"])
async def test_each_operation_is_granted_by_the_scope(tmp_path: Path, source: str) -> None:
    enroll(tmp_path)
    if source == "config":
        (tmp_path / ".fabric" / "config.json").write_text(json.dumps({"memoryScope": scope(FULL)}))
    given_scope = scope(FULL) if source == "api" else None
    async with Fabric(tmp_path, spares=0, memory_scope=given_scope) as fab:
        assert fab.warnings == []
        assert (await fab.exec("return await memory.keys()")).value == ["notes"]  # not secret
        for name, call in CALLS.items():
            assert await code_of(fab, call) is None, name
        assert (await fab.exec("return await memory.keys()")).value == []


@pytest.mark.parametrize("source", ["api", "config"])
async def test_each_operation_is_denied_without_its_right(tmp_path: Path, source: str) -> None:
    """Granted nothing, every call is MISSING_PERMISSION, and nothing changed."""
    enroll(tmp_path)
    none = scope(rights())
    if source == "config":
        (tmp_path / ".fabric" / "config.json").write_text(json.dumps({"memoryScope": none}))
    async with Fabric(tmp_path, spares=0, memory_scope=none if source == "api" else None) as fab:
        for name, call in CALLS.items():
            assert await code_of(fab, call) == "MISSING_PERMISSION", name
    bank = ContextBank(tmp_path)
    assert bank.get_data("notes")["context"] == ["kickoff"]
    assert list(bank.get("notes").lorebook) == ["Alice"]
    assert [i["text"] for i in bank.get_todo_data("plan")["items"]] == ["write tests"]


async def test_one_right_grants_one_operation(tmp_path: Path) -> None:
    enroll(tmp_path)
    reader = scope(rights(read=["r17"]))
    async with Fabric(tmp_path, spares=0, memory_scope=reader) as fab:
        assert await code_of(fab, 'memory.get("notes")') is None
        assert await code_of(fab, 'memory.get("secret")') == "MISSING_PERMISSION"
        assert await code_of(fab, CALLS["update"]) == "MISSING_PERMISSION"
        assert await code_of(fab, "memory.keys()") == "MISSING_PERMISSION"  # no ENUMERATE
        assert await code_of(fab, 'memory.todo_get("plan")') == "MISSING_PERMISSION"


async def test_a_boundary_selector_grants_what_lies_in_it(tmp_path: Path) -> None:
    enroll(tmp_path)
    data = {"read": [{"boundary": "ws3"}], "enumerate": [{"resource": "bank"}]}
    async with Fabric(tmp_path, spares=0, memory_scope=scope(data)) as fab:
        done = await fab.exec('return [await memory.keys(), await memory.find("alice")]')
        assert done.value == [["notes"], [{"page": "notes", "key": "Alice", **_alice()}]]


def _alice() -> dict[str, Any]:
    return LorebookEntry(key="Alice", value="a cat").to_data()


async def test_require_enrollment_without_and_with_sidecars(tmp_path: Path) -> None:
    """An unenrolled page: legacy mode lets it through, REQUIRE_ENROLLMENT denies it
    (METADATA_UNAVAILABLE); an enrolled one is judged by the rights in both."""
    enroll(tmp_path)
    ContextBank(tmp_path).emplace("loose", ContextWindow.of(["free"]))
    legacy = scope(rights(read=["r17"]))
    strict = scope(rights(read=["r17"]), "REQUIRE_ENROLLMENT")
    async with Fabric(tmp_path, spares=0, memory_scope=legacy) as fab:
        assert await code_of(fab, 'memory.get("loose")') is None
    async with Fabric(tmp_path, spares=0, memory_scope=strict) as fab:
        assert await code_of(fab, 'memory.get("loose")') == "METADATA_UNAVAILABLE"
        assert await code_of(fab, 'memory.update("new", context=["a"])') == ("METADATA_UNAVAILABLE")
        assert await code_of(fab, 'memory.get("notes")') is None
    assert ContextBank(tmp_path).keys() == ["loose", "notes", "secret"]  # no "new"


async def test_a_corrupt_sidecar_fails_closed(tmp_path: Path) -> None:
    enroll(tmp_path)
    sidecar = next((tmp_path / ".fabric" / "bank").rglob("notes.bank.access"))
    sidecar.write_text('{"schemaVersion": 99}')
    async with Fabric(tmp_path, spares=0, memory_scope=scope(FULL)) as fab:
        assert await code_of(fab, 'memory.get("notes")') == "INVALID_METADATA"
        assert await code_of(fab, CALLS["update"]) == "INVALID_METADATA"


async def test_a_store_scope_object_is_taken_as_it_is(tmp_path: Path) -> None:
    enroll(tmp_path)
    granted = issue_root_scope(
        ExecutionPrincipal("agent-2"),
        AccessRights(read=frozenset({Resource("r17")})),
        AccessMode.REQUIRE_ENROLLMENT,
    )
    async with Fabric(tmp_path, spares=0, memory_scope=granted) as fab:
        assert (await fab.memory.get("notes")).data["context"] == ["kickoff"]
        with pytest.raises(ProviderCallError) as denied:
            await fab.memory.get("secret")
        assert denied.value.code == "MISSING_PERMISSION"


async def test_pages_persist_across_sessions(tmp_path: Path) -> None:
    async with Fabric(tmp_path, spares=0) as fab:
        done = await fab.exec('return await memory.update("notes", context=["one"])')
        assert done.ok and done.value == {"key": "notes", "context": 1, "entries": 0}
        await fab.memory.todo_update("plan", add=["a", "b"])
    async with Fabric(tmp_path, spares=0) as fab:
        assert (await fab.memory.get("notes")).data["context"] == ["one"]
        await fab.memory.todo_update("plan", status={"1": "done"}, remove=["2"])
        assert (await fab.memory.todo_get("plan")).data == {
            "key": "plan",
            "items": [{"id": "1", "text": "a", "status": "done"}],
        }
        assert (await fab.memory.keys()).data == ["notes"]


WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from fabric import Fabric

    async def main(root, me, other, n):
        Path(root, me).touch()
        while not Path(root, other).exists():  # start together
            await asyncio.sleep(0.01)
        async with Fabric(root, spares=0) as fab:
            for i in range(n):
                fact = {"key": "log", "value": f"{me}-{i}"}
                await fab.memory.update("shared", entries=[fact, {"key": f"{me}-{i}"}])

    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
    """
)


def test_two_processes_updating_one_page_lose_nothing(tmp_path: Path) -> None:
    n = 60
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), me, other, str(n)])
        for me, other in (("p1", "p2"), ("p2", "p1"))
    ]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    page = ContextBank(tmp_path).get("shared")
    lines = set(page.lorebook["log"].value.splitlines())
    assert lines == {f"{p}-{i}" for p in ("p1", "p2") for i in range(n)}
    assert len(page.lorebook) == 1 + 2 * n


@pytest.fixture(scope="module")
def big_book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("book")
    bank = ContextBank(root)
    entries = [
        LorebookEntry(key=f"name{i}", value=("fact " * (i % 40 + 1)).strip(), weight=i % 7)
        for i in range(200)
    ]
    bank.emplace("book", ContextWindow.of([], entries))
    return root


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    max_tokens=st.integers(0, 600),
    truncation=st.sampled_from(["TOP", "BOTTOM", "MIDDLE"]),
    picked=st.sets(st.integers(0, 199), min_size=1, max_size=60),
)
async def test_select_never_exceeds_its_budget(
    big_book: Path, max_tokens: int, truncation: str, picked: set[int]
) -> None:
    text = " ".join(f"name{i}" for i in sorted(picked))
    async with Fabric(big_book, spares=0) as fab:
        reply = await fab.memory.select(text, max_tokens, truncation=truncation, key="book")
    data = reply.data
    count = TokenCounter().count
    spent = sum(count(f"{k}: {e['value']}") for k, e in data["entries"].items())
    assert spent == data["tokens"] <= max_tokens == data["limit"]
    assert set(data["entries"]) | set(data["omitted"]) == {f"name{i}" for i in picked}


async def test_the_secure_tools_over_mcp(tmp_path: Path) -> None:
    enroll(tmp_path)
    async with (
        Fabric(tmp_path, spares=0, memory_scope=scope(FULL)) as fab,
        Client(build_server(fab)) as client,
    ):
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names >= SECURE and not {n for n in names if n.startswith("memory_")}

        async def call(tool: str, **arguments: Any) -> Any:
            done = await client.call_tool(tool, arguments)
            assert not done.is_error, done.content
            return done.structured_content

        assert (await call("secure_listPageKeys"))["result"] == ["notes"]
        assert (await call("secure_getLorebook", key="notes"))["context"] == ["kickoff"]
        found = await call("secure_getLorebookEntry", key="ALICE", page="notes")
        assert found["result"] == [{"page": "notes", "key": "Alice", **_alice()}]
        assert (await call("secure_queryLorebook", key="notes", query="cat"))["total"] == 1
        assert (await call("secure_searchMemory", query="dog"))["total"] == 0
        await call("secure_updateLorebookEntry", key="notes", entries=[{"key": "Bob"}])
        hit = await call("secure_simulateLorebookTrigger", text="bob and alice", maxTokens=50)
        assert set(hit["entries"]) == {"Alice", "Bob"} and hit["tokens"] <= 50
        assert (await call("secure_deleteLorebookEntry", key="notes", entries=["Bob"]))[
            "removed"
        ] == ["Bob"]
        await call("secure_updateTodoList", key="plan", status={"1": "in_progress"})
        todo = await call("secure_getTodoList", key="plan")
        assert todo["items"][0]["status"] == "in_progress"
        denied = await client.call_tool("secure_getLorebook", {"key": "secret"})
        assert denied.is_error
        assert denied.structured_content["error"]["code"] == "MISSING_PERMISSION"


async def test_the_minibank_is_rebuilt_before_each_execution(tmp_path: Path) -> None:
    built: list[int] = []

    def rebuild() -> dict[str, Any]:
        built.append(len(built))
        return {"turn": ContextWindow.of([f"turn {len(built)}"]), "plain": {"context": ["p"]}}

    async with Fabric(tmp_path, spares=0) as fab:
        assert await code_of(fab, 'memory.mini("turn")') == "not_found"  # no hook yet
        fab.set_minibank(rebuild)
        first = await fab.exec('return (await memory.mini("turn"))["context"]')
        second = await fab.exec('return (await memory.mini("turn"))["context"]')
        assert (first.value, second.value) == (["turn 1"], ["turn 2"])
        plain = await fab.exec('return await memory.mini("plain")')
        assert plain.value == {"key": "plain", "context": ["p"], "lorebook": {}}
        assert await code_of(fab, 'memory.mini("other")') == "not_found"
        assert (await fab.memory.keys()).data == []  # never persisted
    assert not list((tmp_path / ".fabric").rglob("*.bank*"))


async def test_a_minibank_hook_that_raises_fails_only_memory_mini(tmp_path: Path) -> None:
    async def broken() -> dict[str, Any]:
        raise RuntimeError("the index is gone")

    async with Fabric(tmp_path, spares=0) as fab:
        fab.set_minibank(broken)
        done = await fab.exec(
            "try:\n    await memory.mini('turn')\nexcept ToolError as e:\n"
            "    return [e.code, e.message]"
        )
        assert done.ok, done.text
        assert done.value[0] == "minibank_failed" and "the index is gone" in done.value[1]
        assert (await fab.exec("return 1 + 1")).value == 2


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ('return await memory.get("notes")', ("RAW", False)),
        ('return await memory.find("alice")', ("RAW", False)),
        ('return await memory.search("notes", "cat")', ("RAW", False)),
        ('return await memory.todo_get("plan")', ("RAW", False)),
        ('return await memory.select("Alice said", max_tokens=200)', ("SELECTED", True)),
        ('return await memory.select("Alice said")', ("SELECTED", True)),
        ('return await memory.update("notes", entries=[])', ("PROJECTED", True)),
        ('return await memory.todo_update("plan", add=["x"])', ("PROJECTED", True)),
    ],
)
def test_the_analyzer_knows_memory(code: str, expected: tuple[str, bool]) -> None:
    """Reads are sources, select is SELECTED and bounded by its max_tokens, writes return a
    small status."""
    got = analyze(code)
    assert (got.classification.value, got.bounded) == expected


def test_select_is_bounded_by_its_max_tokens() -> None:
    small = analyze('return await memory.select("x", max_tokens=100)').estimate
    large = analyze('return await memory.select("x", max_tokens=3000)').estimate
    assert small is not None and large is not None and small.tokens < large.tokens


async def test_concurrent_updates_in_one_snippet_lose_nothing(tmp_path: Path) -> None:
    async with Fabric(tmp_path, spares=0) as fab:
        got = await value_of(
            fab,
            "import asyncio",
            "async def one(n):",
            "    for i in range(5):",
            '        await memory.update("p", entries=[{"key": "log", "value": f"{n}-{i}"}])',
            "await asyncio.gather(*(one(n) for n in range(16)))",
            'return (await memory.get("p"))["lorebook"]["log"]["value"].splitlines()',
        )
    assert sorted(got) == sorted(f"{n}-{i}" for n in range(16) for i in range(5))


def test_the_reads_are_commands_under_the_config_scope(tmp_path: Path) -> None:
    enroll(tmp_path)

    def command(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "fabric._cli", *argv, "--workspace", str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=120,
        )

    got = command("memory-get", "notes", "--json")
    assert got.returncode == 0 and json.loads(got.stdout)["context"] == ["kickoff"]
    config = {"memoryScope": scope(rights(read=["r99"]))}
    (tmp_path / ".fabric" / "config.json").write_text(json.dumps(config))
    refused = command("memory-get", "notes")
    assert refused.returncode != 0 and "MISSING_PERMISSION" in refused.stdout + refused.stderr
    assert "Traceback" not in refused.stderr
    assert json.loads(command("memory-get", "secret", "--json").stdout)["context"] == ["x"]
