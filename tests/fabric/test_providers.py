"""The provider registry and the workspace file tools."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from pydantic import BaseModel

from fabric import Fabric, ProviderCallError, ProviderRegistry, RegistrationError
from fabric.providers import Provider, Workspace, register_file_tools


async def echo(text: str, times: int = 1) -> str:
    """Repeat text."""
    return text * times


async def test_unknown_name_suggests_the_nearest() -> None:
    """A misspelt tool name gets a 'did you mean' answer."""
    registry = ProviderRegistry()
    registry.register("tools", "echo", echo, risk="read")
    with pytest.raises(
        ProviderCallError, match=r"tools.ecko is not a tool; did you mean tools.echo\?"
    ):
        await registry.call("tools", "ecko", {})


async def test_bad_arguments_list_the_signature() -> None:
    """Wrong types, missing and unexpected arguments are named, with the signature."""
    registry = ProviderRegistry()
    registry.register("tools", "echo", echo, risk="read")
    with pytest.raises(ProviderCallError) as info:
        await registry.call("tools", "echo", {"times": "many", "colour": 1})
    message = str(info.value)
    assert "text is required" in message
    assert "colour is not a parameter here" in message
    assert "times must be a whole number, not 'many'" in message
    assert "tools.echo(text: str, times: int = 1)" in message
    assert info.value.code == "bad_arguments"


async def test_signature_model_validates_and_calls() -> None:
    """Arguments are validated by the model built from the signature, then passed on."""
    registry = ProviderRegistry()
    registry.register("tools", "echo", echo, risk="read")
    assert await registry.call("tools", "echo", {"text": "ab", "times": 2}) == "abab"


async def test_explicit_pydantic_model() -> None:
    """A provider may bring its own argument model."""

    class Args(BaseModel):
        text: str

    async def shout(text: str) -> str:
        return text.upper()

    registry = ProviderRegistry()
    registry.register("tools", "shout", shout, args_model=Args, risk="read")
    assert await registry.call("tools", "shout", {"text": "hi"}) == "HI"


async def test_json_schema_arguments() -> None:
    """A provider may be described by a JSON schema instead of a model."""

    async def add(a: int, b: int) -> int:
        return a + b

    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    registry = ProviderRegistry()
    registry.register("mcp", "calc.add", add, schema=schema, risk="read")
    assert await registry.call("mcp", "calc.add", {"a": 1, "b": 2}) == 3
    with pytest.raises(ProviderCallError, match="'b' is a required property"):
        await registry.call("mcp", "calc.add", {"a": 1})


@pytest.mark.parametrize(
    "namespace,name,message",
    [
        ("nowhere", "x", "unknown namespace"),
        ("tools", "_private", "bad provider name"),
        ("tools", "a..b", "bad provider name"),
        ("tools", "echo", "already registered"),
    ],
)
def test_registration_errors(namespace: str, name: str, message: str) -> None:
    """Bad namespaces, names and duplicates are refused at registration."""
    registry = ProviderRegistry()
    registry.register("tools", "echo", echo, risk="read")
    with pytest.raises(RegistrationError, match=message):
        registry.register(namespace, name, echo, risk="read")


def test_sync_functions_are_refused() -> None:
    """Providers are async."""

    def sync(x: int) -> int:
        return x

    with pytest.raises(RegistrationError, match="async"):
        ProviderRegistry().register("tools", "sync", sync)  # type: ignore[arg-type]


async def test_nested_namespace_from_a_snippet(workspace: Path) -> None:
    """Dotted provider names appear as sub-namespaces in snippets: mcp.calc.add(...)."""

    async def add(a: int, b: int) -> int:
        return a + b

    registry = ProviderRegistry()
    registry.register("mcp", "calc.add", add, risk="read")
    async with Fabric(workspace=workspace, registry=registry) as fab:
        result = await fab.exec("return await mcp.calc.add(a=2, b=3)")
        missing = await fab.exec("return await mcp.calc.sub(a=2, b=3)")
    assert result.value == 5
    assert missing.error is not None and "did you mean mcp.calc.add" in missing.error.message


async def test_provider_exception_becomes_tool_error(workspace: Path) -> None:
    """A provider that crashes fails only its call; the host and the session go on."""

    async def broken() -> None:
        raise RuntimeError("boom")

    registry = ProviderRegistry()
    registry.register("tools", "broken", broken, risk="read")
    async with Fabric(workspace=workspace, registry=registry) as fab:
        result = await fab.exec("return await tools.broken()")
        again = await fab.exec("return 1")
    assert result.error is not None and result.error.code == "provider_failed"
    assert "boom" in result.text
    assert again.ok


async def test_non_plain_provider_results_are_converted(workspace: Path) -> None:
    """Provider results that are not plain data are converted through JSON."""

    class Item(BaseModel):
        name: str

    async def item() -> Item:
        return Item(name="x")

    registry = ProviderRegistry()
    registry.register("tools", "item", item, risk="read")
    async with Fabric(workspace=workspace, registry=registry) as fab:
        result = await fab.exec("return (await tools.item())['name']")
    assert result.value == "x"


@pytest.fixture
def files(tmp_path: Path) -> ProviderRegistry:
    (tmp_path / "a.txt").write_text("one\ntwo ERROR here\nthree\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("def f():\n    return 'ERROR'\n")
    (tmp_path / "bin.dat").write_bytes(b"\x00\x01ERROR")
    (tmp_path / ".fabric").mkdir()
    (tmp_path / ".fabric" / "secret").write_text("ERROR")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("secret")
    os.symlink(outside, tmp_path / "link.txt")
    registry = ProviderRegistry()
    register_file_tools(registry, Workspace(tmp_path))
    return registry


async def test_read_with_line_window(files: ProviderRegistry) -> None:
    """tools.read returns text; offset and limit count lines."""
    assert await files.call("tools", "read", {"path": "a.txt"}) == "one\ntwo ERROR here\nthree\n"
    assert (
        await files.call("tools", "read", {"path": "a.txt", "offset": 1, "limit": 1})
        == "two ERROR here\n"
    )


@pytest.mark.parametrize("path", ["../x", "/etc/passwd", "link.txt", "sub/../../x", "a\x00b"])
async def test_paths_outside_the_workspace_are_refused(files: ProviderRegistry, path: str) -> None:
    """Relative escapes, absolute paths, symlinks out and NUL bytes are refused."""
    with pytest.raises(ProviderCallError) as info:
        await files.call("tools", "read", {"path": path})
    assert info.value.code in {"outside_workspace", "bad_path"}


async def test_ls_lists_and_skips_the_store(files: ProviderRegistry) -> None:
    """tools.ls gives name, type and size, never the .fabric folder."""
    names = {e["name"]: e for e in await files.call("tools", "ls", {"path": "."})}
    assert set(names) == {"a.txt", "bin.dat", "link.txt", "sub"}
    assert names["a.txt"] == {"name": "a.txt", "type": "file", "size": 25}
    deep = await files.call("tools", "ls", {"recursive": True, "glob": "*.py"})
    assert [e["name"] for e in deep] == ["sub/b.py"]


async def test_grep_finds_text_lines_only(files: ProviderRegistry) -> None:
    """tools.grep skips binary files and the store, and reports path and line."""
    hits = await files.call("tools", "grep", {"pattern": "ERROR"})
    assert [(h["path"], h["line"]) for h in hits] == [("a.txt", 2), ("sub/b.py", 2)]


async def test_grep_invalid_regex_is_explained(files: ProviderRegistry) -> None:
    """An invalid pattern names itself and suggests literal=True."""
    with pytest.raises(ProviderCallError, match="literal=True") as info:
        await files.call("tools", "grep", {"pattern": "("})
    assert info.value.code == "invalid_regex"


async def test_grep_catastrophic_regex_cannot_hang_the_host(
    files: ProviderRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A catastrophic pattern stops at the regex time limit with a clear error."""
    import fabric.providers._files as files_module

    monkeypatch.setattr(files_module, "GREP_TIMEOUT_S", 0.2)
    (tmp_path / "evil.txt").write_text("a" * 40 + "!")
    with pytest.raises(ProviderCallError) as info:
        await files.call("tools", "grep", {"pattern": "(a|aa)+$", "path": "evil.txt"})
    assert info.value.code == "regex_timeout"


