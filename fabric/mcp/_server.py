"""``fabric mcp``: Fabric's tools over the Model Context Protocol (the official SDK's
``MCPServer``), on stdio or streamable HTTP (``_http.py``, behind the checks of ``_gate.py``).

``fabric_exec`` and ``ce_exec`` are declared here; the ``ctx_*`` tools are made from the table
of operations (``_tools.py``), each offered only when the session can serve it. Every call
answers as ``_replies.py`` says. Nothing is ever written to stdout but protocol messages: logs
go to stderr or a file.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError as SdkToolError
from mcp.server.mcpserver.exceptions import UnexpectedToolError
from mcp_types import CallToolResult, TextContent
from pydantic import Field, ValidationError

from fabric import __version__
from fabric._operations import Args
from fabric._outcomes import FabricResult
from fabric._session import Fabric
from fabric._translate import describe
from fabric.mcp._breaker import REFUSE_AT, WARN_AT, RepeatBreaker
from fabric.mcp._describe import exec_description
from fabric.mcp._elicit import elicitation_approver
from fabric.mcp._http import HttpSettings, serve_http
from fabric.mcp._replies import ToolFunc, failure, mcp_content, reply
from fabric.mcp._tools import model_tool, operation_tools
from runtime import described, run_host_work
from runtime.boundary import ResultFormat, ResultPolicy, redact, to_json

log = logging.getLogger("fabric.mcp")
HEARTBEAT_S = 1.0
INSTRUCTIONS = (
    "Fabric runs Python snippets against this workspace's tools (fabric_exec). Prefer one "
    "snippet that filters and summarizes over many tool calls; large results come back as "
    "handles you read with ctx_read."
)


@dataclass(frozen=True)
class ToolSpec:
    """A tool of the server's own (the ``ctx_*`` tools come from the table of operations)."""

    name: str
    args: type[Args]
    make: Callable[[Fabric, RepeatBreaker], ToolFunc]
    description: Callable[[Fabric], str]
    context: bool = False
    read_only: bool = False
    names: Mapping[str, str] | None = None
    """The session's parameter names to the tool's, for errors."""


def build_server(fab: Fabric) -> MCPServer:
    """An MCPServer exposing ``fab``'s tools."""
    breaker = RepeatBreaker()
    own = [
        model_tool(
            spec.name,
            spec.args,
            spec.make(fab, breaker),
            spec.description(fab),
            read_only=spec.read_only,
            context=spec.context,
            names=spec.names,
        )
        for spec in TOOLS
    ]
    return _Server(
        name="fabric",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
        tools=[*own, *operation_tools(fab)],
    )


async def serve(
    fab: Fabric, http: HttpSettings | None = None, *, ready: Callable[[str], None] | None = None
) -> None:
    """Serve ``fab``'s tools on stdio, or on streamable HTTP as ``http`` says; ``ready`` gets
    the HTTP endpoint's URL once it accepts connections."""
    server = build_server(fab)
    if http is None:
        await server.run_stdio_async()
    else:
        await serve_http(server, http, ready=ready)


# -- results ------------------------------------------------------------------------------


