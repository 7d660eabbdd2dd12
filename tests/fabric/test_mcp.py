"""`fabric mcp` end to end, with the official SDK's client over real stdio and over HTTP."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)

from fabric import Fabric
from fabric.mcp import DESCRIPTION_TOKENS, exec_description
from runtime.boundary import TokenCounter

from .test_content_blocks import PNG, snippet

MARKER = "QUOKKA-8812"
FABRIC_MCP = (sys.executable, "-m", "fabric._cli", "mcp")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mcp")
    lines = [f"INFO request {i} served" for i in range(60_000)]
    lines[41_234] = f"ERROR lost {MARKER} in transit"
    (root / "big.log").write_text("\n".join(lines) + "\n")
    (root / "small.txt").write_text("hello\n")
    return root


def stdio(workspace: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "fabric._cli", "mcp", "--workspace", str(workspace)]
    )


def text(result: Any) -> str:
    return "".join(block.text for block in result.content)


async def test_lists_the_tools(workspace: Path) -> None:
    async with Client(stdio(workspace)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {
            "fabric_exec",
            "ce_exec",
            "ctx_read",
            "ctx_offload",
            "ctx_remember",
            "ctx_recall",
            "ctx_forget",
            "ctx_search",
            "ctx_summarize",
            "ctx_status",
        } <= names


async def test_a_large_result_is_a_handle_and_ctx_read_finds_the_marker(workspace: Path) -> None:
    async with Client(stdio(workspace)) as client:
        done = await client.call_tool(
            "fabric_exec", {"code": 'return await tools.read(path="big.log")'}
        )
        assert not done.is_error
        assert "stored as read-big-log-" in text(done) and "nothing is lost" in text(done)
        handle = done.structured_content["handle"]
        assert done.structured_content["policy_applied"] == "offload"
        assert "value" not in done.structured_content
        found = await client.call_tool("ctx_read", {"handle": handle, "query": MARKER})
        assert not found.is_error and f"ERROR lost {MARKER} in transit" in text(found)
        assert found.structured_content["total_matches"] == 1
        assert found.structured_content["windows"][0]["line"] == 41_235


async def test_small_results_are_inline_with_structured_value(workspace: Path) -> None:
    async with Client(stdio(workspace)) as client:
        done = await client.call_tool(
            "fabric_exec", {"code": "return {'a': [1, 2]}", "result_format": "json"}
        )
        assert text(done) == '{"a": [1, 2]}' and done.structured_content["value"] == {"a": [1, 2]}
        assert done.structured_content["analysis"]["verdict"] == "PASS"
        forced = await client.call_tool(
            "fabric_exec", {"code": "return 'x' * 100_000", "result_policy": "inline"}
        )
        assert forced.structured_content["policy_applied"] == "inline"
        assert len(text(forced)) >= 100_000 and "value" not in forced.structured_content


async def test_ce_exec_and_strict(workspace: Path) -> None:
    async with Client(stdio(workspace)) as client:
        code = 'return await tools.read(path="small.txt")'
        diagnosis = await client.call_tool("ce_exec", {"code": code})
        assert text(diagnosis).startswith("WARN: RAW, unbounded")
        assert diagnosis.structured_content["verdict"] == "WARN"
        refused = await client.call_tool("fabric_exec", {"code": code, "strict": True})
        assert refused.is_error and "nothing was run" in text(refused)
        assert refused.structured_content["calls"] == 0
        assert refused.structured_content["error"]["type"] == "Blocked"


async def test_snippet_failures_are_tool_errors(workspace: Path) -> None:
    async with Client(stdio(workspace)) as client:
        failed = await client.call_tool("fabric_exec", {"code": "1 / 0"})
        assert failed.is_error and "ZeroDivisionError" in text(failed)


async def test_content_blocks_reply_as_text_and_image_content(workspace: Path) -> None:
    """Text, an image and a large text: the reply's content is the text, the image (base64,
    as MCP has it) and the offload notice, in that order; structured content describes the
    blocks; one ctx_read of the handle finds the marker planted in the large text."""
    async with Client(stdio(workspace)) as client:
        done = await client.call_tool("fabric_exec", {"code": snippet(MARKER)})
        assert not done.is_error
        caption, image, notice = done.content
        assert isinstance(caption, TextContent) and caption.text == "Figure 1: the load"
        assert isinstance(image, ImageContent) and image.mime_type == "image/png"
        assert base64.b64decode(image.data) == PNG
        assert isinstance(notice, TextContent) and "nothing is lost" in notice.text
        structured = done.structured_content
        assert structured["blocks"] == [
            {"type": "text", "bytes": len("Figure 1: the load")},
            {"type": "image", "mime_type": "image/png", "bytes": len(PNG)},
            {"type": "text", "bytes": len(notice.text.encode())},
        ]
        assert "value" not in structured and structured["media_bytes"] == len(PNG)
        found = await client.call_tool(
            "ctx_read", {"handle": structured["handle"], "query": MARKER}
        )
        assert found.structured_content["total_matches"] == 1 and MARKER in text(found)


async def test_resources_audio_and_annotations_reach_the_client(workspace: Path) -> None:
    code = """return [
    {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain",
                                      "text": "hello"}},
    {"type": "resource", "resource": {"uri": "file:///a.bin", "blob": b"\\x00\\x01"}},
    {"type": "audio", "data": b"RIFF", "mime_type": "audio/wav",
     "annotations": {"audience": ["user"], "priority": 0.25}},
]"""
    async with Client(stdio(workspace)) as client:
        done = await client.call_tool("fabric_exec", {"code": code})
        assert not done.is_error, done.content
        text_resource, blob_resource, audio = done.content
        assert isinstance(text_resource, EmbeddedResource)
        assert text_resource.resource == TextResourceContents(
            uri="file:///a.txt", mime_type="text/plain", text="hello"
        )
        assert isinstance(blob_resource, EmbeddedResource)
        assert isinstance(blob_resource.resource, BlobResourceContents)
        assert base64.b64decode(blob_resource.resource.blob) == b"\x00\x01"
        assert isinstance(audio, AudioContent) and base64.b64decode(audio.data) == b"RIFF"
        assert audio.annotations is not None and audio.annotations.audience == ["user"]
        assert audio.annotations.priority == 0.25


async def test_the_repeat_warning_comes_first_in_a_reply_of_blocks(workspace: Path) -> None:
    code = 'return [{"type": "text", "text": "same"}, {"type": "audio", "data": b"x", "mime_type": "audio/wav"}]'
    async with Client(stdio(workspace)) as client:
        replies = [await client.call_tool("fabric_exec", {"code": code}) for _ in range(3)]
    assert [type(block).__name__ for block in replies[2].content] == [
        "TextContent",
        "TextContent",
        "AudioContent",
    ]
    first = replies[2].content[0]
    assert isinstance(first, TextContent) and "ran 3 times in a row" in first.text


async def test_a_bad_block_is_a_tool_error_naming_the_field(workspace: Path) -> None:
    async with Client(stdio(workspace)) as client:
        code = 'return [{"type": "image", "data": b"GIF89a", "mime_type": "image/png"}]'
        done = await client.call_tool("fabric_exec", {"code": code})
        assert done.is_error
        assert text(done) == (
            "ContentBlockError: value[0].data: the bytes are image/gif, not the image/png that "
            "mime_type says\nhint: set mime_type to image/gif"
        )
        assert done.structured_content["error"]["type"] == "ContentBlockError"


async def test_a_block_with_deep_meta_or_a_long_uri_is_a_tool_error(workspace: Path) -> None:
    """Refused before the reply is made: a _meta nested 300 deep used to fail the reply
    ("Internal server error"; past 100 levels no value crosses at all now), a 5 MB uri to be
    sent twice while the result counted 2 bytes."""
    deep = "m = {}\nfor _ in range(60):\n    m = {'a': m}\n"
    deep += "return [{'type': 'text', 'text': 'x', '_meta': m}]"
    long_uri = "return [{'type': 'resource', 'resource': {'uri': 'u' * 5_000_000, 'text': 'hi'}}]"
    async with Client(stdio(workspace)) as client:
        nested = await client.call_tool("fabric_exec", {"code": deep})
        too_long = await client.call_tool("fabric_exec", {"code": long_uri})
    assert nested.is_error and text(nested).startswith(
        "ContentBlockError: value[0]._meta: nests deeper than 32 levels"
    )
    assert too_long.is_error and text(too_long).startswith(
        "ContentTooLarge: value[0].resource.uri: 5000000 characters, more than the 2048"
    )


async def test_bytes_in_a_small_value_reach_structured_content(workspace: Path) -> None:
    """As the model reads them ({bytes, base64}); the reply used to fail on non-UTF-8 bytes."""
    async with Client(stdio(workspace)) as client:
        done = await client.call_tool("fabric_exec", {"code": "return b'\\x89ab'"})
        assert not done.is_error
        assert done.structured_content["value"] == {"bytes": 3, "base64": "iWFi"}


async def test_an_errors_structured_message_is_what_the_model_reads(workspace: Path) -> None:
    """The structured error carries the redacted, compacted text the model reads, not the
    whole original (that is stored under ``handle``) nor its secrets."""
    long = "raise RuntimeError('password=hunter2hunter2 ' + 'step failed\\n' * 3000 + 'LAST')"
    short = "raise RuntimeError('password=hunter2hunter2')"
    async with Client(stdio(workspace)) as client:
        compacted = await client.call_tool("fabric_exec", {"code": long})
        error = compacted.structured_content["error"]
        assert compacted.structured_content["policy_applied"] == "compact"
        assert error["message"] == text(compacted) and len(error["message"]) < 4200
        assert "LAST" in error["message"] and "hunter2" not in error["message"]
        inline = await client.call_tool("fabric_exec", {"code": short})
        message = inline.structured_content["error"]["message"]
        assert "password=" in message and "hunter2" not in message


async def test_read_errors_carry_their_code(workspace: Path) -> None:
    async with Client(stdio(workspace)) as client:
        bad = await client.call_tool(
            "ctx_read", {"handle": "small.txt", "query": "(", "regex": True}
        )
        assert bad.is_error and text(bad).startswith("error (invalid_regex)")
        gone = await client.call_tool("ctx_read", {"handle": "nope-12345678"})
        assert gone.is_error and "not_found" in text(gone)


async def test_facts_round_trip(workspace: Path) -> None:
    async with Client(stdio(workspace)) as client:
        await client.call_tool("ctx_remember", {"name": "build", "text": "run make all"})
        recalled = await client.call_tool("ctx_recall", {"query": "make"})
        assert "build: run make all" in text(recalled)
        forgot = await client.call_tool("ctx_forget", {"name": "build"})
        assert forgot.structured_content == {"ok": True, "name": "build", "forgotten": True}


async def test_summarize_and_status_tools(workspace: Path) -> None:
    async with Client(stdio(workspace)) as client:
        await client.call_tool("fabric_exec", {"code": "return 5"})
        summary = await client.call_tool(
            "ctx_summarize", {"text": "ERROR a\nINFO b\n" * 500, "max_tokens": 80}
        )
        assert not summary.is_error and summary.structured_content["tokens"] <= 80
        status = await client.call_tool("ctx_status", {})
        assert text(status).startswith("session: 1 executions")
        model = await client.call_tool("ctx_summarize", {"text": "x", "mode": "model"})
        assert model.is_error and text(model).startswith("error (no_model)")


async def test_offload_tool(workspace: Path) -> None:
    async with Client(stdio(workspace)) as client:
        stored = await client.call_tool(
            "ctx_offload", {"data": {"rows": list(range(3000))}, "key": "rows"}
        )
        assert not stored.is_error and stored.structured_content["key"] == "rows"
        assert "$.rows = array of 3000 numbers" in text(stored)


async def test_bad_requests_do_not_hurt_the_server(workspace: Path) -> None:
    async with Client(stdio(workspace)) as client:
        unknown = await client.call_tool("no_such_tool", {})
        assert unknown.is_error
        wrong = await client.call_tool("fabric_exec", {"code": 12})
        assert wrong.is_error
        missing = await client.call_tool("ctx_read", {})
        assert missing.is_error
        still = await client.call_tool("fabric_exec", {"code": "return 2 + 2"})
        assert text(still) == "4"


async def test_repeated_code_warns_then_is_refused(workspace: Path) -> None:
    async with Client(stdio(workspace)) as client:
        code = 'return "same" + "!"'
        replies = [await client.call_tool("fabric_exec", {"code": code}) for _ in range(6)]
        assert [r.is_error for r in replies] == [False] * 5 + [True]
        assert "ran 3 times in a row; the same code returned this before" in text(replies[2])
        assert "will not change" not in text(replies[2]) and "ctx_read" not in text(replies[2])
        refused = text(replies[5])
        assert "Refused" in refused and "ctx_read" not in refused  # no handle: none is named
        assert refused.endswith("The same code returned this the last time:\nsame!")
        other = await client.call_tool("fabric_exec", {"code": "return 'different'"})
        assert not other.is_error


async def test_the_breaker_names_the_handle_of_a_stored_result(workspace: Path) -> None:
    async with Client(stdio(workspace)) as client:
        code = 'return "z" * 50000'
        replies = [await client.call_tool("fabric_exec", {"code": code}) for _ in range(6)]
        handle = replies[0].structured_content["handle"]
        assert handle and f'ctx_read(handle="{handle}")' in text(replies[3])
        assert f'ctx_read(handle="{handle}",' in text(replies[5])


async def test_cancelling_an_endless_snippet_kills_it_and_the_server_stays_healthy(
    workspace: Path,
) -> None:
    """The server's own count of running workers (a worker counts until the zygote has seen
    it die) falls back to zero once the client gives up, and the next call is served."""
    async with Client(stdio(workspace)) as client:
        with anyio.move_on_after(2):
            await client.call_tool(
                "fabric_exec", {"code": "while True:\n    pass", "timeout_s": 60}
            )
        with anyio.fail_after(30):  # 60 s would pass before the snippet stopped on its own
            while (await client.call_tool("ctx_status", {})).structured_content["running"]:
                await anyio.sleep(0.05)
        after = await client.call_tool("fabric_exec", {"code": "return 'alive'"})
        assert text(after) == "alive"


async def test_progress_is_reported_for_long_runs(workspace: Path) -> None:
    async with Client(stdio(workspace)) as client:
        seen: list[str] = []

        async def progress(done: float, total: float | None, message: str | None) -> None:
            seen.append(message or "")

        code = "import asyncio\nawait tools.ls()\nawait asyncio.sleep(2.5)\nreturn 1"
        result = await client.call_tool("fabric_exec", {"code": code}, progress_callback=progress)
        assert text(result) == "1"
        assert seen and "1 provider calls" in seen[-1]


async def test_the_exec_description_fits_its_budget(workspace: Path) -> None:
    async with Fabric(workspace, spares=0) as fab:
        description = exec_description(fab.providers, 16_384)
    assert TokenCounter().count(description) <= DESCRIPTION_TOKENS
    assert "tools.read(path: str" in description and "ctx.read(handle: str" in description


@pytest.fixture(scope="module")
def http_server(workspace: Path) -> Iterator[str]:
    """A server on a port the kernel picks; its one line on stderr says where, once it
    accepts connections."""
    proc = subprocess.Popen(
        [*FABRIC_MCP, "--http", "--port", "0", "--workspace", str(workspace)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    for line in proc.stderr:  # ends, and the test fails below, if the server exits instead
        lines.append(line)
        if line.startswith("fabric mcp: serving"):
            break
    url = re.search(r"http://\S+/mcp", "".join(lines))
    assert url is not None, "fabric mcp did not start:\n" + "".join(lines)
    try:
        yield url.group()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def test_http_serves_twenty_concurrent_executions(http_server: str) -> None:
    async with Client(http_server) as client:
        results: dict[int, str] = {}

        async def one(n: int) -> None:
            done = await client.call_tool("fabric_exec", {"code": f"return {n} * 2"})
            results[n] = text(done)

        async with anyio.create_task_group() as group:
            for n in range(20):
                group.start_soon(one, n)
    assert results == {n: str(n * 2) for n in range(20)}


async def test_http_offload_and_read(http_server: str) -> None:
    async with Client(http_server) as client:
        done = await client.call_tool(
            "fabric_exec", {"code": 'return await tools.read(path="big.log")'}
        )
        found = await client.call_tool(
            "ctx_read", {"handle": done.structured_content["handle"], "query": MARKER}
        )
        assert MARKER in text(found)


def test_malformed_messages_on_stdio_get_protocol_errors(workspace: Path) -> None:
    """Garbage, invalid parameters and unknown methods, written straight onto the pipe: the
    server answers with JSON-RPC errors and goes on serving."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "fabric._cli", "mcp", "--workspace", str(workspace)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: object) -> None:
        line = message if isinstance(message, str) else json.dumps(message)
        proc.stdin.write(line + "\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    def receive() -> dict[str, Any]:
        reply: dict[str, Any] = json.loads(proc.stdout.readline())  # type: ignore[union-attr]
        return reply

    try:
        send("this is not json {")
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        )
        assert receive()["result"]["capabilities"]["tools"] is not None
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "fabric_exec", "arguments": "not an object"},
            }
        )
        assert receive()["error"]["code"] == -32602
        send({"jsonrpc": "2.0", "id": 3, "method": "no/such/method"})
        assert receive()["error"]["code"] == -32601
        send(
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "tools/call",
                "params": {"name": "fabric_exec", "arguments": {"code": "return 6 * 7"}},
            }
        )
        assert receive()["result"]["content"][0]["text"] == "42"
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
