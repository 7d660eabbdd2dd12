"""Discovery for the model: ``help()`` in a snippet, and the fabric_exec description made from
the same lines, which grows with MCP servers only by a count and a pointer to mcp.list()."""

from __future__ import annotations

from pathlib import Path

from contract import MODULES
from fabric import Fabric, Limits, ProviderRegistry
from fabric.mcp import DESCRIPTION_TOKENS, exec_description
from fabric.providers import overview_lines
from runtime.boundary import TokenCounter


async def _tool(text: str) -> str:
    """Echo text back."""
    return text


def _servers(tools: int, servers: int) -> ProviderRegistry:
    """A registry with ``tools`` MCP tools spread over ``servers`` servers, as the mcp
    provider registers them (``mcp.<server>.<tool>``)."""
    registry = ProviderRegistry()
    for n in range(tools):
        registry.register("mcp", f"srv{n % servers}.tool_{n}", _tool)
    return registry


async def test_help_lists_the_namespaces_as_the_description_does(tmp_path: Path) -> None:
    """help() is the namespace lines of the fabric_exec description, with how to ask more."""
    async with Fabric(workspace=tmp_path, limits=Limits(timeout_s=10)) as fab:
        result = await fab.exec("help()")
        assert result.ok, result.text
        lines = overview_lines(fab.providers)
        assert result.value.splitlines()[1:] == lines
        assert 'help(tools.read) or help("tools.read") describes one call' in result.value
        description = exec_description(fab.providers, 16_384)
        assert all(line in description.splitlines() for line in lines)
        assert "- state: state.delete(key: str); state.get(key: str, default=None)" in description
        assert "ctx.search(query: str, limit=10, match='all')" in description  # types: help()


async def test_help_of_one_call_by_value_or_by_name(tmp_path: Path) -> None:
    """help(tools.read) and help("tools.read") give its signature, risk and description;
    help(state) and help("state") list the namespace a line a call."""
    async with Fabric(workspace=tmp_path, limits=Limits(timeout_s=10)) as fab:
        result = await fab.exec(
            "return [help(tools.read), help('tools.read'), help(state), help('state'), "
            "help('await ctx.status()')]"
        )
        assert result.ok, result.text
        by_value, by_name, listing, listing_by_name, status = result.value
        assert by_value == by_name
        assert by_value.startswith("async tools.read(path: str, offset: int = 0")
        assert "[risk: read]" in by_value.splitlines()[0]
        assert fab.providers.get("tools", "read").description in by_value
        assert listing == listing_by_name and len(listing.splitlines()) == 4
        assert listing.splitlines()[2].startswith("state.keys(): The keys kept")
        assert status.startswith("async ctx.status(scope:")


async def test_help_of_anything_else_says_what_it_takes(tmp_path: Path) -> None:
    """A misspelt name gets the nearest; a module its vetted names; any other value the
    usage; help itself is plain text, no host object behind it."""
    async with Fabric(workspace=tmp_path, limits=Limits(timeout_s=10)) as fab:
        result = await fab.exec(
            "import json\n"
            "return [help('tools.raed'), help(json), help(len), help(help), repr(help)]"
        )
        assert result.ok, result.text
        misspelt, module, builtin, itself, shown = result.value
        assert "did you mean tools.read?" in misspelt
        assert module == "import json (sandboxed): " + ", ".join(MODULES["json"])
        assert "not a builtin_function_or_method" in builtin and "help()" in builtin
        assert "not a Help" in itself
        assert shown == "<help: call help() for the namespaces>"
        for reach in ("help._entries", "help.load", "help._load"):
            leak = await fab.exec(f"return {reach}")
            assert leak.error is not None, reach
            assert leak.error.kind in ("policy", "runtime"), leak.error


async def test_many_mcp_tools_are_a_count_and_a_pointer() -> None:
    """With 30 or 600 tools on 3 or 40 servers the description has the same lines, one of them
    the count and the pointer to mcp.list(), and stays within its token budget; help(mcp.srv1)
    lists that server's tools."""
    small = exec_description(_servers(30, 3), 16_384)
    large = exec_description(_servers(600, 40), 16_384)
    assert len(small.splitlines()) == len(large.splitlines())
    assert "600 tools on 40 servers" in large and "await mcp.list() lists them" in large
    assert "tool_599" not in large
    assert TokenCounter().count(large) <= DESCRIPTION_TOKENS
    entries = _servers(30, 3).help()
    assert len(entries["mcp.srv1"].splitlines()) == 10
    assert "mcp.srv1: 10 tools (help(mcp.srv1) lists them)" in entries["mcp"]
    assert entries["mcp.srv1.tool_1"].startswith("async mcp.srv1.tool_1(text: str)")


async def test_a_long_namespace_is_cut_with_a_pointer_to_its_help() -> None:
    """Past thirteen calls a namespace shows a count of the rest and where to see them; its own
    help lists every one."""
    registry = ProviderRegistry()
    for n in range(20):
        registry.register("extensions", f"ext_{n:02}", _tool)
    (line,) = overview_lines(registry)
    assert line.endswith('+7 more: help("extensions") lists them')
    assert len(registry.help()["extensions"].splitlines()) == 20
    registry.register("extensions", "late", _tool)
    assert "extensions.late" in registry.help()  # made again after a registration