class _Server(MCPServer):
    """The SDK's server, with arguments that fail the tool's schema answered like every other
    bad argument: a ``bad_arguments`` error naming the field and what it takes."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except SdkToolError as exc:
            if isinstance(exc, UnexpectedToolError) or not isinstance(
                exc.__cause__, ValidationError
            ):
                raise
            known = [
                key
                for tool in await self.list_tools()
                if tool.name == name
                for key in tool.input_schema.get("properties", {})
            ]
            return failure("bad_arguments", f"{name}: {describe(exc.__cause__, known=known)}")


def _exec_structured(result: FabricResult, threshold: int, redacting: bool) -> dict[str, Any]:
    """The structured content of a ``fabric_exec`` reply; the value rides along only when it
    was inlined and is no larger than ``threshold`` (``readOffloadThreshold``): a forced
    ``inline`` of a large result is sent once, as text, not twice. Content blocks are
    described (type, media type, bytes), never repeated: the reply's content is them. The
    error's message is what the model reads (redacted; compacted when it was long, the
    original under ``handle``), never more."""
    out: dict[str, Any] = {
        "ok": result.ok,
        "policy_applied": result.policy_applied,
        "handle": result.handle,
        "logs_handle": result.logs_handle,
        "bytes": result.bytes,
        "tokens": result.tokens,
        "text_tokens": result.text_tokens,
        "calls": result.calls,
        "timings": result.timings.model_dump(),
        "warnings": list(result.warnings),
    }
    if result.blocks:  # the content is the value; structured content describes it
        out["media_bytes"] = result.media_bytes
        out["blocks"] = [described(block) for block in result.blocks]
    elif result.ok and result.policy_applied == "inline" and result.bytes <= threshold:
        out["value"] = json.loads(to_json(result.value))  # bytes as the model reads them
    if result.error is not None:
        error = result.error.model_dump(mode="json", exclude_none=True)
        if result.policy_applied == "compact":
            error["message"] = result.text
        elif redacting:
            error["message"] = redact(error["message"])
        out["error"] = error
    if result.analysis is not None:
        out["analysis"] = {
            "classification": result.analysis.classification.value,
            "bounded": result.analysis.bounded,
            "verdict": result.analysis.verdict,
        }
    return out


# -- fabric_exec ---------------------------------------------------------------------------


class ExecArgs(Args):
    code: str = Field(description="the snippet: the body of an async function")
    result_format: ResultFormat | None = Field(
        None, description="how the value is rendered (default: resultFormat)"
    )
    result_policy: ResultPolicy | None = Field(
        None, description="inline, offload or summarize the result (default: resultPolicy)"
    )
    timeout_s: float | None = Field(
        None, description="wall-clock seconds for this run, 0.1 to 3600 (default: timeoutS)"
    )
    strict: bool | None = Field(
        None, description="refuse an unbounded return before running (default: strict)"
    )


def _make_exec(fab: Fabric, breaker: RepeatBreaker) -> ToolFunc:
    async def fabric_exec(args: ExecArgs, ctx: Context) -> CallToolResult:
        code = args.code
        session = _session_key(ctx)
        count, earlier = breaker.see(session, code)
        if count >= REFUSE_AT:
            return failure("repeated_code", breaker.refusal(count, earlier))
        calls: list[str] = []
        started = time.monotonic()
        heartbeat = asyncio.ensure_future(_heartbeat(ctx, started, calls))
        try:
            result = await fab.exec(
                code,
                timeout=args.timeout_s,
                policy=args.result_policy,
                result_format=args.result_format,
                strict=args.strict,
                on_call=calls.append,
                approver=elicitation_approver(ctx),
            )
        finally:
            heartbeat.cancel()
        breaker.remember(session, result.handle, result.text)
        text = result.text
        warning = breaker.warning(count, earlier) if count >= WARN_AT else None
        if warning is not None:
            text = f"{warning}\n{text}"
        config = fab.boundary.config
        structured = _exec_structured(result, config.read_offload_threshold, config.redact_secrets)
        blocks = None
        if result.blocks:  # base64 of megabytes is work for the host's threads
            blocks = await run_host_work(mcp_content, result.blocks)
            if warning is not None:
                blocks.insert(0, TextContent(text=warning))
        return reply(text, structured, error=not result.ok, blocks=blocks)

    return fabric_exec


async def _heartbeat(ctx: Context, started: float, calls: list[str]) -> None:
    """Progress notifications while a snippet runs: elapsed time and provider calls made."""
    try:
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            elapsed = time.monotonic() - started
            last = f", last {calls[-1]}" if calls else ""
            await ctx.report_progress(
                elapsed, None, f"running for {elapsed:.0f} s; {len(calls)} provider calls{last}"
            )
    except asyncio.CancelledError:
        return
    except Exception:  # a client without progress support must not break the call
        return


def _session_key(ctx: Context) -> object:
    """One client's streak: its HTTP session id, or the one client of a stdio server."""
    try:
        request = ctx.request_context.request
        headers = getattr(request, "headers", None)
        session = headers.get("mcp-session-id") if headers is not None else None
    except Exception:
        session = None
    return session or "stdio"


# -- the other tools -----------------------------------------------------------------------


class CheckArgs(Args):
    code: str = Field(description="the snippet to diagnose; it is not run")
    strict: bool | None = Field(
        None, description="judge as strict mode would: an unbounded return is BLOCK"
    )
    block_unbounded_returns: bool | None = Field(
        None, description="judge as blockUnboundedReturns would (BLOCK, not WARN)"
    )


def _make_check(fab: Fabric, breaker: RepeatBreaker) -> ToolFunc:
    async def ce_exec(args: CheckArgs) -> CallToolResult:
        analysis = await asyncio.to_thread(
            fab.check,
            args.code,
            strict=args.strict,
            block_unbounded_returns=args.block_unbounded_returns,
        )
        lines = [
            f"{analysis.verdict}: {analysis.classification.value}, "
            f"{'bounded' if analysis.bounded else 'unbounded'}"
        ]
        if analysis.trail:
            lines.append(analysis.explain())
        for d in analysis.diagnostics:
            where = f" (line {d.line})" if d.line else ""
            lines.append(f"{d.severity} {d.code}{where}: {d.message}")
            if d.fix:
                lines.append(f"  fix: {d.fix}")
        return reply("\n".join(lines), analysis.model_dump(mode="json"))

    return ce_exec


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "fabric_exec",
        ExecArgs,
        _make_exec,
        lambda fab: exec_description(fab.providers, fab.boundary.config.read_offload_threshold),
        context=True,
        names={"timeout": "timeout_s"},
    ),
    ToolSpec(
        "ce_exec",
        CheckArgs,
        _make_check,
        lambda fab: (
            "Diagnose a snippet without running it: what kind of data it returns "
            "(RAW ... NONE), whether its size is bounded, the trail from source to return, and "
            "the fixes (PASS, WARN or BLOCK)."
        ),
        read_only=True,
    ),
)
