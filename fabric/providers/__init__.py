"""Providers: the host-side functions snippets call through ``tools``, ``mcp``, ``ctx``..."""

from fabric.providers._discovery import help_entries, overview_lines
from fabric.providers._files import Workspace
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
from fabric.providers._tools import register_file_tools

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
    "help_entries",
    "open_beneath",
    "overview_lines",
    "python_type",
    "read_bytes",
    "register_file_tools",
    "schema_signature",
]
