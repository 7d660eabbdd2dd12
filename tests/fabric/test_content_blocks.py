"""Content blocks from a snippet, through a real worker: what ``Fabric.exec`` returns, what a
provider's MCP content becomes, what the terminal prints and what telemetry counts."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp_types import ImageContent, TextContent

from fabric import Fabric, ImageBlock, Limits, ProviderRegistry, TextBlock

from .test_cli import fabric as cli

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(48))
MARKER = "NARWHAL-2231"


def snippet(marker: str, rows: int = 6000) -> str:
    """A snippet returning a caption, an image and ``rows`` lines with ``marker`` planted."""
    return f"""
import base64
png = base64.b64decode({base64.b64encode(PNG).decode()!r})
rows = [f"row {{i}}: nothing to see" for i in range({rows})]
rows[{rows * 2 // 3}] = "row {rows * 2 // 3}: {marker} is here"
return [
    {{"type": "text", "text": "Figure 1: the load"}},
    {{"type": "image", "data": png, "mime_type": "image/png"}},
    {{"type": "text", "text": "\\n".join(rows)}},
]
"""


async def chart() -> list[TextContent | ImageContent]:
    """What a provider proxying an MCP server returns: the SDK's content models."""
    data = base64.b64encode(PNG).decode()
    return [TextContent(text="the chart"), ImageContent(data=data, mime_type="image/png")]


@pytest.fixture(scope="module")
async def fab(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fabric]:
    registry = ProviderRegistry()
    registry.register("mcp", "charts.render", chart, risk="read")
    root = tmp_path_factory.mktemp("blocks")
    async with Fabric(workspace=root, registry=registry, limits=Limits(timeout_s=20)) as session:
        yield session


async def test_an_image_plus_text_result_keeps_the_image_and_the_marker_is_one_read_away(
    fab: Fabric,
) -> None:
    """Caption and image where they were, the large text under the handle in their place,
    the planted marker found by one ``ctx.read``."""
    done = await fab.exec(snippet(MARKER))
    assert done.ok and done.policy_applied == "offload" and done.handle is not None
    caption, image, notice = done.blocks
    assert caption == TextBlock(text="Figure 1: the load")
    assert image == ImageBlock(data=PNG, mime_type="image/png")
    assert isinstance(notice, TextBlock) and notice.text.startswith(
        f"[result stored as {done.handle}"
    )
    assert done.media_bytes == len(PNG) and done.text_tokens < 1500
    found = await fab.ctx.read(done.handle, query=MARKER)
    assert found.data["total_matches"] == 1 and MARKER in found.text


async def test_a_providers_mcp_content_returned_as_it_is_is_content_blocks(fab: Fabric) -> None:
    done = await fab.exec("return await mcp.charts.render()")
    assert done.ok and done.blocks == (
        TextBlock(text="the chart"),
        ImageBlock(data=PNG, mime_type="image/png"),
    )
    assert done.text == f"the chart\n[image/png, {len(PNG)} bytes]"


async def test_a_bad_block_fails_the_snippet_naming_index_and_field(fab: Fabric) -> None:
    done = await fab.exec('return [{"type": "text", "text": "a"}, {"type": "image", "data": b"x"}]')
    assert not done.ok and done.error is not None and done.error.type == "ContentBlockError"
    assert done.error.message == "value[1].mime_type: missing"
    assert '"mime_type": "image/png"' in (done.error.hint or "")


async def test_telemetry_counts_media_as_bytes_beside_the_text(fab: Fabric) -> None:
    before = fab.status()["media_bytes_returned"]
    done = await fab.exec("return await mcp.charts.render()")
    event = fab.telemetry.events.recent(1)[0]
    assert event["kind"] == "exec" and event["media_bytes"] == len(PNG)
    assert event["bytes"] == len("the chart") == done.bytes
    assert fab.status()["media_bytes_returned"] == before + len(PNG)


def test_the_terminal_shows_a_line_for_an_image_and_json_carries_it(tmp_path: Path) -> None:
    code = snippet(MARKER, rows=3)
    shown = cli("exec", "--workspace", str(tmp_path), "-", stdin=code)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[:2] == ["Figure 1: the load", f"[image/png, {len(PNG)} bytes]"]
    whole = cli("exec", "--workspace", str(tmp_path), "--json", "-", stdin=code)
    blocks = json.loads(whole.stdout)["blocks"]
    assert blocks[1] == {
        "type": "image",
        "data": base64.b64encode(PNG).decode(),
        "mime_type": "image/png",
        "annotations": None,
        "meta": None,
    }
