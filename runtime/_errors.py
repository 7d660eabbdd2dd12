"""Exceptions of the runtime package.

Faults of a snippet are never raised: they come back as an ``ExecResult`` with ``ok=False``
and a structured ``ExecError``. These exceptions are for the embedding program::

    SandboxError                  base of everything raised by runtime
    ├── SandboxUnavailable        the worker parent could not start or died
    ├── SandboxClosed             execute() after close()
    ├── CallStopped               raised in a provider's thread once its execution ended
    ├── ProviderCallError         raised by a provider to fail one call; becomes ToolError
    │                             inside the snippet, with its ``code`` and ``message``
    └── ReadError                 a ctx_read that cannot be served (bad regex, bad JSON path,
                                  a mode that does not fit the content); a ProviderCallError,
                                  so a snippet sees it as ToolError with the same ``code``
"""

from __future__ import annotations


class SandboxError(Exception):
    """Base class of the runtime's exceptions."""


class SandboxUnavailable(SandboxError):
    """The zygote that forks workers could not be started, or died."""


class SandboxClosed(SandboxError):
    """The sandbox was used after ``close()``."""


class ProviderCallError(SandboxError):
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
