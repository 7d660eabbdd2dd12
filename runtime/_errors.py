"""Exceptions of the runtime package.

Faults of a snippet are never raised: they come back as an ``ExecResult`` with ``ok=False``
and a structured ``ExecError``. These exceptions are for the embedding program::

    SandboxError                  base of what the sandbox raises to the embedding program
    ├── SandboxUnavailable        the worker parent could not start or died
    ├── SandboxClosed             execute() after close()
    └── CallStopped               raised in a provider's thread once its execution ended

    ProviderCallError             raised by a provider to fail one call (the caller's or the
    │                             data's fault, not the sandbox's); becomes ToolError inside
    │                             the snippet, with its ``code`` and ``message``
    └── ReadError                 a ctx_read that cannot be served (bad regex, bad JSON path,
                                  a mode that does not fit the content)

Every class has a ``code`` (an instance's own for ``ProviderCallError``), which is what
programs, MCP clients and snippets match on.
"""

from __future__ import annotations


class SandboxError(Exception):
    """Base class of the sandbox's exceptions."""

    code = "sandbox_error"


class SandboxUnavailable(SandboxError):
    """The zygote that forks workers could not be started, or died."""

    code = "sandbox_unavailable"


class SandboxClosed(SandboxError):
    """The sandbox was used after ``close()``."""

    code = "closed"


class ProviderCallError(Exception):
    """A provider call failed; the snippet sees ``ToolError(message)`` with ``code``."""

    def __init__(self, message: str, *, code: str = "tool_error") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class ReadError(ProviderCallError):
    """A read of stored data that cannot be served as asked; ``code`` says why
    (``invalid_regex``, ``pattern_too_large``, ``regex_timeout``, ``bad_json_path``,
    ``json_path_too_costly``, ``not_json``, ``bad_range``, ``bad_query``, ``not_found``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, code=code)