async def test_grep_time_limit_covers_the_whole_call(
    files: ProviderRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines that each match quickly enough still add up: the limit is for the whole call."""
    import fabric.providers._files as files_module

    monkeypatch.setattr(files_module, "GREP_TIMEOUT_S", 0.3)
    (tmp_path / "slow.txt").write_text(("a" * 22 + "!\n") * 400)  # ~40 ms a line, 16 s in all
    with pytest.raises(ProviderCallError, match=r"longer than 0\.3 s") as info:
        await files.call("tools", "grep", {"pattern": "(a|aa)+$", "path": "slow.txt"})
    assert info.value.code == "regex_timeout" and "slow.txt:" in str(info.value)


async def test_sessions_sharing_a_registry_keep_their_own_workspaces(tmp_path: Path) -> None:
    """Two sessions given one registry each read their own workspace, and the registry the
    caller passed is left exactly as it was."""
    shared = ProviderRegistry()

    async def ping() -> str:
        """A provider of the caller's."""
        return "pong"

    shared.register("extensions", "ping", ping, risk="read")
    before = {ns: list(names) for ns, names in shared.catalog().items()}
    first, second = tmp_path / "a", tmp_path / "b"
    for root, text in ((first, "first"), (second, "second")):
        root.mkdir()
        (root / "who.txt").write_text(text)
    async with (
        Fabric(workspace=first, registry=shared) as a,
        Fabric(workspace=second, registry=shared) as b,
    ):
        read = "return [await tools.read(path='who.txt'), await extensions.ping()]"
        assert (await a.exec(read)).value == ["first", "pong"]
        assert (await b.exec(read)).value == ["second", "pong"]

        async def later() -> str:
            """Registered on the shared registry after the sessions started."""
            return "late"

        shared.register("extensions", "later", later, risk="read")
        assert (await a.exec("return await extensions.later()")).value == "late"
    assert {ns: list(names) for ns, names in shared.catalog().items()} == {
        **before,
        "extensions": ["later", "ping"],
    }
    assert shared.providers("tools") == []


@pytest.mark.parametrize(
    "call",
    [
        "await tools.grep(pattern='(?:a{20000}){20000}')",
        "await ctx.read('notes.txt', query='(?:b{2000}){2000}', regex=True)",
    ],
)
async def test_a_pattern_that_would_compile_huge_is_refused_before_compiling(
    tmp_path: Path, call: str
) -> None:
    """Nested counted repeats multiply when compiled; the host sizes a pattern first."""
    (tmp_path / "notes.txt").write_text("a\n")
    async with Fabric(workspace=tmp_path) as fab:
        result = await fab.exec(
            f"try:\n    {call}\nexcept ToolError as e:\n    return [e.code, e.message]"
        )
    assert result.ok, result.text
    code, message = result.value
    assert code == "pattern_too_large" and "counted repeats multiply" in message


async def test_a_provider_carries_the_risk_class_it_was_registered_with() -> None:
    registry = ProviderRegistry()

    @registry.provider("extensions", risk="network")
    async def fetch(url: str) -> str:
        return url

    assert registry.get("extensions", "fetch").risk == "network"
    with pytest.raises(RegistrationError, match="risk must be one of read, write, execute"):
        registry.register("extensions", "other", fetch, risk="dangerous")  # type: ignore[arg-type]


async def test_the_workspace_and_context_tools_declare_their_risk(workspace: Path) -> None:
    async with Fabric(workspace=workspace) as fab:
        assert {p.name: p.risk for p in fab.providers.providers("tools")} == {
            "read": "read",
            "read_json": "read",
            "ls": "read",
            "glob": "read",
            "grep": "read",
            "write": "write",
            "edit": "write",
            "bash": "execute",
        }
        ctx = {p.name: p.risk for p in fab.providers.providers("ctx")}
        assert ctx.pop("remember") == ctx.pop("forget") == "write"  # facts outlive the session
        assert set(ctx.values()) == {"read"}


class _Later:
    """A mount whose one provider is known once loaded (as an MCP server's tools are)."""

    def __init__(self) -> None:
        self.version = 0
        self.loads = 0
        self._loaded: dict[str, Provider] | None = None
        self.gate = asyncio.Event()

    def loaded(self) -> dict[str, Provider] | None:
        return self._loaded

    async def load(self) -> None:
        self.loads += 1
        await self.gate.wait()
        self._loaded = {"srv.ping": Provider("mcp", "srv.ping", _pong, "", schema={})}
        self.version += 1


async def _pong() -> str:
    return "pong"


async def test_a_mount_stands_as_a_wildcard_until_it_has_loaded() -> None:
    """The catalog shows ``srv.*`` until the mount is loaded; a call under it loads it first
    (each waiting call loads it; the mount makes that cheap), then the names are listed."""
    registry = ProviderRegistry()
    later = _Later()
    registry.mount("mcp", "srv", later)
    assert "srv.*" in registry.catalog()["mcp"]
    calls = [asyncio.ensure_future(registry.call("mcp", "srv.ping", {})) for _ in range(3)]
    await asyncio.sleep(0)
    later.gate.set()
    assert await asyncio.gather(*calls) == ["pong"] * 3
    assert "srv.ping" in registry.catalog()["mcp"] and "srv.*" not in registry.catalog()["mcp"]
    with pytest.raises(ProviderCallError, match=r"did you mean mcp\.srv\.ping"):
        await registry.call("mcp", "srv.pong", {})
    registry.unmount("mcp", "srv")
    assert not any(n.startswith("srv.") for n in registry.catalog()["mcp"])
