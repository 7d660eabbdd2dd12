"""Fabric as an MCP client: the servers configured under ``mcpServers``, their tools served to
snippets as ``mcp.<server>.<tool>(...)`` (``fabric/mcp/`` is Fabric's own MCP server).

The SDK is imported when the first server starts, not with this package.
"""

from fabric.mcpclient._errors import ServerFailed, ToolFailed
from fabric.mcpclient._servers import McpServers, Server, risk_of
from fabric.mcpclient._settings import McpServer, expand, parse_servers, python_name

__all__ = [
    "McpServer",
    "McpServers",
    "Server",
    "ServerFailed",
    "ToolFailed",
    "expand",
    "parse_servers",
    "python_name",
    "risk_of",
]
