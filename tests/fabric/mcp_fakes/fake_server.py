"""A small MCP server for the tests, run as ``python fake_server.py [mode]``.

Modes: ``serve`` (the default) answers its tools; ``fail`` writes to stderr and exits before
serving; ``mute`` starts and never answers anything. With ``FAKE_PID_FILE`` set, a serving
process appends its pid to that file. Its tools: ``echo`` (its arguments
back, structured), ``add`` (two whole numbers), ``shout`` (text), ``picture`` (an image),
``record`` and ``recorded`` (what it was called with), ``broken`` (a tool error), ``crash`` (the process dies mid-call, after a line on stderr), ``leave`` (it exits
just after answering),
``hang`` (never answers), ``meet`` (waits until ``count`` calls are waiting together), ``header`` (a header of
the HTTP request). ``http PORT`` serves streamable HTTP on 127.0.0.1:PORT.
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
import threading
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "serve"
if MODE == "fail":  # before the SDK is imported: fails fast
    sys.stderr.write("fake: cannot start: missing FAKE_TOKEN\n")
    sys.exit(3)
if MODE == "mute":
    sys.stderr.write("fake: thinking forever\n")
    sys.stderr.flush()
    time.sleep(3600)
if os.environ.get("FAKE_PID_FILE"):
    with open(os.environ["FAKE_PID_FILE"], "a") as pids:
        pids.write(f"{os.getpid()}\n")

from mcp.server.mcpserver import Context, MCPServer  # noqa: E402 (after the fast modes)
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.server.mcpserver.utilities.types import Image  # noqa: E402
from mcp_types import ToolAnnotations  # noqa: E402

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
server = MCPServer("fake")
waiting: list[asyncio.Event] = []
recorded_numbers: list[int] = []


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str, times: int = 1) -> dict[str, object]:
    """Say it back.

    More lines that the one-line description leaves out."""
    return {"text": text, "times": times}


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@server.tool(name="shout-loud", annotations=ToolAnnotations(read_only_hint=True))
def shout(text: str) -> str:
    """Upper-case text."""
    return text.upper()


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True))
def picture() -> Image:
    """A one-pixel PNG."""
    return Image(data=PNG, format="png")


@server.tool(annotations=ToolAnnotations(read_only_hint=False))
def record(n: int) -> int:
    """Remember a number (what ``recorded`` lists)."""
    recorded_numbers.append(n)
    return n


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def recorded() -> list[int]:
    """The numbers ``record`` was called with."""
    return recorded_numbers


@server.tool()
def broken(reason: str) -> str:
    """Always fails."""
    raise ToolError(f"broken on purpose: {reason}")


@server.tool()
def crash() -> str:
    """The server dies mid-call."""
    sys.stderr.write("fake: about to crash\n")
    sys.stderr.flush()
    os._exit(7)


@server.tool()
def leave() -> str:
    """Answers, then the process exits a moment later (between calls)."""
    threading.Timer(0.2, os._exit, (0,)).start()
    return "bye"


@server.tool()
async def hang() -> str:
    """Never answers."""
    await asyncio.sleep(3600)
    return "late"


@server.tool()
async def meet(count: int) -> int:
    """Returns once ``count`` calls are waiting at the same time (deadlocks if sequential)."""
    event = asyncio.Event()
    waiting.append(event)
    if len(waiting) >= count:
        for each in waiting:
            each.set()
    await event.wait()
    return len(waiting)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def header(name: str, ctx: Context) -> str:
    """A header of the HTTP request that carried this call ("" when none)."""
    return (ctx.headers or {}).get(name.lower(), "")


if __name__ == "__main__":
    if MODE == "http":  # streamable HTTP on 127.0.0.1, the port in argv[2]
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
