"""The MCP tools made from the table of operations: ``ctx_read`` from ``ctx.read`` and so on.

Each tool's input schema is its operation's argument model (names, types, defaults, bounds,
descriptions), and the same model validates each call, so a field the schema does not name is
refused rather than ignored, and camelCase spellings (``maxMatches``) are accepted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp_types import CallToolResult, ToolAnnotations

from fabric._operations import Args, Operation, offered
from fabric.mcp._replies import ToolFunc, guarded, reply

if TYPE_CHECKING:
    from fabric._session import Fabric


def operation_tools(fab: Fabric) -> list[Tool]:
    """A tool for each operation ``fab`` can serve."""
    return [_tool(op, fab) for op in offered(fab, "mcp")]


def _tool(op: Operation, fab: Fabric) -> Tool:
    async def call(args: Args) -> CallToolResult:
        done = await op(fab, args, "mcp")
        return reply(done.text, done.data)

    return model_tool(op.tool_name, op.args, call, op.full_description, read_only=op.read_only)


def model_tool(
    name: str,
    model: type[Args],
    run: ToolFunc,
    description: str,
    *,
    read_only: bool = False,
    context: bool = False,
    names: Mapping[str, str] | None = None,
) -> Tool:
    """A tool whose input schema is ``model`` and whose calls ``model`` validates; ``run``
    gets the validated model as ``args`` (and the request's context as ``ctx`` when
    ``context``)."""
    arguments = _arguments(model, name)
    return Tool(
        fn=guarded(run, names),
        name=name,
        description=description,
        parameters=arguments.model_json_schema(),
        fn_metadata=FuncMetadata(arg_model=arguments),
        is_async=True,
        context_kwarg="ctx" if context else None,
        annotations=ToolAnnotations(read_only_hint=read_only),
    )


def _arguments(model: type[Args], name: str) -> type[ArgModelBase]:
    """``model`` as the SDK validates arguments with; the tool function gets the validated
    model itself."""

    class Arguments(model, ArgModelBase):  # type: ignore[valid-type, misc]
        def model_dump_one_level(self) -> dict[str, Any]:
            return {"args": self}

    Arguments.__name__ = Arguments.__qualname__ = f"{name}_arguments"
    return Arguments
