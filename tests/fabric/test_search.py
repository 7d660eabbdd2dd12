"""``ctx.search`` on every surface: a snippet, the ``ctx_search`` MCP tool, ``fabric search``
and ``fab.ctx.search`` answer alike; each hit's ``ctx_read`` call opens its match; the answer
stays within what a read may return; and a query that cannot run says which field and why."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from fabric import Fabric
from fabric._operations import SNIPPET_SHARE
from fabric.mcp import build_server
from runtime import ProviderCallError

from .test_cli import fabric as cli

_READ = re.compile(r'^ctx_read\(handle="([a-z0-9-]+)", offset=(\d+), length=(\d+)\)$')


@pytest.fixture
async def fab(tmp_path: Path) -> AsyncIterator[Fabric]:
    async with Fabric(tmp_path, spares=0) as session:
        store = session.boundary.store
        assert store is not None
        lines = [f"INFO request {i} served" for i in range(3000)]
        lines[2345] = "ERROR lost the lease on db-primary"
        store.put("\n".join(lines) + "\n", tool="tools.read", args={"path": "app.log"})
        store.put({"owner": "ops", "note": "the lease is renewed hourly"}, key="lease-notes")
        yield session


async def test_every_surface_gives_the_same_hits(fab: Fabric, tmp_path: Path) -> None:
    """The snippet gets the data, MCP the text beside the same data, the command prints the
    text (the data with --json), Python gets both."""
    inside = await fab.exec('return await ctx.search("lease", limit=5)')
    assert inside.ok, inside.text
    data = inside.value
    assert data is not None and data["total"] == 2 and data["pending"] == 0
    assert {h["key"] for h in data["hits"]} == {None, "lease-notes"}
    server = build_server(fab)
    over_mcp = await server.call_tool("ctx_search", {"query": "lease", "limit": 5})
    assert not over_mcp.is_error and over_mcp.structured_content == data
    python = await fab.ctx.search("lease", limit=5)
    assert python.data == data and python.text == over_mcp.content[0].text
    printed = cli("search", "lease", "--limit", "5", "--workspace", str(tmp_path))
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.strip() == python.text
    as_json = json.loads(cli("search", "lease", "--json", "--workspace", str(tmp_path)).stdout)
    assert as_json["hits"] == data["hits"] and as_json["text"].startswith("2 stored results")


async def test_a_hit_shows_its_line_and_the_read_that_opens_it(fab: Fabric) -> None:
    reply = await fab.ctx.search("lease db-primary")
    [hit] = reply.data["hits"]
    assert (hit["line"], hit["text"]) == (2346, "ERROR lost the lease on db-primary")
    assert reply.text.splitlines()[1:] == [
        f"1. {hit['handle']}, line 2346, byte {hit['offset']}",
        "   ERROR lost the lease on db-primary",
        f"   {hit['read']}",
    ]


async def test_each_read_call_opens_its_match(fab: Fabric) -> None:
    """Pasting a hit's ctx_read call shows the match, also deep in a long line of two-byte
    characters (the read starts 200 bytes before it, inside a character, and moves on to
    the next one)."""
    store = fab.boundary.store
    assert store is not None
    store.put("é" * 3000 + " wallaby " + "ü" * 3000, key="wide")
    store.put("short line\nthen a wallaby\n", key="narrow")
    server = build_server(fab)
    found = await fab.ctx.search("wallaby")
    assert found.data["total"] == 2
    for hit in found.data["hits"]:
        handle, offset, length = _READ.match(hit["read"]).groups()  # type: ignore[union-attr]
        assert handle == hit["handle"]
        answer = await server.call_tool(
            "ctx_read", {"handle": handle, "offset": int(offset), "length": int(length)}
        )
        read: dict[str, Any] = answer.structured_content
        shown = read["content"].encode()
        at = hit["offset"] - read["offset"]
        assert shown[at : at + hit["length"]].decode() == hit["match"] == "wallaby"


async def test_the_answer_fits_what_a_snippet_may_inline(fab: Fabric) -> None:
    """At the cap, with long keys and long lines, the text stays within the share of the
    offload threshold that a read gets in a snippet."""
    store = fab.boundary.store
    assert store is not None
    for i in range(30):
        store.put(
            "ж" * 2000 + f" numbat {i} " + "語" * 2000, key=f"a-rather-long-key-{i:02}-" + "k" * 40
        )
    reply = await fab.ctx.search("numbat", limit=20)
    assert len(reply.data["hits"]) == 20 and reply.data["total"] == 30
    budget = fab.boundary.config.read_offload_threshold * SNIPPET_SHARE
    assert len(reply.text.encode()) <= budget
    assert "10 more: add words to narrow it, or raise limit (at most 20)" in reply.text
    inside = await fab.exec('return await ctx.search("numbat", limit=20)')
    assert inside.ok and inside.policy_applied == "inline", inside.text


async def test_a_query_that_cannot_run_names_the_field_on_every_surface(
    fab: Fabric, tmp_path: Path
) -> None:
    inside = await fab.exec(
        'try:\n    await ctx.search("?!")\nexcept ToolError as e:\n    return e.code, e.message'
    )
    assert inside.value is not None and inside.value[0] == "bad_query"
    assert inside.value[1].startswith("query '?!' has no word to search for")
    over_mcp = await build_server(fab).call_tool("ctx_search", {"query": "AND(", "match": "fts5"})
    assert over_mcp.is_error
    message = over_mcp.structured_content["error"]["message"]
    assert message.startswith("query 'AND(' is not FTS5 syntax") and 'match="all"' in message
    with pytest.raises(ProviderCallError) as caught:
        await fab.ctx.search("x", limit=21)
    assert caught.value.code == "bad_arguments"
    assert str(caught.value).startswith("ctx.search: limit must be at most 20, not 21")
    done = cli("search", "?!", "--workspace", str(tmp_path))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "QUERY '?!' has no word to search for" in " ".join(done.stderr.split())


async def test_fts5_operators_typed_as_words_are_searched_as_words(fab: Fabric) -> None:
    """What would be FTS5 syntax (a dash, a stray quote, AND() is searched as words."""
    store = fab.boundary.store
    assert store is not None
    store.put('config: db-primary AND( "quoted', key="odd")
    for query in ('db-primary "quoted', "AND(", '"db-primary and('):
        reply = await fab.ctx.search(query)
        assert [h["key"] for h in reply.data["hits"]] == ["odd"], query


async def test_the_tool_reads_only_and_searches_are_counted(fab: Fabric) -> None:
    tools = {t.name: t for t in await build_server(fab).list_tools()}
    assert tools["ctx_search"].annotations is not None
    assert tools["ctx_search"].annotations.read_only_hint is True
    await fab.ctx.search("lease")
    status = await fab.ctx.status()
    assert status.data["searches"] == 1 and "1 searches" in status.text
