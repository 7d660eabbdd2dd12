"""``fabric mcp``: Fabric's tools over the Model Context Protocol (the official SDK's
``MCPServer``), on stdio or streamable HTTP (``_http.py``, behind the checks of ``_gate.py``).

Every tool is declared once, in ``TOOLS``, with the capability it needs; a tool appears only
when the session has that capability. Each call returns the model-facing text as text content,
the structured result as structured content, and ``isError`` for failures. Nothing is ever
written to stdout but protocol messages: logs go to stderr or a file.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError as SdkToolError
from mcp.server.mcpserver.exceptions import UnexpectedToolError
from mcp_types import CallToolResult, TextContent
from pydantic import ValidationError

from fabric import __version__
from fabric._config import FabricConfig
from fabric._outcomes import FabricResult
from fabric._session import Fabric
from fabric._translate import describe, error_payload
from fabric.mcp._breaker import REFUSE_AT, WARN_AT, RepeatBreaker
from fabric.mcp._describe import exec_description
from fabric.mcp._http import HttpSettings, serve_http

log = logging.getLogger("fabric.mcp")
DEFAULTS = FabricConfig().flat()
HEARTBEAT_S = 1.0
INSTRUCTIONS = (
    "Fabric runs Python snippets against this workspace's tools (fabric_exec). Prefer one "
    "snippet that filters and summarizes over many tool calls; large results come back as "
    "handles you read with ctx_read."
)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    make: Callable[[Fabric, RepeatBreaker], Callable[..., Awaitable[CallToolResult]]]
    description: Callable[[Fabric], str]
    available: Callable[[Fabric], bool] = lambda fab: True


def build_server(fab: Fabric) -> MCPServer:
    """An MCPServer exposing ``fab``'s tools."""
    server: MCPServer = _Server(
        name="fabric", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )
    breaker = RepeatBreaker()
    for spec in TOOLS:
        if spec.available(fab):
            server.add_tool(
                spec.make(fab, breaker),
                name=spec.name,
                description=spec.description(fab),
                structured_output=False,
            )
    return server


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


def _reply(text: str, structured: dict[str, Any], *, error: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=error,
    )


def _failure(code: str, message: str) -> CallToolResult:
    return _reply(
        f"error ({code}): {message}", {"error": {"code": code, "message": message}}, error=True
    )


def _guarded(
    run: Callable[..., Awaitable[CallToolResult]], names: dict[str, str] | None = None
) -> Callable[..., Awaitable[CallToolResult]]:
    """Turn what a tool raises into an error result (``error_payload``, with ``names`` from
    the session's parameter names to the tool's); the server always survives."""

    @functools.wraps(run)  # the SDK reads the tool's parameters through __wrapped__
    async def guarded(**kwargs: Any) -> CallToolResult:
        try:
            return await run(**kwargs)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:
            payload = error_payload(exc, names)
            return _failure(payload.code, payload.message)

    return guarded


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
            return _failure("bad_arguments", f"{name}: {describe(exc.__cause__)}")


def _exec_structured(result: FabricResult, threshold: int) -> dict[str, Any]:
    """The structured content of a ``fabric_exec`` reply; the value rides along only when it
    was inlined and is no larger than ``threshold`` (``readOffloadThreshold``): a forced
    ``inline`` of a large result is sent once, as text, not twice."""
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
    if result.ok and result.policy_applied == "inline" and result.bytes <= threshold:
        out["value"] = result.value
    if result.error is not None:
        out["error"] = result.error.model_dump(mode="json", exclude_none=True)
    if result.analysis is not None:
        out["analysis"] = {
            "classification": result.analysis.classification.value,
            "bounded": result.analysis.bounded,
            "verdict": result.analysis.verdict,
        }
    return out


# -- fabric_exec ---------------------------------------------------------------------------


def _make_exec(fab: Fabric, breaker: RepeatBreaker) -> Callable[..., Awaitable[CallToolResult]]:
    async def fabric_exec(
        code: str,
        ctx: Context,
        result_format: Literal["auto", "json", "yaml", "text"] | None = None,
        result_policy: Literal["auto", "inline", "offload", "summarize"] | None = None,
        timeout_s: float | None = None,
        strict: bool | None = None,
    ) -> CallToolResult:
        session = _session_key(ctx)
        count, last_handle = breaker.see(session, code)
        if count >= REFUSE_AT:
            return _failure("repeated_code", breaker.refusal(count, last_handle))
        calls: list[str] = []
        started = time.monotonic()
        heartbeat = asyncio.ensure_future(_heartbeat(ctx, started, calls))
        try:
            result = await fab.exec(
                code,
                timeout=timeout_s,
                policy=result_policy,
                result_format=result_format,
                strict=strict,
                on_call=calls.append,
            )
        finally:
            heartbeat.cancel()
        breaker.remember(session, result.handle)
        text = result.text
        if count >= WARN_AT:
            text = f"{breaker.warning(count)}\n{text}"
        threshold = fab.boundary.config.read_offload_threshold
        return _reply(text, _exec_structured(result, threshold), error=not result.ok)

    return _guarded(fabric_exec, {"timeout": "timeout_s"})


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


