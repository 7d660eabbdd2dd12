"""Exceptions of the MCP client, raised to the snippet as ``ToolError`` (they are
``ProviderCallError``\\s, each with its ``code``)::

    ProviderCallError (runtime)
    ├── ServerFailed      the server did not start, went away, never answered or broke the
    │                     protocol: names the server and quotes the tail of its stderr
    └── ToolFailed        the tool answered with ``isError``: the server's own message
"""

from __future__ import annotations

from runtime import ProviderCallError

_TAIL_SHOWN = 1200
"""Characters of a server's stderr an error quotes at most (its last ones)."""


class ServerFailed(ProviderCallError):
    """An MCP server could not serve a call; ``server`` names it, ``stderr`` is its tail
    (None for a server reached by URL)."""

    def __init__(
        self, server: str, what: str, stderr: str | None = None, *, restarts: bool = True
    ) -> None:
        shown = (stderr or "")[-_TAIL_SHOWN:]
        message = f"MCP server {server!r} {what}"
        if shown:
            message += f"; its stderr ends:\n{shown}"
        elif stderr is not None:  # a server run as a process, which said nothing
            message += "; it wrote nothing to stderr"
        self.detail = message
        """The message without what the next call will do (for ``fabric mcp-servers``)."""
        if restarts:
            message += "\n(the next call starts it again)"
        super().__init__(message, code="mcp_server")
        self.server = server
        self.stderr = stderr or ""
        self.restarts = restarts
        """Whether the connection was dropped (the next call starts the server again)."""


class ToolFailed(ProviderCallError):
    """An MCP tool reported an error (``isError``); the message is the server's."""

    def __init__(self, qualified: str, message: str) -> None:
        super().__init__(f"{qualified}: {message}", code="tool_error")
        self.qualified = qualified
