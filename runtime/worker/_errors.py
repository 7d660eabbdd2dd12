"""Exceptions a snippet can see, raised by the worker side of the sandbox.

    Exception
    ├── PolicyError     the snippet reached for something the sandbox refuses (a private
    │                   name, a module, a value from outside the snippet, a file...)
    └── ToolError       a provider call failed; ``tool`` names the call, ``code`` classifies it

Both are builtins of every snippet, so it can catch them by name.
"""

from __future__ import annotations


class PolicyError(Exception):
    """A snippet reached for something the sandbox refuses (a private name, a module...)."""


class ToolError(Exception):
    """A provider call failed. ``tool`` names the call, ``code`` classifies the failure."""

    def __init__(self, message: str, *, tool: str = "", code: str = "tool_error") -> None:
        super().__init__(message)
        self.message = message
        self.tool = tool
        self.code = code