def _make_check(fab: Fabric, breaker: RepeatBreaker) -> Callable[..., Awaitable[CallToolResult]]:
    async def ce_exec(code: str) -> CallToolResult:
        analysis = await asyncio.to_thread(fab.check, code)
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
        return _reply("\n".join(lines), analysis.model_dump(mode="json"))

    return _guarded(ce_exec)


def _make_read(fab: Fabric, breaker: RepeatBreaker) -> Callable[..., Awaitable[CallToolResult]]:
    async def ctx_read(
        handle: str,
        offset: int | None = None,
        length: int | None = None,
        query: str | None = None,
        regex: bool = False,
        ignore_case: bool = False,
        max_matches: int = 100,
        context: int = 1,
        json_path: str | None = None,
    ) -> CallToolResult:
        found = await asyncio.to_thread(
            fab.context.read,
            handle,
            offset=offset,
            length=length,
            query=query,
            regex=regex,
            ignore_case=ignore_case,
            max_matches=max_matches,
            context=context,
            json_path=json_path,
        )
        return _reply(
            found.text, found.model_dump(mode="json", exclude={"text"}, exclude_none=True)
        )

    return _guarded(ctx_read)


def _make_offload(fab: Fabric, breaker: RepeatBreaker) -> Callable[..., Awaitable[CallToolResult]]:
    async def ctx_offload(
        data: Any, key: str | None = None, label: str | None = None
    ) -> CallToolResult:
        stored = await asyncio.to_thread(fab.context.offload, data, key=key, label=label)
        return _reply(stored["preview"], {k: v for k, v in stored.items() if k != "preview"})

    return _guarded(ctx_offload)


def _make_remember(fab: Fabric, breaker: RepeatBreaker) -> Callable[..., Awaitable[CallToolResult]]:
    async def ctx_remember(name: str, text: str) -> CallToolResult:
        fact = await asyncio.to_thread(fab.facts.remember, name, text)
        return _reply(
            f"remembered {fact.name} ({fact.tokens} tokens)", fact.model_dump(mode="json")
        )

    return _guarded(ctx_remember)


def _make_recall(fab: Fabric, breaker: RepeatBreaker) -> Callable[..., Awaitable[CallToolResult]]:
    async def ctx_recall(query: str = "", max_tokens: int = 1000) -> CallToolResult:
        found = await asyncio.to_thread(fab.facts.recall, query, max_tokens=max_tokens)
        if not found.facts:
            text = f"no remembered fact matches {query!r}"
        else:
            text = "\n".join(f"{f.name}: {f.text}" for f in found.facts)
            if found.truncated:
                text += (
                    f"\n[{found.matches} facts matched; the {max_tokens}-token budget cut the rest]"
                )
        return _reply(text, found.model_dump(mode="json"))

    return _guarded(ctx_recall)


def _make_forget(fab: Fabric, breaker: RepeatBreaker) -> Callable[..., Awaitable[CallToolResult]]:
    async def ctx_forget(name: str) -> CallToolResult:
        existed = await asyncio.to_thread(fab.facts.forget, name)
        text = f"forgot {name}" if existed else f"there was no fact named {name}"
        return _reply(text, {"name": name, "forgotten": existed})

    return _guarded(ctx_forget)


def _make_summarize(
    fab: Fabric, breaker: RepeatBreaker
) -> Callable[..., Awaitable[CallToolResult]]:
    async def ctx_summarize(
        text: str | None = None,
        handle: str | None = None,
        mode: Literal["structural", "code", "model"] = "structural",
        max_tokens: int = 500,
        strategy: Literal["chunked", "direct"] = "chunked",
        max_input_tokens: int = 32_000,
        max_chunks: int = 16,
        max_calls: int | None = None,
        timeout_seconds: float = 90.0,
    ) -> CallToolResult:
        done = await fab.summarize(
            text=text,
            handle=handle,
            mode=mode,
            max_tokens=max_tokens,
            strategy=strategy,
            max_input_tokens=max_input_tokens,
            max_chunks=max_chunks,
            max_calls=max_calls,
            timeout_seconds=timeout_seconds,
        )
        head = f"[{mode} summary, {done['tokens']} tokens; the source is {done['handle']}]"
        return _reply(f"{head}\n{done['summary']}", done)

    return _guarded(ctx_summarize)


def _make_status(fab: Fabric, breaker: RepeatBreaker) -> Callable[..., Awaitable[CallToolResult]]:
    async def ctx_status(
        scope: Literal["session", "lifetime"] = "session",
        detail: Literal["compact", "full"] = "compact",
    ) -> CallToolResult:
        report = await asyncio.to_thread(fab.status, scope=scope, detail=detail)
        return _reply(status_text(report), report)

    return _guarded(ctx_status)


def status_text(report: dict[str, Any]) -> str:
    """A few lines a model (or a person) reads at a glance."""
    get = report.get
    lines = [
        f"{report['scope']}: {get('executions', 0)} executions ({get('failures', 0)} failed, "
        f"{get('blocks', 0)} blocked), {get('bytes_returned', 0)} of {get('bytes_produced', 0)} "
        f"bytes returned ({get('tokens_returned', 0)} of {get('tokens_produced', 0)} tokens), "
        f"{get('offloads', 0)} offloads, {get('reads', 0)} reads, {get('summaries', 0)} "
        f"summaries, {get('analyzer_warnings', 0)} analyzer warnings"
    ]
    store = get("store")
    if store:
        lines.append(
            f"store: {store['entries']} entries, {store['bytes']} of {store['max_bytes']} bytes"
        )
    isolation = get("isolation")
    if isolation:
        off = f"; off: {', '.join(isolation['inactive'])}" if isolation["inactive"] else ""
        lines.append(f"isolation {isolation['mode']}: {', '.join(isolation['active'])}{off}")
    running, queued = get("running", 0), get("queued", 0)
    if running or queued:
        lines.append(f"now: {running} running, {queued} queued")
    settings = get("settings")
    if settings is not None:
        changed = {k: v for k, v in settings.items() if DEFAULTS.get(k) != v}
        shown = ", ".join(f"{k}={json.dumps(v)}" for k, v in changed.items()) or "all defaults"
        lines.append(f"settings: {shown} (`fabric settings` shows each and where it came from)")
    notes = get("settings_warnings")
    if notes:
        lines.append("settings warnings: " + "; ".join(notes))
    return "\n".join(lines)


def _has_store(fab: Fabric) -> bool:
    return fab.boundary.store is not None


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "fabric_exec",
        _make_exec,
        lambda fab: exec_description(fab.providers, fab.boundary.config.read_offload_threshold),
    ),
    ToolSpec(
        "ce_exec",
        _make_check,
        lambda fab: (
            "Diagnose a snippet without running it: what kind of data it returns "
            "(RAW ... NONE), whether its size is bounded, the trail from source to return, and "
            "the fixes (PASS, WARN or BLOCK)."
        ),
    ),
    ToolSpec(
        "ctx_read",
        _make_read,
        lambda fab: (
            "Read part of a stored result (by handle) or a workspace file: a byte "
            "range (offset, length), the lines matching a query (literal; regex=true, "
            "ignore_case=true; windows with line numbers and the total count), or the values at a "
            'JSON path ("$.items[0:5]", "$.a[*].b").'
        ),
        _has_store,
    ),
    ToolSpec(
        "ctx_offload",
        _make_offload,
        lambda fab: (
            "Store data (text or JSON) under a handle (and an optional key) and get a "
            "structural preview back; read it later with ctx_read."
        ),
        _has_store,
    ),
    ToolSpec(
        "ctx_remember",
        _make_remember,
        lambda fab: (
            "Remember a project fact under a name (replaces what the name held). Facts "
            "persist across sessions."
        ),
    ),
    ToolSpec(
        "ctx_recall",
        _make_recall,
        lambda fab: "Recall remembered facts matching a query, best first, within max_tokens.",
    ),
    ToolSpec("ctx_forget", _make_forget, lambda fab: "Forget a remembered fact by name."),
    ToolSpec(
        "ctx_summarize",
        _make_summarize,
        lambda fab: (
            "Compress text or a stored handle within max_tokens, deterministically: "
            "mode=structural (JSON outline, log levels and errors, section outline, head and tail) "
            "or mode=code (imports, classes, functions, TODOs; diffs by file). The source stays "
            "under a handle."
        ),
        _has_store,
    ),
    ToolSpec(
        "ctx_status",
        _make_status,
        lambda fab: (
            "What Fabric did for your context: executions, bytes and tokens returned vs "
            "produced, offloads, reads, blocks, store size. scope=lifetime for all sessions, "
            "detail=full for settings and warnings."
        ),
    ),
)
