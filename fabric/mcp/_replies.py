"""How every Fabric tool answers over MCP: the model-facing text as text content (a result
made of content blocks as the matching list of text, image, audio and resource content), the
structured result as structured content, ``isError`` for failures; and the guard that turns
whatever a tool raises into such an answer (``error_payload``), so the server always
survives."""

from __future__ import annotations

import asyncio
import base64
import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from mcp_types import (
    Annotations,
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)

from fabric._translate import error_payload
from runtime import (
    AudioBlock,
    ImageBlock,
    TextBlock,
    TextResource,
)
from runtime import ContentBlock as Block

ToolFunc = Callable[..., Awaitable[CallToolResult]]


def reply(
    text: str,
    structured: Any,
    *,
    error: bool = False,
    blocks: Sequence[ContentBlock] | None = None,
) -> CallToolResult:
    """A tool's answer: ``blocks`` as its content, else ``text``; structured content that is
    not an object is sent as ``{"result": ...}``."""
    data = structured if isinstance(structured, dict) else {"result": structured}
    shown = list(blocks) if blocks is not None else [TextContent(type="text", text=text)]
    return CallToolResult(content=shown, structured_content=data, is_error=error)


def mcp_content(blocks: Sequence[Block]) -> list[ContentBlock]:
    """The MCP content for a result's blocks, media as base64 text (run it off the event loop
    when they are large)."""
    return [_mcp_block(block) for block in blocks]


def _mcp_block(block: Block) -> ContentBlock:
    extras: dict[str, Any] = {"_meta": block.meta}
    if block.annotations is not None:
        extras["annotations"] = Annotations.model_validate(block.annotations.model_dump())
    if isinstance(block, TextBlock):
        return TextContent(text=block.text, **extras)
    if isinstance(block, ImageBlock):
        return ImageContent(data=_b64(block.data), mime_type=block.mime_type, **extras)
    if isinstance(block, AudioBlock):
        return AudioContent(data=_b64(block.data), mime_type=block.mime_type, **extras)
    inner = block.resource
    resource: TextResourceContents | BlobResourceContents
    if isinstance(inner, TextResource):
        resource = TextResourceContents(
            uri=inner.uri, mime_type=inner.mime_type, text=inner.text, _meta=inner.meta
        )
    else:
        resource = BlobResourceContents(
            uri=inner.uri, mime_type=inner.mime_type, blob=_b64(inner.blob), _meta=inner.meta
        )
    return EmbeddedResource(resource=resource, **extras)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def failure(code: str, message: str) -> CallToolResult:
    return reply(
        f"error ({code}): {message}", {"error": {"code": code, "message": message}}, error=True
    )


def guarded(run: ToolFunc, names: Mapping[str, str] | None = None) -> ToolFunc:
    """``run``, with what it raises answered as an error (``names`` maps the session's
    parameter names to the tool's)."""

    @functools.wraps(run)  # the SDK reads the tool's parameters through __wrapped__
    async def guard(**kwargs: Any) -> CallToolResult:
        try:
            return await run(**kwargs)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:
            payload = error_payload(exc, names)
            return failure(payload.code, payload.message)

    return guard
