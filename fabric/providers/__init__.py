"""Providers: the host-side functions snippets call through ``tools``, ``mcp``, ``ctx``..."""

from fabric.providers._files import Workspace, register_file_tools
from fabric.providers._paths import REFUSALS, OpenedPath, open_beneath, read_bytes
from fabric.providers._registry import (
    RISKS,
    WILDCARD,
    Mount,
    Provider,
    ProviderFunc,
    ProviderRegistry,
    Risk,
)
from fabric.providers._signature import python_type, schema_signature

__all__ = [
    "REFUSALS",
    "RISKS",
    "WILDCARD",
    "Mount",
    "OpenedPath",
    "Provider",
    "ProviderFunc",
    "ProviderRegistry",
    "Risk",
    "Workspace",
    "open_beneath",
    "python_type",
    "read_bytes",
    "register_file_tools",
    "schema_signature",
]
