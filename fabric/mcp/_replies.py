"""How every Fabric tool answers over MCP: the model-facing text as text content, the
structured result as structured content, ``isError`` for failures; and the guard that turns
whatever a tool raises into such an answer (``error_payload``), so the server always
survives."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp_types import CallToolResult, TextContent

from fabric._translate import error_payload

ToolFunc = Callable[..., Awaitable[CallToolResult]]


def reply(text: str, structured: Any, *, error: bool = False) -> CallToolResult:
    """A tool's answer; structured content that is not an object is sent as ``{"result":
    ...}``."""
    content = structured if isinstance(structured, dict) else {"result": structured}
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=content, is_error=error
    )


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
