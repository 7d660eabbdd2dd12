"""The MCP tools made from the table of operations: ``ctx_read`` from ``ctx.read`` and so on.

Each tool's input schema is its operation's argument model (names, types, defaults, bounds,
descriptions), and the same model validates each call, so a field the schema does not name is
refused rather than ignored, and camelCase spellings (``maxMatches``) are accepted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp_types import CallToolResult, ToolAnnotations

from fabric._operations import Args, Operation, offered
from fabric.mcp._replies import guarded, reply

if TYPE_CHECKING:
    from fabric._session import Fabric


def operation_tools(fab: Fabric) -> list[Tool]:
    """A tool for each operation ``fab`` can serve."""
    return [_tool(op, fab) for op in offered(fab)]


def _tool(op: Operation, fab: Fabric) -> Tool:
    model = _arguments(op)

    async def call(args: Args) -> CallToolResult:
        done = await op(fab, args, "mcp")
        return reply(done.text, done.data)

    return Tool(
        fn=guarded(call),
        name=op.tool_name,
        description=op.full_description,
        parameters=model.model_json_schema(),
        fn_metadata=FuncMetadata(arg_model=model),
        is_async=True,
        annotations=ToolAnnotations(read_only_hint=op.read_only),
    )


def _arguments(op: Operation) -> type[ArgModelBase]:
    """The operation's model as the SDK validates arguments with; the tool function gets the
    validated model itself."""

    class Arguments(op.args, ArgModelBase):  # type: ignore[name-defined, misc]
        def model_dump_one_level(self) -> dict[str, Any]:
            return {"args": self}

    Arguments.__name__ = Arguments.__qualname__ = f"{op.tool_name}_arguments"
    return Arguments
