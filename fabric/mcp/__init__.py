"""``fabric mcp``: Fabric served to any agent over the Model Context Protocol."""

from fabric.mcp._breaker import REFUSE_AT, WARN_AT
from fabric.mcp._describe import DESCRIPTION_TOKENS, exec_description
from fabric.mcp._http import HttpSettings, read_token
from fabric.mcp._server import TOOLS, ToolSpec, build_server, serve

__all__ = [
    "DESCRIPTION_TOKENS",
    "REFUSE_AT",
    "TOOLS",
    "WARN_AT",
    "HttpSettings",
    "ToolSpec",
    "build_server",
    "exec_description",
    "read_token",
    "serve",
]
