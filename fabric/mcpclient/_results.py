"""What an MCP tool's answer becomes in a snippet: plain data.

- structured content is a dict (a lone ``{"result": x}`` that the tool's output schema declares
  as the wrapper of a plain value is ``x``);
- text content is a ``str`` (several text blocks joined by newlines);
- anything else (images, audio, resources) is a list of content blocks as dicts, media as
  bytes, which the snippet may return as they are (see "Content blocks" in the README);
- ``isError`` raises :class:`ToolFailed` with the server's message.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

import mcp_types

from fabric.mcpclient._errors import ToolFailed

_ERROR_CHARS = 4000
"""Characters of a tool's error message kept (its start)."""


def plain_result(
    qualified: str, result: mcp_types.CallToolResult, output_schema: Mapping[str, Any] | None
) -> Any:
    if result.is_error:
        message = "\n".join(_texts(result.content)) or "the tool reported an error"
        if len(message) > _ERROR_CHARS:
            message = message[:_ERROR_CHARS] + " [cut]"
        raise ToolFailed(qualified, message)
    if result.structured_content is not None:
        return _unwrapped(result.structured_content, output_schema)
    blocks = result.content
    if not blocks:
        return None
    texts = _texts(blocks)
    if len(texts) == len(blocks):
        return "\n".join(texts)
    return [_block(block) for block in blocks]


def _texts(blocks: list[Any]) -> list[str]:
    return [b.text for b in blocks if isinstance(b, mcp_types.TextContent)]


def _unwrapped(content: dict[str, Any], schema: Mapping[str, Any] | None) -> Any:
    """A plain value the server wrapped as ``{"result": value}`` (as MCP asks of servers
    whose tools return something other than an object), when its schema says so."""
    if schema is None or list(content) != ["result"]:
        return content
    properties = schema.get("properties")
    if isinstance(properties, Mapping) and list(properties) == ["result"]:
        return content["result"]
    return content


def _media(data: str) -> bytes | str:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return data  # not base64: kept as sent, the boundary says what is wrong with it


def _block(block: Any) -> dict[str, Any]:
    if isinstance(block, mcp_types.TextContent):
        return {"type": "text", "text": block.text}
    if isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
        return {"type": block.type, "data": _media(block.data), "mime_type": block.mime_type}
    dumped: dict[str, Any] = block.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped
