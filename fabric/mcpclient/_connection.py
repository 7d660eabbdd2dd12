"""One connection to one MCP server, through the official SDK client.

The SDK's client runs on anyio task groups, which must be left in the task that entered them,
so each connection lives in a task of its own that enters ``mcp.Client``, lists the tools,
and holds the client open until it is told to close. Calls come from any task. The server's
stderr goes to a pipe the event loop reads into a bounded tail, which every error about the
server quotes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import mcp_types
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from fabric.mcpclient._errors import ServerFailed
from fabric.mcpclient._settings import McpServer, UnsetVariable, expand

STDERR_TAIL_BYTES = 4096
"""The most of a server's stderr kept (its last bytes): what errors about it quote."""
_MAX_PAGES = 100
"""Pages of tools/list read at most (a server that paginates forever cannot hang a start)."""
_CLOSE_S = 5.0
"""How long closing a connection may take before its task is cancelled."""


class StderrTail:
    """The last bytes a server wrote to stderr, read off a pipe by the event loop."""

    def __init__(self, limit: int = STDERR_TAIL_BYTES) -> None:
        self._limit = limit
        self.ended = False
        """Every writer closed the pipe: the server (and whatever it started) has exited."""
        self._chunks: deque[bytes] = deque()
        self._size = 0
        read, write = os.pipe()
        os.set_blocking(read, False)
        self._read = read
        self.writer = os.fdopen(write, "w")
        """What the server's stderr is: close it once the server is started."""
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(read, self._drain)
        self._open = True

    def _drain(self) -> None:
        try:
            data = os.read(self._read, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # every writer closed it: the server and its children are gone
            self.ended = True
            self.close()
            return
        self._chunks.append(data)
        self._size += len(data)
        while self._size - len(self._chunks[0]) >= self._limit:
            self._size -= len(self._chunks.popleft())

    def text(self) -> str:
        data = b"".join(self._chunks)[-self._limit :]
        return data.decode("utf-8", "replace").strip()

    def close(self) -> None:
        if self._open:
            self._open = False
            self._loop.remove_reader(self._read)
            os.close(self._read)
        with contextlib.suppress(OSError):
            self.writer.close()


def _seen(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()


def _transport(server: McpServer, workspace: Path, stderr: StderrTail | None) -> Any:
    """The SDK transport for ``server``, its ``${VAR}`` expanded now."""
    if server.url is not None:
        headers = {k: expand(v) for k, v in server.headers.items()}
        http = create_mcp_http_client(headers=headers)
        return streamable_http_client(expand(server.url), http_client=http)
    cwd = workspace / expand(server.cwd) if server.cwd else workspace
    params = StdioServerParameters(
        command=expand(server.command or ""),
        args=[expand(a) for a in server.args],
        env={k: expand(v) for k, v in server.env.items()},
        cwd=cwd,
    )
    assert stderr is not None
    return stdio_client(params, errlog=stderr.writer)


class Connection:
    """A started server: its client, its tools, and what it wrote to stderr."""

    def __init__(self, name: str, server: McpServer, workspace: Path) -> None:
        self.name = name
        self.server = server
        self._workspace = workspace
        self.stderr: StderrTail | None = None
        self.tools: list[mcp_types.Tool] = []
        self.broken: str | None = None
        """Why the connection cannot serve calls any more (None while it can)."""
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()

    @property
    def usable(self) -> bool:
        """Whether calls can go to it: not broken, and its process (if any) still running."""
        if self.stderr is not None and self.stderr.ended and self.broken is None:
            self.broken = "its process exited"
        return self.broken is None and self._client is not None

    def failure(self, what: str, *, restarts: bool = True) -> ServerFailed:
        """An error about this server: ``what`` went wrong, and the tail of its stderr."""
        tail = self.stderr.text() if self.stderr is not None else ""
        stderr = tail if self.server.command is not None else None
        return ServerFailed(self.name, what, stderr, restarts=restarts)

    async def start(self, timeout: float, why: str) -> None:
        """Start the server and list its tools within ``timeout`` (``why`` says whose)."""
        if self.server.command is not None:
            self.stderr = StderrTail()
        try:
            transport = _transport(self.server, self._workspace, self.stderr)
        except UnsetVariable as exc:
            if self.stderr is not None:
                self.stderr.close()
            raise ServerFailed(
                self.name,
                f"cannot start: ${{{exc.name}}} is not set; set it, or write "
                f"${{{exc.name}:-default}} in its settings",
            ) from None
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        ready.add_done_callback(_seen)  # a failure after a timeout is nobody's to retrieve
        self._task = asyncio.create_task(self._hold(transport, ready), name=f"mcp:{self.name}")
        try:  # on failure the caller closes it (in the background: stopping takes seconds)
            async with asyncio.timeout(timeout):
                await asyncio.shield(ready)
        except TimeoutError:
            raise self.failure(f"did not start within {timeout:g} s ({why})") from None
        finally:
            if self.stderr is not None:  # the server has its own copy now
                with contextlib.suppress(OSError):
                    self.stderr.writer.close()

    async def _hold(self, transport: Any, ready: asyncio.Future[None]) -> None:
        """The connection's own task: enter the client, list the tools, wait to be closed."""
        try:
            # the initialize handshake every server speaks ("auto" would probe first); no
            # response cache: every call reaches the server
            async with Client(transport, mode="legacy", cache=None) as client:
                self._client = client
                self.tools = await self._list(client)
                ready.set_result(None)
                await self._stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except BaseException as exc:  # the server could not be reached, or went away
            why = _why(exc)
            if not ready.done():
                if why == "Connection closed" and self.server.command is not None:
                    why = "its process exited before it answered"
                ready.set_exception(self.failure(f"failed to start: {why}"))
            self.broken = self.broken or f"the connection ended: {why}"
        finally:
            self._client = None
            self.broken = self.broken or "the connection is closed"

    async def _list(self, client: Client) -> list[mcp_types.Tool]:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def call(
        self, tool: str, arguments: Mapping[str, Any], timeout: float, *, why: str
    ) -> mcp_types.CallToolResult:
        """Call ``tool``; a dead server, a timeout or a protocol error is a ServerFailed.

        ``timeout`` is the server's ``timeoutS`` or what is left of the execution, ``why``
        says which: only a server that outlived its own ``timeoutS`` is restarted."""
        client = self._client
        if client is None or self.broken:
            raise self.failure(self.broken or "is not connected")
        try:
            async with asyncio.timeout(timeout):
                return await client.call_tool(tool, dict(arguments))
        except TimeoutError:
            restarts = why == "timeoutS"
            if restarts:
                self.broken = f"{tool} did not answer within {timeout:g} s"
            raise self.failure(
                f"did not answer {tool} within {timeout:g} s ({why})", restarts=restarts
            ) from None
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                self.broken = f"the server went away during {tool}"
                await asyncio.sleep(0)  # let its last stderr lines in
                raise self.failure(f"went away during {tool} ({_exit_note(self)})") from None
            raise self.failure(f"refused {tool}: {exc.error.message}", restarts=False) from None
        except (OSError, RuntimeError) as exc:
            self.broken = _why(exc)
            raise self.failure(f"{tool}: {_why(exc)}") from None

    async def close(self) -> None:
        self._stop.set()
        task = self._task
        if task is not None and not task.done():
            try:
                async with asyncio.timeout(_CLOSE_S):
                    await asyncio.shield(task)
            except TimeoutError:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        if self.stderr is not None:
            await asyncio.sleep(0)
            self.stderr.close()


def _exit_note(connection: Connection) -> str:
    return "its process exited" if connection.server.command else "its connection closed"


def _why(exc: BaseException) -> str:
    """The innermost useful message of what went wrong (anyio groups nest them)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return exc.error.message
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    text = str(exc) or type(exc).__name__
    return text if len(text) < 300 else text[:300] + "..."
